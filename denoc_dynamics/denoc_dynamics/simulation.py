"""
A simulated arm on the DeNOC forward dynamics (no ROS here): its state and its mode.

As MuJoCo splits the engine step on a plain model and data from the loop that paces
and perturbs it: :class:`Simulation` holds the state x = [q, qd], the time in steps
and the mode (hold, running, paused, stopped, failed), and advances the state in
stretches over which the commands stay put; :mod:`.sim_model` is the model (the URDF's
joint physics, the passive gains of :mod:`.passive`), :mod:`.drives` the commands,
:mod:`.physics` the compiled step (RK4, AB4 or semi-implicit Euler on Saha's O(n)
forward dynamics), :mod:`.sim_loads` the wrenches on the links, and :mod:`.runner`
the pacing.  The sim node (:mod:`denoc_dynamics.ros.sim_node`) wraps them in ROS.
"""

import math
from typing import Optional

import numpy as np

from . import physics
from .drives import Drives
from .physics import Physics
from .sim_loads import SimulationLoads
from .sim_model import SimModel
from .sim_settings import PhysicsParameters, START_MODE


class Simulation:
    """
    A fixed-step simulation of a :class:`denoc_dynamics.Robot`: state and mode.

    Modes: ``'hold'`` keeps the state frozen at the initial positions (time runs on)
    until the first command arrives, then switches to ``'running'``.  ``paused``
    (independent of the mode) freezes time and state.  A non-finite state (a joint
    speed above ``divergence_velocity``, or a failed dynamics call) stops the
    integration: :attr:`failure` says why, the last good state is kept, and
    :meth:`reset` clears it.

    ``physics``: the class of the step, called as ``physics(robot, fd_method)``:
    :class:`.physics.Physics`, compiled; a test may pass a reference written in Python.
    """

    def __init__(self, robot, params: Optional[PhysicsParameters] = None,
                 initial_positions=None, initial_velocities=None, start_mode: str = 'hold',
                 physics=Physics):
        """Set up the model, the drives and the loads of ``robot``; reset to the initial state."""
        self.params = params = params if params is not None else PhysicsParameters()
        params.check()
        START_MODE.check('start_mode', start_mode)
        self.robot, self.n, self.start_mode = robot, robot.n, start_mode
        self.q0 = self._vector(initial_positions, 'initial_positions')
        self.qd0 = self._vector(initial_velocities, 'initial_velocities')
        outside = (self.q0 < robot.joints.lower) | (self.q0 > robot.joints.upper)
        if np.any(outside):
            bad = [robot.joint_names[i] for i in np.flatnonzero(outside)]
            raise ValueError(f'initial_positions outside the joint limits for {bad}')
        self._physics = physics(robot, params.fd_method)
        self._x, self._zero = self._physics.x, np.zeros(self.n)
        self._set_state('hold' if start_mode == 'hold' else 'running', start_mode == 'paused')
        self.model = SimModel(robot, params, self._physics, self.q0)
        self.h = self.model.h
        self.drives = Drives(self.model, self._physics)   # no command yet
        #: The wrenches on the links and the virtual wall (:mod:`.sim_loads`).
        self.loads = SimulationLoads(robot, self._physics.loads, params.command_timeout)

    def _vector(self, value, name):
        v = np.array(value if value is not None and len(value) else np.zeros(self.n), float)
        if v.shape != (self.n,) or not np.all(np.isfinite(v)):
            raise ValueError(f'{name} must be {self.n} finite numbers, got {list(v)}')
        return v

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
    def joint_torque(self) -> np.ndarray:
        """
        Return what joint torque sensors read now: tau_J (zero in hold mode).

        tau_J = applied_effort + passive(q, qd), the drives' torque past the joints'
        friction, damping and stops, as Franka's arms measure it on the link side:
        I qdd + C qd + g = tau_J + tau_ext holds with the external torques only.
        """
        if self.mode == 'hold':
            return self._zero.copy()
        return self.applied_effort + self.model.passive_torques(self.q, self.qd)

    # --- mode ------------------------------------------------------------------------
    def reset(self) -> str:
        """Go back to the initial state in hold mode, unpaused; say what failed before, if so."""
        failure = self.failure
        self._restart('hold', paused=False)
        if failure is not None:
            return f'reset to the initial state (hold mode); the previous run failed: {failure}'
        return 'reset to the initial state (hold mode)'

    def _restart(self, mode, paused):
        self._set_state(mode, paused)
        self.drives.clear()
        self.loads.clear()             # the wall stays

    def _set_state(self, mode, paused):
        """Put the initial state back at step 0, in ``mode``; no failure."""
        self._x[:self.n], self._x[self.n:] = self.q0, self.qd0
        self.steps, self.mode, self.paused, self.stopped = 0, mode, paused, False
        self.failure: Optional[str] = None
        self._physics.count[0] = 0     # no AB4 history
        self.applied_effort = self._zero

    def reset_state(self):
        """Put the state back to the initial one in hold mode; the time runs on."""
        steps = self.steps
        self._restart('hold', paused=self.paused)
        self.steps = steps

    def reset_time(self):
        """Set the simulated time back to zero; the state and the commands stay."""
        self.drives.shift_time(self.t)
        self.steps = 0

    def stop(self):
        """Reset everything and pause: the stopped state of the simulation interfaces."""
        self.reset()
        self.paused = self.stopped = True

    def set_paused(self, paused: bool):
        """Pause (freeze time and state) or resume; either ends the stopped state."""
        self.paused = bool(paused)
        self.stopped = False

    def set_command(self, tau, joints=None):
        """Command efforts (:meth:`.drives.Drives.set_command`); the first ends hold mode."""
        self.drives.set_command(tau, joints, self.steps)
        self._leave_hold_mode()

    def set_joint_command(self, joints, mode, tau, q_ref, qd_ref):
        """Command drives per joint (:meth:`.drives.Drives.set_joint_command`); ends hold mode."""
        self.drives.set_joint_command(joints, mode, tau, q_ref, qd_ref, self.steps)
        self._leave_hold_mode()

    def _leave_hold_mode(self):
        if self.mode == 'hold':
            self.mode = 'running'
            self._physics.count[0] = 0

    # --- time ------------------------------------------------------------------------
    def step(self) -> bool:
        """Advance one step; return False if nothing was integrated (hold, paused, failed)."""
        integrating = self.mode != 'hold'
        return self.advance(1) == 1 and integrating and self.failure is None

    def step_paused(self, steps: int) -> int:
        """
        Take exactly ``steps`` steps while paused (fewer only on a failure); return the count.

        The simulation stays paused and is no longer in the stopped state.
        """
        if not self.paused:
            raise ValueError('the simulation is not paused')
        self.stopped = self.paused = False
        try:
            return self.advance(steps)
        finally:
            self.paused = True

    def advance(self, steps: int) -> int:
        """
        Take up to ``steps`` steps; stop early if paused or failed; return the count.

        A failed step counts.  Running, the steps go to the compiled physics in
        stretches over which the commands stay put: up to the next event of the
        drives (:meth:`.drives.Drives.events`) or the next end of a wrench.
        """
        done = 0
        while done < steps and not self.paused and self.failure is None:
            if self.mode == 'hold':
                self.steps += steps - done
                self.applied_effort = self._zero
                return steps
            servo, stretch, feedforward = self.drives.events(self.steps)
            end = self.loads.expire(self.t)
            if end < math.inf:               # up to the next end of a wrench
                stretch = min(stretch, math.ceil((end - self.t) / self.h - 1e-9))
            stretch = max(1, int(min(stretch, steps - done)))
            taken, status, speed = self._physics.advance(
                stretch, servo, self.h, self.model.integrator, self.params.divergence_velocity,
                feedforward)
            self.steps += taken
            done += taken
            if taken:
                self.applied_effort = self._physics.applied_effort
            if status != physics.RUNNING:
                self._fail(status, speed)
                done += 1
        return done

    def _fail(self, status, speed):
        what = ('became non-finite' if status == physics.NON_FINITE else
                f'diverged (joint speed {speed:.3g} > {self.params.divergence_velocity:g})')
        self.failure = (f'the state {what} at t = {self.t + self.h:.6f} s '
                        f'(integrator {self.params.integrator}, step {self.h:g} s)')
        self._physics.count[0] = 0
