"""
A simulated arm on the DeNOC forward dynamics (no ROS here): modes, commands, diagnostics.

The sim node (:mod:`denoc_dynamics.ros.sim_node`) is a thin ROS wrapper around the
classes of this module and :mod:`.runner`, which can be tested and benchmarked
in-process.  The work is split along its jobs:

* :class:`Simulation` (here) holds the state x = [q, qd], the modes (hold, running,
  paused, stopped, failed), the commands and their timeouts, and the diagnostics;
* :mod:`.physics` integrates ``qdd = FD(q, qd, tau + passive(q, qd))`` with a fixed
  step, in one compiled call per stretch of steps over which the commands stay put
  (a publish period): classic Runge-Kutta 4 (``rk4``), Adams-Bashforth 4 (``ab4``,
  started by three RK4 steps) and semi-implicit (symplectic) Euler
  (``semi_implicit_euler``), on Saha's O(n) forward dynamics; the passive joint
  physics from the URDF (viscous damping ``-damping * qd``, a smooth Coulomb friction
  ``-friction * tanh(qd / v_eps)``, the position limits as one-sided spring-damper
  stops); the drives, in a real arm's modes (:mod:`.servo`): effort commands
  (:meth:`Simulation.set_command`), or per joint position and velocity servos at the
  physics rate with the model's gravity and bias forces evaluated once a publish
  period and held (:meth:`Simulation.set_joint_command`), each clamped to ``<limit
  effort>`` and holding its joint within ``<limit velocity>``
  (:func:`.physics.hold_velocity_limits`);
* :mod:`.runner` steps the simulation in chunks of one publish period, paces it to a
  real-time factor and measures the achieved one.

The passive physics of each joint (limit stops, friction regularization) is kept within
the integrator's stability budget by :func:`denoc_dynamics.passive.passive_gains`.
"""

from dataclasses import dataclass
import math
import time
from typing import List, Optional

import numpy as np

from . import physics
from .core.call import FORWARD_DYNAMICS
from .core.robot import FD_METHODS, load_urdf_xml, Robot
from .core.warm_up import WARM_UP_TREE
from .passive import passive_gains, stability_warnings
from .physics import Physics
from .reference_physics import ReferencePhysics
from .runner import RealTimeFactorMeter, SimulationRunner, Snapshot  # noqa: F401
from .servo import default_gains
from .servo import EFFORT
from .servo import POSITION
from .servo import VELOCITY
from .settings import check_fields, Setting, setting_field
from .sim_loads import SimulatedSensors, SimulationLoads

#: The integrators and start modes of the simulation (and, from the core's Robot, the
#: forward dynamics methods): the one list of each, which the nodes, the launch files
#: and the command lines import.
INTEGRATORS = ('rk4', 'ab4', 'semi_implicit_euler')
START_MODES = ('hold', 'paused', 'running')
#: The start mode of a :class:`Simulation` (the sim node's ``start_mode`` parameter).
START_MODE = Setting(
    'hold', "'hold': frozen at initial_positions until the first effort command; "
    "'paused': paused until ~/pause false; 'running': integrate from the start",
    choices=START_MODES)
#: What an effort command is: the joint torque itself (``raw``), or the torque on top
#: of the arm's own gravity, which the drives add (``gravity_compensated``, as
#: torque-controlled arms such as Franka's and KUKA's do).
EFFORT_MODES = ('raw', 'gravity_compensated')

