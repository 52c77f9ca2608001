"""
A simulated serial arm driven by the DeNOC forward dynamics (no ROS in here).

The sim node (:mod:`denoc_dynamics.ros.sim_node`) is a thin ROS wrapper around the
classes of this module, which can be tested and benchmarked in-process:

* :class:`Simulation` holds the state x = [q, qd] and integrates
  ``qdd = FD(q, qd, tau)`` with a fixed step.  Every integrator goes through the one
  :meth:`Simulation.acceleration` (``qdd = FD(q, qd, tau + passive(q, qd))``):
  classic Runge-Kutta 4 (``rk4``), Adams-Bashforth 4 (``ab4``, started by three RK4
  steps) and semi-implicit (symplectic) Euler (``semi_implicit_euler``).
* Passive joint physics from the URDF: viscous damping ``-damping * qd``, a smooth
  Coulomb friction ``-friction * tanh(qd / v_eps)``, and the position limits as a
  one-sided spring-damper stop.  The commanded torque is clamped to ``<limit effort>``,
  and the joint's drive cannot push it faster than ``<limit velocity>``
  (:meth:`Simulation.drive`).
* Joint drives in a real arm's modes (:mod:`.servo`): effort commands
  (:meth:`Simulation.set_command`), or per joint position and velocity servos at the
  physics rate, with the model's gravity and bias forces evaluated once a publish
  period and held (:meth:`Simulation.set_joint_command`).
* :class:`SimulationRunner` steps the simulation in chunks of one publish period,
  paces it to a real-time factor, measures the achieved one
  (:class:`RealTimeFactorMeter`) and calls back once per chunk to publish.  It owns the
  simulated time: :meth:`SimulationRunner.tick` advances what is due now, so that the
  sim node drives it from a timer of its executor, in the one thread that also runs
  the ROS callbacks (no second Python thread competes for the GIL).

Stability of explicit integrators: per joint, the passive terms form a damped
oscillator ``I s^2 + c s + k`` (I the joint's effective inertia; c the viscous damping
plus the slope ``friction / v_eps`` of the regularized friction plus the stop damping;
k the stop stiffness), whose eigenvalues satisfy ``|s| <= max(c / I, sqrt(k / I))``.
Each integrator is stable for ``h |s|`` below about :data:`STABILITY_LIMIT`.  The
simulation takes the smallest effective inertia ``1 / (M^-1)_ii`` over sampled poses
and keeps ``h |s|`` under :data:`STABILITY_MARGIN` times that limit: what the URDF
damping leaves of the budget is split between the friction (``v_eps`` raised where
needed) and the stop damping (the stop frequency lowered where needed).
:meth:`Simulation.stability_warnings` reports joints whose URDF damping alone is
too much for the integrator at this step.
"""

from dataclasses import dataclass
import math
import threading
import time
from typing import Callable, List, Optional

import numpy as np

from .computed_torque import joint_friction
from .core.robot import FD_METHODS
from .servo import advance_velocity_references
from .servo import default_gains
from .servo import EFFORT
from .servo import POSITION
from .servo import servo_efforts
from .servo import VELOCITY

#: The integrators and start modes of the simulation (and, from the core's Robot, the
#: forward dynamics methods): the one list of each, which the nodes, the launch files
#: and the command lines import.
INTEGRATORS = ('rk4', 'ab4', 'semi_implicit_euler')
START_MODES = ('hold', 'paused', 'running')

#: Largest stable ``h * rate`` on the negative real axis (rate = damping / inertia):
#: RK4 about 2.785, AB4 0.3, semi-implicit Euler 2 (velocity update is explicit).
STABILITY_LIMIT = {'rk4': 2.785, 'ab4': 0.3, 'semi_implicit_euler': 2.0}

#: Fraction of :data:`STABILITY_LIMIT` that the passive physics may use.
STABILITY_MARGIN = 0.8

#: At most this many passes of the velocity-limit cut per step (:meth:`Simulation.drive`):
#: a cut on one joint changes the others' accelerations through the coupling.
DRIVE_PASSES = 3

#: Adams-Bashforth 4 weights of f_n, f_n-1, f_n-2, f_n-3 (times h / 24).
AB4_WEIGHTS = (55.0, -59.0, 37.0, -9.0)


class HeldCommand:
    """
    The latest effort command, held until it is older than ``timeout``.

    The one timeout of the effort commands: on simulated time in :class:`Simulation`,
    on ROS time in the dynamics node.  Older than ``timeout`` [s] the command counts as
    zero effort; ``timeout`` <= 0: it never expires.
    """

    def __init__(self, n: int, timeout: float):
        """Hold no command yet (zero effort) for ``n`` joints."""
        self.timeout = timeout
        self.zero = np.zeros(n)
        self.clear()

    def clear(self):
        """Forget the command: zero effort from now on."""
        self.value = self.zero
        self.time = -math.inf

    def hold(self, tau: np.ndarray, now: float):
        """Hold ``tau``, received at ``now``."""
        self.value = tau
        self.time = now

    def current(self, now: float) -> np.ndarray:
        """Return the held command, or zero effort if there is none or it timed out."""
        if self.timeout > 0.0 and now - self.time > self.timeout:
            return self.zero
        return self.value


