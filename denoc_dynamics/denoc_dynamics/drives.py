"""
The joint commands of a simulated arm: what the drives of :mod:`.servo` are told, and when.

:class:`Drives` takes the commands and keeps the drives' references in the arrays that
the compiled step reads (:attr:`.physics.Physics.drive` and ``mode``):

* effort commands (:meth:`Drives.set_command`), held until they are older than
  ``command_timeout`` (:class:`HeldCommand`), on every joint or on some (an arm's
  controller beside a gripper's);
* joint commands (:meth:`Drives.set_joint_command`): per joint an effort, position or
  velocity drive with its references, held until the next one or until
  ``joint_command_timeout``, when the joints hold their position;
* the events between them (:meth:`Drives.events`): a command expiring, and the
  model's gravity and bias forces ``tau_ff`` evaluated once every
  :attr:`Drives.feedforward_steps` steps (a publish period) and held, as g(q) is for
  gravity-compensated effort commands; the simulation steps the compiled physics in
  stretches between two events, and the compiled step evaluates ``tau_ff`` at the
  start of the stretch where :meth:`Drives.events` says it is due;
* the servo gains (:meth:`Drives.set_servo_gains`; the model's defaults from
  :func:`.servo.default_gains`).

Times are counted in steps of the simulation (t = steps h), which the caller passes in.
"""

import math

import numpy as np

from .servo import EFFORT, POSITION, saturation_error, VELOCITY