#: What the start-up log says the forward dynamics is, per ``fd_method``.
FD_DESCRIPTIONS = {'denoc': "Saha's O(n) forward dynamics (compiled)",
                   'cholesky': 'composite-body GIM + Cholesky, O(n^3) (compiled)'}


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
    stop of joint i is a spring ``k_i = I_i w_i^2`` and a damper ``c_i = 2 zeta I_i w_i``
    acting beyond the limit (I_i the joint's effective inertia); w_i is 2 pi f, or
    higher where the joint's drive at full effort would press it more than
    :data:`~.passive.STOP_DEFLECTION` past the limit (k_i >= effort_i /
    STOP_DEFLECTION), and at most what the integrator allows; the damping is lowered
    where the integrator would be unstable (:func:`~.passive.passive_gains`).
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
    ``effort_mode``: one of :data:`EFFORT_MODES`; ``gravity_compensated``: the drives add
    the model's gravity torques g(q) to every effort command (evaluated once a publish
    period and held, like the servos' feedforward), and the sum is clamped to the
    effort limits.
    """

    physics_rate: float = setting_field(
        1000.0, 'integration steps per simulated second [Hz]', gt=0.0, finite=True)
    integrator: str = setting_field(
        'rk4', "'rk4' (Runge-Kutta 4), 'ab4' (Adams-Bashforth 4, started by RK4) or "
        "'semi_implicit_euler'", choices=INTEGRATORS)
    friction_velocity: float = setting_field(
        0.05, 'smallest regularization velocity v_eps of the Coulomb friction '
        'friction * tanh(qd / v_eps) [rad/s, m/s]; raised per joint where the '
        'integrator needs it', gt=0.0)
    limit_stop_frequency: float = setting_field(
        50.0, 'least natural frequency [Hz] of the position-limit stops: stiffness I w^2 and '
        'damping 2 zeta I w beyond a limit, I the joint effective inertia; raised so that '
        'the joint drive at full effort presses the joint at most 3 mm (rad) past its limit '
        '(hard stops), lowered where the integrator needs it', gt=0.0)
    limit_stop_damping_ratio: float = setting_field(
        1.0, 'damping ratio zeta of the position-limit stops', ge=0.0)
    command_timeout: float = setting_field(
        0.5, 'an effort command older than this [s] counts as zero torque; <= 0: never '
        'expires')
    fd_method: str = setting_field(
        'denoc', "forward dynamics solver: 'denoc' (Saha's O(n) sweeps) or 'cholesky' "
        '(the composite-body GIM and Cholesky, the O(n^3) reference)', choices=FD_METHODS)
    divergence_velocity: float = setting_field(
        1000.0, 'a joint speed above this [rad/s, m/s] counts as a diverged simulation',
        gt=0.0)
    servo_frequency: float = setting_field(
        25.0, 'natural frequency [Hz] of the default position-servo gains on each '
        "joint's smallest effective inertia (servo.<joint>.kp/kd override them)", gt=0.0)
    servo_damping_ratio: float = setting_field(
        1.0, 'damping ratio of the default position-servo gains', gt=0.0)
    joint_command_timeout: float = setting_field(
        0.0, 'a JointState command older than this [s of simulated time] turns into a '
        'position hold where the joints are; <= 0: held until the next one')
    effort_mode: str = setting_field(
        'raw', "what an effort command is: 'raw' (the joint torque) or "
        "'gravity_compensated' (the torque on top of the arm's gravity g(q), which the "
        'drives add; the sum clamped to the effort limits)', choices=EFFORT_MODES)

    def check(self):
        """Raise ValueError if a setting breaks its rule (:mod:`denoc_dynamics.settings`)."""
        check_fields(self)


def leading_pose(robot, values) -> np.ndarray:
    """
    Return initial positions for every coordinate of ``robot`` from a leading part.

    For a pose configured for an arm and used with the arm plus a gripper: the
    coordinates after ``values`` start at 0, or at their nearest limit.  More values
    than coordinates are returned as given (the simulation refuses them).
    """
    values = np.asarray(values if values is not None else [], dtype=float)
    if len(values) >= robot.n:
        return values
    joints = robot.joints
    rest = np.clip(0.0, joints.lower[len(values):], joints.upper[len(values):])
    return np.concatenate((values, rest))


class Simulation:
    """
    A fixed-step simulation of a :class:`denoc_dynamics.Robot`.

    Modes: ``'hold'`` keeps the state frozen at the initial positions (time runs on)
    until the first effort command arrives, then switches to ``'running'``.
    ``paused`` (independent of the mode) freezes time and state.  A non-finite state
    (a joint speed above ``divergence_velocity``, or a failed dynamics call) stops the
    integration: :attr:`failure` says why, the last good state is kept, and
    :meth:`reset` clears it.

    The steps run in :mod:`.physics`, compiled, a stretch of steps per call; a robot
    that is not a :class:`~.core.robot.Robot` (a stand-in with its own
    ``forward_dynamics``) is stepped by :mod:`.reference_physics` instead.
    """

    def __init__(self, robot, params: Optional[PhysicsParameters] = None,
                 initial_positions=None, initial_velocities=None, start_mode: str = 'hold'):
        """Set up the physics of ``robot`` and reset to the initial state."""
        self.robot = robot
        self.params = params = params if params is not None else PhysicsParameters()
        params.check()
        START_MODE.check('start_mode', start_mode)
        self.start_mode = start_mode
        n = self.n = robot.n
        joints = robot.joints
        self.h = 1.0 / params.physics_rate
        self._integrator = INTEGRATORS.index(params.integrator)
        self._physics = (Physics(robot, params.fd_method) if isinstance(robot, Robot)
                         else ReferencePhysics(robot, params.fd_method))
        # The parameters are rows of the physics' table: what is set here is what runs.
        (self.lower, self.upper, self.velocity_limit, self.effort_limit, self.damping,
         self.friction, self.friction_velocity, self.stop_stiffness, self.stop_damping,
         self.kp, self.kd, self._servo_max_error) = self._physics.joint
        self.q0 = self._vector(initial_positions, 'initial_positions')
        self.qd0 = self._vector(initial_velocities, 'initial_velocities')
        # the chain already holds +-inf where there is no limit (continuous joints too)
        self.lower[:], self.upper[:] = joints.lower, joints.upper
        outside = (self.q0 < self.lower) | (self.q0 > self.upper)
        if np.any(outside):
            bad = [robot.joint_names[i] for i in np.flatnonzero(outside)]
            raise ValueError(f'initial_positions outside the joint limits for {bad}')
        self.effort_limit[:] = joints.effort         # inf where the URDF gives none
        self.velocity_limit[:] = joints.velocity     # inf where the URDF gives none
        self.damping[:] = joints.damping
        self.friction[:] = joints.friction

        # Passive-physics gains within the integrator's stability budget (.passive).
        gains = passive_gains(robot, params, self.q0)
        self.inertia, self.stop_omega = gains.inertia, gains.stop_omega
        self.stop_stiffness[:], self.stop_damping[:] = gains.stop_stiffness, gains.stop_damping
        self.friction_velocity[:] = gains.friction_velocity
        self.effort_bound = gains.effort_bound

        self._x = self._physics.x
        self._zero = np.zeros(n)
        #: The wrenches on the links and the virtual wall (:mod:`.sim_loads`); None for
        #: a stand-in robot stepped by the reference physics.
        self.loads = (SimulationLoads(robot, self._physics.loads, params.command_timeout)
                      if isinstance(robot, Robot) else None)
        self._held = HeldCommand(n, params.command_timeout)
        # The drives (:mod:`.servo`): per joint a mode and its references, used once a
        # joint command arrives (effort commands alone take the plain effort path).
        self.set_servo_gains(*default_gains(self.inertia, self.h, params.servo_frequency,
                                            params.servo_damping_ratio))
        self.drive_mode = self._physics.mode
        self.tau_cmd, self.q_ref, self.qd_ref, self.tau_ff, self._effort_command = (
            self._physics.drive)
        #: The drives add the arm's gravity to the effort commands (``effort_mode``).
        self.gravity_compensated = params.effort_mode == 'gravity_compensated'
        self._tau_cmd_raw = np.zeros(n)   # the joint commands' efforts, before gravity
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
        self._physics.count[0] = 0     # no AB4 history
        self.applied_effort = self._zero
        self.stopped = False
        self._clear_joint_command()
        if self.loads is not None:
            self.loads.clear()             # the wall stays

    def _clear_joint_command(self):
        self._effort_joints = None     # the joints effort commands cover, if not all
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

    def set_command(self, tau, joints=None):
        """
        Set the commanded joint efforts (chain order), clamped to the effort limits.

        The first command ends hold mode.  Raises ValueError on a wrong length or a
        non-finite value, and :class:`CommandOutOfRange` if a clamped effort exceeds
        :attr:`effort_bound`: the effort that would take the joint, at its smallest
        effective inertia, from rest past ``divergence_velocity`` within one step.
        In practice only a joint without an effort limit gets there.

        ``joints`` (chain indices, None: all): the joints the command covers.  The
        others are left to joint commands (:meth:`set_joint_command`): an arm's
        controller commands the arm's joints, a gripper's the finger; a command that
        covers every joint takes over from joint commands.
        """
        tau = self._checked_effort(tau, np.arange(self.n))
        if joints is not None and self.joint_commanded:
            joints = np.asarray(joints, dtype=np.int64)
            self._held.hold(tau, self.t)
            self.drive_mode[joints] = EFFORT
            self._tau_cmd_raw[joints] = self.tau_cmd[joints] = tau[joints]
            self._feedforward_due = self.steps   # gravity-compensated: g(q) added now
        else:
            self._clear_joint_command()
            self._held.hold(tau, self.t)
        self._effort_joints = None if joints is None else np.asarray(joints, dtype=np.int64)
        self._leave_hold_mode()

    def _leave_hold_mode(self):
        if self.mode == 'hold':
            self.mode = 'running'
            self._physics.count[0] = 0

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
        self.tau_cmd[joints] = self._tau_cmd_raw[joints] = tau
        if self.gravity_compensated:
            self._feedforward_due = self.steps   # the effort joints' gravity, now
        self.q_ref[joints] = q_ref
        self.qd_ref[joints] = np.where(mode == EFFORT, 0.0, qd_ref)
        self._joint_command_time = self.t
        self._joint_command_expired = False
        self._leave_hold_mode()

    def _hold_position(self):
        """
        Have every drive hold the current position (a joint command takes over).

        The joints that effort commands cover (``set_command(tau, joints)``) stay on them.
        """
        self.joint_commanded = True
        self.drive_mode[:] = POSITION
        self.q_ref[:] = self._x[:self.n]
        self.qd_ref[:] = 0.0
        self.tau_cmd[:] = self._tau_cmd_raw[:] = 0.0
        self._feedforward_due = self.steps
        joints = self._effort_joints
        if joints is not None:
            self.drive_mode[joints] = EFFORT
            self.tau_cmd[joints] = self._tau_cmd_raw[joints] = self.command()[joints]

    def _servo_events(self) -> int:
        """
        Handle the joint command's events due now; return the steps until the next one.

        The joint command expires (:meth:`_hold_position`) once older than
        ``joint_command_timeout``; the gravity and bias forces ``tau_ff`` are evaluated
        every :attr:`feedforward_steps` steps and held in between.
        """
        timeout = self.params.joint_command_timeout
        steps_left = math.inf
        if self._effort_joints is not None:   # effort commands beside joint commands
            steps_left = self._shared_effort_events()
        if timeout > 0.0 and not self._joint_command_expired:
            expiry = _first_step_after(self.h, self._joint_command_time, timeout,
                                       self.steps)
            if expiry == self.steps:
                self._hold_position()
                self._joint_command_expired = True
            else:
                steps_left = expiry - self.steps
        if self.steps >= self._feedforward_due:
            n = self.n
            self.tau_ff[:] = self.robot.bias_forces(self._x[:n], self._x[n:])
            if self.gravity_compensated:   # the effort-mode joints: command + g(q)
                effort = self.drive_mode == EFFORT
                self.tau_cmd[effort] = self._with_gravity(self._tau_cmd_raw)[effort]
            self._feedforward_due = self.steps + self.feedforward_steps
        return min(steps_left, self._feedforward_due - self.steps)

    def _shared_effort_events(self) -> int:
        """
        Expire a stale effort command on its joints beside joint commands.

        Return the steps until it expires (inf: never, or done).
        """
        held = self._held
        if held.timeout <= 0.0 or held.value is held.zero:
            return math.inf
        if self.t - held.time <= held.timeout:
            return _first_step_after(self.h, held.time, held.timeout,
                                     self.steps) - self.steps
        joints = self._effort_joints
        stale = joints[self.drive_mode[joints] == EFFORT]
        self.tau_cmd[stale] = self._tau_cmd_raw[stale] = 0.0   # timed out: zero torque
        held.clear()
        self._feedforward_due = self.steps
        return math.inf

    def _effort_events(self) -> int:
        """
        Put the effort command due now in place; return the steps it stays so.

        Gravity-compensated, the command plus g(q), held for a publish period at most.
        """
        held = self._held
        steps = math.inf
        if held.timeout > 0.0 and held.value is not held.zero:
            if self.t - held.time <= held.timeout:
                steps = _first_step_after(self.h, held.time, held.timeout,
                                          self.steps) - self.steps
        if self.gravity_compensated:
            self._effort_command[:] = self._with_gravity(self.command())
            return min(steps, self.feedforward_steps)
        self._effort_command[:] = self.command()
        return steps

    def _with_gravity(self, tau) -> np.ndarray:
        """Return ``tau`` + g(q) at the current state, clamped to the effort limits."""
        g = self.robot.gravity_torques(self._x[:self.n])
        return np.clip(tau + g, -self.effort_limit, self.effort_limit)

    def set_servo_gains(self, kp, kd):
        """Set the position and velocity servos' gains per joint (chain order)."""
        kp, kd = (np.asarray(x, dtype=float) for x in (kp, kd))
        if kp.shape != (self.n,) or kd.shape != (self.n,) or not (
                np.all(kp >= 0.0) and np.all(kd >= 0.0)
                and np.all(np.isfinite(kp)) and np.all(np.isfinite(kd))):
            raise ValueError(f'servo gains must be {self.n} finite numbers >= 0 each, '
                             f'got kp {kp!r}, kd {kd!r}')
        self.kp[:], self.kd[:] = kp, kd
        # the error at which a servo's effort saturates (the velocity references' bound)
        self._servo_max_error[:] = np.inf
        np.divide(self.effort_limit, kp, out=self._servo_max_error, where=kp > 0.0)

    def command(self) -> np.ndarray:
        """Return the effort commanded now: the clamped command, or zero if it is stale."""
        return self._held.current(self.t)

    # --- physics ---------------------------------------------------------------------
    def passive_torques(self, q, qd) -> np.ndarray:
        """Return damping + smooth Coulomb friction + limit-stop efforts at (q, qd)."""
        q, qd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd))
        out = np.empty(self.n)
        physics.passive_torques(self._physics.joint, q, qd, out)
        return out

    @property
    def joint_torque(self) -> np.ndarray:
        """
        Return what joint torque sensors read now: tau_J (zero in hold mode).

        The drives' torque of the last step past the joints' friction and damping (and
        limit stops), tau_J = applied_effort + passive(q, qd) at the current state, as
        Franka's arms measure it on the link side: the torque that moves the links, so
        that I qdd + C qd + g = tau_J + tau_ext holds with the external torques only.
        """
        if self.mode == 'hold':
            return self._zero.copy()
        n = self.n
        return self.applied_effort + self.passive_torques(self._x[:n], self._x[n:])

    def acceleration(self, q, qd, tau) -> np.ndarray:
        """Return qdd = FD(q, qd, tau + passive(q, qd)), the one dynamics of every integrator."""
        return self.robot.forward_dynamics(q, qd, tau + self.passive_torques(q, qd),
                                           self.params.fd_method)

    def step(self) -> bool:
        """
        Advance one step; return False if nothing was integrated.

        In hold mode only the time advances; paused or failed, nothing happens.
        """
        integrating = self.mode != 'hold'
        return self.advance(1) == 1 and integrating and self.failure is None

    def advance(self, steps: int) -> int:
        """
        Take up to ``steps`` steps; stop early if paused or failed; return the count.

        A failed step counts.  Running, the steps go to the compiled physics in
        stretches over which the commands stay put: up to the next expiry of a
        command or the next evaluation of the servos' feedforward.
        """
        done = 0
        while done < steps and not self.paused and self.failure is None:
            if self.mode == 'hold':
                self.steps += steps - done
                self.applied_effort = self._zero
                return steps
            servo = self.joint_commanded
            stretch = self._servo_events() if servo else self._effort_events()
            if self.loads is not None:     # up to the next end of a wrench
                end = self.loads.expire(self.t)
                if end < math.inf:
                    stretch = min(stretch, math.ceil((end - self.t) / self.h - 1e-9))
            stretch = max(1, int(min(stretch, steps - done)))
            taken, status, speed = self._physics.advance(
                stretch, servo, self.h, self._integrator, self.params.divergence_velocity)
            self.steps += taken
            done += taken
            if taken:
                self.applied_effort = self._physics.applied_effort
            if status != physics.RUNNING:
                self._fail(status, speed)
                done += 1
        return done

    def _fail(self, status, speed):
        integrator = self.params.integrator
        what = ('became non-finite' if status == physics.NON_FINITE else
                f'diverged (joint speed {speed:.3g} > {self.params.divergence_velocity:g})')
        self.failure = (f'the state {what} at t = {self.t + self.h:.6f} s '
                        f'(integrator {integrator}, step {self.h:g} s)')
        self._physics.count[0] = 0

    # --- diagnostics -----------------------------------------------------------------
    def energy(self) -> float:
        """Return the mechanical energy T + V of the current state."""
        q, qd = self._x[:self.n], self._x[self.n:]
        return float(self.robot.kinetic_energy(q, qd) + self.robot.potential_energy(q))

    def stability_warnings(self) -> List[str]:
        """Return warnings for joints whose URDF damping alone makes the integrator unstable."""
        return stability_warnings(self.robot, self.params, self.inertia)

    def describe(self) -> str:
        """Return a one-line description of the physics settings."""
        p = self.params
        hz = self.stop_omega / (2.0 * math.pi)
        dynamics = FD_DESCRIPTIONS[p.fd_method]
        mimics = self.robot.n_bodies - self.robot.n
        if mimics and isinstance(self.robot, Robot):
            dynamics = (f'{dynamics} with {mimics} mimic joints, one more solve each'
                        if self.robot.fd_algorithms[p.fd_method] == FORWARD_DYNAMICS else
                        'the constrained GIM + Cholesky of the mimic joints (compiled)')
        return (f'{self.robot.n} joints, {p.integrator} at {p.physics_rate:g} Hz on '
                f'{dynamics}, limit stops '
                f'{hz.min():.1f}-{hz.max():.1f} Hz (zeta {p.limit_stop_damping_ratio:g}), '
                f'friction v_eps {self.friction_velocity.min():.3g}-'
                f'{self.friction_velocity.max():.3g}')