class CommandOutOfRange(ValueError):
    """An effort command beyond any physical meaning for the joint (see set_command)."""


@dataclass
class PhysicsParameters:
    """
    Settings of the simulated physics.

    ``physics_rate`` [Hz]: integration steps per simulated second.
    ``integrator``: one of :data:`INTEGRATORS`.
    ``friction_velocity`` [rad/s or m/s]: the smallest regularization velocity v_eps of
    the Coulomb friction ``friction * tanh(qd / v_eps)`` (raised per joint if needed
    for stability).
    ``limit_stop_frequency`` [Hz] and ``limit_stop_damping_ratio``: the position-limit
    stop of joint i is a spring ``k_i = I_i w^2`` and a damper ``c_i = 2 zeta I_i w``,
    w = 2 pi f, acting beyond the limit (I_i the joint's effective inertia); f is
    lowered if the integrator would be unstable.
    ``command_timeout`` [s of simulated time]: an effort command older than this
    counts as zero torque (<= 0: never).
    ``fd_method``: one of :data:`FD_METHODS`, passed to :meth:`Robot.forward_dynamics`.
    ``servo_frequency`` [Hz] and ``servo_damping_ratio``: the default gains of the
    position and velocity servos (:func:`denoc_dynamics.servo.default_gains`).
    ``joint_command_timeout`` [s of simulated time]: a joint command
    (:meth:`Simulation.set_joint_command`) older than this turns into a position hold
    where the joints are (<= 0: never).
    ``divergence_velocity`` [rad/s or m/s]: a joint speed above this (or a non-finite
    one) counts as a diverged, failed simulation.
    """

    physics_rate: float = 1000.0
    integrator: str = 'rk4'
    friction_velocity: float = 0.05
    limit_stop_frequency: float = 50.0
    limit_stop_damping_ratio: float = 1.0
    command_timeout: float = 0.5
    fd_method: str = 'denoc'
    divergence_velocity: float = 1000.0
    servo_frequency: float = 25.0
    servo_damping_ratio: float = 1.0
    joint_command_timeout: float = 0.0

    def check(self):
        """Raise ValueError if a setting is out of range."""
        if not (math.isfinite(self.physics_rate) and self.physics_rate > 0.0):
            raise ValueError(f'physics_rate must be > 0, got {self.physics_rate!r}')
        if self.integrator not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {INTEGRATORS}, '
                             f'got {self.integrator!r}')
        if self.fd_method not in FD_METHODS:
            raise ValueError(f'fd_method must be one of {FD_METHODS}, got {self.fd_method!r}')
        if not self.friction_velocity > 0.0:
            raise ValueError(f'friction_velocity must be > 0, got {self.friction_velocity!r}')
        if not self.limit_stop_frequency > 0.0:
            raise ValueError('limit_stop_frequency must be > 0, '
                             f'got {self.limit_stop_frequency!r}')
        if not self.limit_stop_damping_ratio >= 0.0:
            raise ValueError('limit_stop_damping_ratio must be >= 0, '
                             f'got {self.limit_stop_damping_ratio!r}')
        if not self.divergence_velocity > 0.0:
            raise ValueError('divergence_velocity must be > 0, '
                             f'got {self.divergence_velocity!r}')
        if math.isnan(self.command_timeout) or math.isnan(self.joint_command_timeout):
            raise ValueError('command_timeout and joint_command_timeout must be numbers')
        if not (self.servo_frequency > 0.0 and self.servo_damping_ratio > 0.0):
            raise ValueError('servo_frequency and servo_damping_ratio must be > 0, got '
                             f'{self.servo_frequency!r}, {self.servo_damping_ratio!r}')