class HeldCommand:
    """
    The latest effort command, held until it is older than ``timeout``.

    The one timeout of the effort commands: on simulated time in :class:`Drives`, on
    ROS time in the dynamics node.  Older than ``timeout`` [s] the command counts as
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
    """An effort or position command beyond any physical meaning for the joint."""


def first_step_after(h: float, time: float, timeout: float, start: int) -> int:
    """Return the first step s >= start with s h - time > timeout (the expiry test)."""
    s = max(start, int(math.floor((time + timeout) / h)) - 1)
    while s > start and (s - 1) * h - time > timeout:
        s -= 1
    while not s * h - time > timeout:
        s += 1
    return s


class Drives:
    """
    The commands of the drives of a :class:`~.sim_model.SimModel`, in ``buffers``' arrays.

    ``buffers``: the :class:`~.physics.Physics` whose ``drive`` rows and ``mode`` the
    compiled step reads, and whose state ``x`` the drives read (a position hold
    starts where the joints are; g(q) and the bias forces at the current state).
    """

    def __init__(self, model, buffers):
        """Take the drives' arrays; no command yet (zero effort)."""
        self.model = model
        params, n = model.params, model.n
        self.x = buffers.x
        #: Per joint the drive mode (:data:`.servo.EFFORT`, ``POSITION``, ``VELOCITY``).
        self.mode = buffers.mode
        self.tau_cmd, self.q_ref, self.qd_ref, self.tau_ff, self._effort_command = (
            buffers.drive)
        self.kp, self.kd = model.kp, model.kd
        self.held = HeldCommand(n, params.command_timeout)
        #: The drives add the arm's gravity to the effort commands (``effort_mode``).
        self.gravity_compensated = params.effort_mode == 'gravity_compensated'
        self._tau_cmd_raw = np.zeros(n)   # the joint commands' efforts, before gravity
        #: Steps between two evaluations of the servos' gravity and bias forces (held in
        #: between): one publish period, set by :class:`~.runner.SimulationRunner`.
        self.feedforward_steps = 1
        self.clear()

    def clear(self):
        """Forget every command: zero effort on every joint, from the effort path."""
        self.held.clear()
        self._effort_joints = None     # the joints effort commands cover, if not all
        self.joint_commanded = False   # the drives follow set_joint_command
        self._joint_command_time = -math.inf
        self._joint_command_expired = False
        self.mode[:] = EFFORT
        self._feedforward_due = 0

    def shift_time(self, seconds: float):
        """Count the commands' times from ``seconds`` later (the clock was set back)."""
        self.held.time -= seconds
        self._joint_command_time -= seconds
        self._feedforward_due = 0

    def command(self, steps: int) -> np.ndarray:
        """Return the effort commanded at step ``steps``: the command, or zero if stale."""
        return self.held.current(steps * self.model.h)

    def set_command(self, tau, joints, steps: int):
        """
        Set the commanded joint efforts (chain order) at step ``steps``, clamped.

        Raises ValueError on a wrong length or a non-finite value, and
        :class:`CommandOutOfRange` if a clamped effort exceeds the model's
        ``effort_bound``: the effort that would take the joint, at its smallest
        effective inertia, from rest past ``divergence_velocity`` within one step.  In
        practice only a joint without an effort limit gets there.

        ``joints`` (chain indices, None: all): the joints the command covers.  The
        others are left to joint commands (:meth:`set_joint_command`): an arm's
        controller commands the arm's joints, a gripper's the finger; a command that
        covers every joint takes over from joint commands.
        """
        tau = self._checked_effort(tau, np.arange(self.model.n))
        if joints is not None and self.joint_commanded:
            joints = np.asarray(joints, dtype=np.int64)
            self.held.hold(tau, steps * self.model.h)
            self.mode[joints] = EFFORT
            self._tau_cmd_raw[joints] = self.tau_cmd[joints] = tau[joints]
            self._feedforward_due = steps   # gravity-compensated: g(q) added now
        else:
            self.clear()
            self.held.hold(tau, steps * self.model.h)
        self._effort_joints = None if joints is None else np.asarray(joints, dtype=np.int64)

    def _checked_effort(self, tau, joints) -> np.ndarray:
        """Return ``tau`` of the chain joints ``joints`` clamped (set_command's checks)."""
        model = self.model
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (len(joints),) or not np.all(np.isfinite(tau)):
            raise ValueError(f'effort command must be {len(joints)} finite numbers, '
                             f'got {tau!r}')
        tau = np.clip(tau, -model.effort_limit[joints], model.effort_limit[joints])
        beyond = np.flatnonzero(np.abs(tau) > model.effort_bound[joints])
        if beyond.size:
            k = joints[beyond[0]]
            raise CommandOutOfRange(
                f'effort {tau[beyond[0]]:.6g} for joint {model.robot.joint_names[k]!r} '
                f'exceeds {model.effort_bound[k]:.3g}, which would take it from rest past '
                f'{model.params.divergence_velocity:g} in one step')
        return tau

    def set_joint_command(self, joints, mode, tau, q_ref, qd_ref, steps: int):
        """
        Command the drives of the chain joints ``joints`` (indices) per joint (:mod:`.servo`).

        ``mode``, ``tau``, ``q_ref``, ``qd_ref``: one entry per joint of ``joints``
        (``tau`` an effort feedforward in the servo modes), at step ``steps``.  The
        command is held until the next one (or ``joint_command_timeout``); joints left
        out keep theirs, and the first joint command after effort commands (or none)
        has the joints it leaves out hold their position.  Raises ValueError on a
        non-finite value, a position outside the joint's limits or an unknown mode,
        and :class:`CommandOutOfRange` as :meth:`set_command` does; nothing changes then.
        """
        model = self.model
        joints = np.asarray(joints, dtype=np.int64)
        mode = np.asarray(mode, dtype=np.int64)
        q_ref, qd_ref = (np.asarray(x, dtype=float) for x in (q_ref, qd_ref))
        count = len(joints)
        if not (mode.shape == q_ref.shape == qd_ref.shape == (count,)) or count == 0:
            raise ValueError(f'a joint command needs one mode and reference per joint, got '
                             f'{count} joints')
        if len(np.unique(joints)) < count or np.any((joints < 0) | (joints >= model.n)):
            raise ValueError(f'joint indices must be distinct chain joints, got {joints}')
        if np.any((mode < EFFORT) | (mode > 2)):
            raise ValueError(f'unknown drive mode in {mode}')
        if not (np.all(np.isfinite(q_ref)) and np.all(np.isfinite(qd_ref))):
            raise ValueError('joint command references must be finite')
        tau = self._checked_effort(tau, joints)
        positioned = mode == POSITION
        lower, upper = model.lower[joints], model.upper[joints]
        outside = positioned & ((q_ref < lower) | (q_ref > upper))
        if np.any(outside):
            k = int(np.flatnonzero(outside)[0])
            raise CommandOutOfRange(
                f'position {q_ref[k]:.6g} for joint {model.robot.joint_names[joints[k]]!r} '
                f'is outside its limits [{lower[k]:g}, {upper[k]:g}]')
        if not self.joint_commanded or self._joint_command_expired:
            self._hold_position(steps)
        # a velocity reference starts where the joint is, or goes on where it was
        starting = (mode == VELOCITY) & (self.mode[joints] != VELOCITY)
        q_ref = np.where(positioned, q_ref, np.where(starting, self.x[joints],
                                                     self.q_ref[joints]))
        self.mode[joints] = mode
        self.tau_cmd[joints] = self._tau_cmd_raw[joints] = tau
        if self.gravity_compensated:
            self._feedforward_due = steps   # the effort joints' gravity, now
        self.q_ref[joints] = q_ref
        self.qd_ref[joints] = np.where(mode == EFFORT, 0.0, qd_ref)
        self._joint_command_time = steps * model.h
        self._joint_command_expired = False

    def _hold_position(self, steps):
        """
        Have every drive hold the current position (a joint command takes over).

        The joints that effort commands cover (``set_command(tau, joints)``) stay on them.
        """
        self.joint_commanded = True
        self.mode[:] = POSITION
        self.q_ref[:] = self.x[:self.model.n]
        self.qd_ref[:] = 0.0
        self.tau_cmd[:] = self._tau_cmd_raw[:] = 0.0
        self._feedforward_due = steps
        joints = self._effort_joints
        if joints is not None:
            self.mode[joints] = EFFORT
            self.tau_cmd[joints] = self._tau_cmd_raw[joints] = self.command(steps)[joints]

    def events(self, steps: int):
        """
        Put the commands due at step ``steps`` in place; return (servo, steps, feedforward).

        ``servo``: the drives follow joint commands (the servo path of the compiled
        step), else the effort commands alone (the effort path); ``steps``: the steps
        they stay so; ``feedforward``: ``tau_ff`` is due now, and the compiled step
        sets it to the bias forces ID(q, qd, 0) at the stretch's start
        (:func:`.physics.bias_feedforward`).
        """
        if self.joint_commanded:
            return (True,) + self._servo_events(steps)
        return False, self._effort_events(steps), False

    def _servo_events(self, steps):
        """
        Handle the joint command's events due now; return (steps until the next one, feedforward).

        The joint command expires (:meth:`_hold_position`) once older than
        ``joint_command_timeout``; the gravity and bias forces ``tau_ff`` are due every
        :attr:`feedforward_steps` steps (``feedforward`` True: the compiled step
        evaluates them at the stretch's start) and held in between.
        """
        model = self.model
        timeout = model.params.joint_command_timeout
        steps_left = math.inf
        if self._effort_joints is not None:   # effort commands beside joint commands
            steps_left = self._shared_effort_events(steps)
        if timeout > 0.0 and not self._joint_command_expired:
            expiry = first_step_after(model.h, self._joint_command_time, timeout, steps)
            if expiry == steps:
                self._hold_position(steps)
                self._joint_command_expired = True
            else:
                steps_left = expiry - steps
        feedforward = steps >= self._feedforward_due
        if feedforward:
            if self.gravity_compensated:   # the effort-mode joints: command + g(q)
                effort = self.mode == EFFORT
                self.tau_cmd[effort] = self._with_gravity(self._tau_cmd_raw)[effort]
            self._feedforward_due = steps + self.feedforward_steps
        return min(steps_left, self._feedforward_due - steps), feedforward

    def _shared_effort_events(self, steps) -> int:
        """
        Expire a stale effort command on its joints beside joint commands.

        Return the steps until it expires (inf: never, or done).
        """
        held, h = self.held, self.model.h
        if held.timeout <= 0.0 or held.value is held.zero:
            return math.inf
        if steps * h - held.time <= held.timeout:
            return first_step_after(h, held.time, held.timeout, steps) - steps
        joints = self._effort_joints
        stale = joints[self.mode[joints] == EFFORT]
        self.tau_cmd[stale] = self._tau_cmd_raw[stale] = 0.0   # timed out: zero torque
        held.clear()
        self._feedforward_due = steps
        return math.inf

    def _effort_events(self, steps) -> int:
        """
        Put the effort command due now in place; return the steps it stays so.

        Gravity-compensated, the command plus g(q), held for a publish period at most.
        """
        held, h = self.held, self.model.h
        stay = math.inf
        if held.timeout > 0.0 and held.value is not held.zero:
            if steps * h - held.time <= held.timeout:
                stay = first_step_after(h, held.time, held.timeout, steps) - steps
        if self.gravity_compensated:
            self._effort_command[:] = self._with_gravity(self.command(steps))
            return min(stay, self.feedforward_steps)
        self._effort_command[:] = self.command(steps)
        return stay

    def _with_gravity(self, tau) -> np.ndarray:
        """Return ``tau`` + g(q) at the current state, clamped to the effort limits."""
        model = self.model
        g = model.robot.gravity_torques(self.x[:model.n])
        return np.clip(tau + g, -model.effort_limit, model.effort_limit)

    def set_servo_gains(self, kp, kd):
        """Set the position and velocity servos' gains per joint (chain order)."""
        model = self.model
        kp, kd = (np.asarray(x, dtype=float) for x in (kp, kd))
        if kp.shape != (model.n,) or kd.shape != (model.n,) or not (
                np.all(kp >= 0.0) and np.all(kd >= 0.0)
                and np.all(np.isfinite(kp)) and np.all(np.isfinite(kd))):
            raise ValueError(f'servo gains must be {model.n} finite numbers >= 0 each, '
                             f'got kp {kp!r}, kd {kd!r}')
        self.kp[:], self.kd[:] = kp, kd
        # the error at which a servo's effort saturates (the velocity references' bound)
        saturation_error(model.effort_limit, kp, model.max_error)