def _first_step_after(h: float, time: float, timeout: float, start: int) -> int:
    """Return the first step s >= start with s h - time > timeout (the expiry test)."""
    s = max(start, int(math.floor((time + timeout) / h)) - 1)
    while s > start and (s - 1) * h - time > timeout:
        s -= 1
    while not s * h - time > timeout:
        s += 1
    return s


def compile_simulation() -> float:
    """
    Compile the physics kernels (:mod:`.physics`) into their disk cache; return the seconds.

    One run of each integrator on the warm-up tree of :mod:`.core.warm_up` (a mimic
    and a prismatic joint), on the effort and the servo path, with a velocity limit
    reached; ``make build`` and ``denoc-dynamics compile`` call it.
    """
    start = time.perf_counter()
    for tip in (None, 'tool'):
        robot = load_urdf_xml(WARM_UP_TREE, tip_link=tip, side_branches='drop')
        for integrator in INTEGRATORS:
            sim = Simulation(robot, PhysicsParameters(integrator=integrator),
                             start_mode='running')
            sim.set_command(sim.effort_limit)
            sim.advance(5)
            sim.loads.apply('tool', (1.0, 0.0, 0.0), (0.0, 0.0, 0.1), 'a', (0.0, 0.1, 0.0))
            sim.loads.set_walls([((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), 1e3, 1.0)])
            sim.loads.set_contact_points([('b', (0.0, 0.0, 0.0))])
            sim.advance(5)
            SimulatedSensors(sim, ['tool_joint']).read(sim.q, sim.qd, sim.applied_effort)
            sim.loads.set_walls([])
            sim.loads.clear()
            sim.set_joint_command([0], [VELOCITY], [0.0], [0.0], [1.0])
            sim.advance(5)
            sim.passive_torques(sim.q, sim.qd)
    return time.perf_counter() - start