def effective_inertia(robot, samples: int = 64, seed: int = 0,
                      q_extra: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Return each joint's smallest effective inertia 1 / (M^-1)_ii over sampled poses.

    Poses are drawn uniformly within the position limits (+-pi where there are none),
    plus the zero pose and ``q_extra``; 1 / (M^-1)_ii is the inertia that joint i
    feels when all the other joints move freely.
    """
    joints = robot.joints
    lower = np.where(np.isfinite(joints.lower), joints.lower, -math.pi)
    upper = np.where(np.isfinite(joints.upper), joints.upper, math.pi)
    rng = np.random.default_rng(seed)
    poses = [rng.uniform(lower, upper, size=(samples, robot.n)), np.zeros((1, robot.n))]
    if q_extra is not None:
        poses.append(np.asarray(q_extra, dtype=float).reshape(1, robot.n))
    minv = robot.inverse_inertia_matrix(np.concatenate(poses))
    return (1.0 / np.diagonal(minv, axis1=-2, axis2=-1)).min(axis=0)


class Simulation:
    """
    A fixed-step simulation of a :class:`denoc_dynamics.Robot`.

    Modes: ``'hold'`` keeps the state frozen at the initial positions (time runs on)
    until the first effort command arrives, then switches to ``'running'``.
    ``paused`` (independent of the mode) freezes time and state.  A non-finite state
    (a joint speed above ``divergence_velocity``, or a failed dynamics call) stops the
    integration: :attr:`failure` says why, the last good state is kept, and
    :meth:`reset` clears it.
    """

    def __init__(self, robot, params: Optional[PhysicsParameters] = None,
                 initial_positions=None, initial_velocities=None, start_mode: str = 'hold'):
        """Set up the physics of ``robot`` and reset to the initial state."""
        self.robot = robot
        self.params = params = params if params is not None else PhysicsParameters()
        params.check()
        # the state is checked after every step (finite, below divergence_velocity)
        self._method = params.fd_method
        self._integrate = {'rk4': self._rk4, 'ab4': self._ab4,
                           'semi_implicit_euler': self._semi_implicit_euler}
        if start_mode not in START_MODES:
            raise ValueError(f'start_mode must be one of {START_MODES}, got {start_mode!r}')
        self.start_mode = start_mode
        n = self.n = robot.n
        joints = robot.joints
        self.h = 1.0 / params.physics_rate
        self.q0 = self._vector(initial_positions, 'initial_positions')
        self.qd0 = self._vector(initial_velocities, 'initial_velocities')
        # the chain already holds +-inf where there is no limit (continuous joints too)
        self.lower, self.upper = joints.lower, joints.upper
        outside = (self.q0 < self.lower) | (self.q0 > self.upper)
        if np.any(outside):
            bad = [robot.joint_names[i] for i in np.flatnonzero(outside)]
            raise ValueError(f'initial_positions outside the joint limits for {bad}')
        self.effort_limit = joints.effort         # inf where the URDF gives none
        self.velocity_limit = joints.velocity     # inf where the URDF gives none
        self.damping = joints.damping.copy()
        self.friction = joints.friction.copy()

        # Passive-physics gains within the integrator's stability budget (module doc).
        self.inertia = effective_inertia(robot, q_extra=self.q0)
        rate_max = STABILITY_MARGIN * STABILITY_LIMIT[params.integrator] / self.h
        spare = np.maximum(rate_max - self.damping / self.inertia, 0.1 * rate_max)
        zeta = params.limit_stop_damping_ratio
        omega = np.minimum(2.0 * math.pi * params.limit_stop_frequency, rate_max)
        if zeta > 0.0:
            omega = np.minimum(omega, 0.5 * spare / (2.0 * zeta))
        self.stop_omega = omega
        self.stop_stiffness = self.inertia * omega ** 2
        self.stop_damping = 2.0 * zeta * self.inertia * omega
        self.friction_velocity = np.maximum(params.friction_velocity,
                                            self.friction / (self.inertia * 0.5 * spare))
        # an effort that takes the joint from rest past divergence_velocity in one step
        self.effort_bound = self.inertia * params.divergence_velocity / self.h

        self._x = np.empty(2 * n)
        self._zero = np.zeros(n)
        self._held = HeldCommand(n, params.command_timeout)
        # The drives (:mod:`.servo`): per joint a mode and its references, used once a
        # joint command arrives (effort commands alone take the plain effort path).
        self.set_servo_gains(*default_gains(self.inertia, self.h, params.servo_frequency,
                                            params.servo_damping_ratio))
        self.drive_mode = np.full(n, EFFORT, dtype=np.int64)
        self.tau_cmd, self.q_ref, self.qd_ref = np.zeros(n), np.zeros(n), np.zeros(n)
        self.tau_ff = np.zeros(n)
        #: Steps between two evaluations of the servos' gravity and bias forces (held in
        #: between): one publish period, set by :class:`SimulationRunner`.
        self.feedforward_steps = 1
        self.failure: Optional[str] = None
        self._restart('hold' if start_mode == 'hold' else 'running',
                      paused=start_mode == 'paused')

    def _vector(self, value, name):
        if value is None or len(value) == 0:
            return np.zeros(self.n)
        v = np.asarray(value, dtype=float)
        if v.shape != (self.n,) or not np.all(np.isfinite(v)):
            raise ValueError(f'{name} must be {self.n} finite numbers, got {list(v)}')
        return v.copy()

    # --- state -----------------------------------------------------------------------
    @property
    def t(self) -> float:
        """Return the simulated time [s] (an exact multiple of the step)."""
        return self.steps * self.h

    @property
    def q(self) -> np.ndarray:
        """Return a copy of the joint positions."""
        return self._x[:self.n].copy()

    @property
    def qd(self) -> np.ndarray:
        """Return a copy of the joint velocities."""
        return self._x[self.n:].copy()

    @property
    def running(self) -> bool:
        """Return True when the state is being integrated (running, not paused/failed)."""
        return self.mode == 'running' and not self.paused and self.failure is None

    def reset(self) -> str:
        """
        Go back to the initial state in hold mode (unpaused); clear a failure.

        Returns a message that reports a previous non-finite failure, if any.
        """
        failure = self.failure
        self._restart('hold', paused=False)
        if failure is not None:
            return f'reset to the initial state (hold mode); the previous run failed: {failure}'
        return 'reset to the initial state (hold mode)'

    def _restart(self, mode, paused):
        self._x[:self.n] = self.q0
        self._x[self.n:] = self.qd0
        self.steps = 0
        self.mode = mode
        self.paused = paused
        self.failure = None
        self._held.clear()
        self._history = []
        self.applied_effort = self._zero
        self.stopped = False
        self._clear_joint_command()

    def _clear_joint_command(self):
        self.joint_commanded = False   # the drives follow set_joint_command
        self._joint_command_time = -math.inf
        self._joint_command_expired = False
        self.drive_mode[:] = EFFORT
        self._feedforward_due = 0

    def reset_state(self):
        """Put the state back to the initial one in hold mode; the time runs on."""
        steps = self.steps
        self._restart('hold', paused=self.paused)
        self.steps = steps

    def reset_time(self):
        """Set the simulated time back to zero; the state and the commands stay."""
        shift = self.t
        self.steps = 0
        self._held.time -= shift
        self._joint_command_time -= shift
        self._feedforward_due = 0

    def stop(self):
        """Reset everything and pause: the stopped state of the simulation interfaces."""
        self.reset()
        self.paused = self.stopped = True

    def step_paused(self, steps: int) -> int:
        """
        Take exactly ``steps`` steps while paused (fewer only on a failure); return the count.

        The simulation stays paused and is no longer in the stopped state.
        """
        if not self.paused:
            raise ValueError('the simulation is not paused')
        self.stopped = False
        self.paused = False
        try:
            return self.advance(steps)
        finally:
            self.paused = True

    def set_paused(self, paused: bool):
        """Pause (freeze time and state) or resume; either ends the stopped state."""
        self.paused = bool(paused)
        self.stopped = False

    def set_command(self, tau):
        """
        Set the commanded joint efforts (chain order), clamped to the effort limits.

        The first command ends hold mode.  Raises ValueError on a wrong length or a
        non-finite value, and :class:`CommandOutOfRange` if a clamped effort exceeds
        :attr:`effort_bound`: the effort that would take the joint, at its smallest
        effective inertia, from rest past ``divergence_velocity`` within one step.
        In practice only a joint without an effort limit gets there.
        """
        tau = self._checked_effort(tau, np.arange(self.n))
        self._clear_joint_command()
        self._held.hold(tau, self.t)
        self._leave_hold_mode()

    def _leave_hold_mode(self):
        if self.mode == 'hold':
            self.mode = 'running'
            self._history.clear()

    def _checked_effort(self, tau, joints) -> np.ndarray:
        """Return ``tau`` of the chain joints ``joints`` clamped (set_command's checks)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (len(joints),) or not np.all(np.isfinite(tau)):
            raise ValueError(f'effort command must be {len(joints)} finite numbers, '
                             f'got {tau!r}')
        tau = np.clip(tau, -self.effort_limit[joints], self.effort_limit[joints])
        beyond = np.flatnonzero(np.abs(tau) > self.effort_bound[joints])
        if beyond.size:
            k = joints[beyond[0]]
            raise CommandOutOfRange(
                f'effort {tau[beyond[0]]:.6g} for joint {self.robot.joint_names[k]!r} '
                f'exceeds {self.effort_bound[k]:.3g}, which would take it from rest past '
                f'{self.params.divergence_velocity:g} in one step')
        return tau

    def set_joint_command(self, joints, mode, tau, q_ref, qd_ref):
        """
        Command the drives of the chain joints ``joints`` (indices) per joint (:mod:`.servo`).

        ``mode``, ``tau``, ``q_ref``, ``qd_ref``: one entry per joint of ``joints``
        (``tau`` an effort feedforward in the servo modes).  The command is held until
        the next one (or ``joint_command_timeout``); joints left out keep theirs, and
        the first joint command after effort commands (or none) has the joints it
        leaves out hold their position.  It ends hold mode.  Raises ValueError on a
        non-finite value, a position outside the joint's limits or an unknown mode,
        and :class:`CommandOutOfRange` as :meth:`set_command` does; nothing changes then.
        """
        joints = np.asarray(joints, dtype=np.int64)
        mode = np.asarray(mode, dtype=np.int64)
        q_ref, qd_ref = (np.asarray(x, dtype=float) for x in (q_ref, qd_ref))
        count = len(joints)
        if not (mode.shape == q_ref.shape == qd_ref.shape == (count,)) or count == 0:
            raise ValueError(f'a joint command needs one mode and reference per joint, got '
                             f'{count} joints')
        if len(np.unique(joints)) < count or np.any((joints < 0) | (joints >= self.n)):
            raise ValueError(f'joint indices must be distinct chain joints, got {joints}')
        if np.any((mode < EFFORT) | (mode > 2)):
            raise ValueError(f'unknown drive mode in {mode}')
        if not (np.all(np.isfinite(q_ref)) and np.all(np.isfinite(qd_ref))):
            raise ValueError('joint command references must be finite')
        tau = self._checked_effort(tau, joints)
        positioned = mode == POSITION
        outside = positioned & ((q_ref < self.lower[joints]) | (q_ref > self.upper[joints]))
        if np.any(outside):
            k = int(np.flatnonzero(outside)[0])
            raise CommandOutOfRange(
                f'position {q_ref[k]:.6g} for joint {self.robot.joint_names[joints[k]]!r} '
                f'is outside its limits [{self.lower[joints[k]]:g}, '
                f'{self.upper[joints[k]]:g}]')
        if not self.joint_commanded or self._joint_command_expired:
            self._hold_position()
        # a velocity reference starts where the joint is, or goes on where it was
        starting = (mode == VELOCITY) & (self.drive_mode[joints] != VELOCITY)
        q_ref = np.where(positioned, q_ref, np.where(starting, self._x[joints],
                                                     self.q_ref[joints]))
        self.drive_mode[joints] = mode
        self.tau_cmd[joints] = tau
        self.q_ref[joints] = q_ref
        self.qd_ref[joints] = np.where(mode == EFFORT, 0.0, qd_ref)
        self._joint_command_time = self.t
        self._joint_command_expired = False
        self._leave_hold_mode()

    def _hold_position(self):
        """Have every drive hold the current position (a joint command takes over)."""
        self.joint_commanded = True
        self.drive_mode[:] = POSITION
        self.q_ref[:] = self._x[:self.n]
        self.qd_ref[:] = 0.0
        self.tau_cmd[:] = 0.0
        self._feedforward_due = self.steps

    def _servo_command(self, q, qd) -> np.ndarray:
        """
        Return the drives' effort of this step under the joint command (:mod:`.servo`).

        The gravity and bias forces ``tau_ff`` are evaluated every
        :attr:`feedforward_steps` steps and held in between.
        """
        timeout = self.params.joint_command_timeout
        if (timeout > 0.0 and not self._joint_command_expired
                and self.t - self._joint_command_time > timeout):
            self._hold_position()
            self._joint_command_expired = True
        if self.steps >= self._feedforward_due:
            self.tau_ff = self.robot.bias_forces(q, qd)
            self._feedforward_due = self.steps + self.feedforward_steps
        advance_velocity_references(self.drive_mode, self.q_ref, self.qd_ref, q, self.h,
                                    self.lower, self.upper, self._servo_max_error)
        return servo_efforts(self.drive_mode, self.tau_cmd, self.q_ref, self.qd_ref, self.kp,
                             self.kd, self.tau_ff, q, qd, self.effort_limit)

    def set_servo_gains(self, kp, kd):
        """Set the position and velocity servos' gains per joint (chain order)."""
        kp, kd = (np.asarray(x, dtype=float) for x in (kp, kd))
        if kp.shape != (self.n,) or kd.shape != (self.n,) or not (
                np.all(kp >= 0.0) and np.all(kd >= 0.0)
                and np.all(np.isfinite(kp)) and np.all(np.isfinite(kd))):
            raise ValueError(f'servo gains must be {self.n} finite numbers >= 0 each, '
                             f'got kp {kp!r}, kd {kd!r}')
        self.kp, self.kd = kp.copy(), kd.copy()
        # the error at which a servo's effort saturates (the velocity references' bound)
        self._servo_max_error = np.divide(self.effort_limit, kp, out=np.full(self.n, np.inf),
                                          where=kp > 0.0)

    def command(self) -> np.ndarray:
        """Return the effort commanded now: the clamped command, or zero if it is stale."""
        return self._held.current(self.t)

    def drive(self, q: np.ndarray, qd: np.ndarray, command: np.ndarray):
        """
        Return (tau, qdd): the drives' effort for ``command`` at (q, qd) and qdd under it.

        A drive does not push its joint past the URDF ``<limit velocity>`` v_max.  Where
        the step would take a joint beyond v_max in the direction of its effort
        (qd + h qdd, either sign), the effort is cut by I (|qd + h qdd| - v_max) / h,
        I = 1 / (M^-1)_ii the joint's effective inertia at q, down to zero at most: the
        joint then reaches v_max in the step.  A cut changes the other joints'
        accelerations through the coupling, so the check is repeated, up to
        :data:`DRIVE_PASSES` times.  The drive does not brake beyond that: gravity or
        the other joints can still drive a joint faster.  Pushing against a stop, the
        joint does not move and the drive gives its full effort.  Decided once per step,
        like a drive's control cycle; a step with a cut costs one inverse of the
        inertia matrix.
        """
        h = self.h
        tau = command
        qdd = self.acceleration(q, qd, tau)
        M_inv = None
        for _ in range(DRIVE_PASSES):
            direction = np.sign(tau)
            excess = direction * (qd + h * qdd) - self.velocity_limit
            if not excess.max() > 0.0:      # NaN too: the state check then stops the run
                break
            if M_inv is None:
                # LAPACK's inverse of the GIM: about 2x faster than the analytical
                # inverse (000 eqs. 38-41) for one state of a short chain
                M_inv = np.linalg.inv(self.robot.inertia_matrix(q))
                inertia = 1.0 / np.diagonal(M_inv)
            cut = direction * np.minimum(inertia * np.maximum(excess, 0.0) / h, np.abs(tau))
            tau = tau - cut
            # qdd = M^-1 (tau - bias - passive) is linear in tau: no new dynamics call
            qdd = qdd - M_inv @ cut
        return tau, qdd

    # --- physics ---------------------------------------------------------------------
    def passive_torques(self, q, qd) -> np.ndarray:
        """Return damping + smooth Coulomb friction + limit-stop efforts at (q, qd)."""
        tau = -joint_friction(qd, self.damping, self.friction, self.friction_velocity)
        # how far beyond a limit (np.clip's Python wrapper costs more than the two ufuncs)
        pen = q - np.maximum(np.minimum(q, self.upper), self.lower)
        if np.count_nonzero(pen):
            stop = -self.stop_stiffness * pen - self.stop_damping * qd
            # one-sided: the stop pushes out of the limit, never pulls into it
            stop = np.where(pen < 0.0, np.maximum(stop, 0.0),
                            np.where(pen > 0.0, np.minimum(stop, 0.0), 0.0))
            tau = tau + stop
        return tau

    def acceleration(self, q, qd, tau) -> np.ndarray:
        """Return qdd = FD(q, qd, tau + passive(q, qd)), the one dynamics of every integrator."""
        return self.robot.forward_dynamics(q, qd, tau + self.passive_torques(q, qd),
                                           self._method)

    def _rk4(self, q, qd, tau, qdd):
        """
        Return (q, qd) after one classic Runge-Kutta step from (q, qd).

        The stages of x = [q, qd], xdot = [qd, qdd] written out for q and qd; ``qdd``
        is stage 1's.
        """
        h, f = self.h, self.acceleration
        q_2, qd_2 = q + (0.5 * h) * qd, qd + (0.5 * h) * qdd
        qdd_2 = f(q_2, qd_2, tau)
        q_3, qd_3 = q + (0.5 * h) * qd_2, qd + (0.5 * h) * qdd_2
        qdd_3 = f(q_3, qd_3, tau)
        q_4, qd_4 = q + h * qd_3, qd + h * qdd_3
        qdd_4 = f(q_4, qd_4, tau)
        return (q + (h / 6.0) * (qd + 2.0 * (qd_2 + qd_3) + qd_4),
                qd + (h / 6.0) * (qdd + 2.0 * (qdd_2 + qdd_3) + qdd_4))

    def _takes_rk4_step(self) -> bool:
        """Return True if the next step is an RK4 one: ``rk4``, or ``ab4`` starting up."""
        integrator = self.params.integrator
        return integrator == 'rk4' or (integrator == 'ab4' and len(self._history) < 3)

    def _ab4(self, q, qd, tau, qdd):
        starting = self._takes_rk4_step()   # f at fewer than three steps before this one
        history = self._history
        history.insert(0, np.concatenate((qd, qdd)))
        if starting:  # start-up: RK4 steps, reusing f(x_n) as stage 1
            return self._rk4(q, qd, tau, qdd)
        del history[4:]
        w = AB4_WEIGHTS
        x = self._x + (self.h / 24.0) * (w[0] * history[0] + w[1] * history[1]
                                         + w[2] * history[2] + w[3] * history[3])
        return x[:self.n], x[self.n:]

    def _semi_implicit_euler(self, q, qd, tau, qdd):
        qd = qd + self.h * qdd
        return q + self.h * qd, qd

    def step(self) -> bool:
        """
        Advance one step; return False if nothing was integrated.

        In hold mode only the time advances; paused or failed, nothing happens.
        """
        if self.paused or self.failure is not None:
            return False
        if self.mode == 'hold':
            self.steps += 1
            self.applied_effort = self._zero
            return False
        integrator = self.params.integrator
        n = self.n
        q, qd = self._x[:n], self._x[n:]
        try:
            command = self._servo_command(q, qd) if self.joint_commanded else self.command()
            tau, qdd = self.drive(q, qd, command)
            q, qd = self._integrate[integrator](q, qd, tau, qdd)
        except (ValueError, np.linalg.LinAlgError, FloatingPointError) as exc:
            self._fail(f'the dynamics failed on a non-finite or invalid state at '
                       f't = {self.t:.6f} s (integrator {integrator}): {exc}')
            return False
        speed = np.abs(qd).max()
        finite = (math.isfinite(np.vdot(q, q) + speed)
                  or bool(np.isfinite(q).all() and np.isfinite(qd).all()))
        if not (speed <= self.params.divergence_velocity and finite):
            what = ('became non-finite' if not finite else
                    f'diverged (joint speed {speed:.3g} > {self.params.divergence_velocity:g})')
            self._fail(f'the state {what} at t = {self.t + self.h:.6f} s '
                       f'(integrator {integrator}, step {self.h:g} s)')
            return False
        self._x[:n] = q
        self._x[n:] = qd
        self.steps += 1
        self.applied_effort = tau
        return True

    def _fail(self, message):
        self.failure = message
        self._history.clear()

    def advance(self, steps: int) -> int:
        """Take up to ``steps`` steps; stop early if paused or failed; return the count."""
        done = 0
        for _ in range(steps):
            if self.paused or self.failure is not None:
                break
            self.step()
            done += 1
        return done

    # --- diagnostics -----------------------------------------------------------------
    def energy(self) -> float:
        """Return the mechanical energy T + V of the current state."""
        q, qd = self._x[:self.n], self._x[self.n:]
        return float(self.robot.kinetic_energy(q, qd) + self.robot.potential_energy(q))

    def stability_warnings(self) -> List[str]:
        """Return warnings for joints whose URDF damping alone makes the integrator unstable."""
        limit = STABILITY_MARGIN * STABILITY_LIMIT[self.params.integrator]
        rates = self.h * self.damping / self.inertia
        warnings = []
        for i in np.flatnonzero(rates > limit):
            needed = self.damping[i] / self.inertia[i] / limit
            warnings.append(
                f'{self.robot.joint_names[i]}: damping {self.damping[i]:g} on an effective '
                f'inertia of {self.inertia[i]:.3g} gives h*c/I = {rates[i]:.2f}, above the '
                f'{self.params.integrator} stability bound {limit:.2f}; use physics_rate '
                f'>= {needed:.0f} Hz or another integrator')
        return warnings

    def describe(self) -> str:
        """Return a one-line description of the physics settings."""
        p = self.params
        hz = self.stop_omega / (2.0 * math.pi)
        return (f'{self.robot.n} joints, {p.integrator} at {p.physics_rate:g} Hz, limit stops '
                f'{hz.min():.1f}-{hz.max():.1f} Hz (zeta {p.limit_stop_damping_ratio:g}), '
                f'friction v_eps {self.friction_velocity.min():.3g}-'
                f'{self.friction_velocity.max():.3g}')


class RealTimeFactorMeter:
    """Real-time factor (simulated time / wall time) over a sliding window."""

    def __init__(self, window: float = 2.0):
        """Average over about ``window`` seconds of wall time."""
        self.window = window
        self._samples = []
        self.total_sim = 0.0
        self.total_wall = 0.0

    def reset(self):
        """Forget the history (after a pause or a reset)."""
        self._samples.clear()

    def update(self, sim_time: float, wall_time: float):
        """Record a (sim, wall) time pair."""
        if self._samples:
            ds = sim_time - self._samples[-1][0]
            dw = wall_time - self._samples[-1][1]
            if ds >= 0.0:
                self.total_sim += ds
                self.total_wall += dw
        self._samples.append((sim_time, wall_time))
        while len(self._samples) > 2 and wall_time - self._samples[1][1] >= self.window:
            self._samples.pop(0)

    @property
    def rtf(self) -> float:
        """Return the windowed real-time factor (nan before two samples)."""
        if len(self._samples) < 2:
            return math.nan
        (s0, w0), (s1, w1) = self._samples[0], self._samples[-1]
        return (s1 - s0) / (w1 - w0) if w1 > w0 else math.nan

    @property
    def overall(self) -> float:
        """Return the real-time factor over the whole run (nan before any time)."""
        return self.total_sim / self.total_wall if self.total_wall > 0.0 else math.nan


class SimulationRunner:
    """
    Step a :class:`Simulation` in chunks of one publish period, paced in wall time.

    The runner owns the simulated time: each :meth:`tick` advances the chunk that is
    due at the current wall time, if any, and says when the next one is due, so that a
    ROS timer (the sim node), or :meth:`run`'s plain loop, can drive it.

    ``real_time_factor`` > 0 keeps simulated time at that multiple of wall time (if the
    physics cannot keep up it runs as fast as it can, without catching up later); 0
    runs as fast as possible, one chunk per tick.  After each chunk
    ``on_publish(snapshot)`` is called outside the lock with a :class:`Snapshot`
    (never with a failed, non-finite state); paused or failed, the frozen state is
    published once a publish period.  ``on_failure(message)`` is called once when the
    simulation fails.  ``lock`` guards the simulation: hold it to change commands,
    pause or reset from another thread.
    """

    #: Fall this far behind (wall seconds) and the pacing restarts from now.
    MAX_LAG = 0.25

    def __init__(self, sim: Simulation, publish_rate: float = 100.0,
                 real_time_factor: float = 1.0,
                 on_publish: Optional[Callable] = None, lock=None,
                 clock: Callable[[], float] = time.monotonic,
                 on_failure: Optional[Callable] = None):
        """Prepare to run ``sim``; nothing happens until :meth:`tick` or :meth:`run`."""
        if not publish_rate > 0.0:
            raise ValueError(f'publish_rate must be > 0, got {publish_rate!r}')
        if not real_time_factor >= 0.0:
            raise ValueError(f'real_time_factor must be >= 0, got {real_time_factor!r}')
        self.sim = sim
        self.publish_rate = publish_rate
        self.real_time_factor = real_time_factor
        self.on_publish = on_publish
        self.on_failure = on_failure
        self.lock = lock if lock is not None else threading.Lock()
        self.clock = clock
        self.meter = RealTimeFactorMeter()
        self.chunk = max(1, int(round(sim.params.physics_rate / publish_rate)))
        sim.feedforward_steps = self.chunk
        self._anchor = None
        self._was_frozen = True
        self._next_frozen = -math.inf
        self._reported = None

    @property
    def period(self) -> float:
        """Return the wall time between two chunks at the target pace [s] (0: flat out)."""
        if self.real_time_factor == 0.0:
            return 0.0
        return self.chunk * self.sim.h / self.real_time_factor

    def set_simulation(self, sim: Simulation):
        """Swap in another simulation (a new robot model); call with the lock held."""
        self.sim = sim
        self.chunk = max(1, int(round(sim.params.physics_rate / self.publish_rate)))
        sim.feedforward_steps = self.chunk
        self._anchor = None
        self.meter.reset()

    def step_chunk(self):
        """Advance one publish period (under the lock); return the snapshot to publish."""
        with self.lock:
            self.sim.advance(self.chunk)
            return self._snapshot()

    def snapshot(self):
        """Return the snapshot of the current state (under the lock); None if failed."""
        with self.lock:
            return self._snapshot()

    def _snapshot(self):
        sim = self.sim
        if sim.failure is not None:
            return None
        return Snapshot(sim.t, sim.q, sim.qd, np.array(sim.applied_effort, dtype=float),
                        sim.mode, sim.paused)

    def finished(self, duration: Optional[float]) -> bool:
        """Return True once the simulated time has reached ``duration`` (None: never)."""
        return duration is not None and self.sim.t >= duration - 0.5 * self.sim.h

    def tick(self, duration: Optional[float] = None) -> float:
        """
        Advance the chunk due now (none past ``duration``); return the wait until the next.

        The wait is in seconds of wall time (0 when running as fast as possible).
        """
        now = self.clock()
        sim = self.sim
        frozen = sim.paused or sim.failure is not None
        if frozen != self._was_frozen:
            self._anchor = None
            self.meter.reset()
            self._was_frozen = frozen
        if frozen:
            if now < self._next_frozen:
                return self._next_frozen - now
            self._next_frozen = now + 1.0 / self.publish_rate
            self._chunk()
            return 1.0 / self.publish_rate
        if self.real_time_factor == 0.0:
            # One chunk per tick here too, so that the callbacks between two ticks (a
            # controller's commands above all) act every publish period of simulated
            # time.  Several chunks a tick put a computed-torque loop through the
            # executor 3 to 4 periods late: beyond its margin, the arm then swung
            # against its velocity limits for the whole run.
            if not self.finished(duration):
                self._chunk()
            return 0.0
        if self._anchor is None:
            self._anchor = (sim.t, now)
        s0, w0 = self._anchor
        due = s0 + (now - w0) * self.real_time_factor  # simulated time due now
        chunk_time = self.chunk * sim.h
        if due - sim.t > self.MAX_LAG * self.real_time_factor:
            # cannot keep up: one chunk now, and the pacing restarts from here
            self._anchor = (sim.t + chunk_time, now)
            due = sim.t + chunk_time
        # One chunk per tick, even when behind: the callbacks between two ticks (the
        # commands above all) then act every publish period of simulated time, as on
        # pace.  A burst of chunks on a stale command put a closed loop through another
        # process three periods late and cost its stability margin
        # (test_ros_trajectory_controller.py on a loaded machine).  To catch up, tick
        # more often than once a chunk (the sim node ticks twice).
        if sim.t + chunk_time <= due + 0.5 * sim.h and not self.finished(duration):
            self._chunk()
            sim = self.sim
        s0, w0 = self._anchor
        return max(w0 + (sim.t + chunk_time - s0) / self.real_time_factor - self.clock(), 0.0)

    def _chunk(self) -> bool:
        """Step one chunk and publish it; return True if the simulation is frozen."""
        snapshot = self.step_chunk()
        sim = self.sim
        frozen = sim.paused or sim.failure is not None
        if not frozen:
            self.meter.update(sim.t, self.clock())
        if snapshot is not None and self.on_publish is not None:
            self.on_publish(snapshot)
        failure = sim.failure
        if failure is not None and failure is not self._reported:
            self._reported = failure
            if self.on_failure is not None:
                self.on_failure(failure)
        return frozen

    def run(self, stop: threading.Event, duration: Optional[float] = None):
        """Tick until ``stop`` is set or the simulated time reaches ``duration``."""
        while not stop.is_set() and not self.finished(duration):
            wait = self.tick(duration)
            if wait > 0.0 and not self.finished(duration):
                stop.wait(wait)


@dataclass
class Snapshot:
    """What the runner publishes after a chunk: time, state and applied effort."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    mode: str
    paused: bool
