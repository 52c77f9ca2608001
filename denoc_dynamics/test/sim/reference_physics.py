"""
The step of :mod:`denoc_dynamics.physics` written in Python over ``robot.forward_dynamics``.

It is the reference that the compiled step is checked against, and the physics of a
test's stand-in robot with its own ``forward_dynamics`` (to inject a failing dynamics
call): a test passes it to ``Simulation(..., physics=ReferencePhysics)``.  The drives'
laws, the passive physics, the velocity limit and the AB4 history are the compiled
helpers of :mod:`denoc_dynamics.physics` called from Python; the inverse of the
inertia matrix is LAPACK's (the stops' impacts too), and RK4 is written out stage by
stage.
"""

from denoc_dynamics.physics import (AB4, adams_bashforth, beyond_limits, DIVERGED,
                                    drive_efforts, DRIVE_PASSES, driving,
                                    hold_velocity_limits, LOWER, NON_FINITE, passive_torques,
                                    Physics, push_history, RUNNING, SEMI_IMPLICIT_EULER, TAU,
                                    TAU_FF, UPPER, VELOCITY_LIMIT)
from denoc_dynamics.stop_impact import impact_velocity
import numpy as np


class ReferencePhysics(Physics):
    """The compiled ``Physics`` stepped in Python, one ``robot.forward_dynamics`` a stage."""

    def __init__(self, robot, method: str = 'denoc'):
        """Lay out the buffers; call ``robot.forward_dynamics(..., method)`` per stage."""
        super().__init__(robot, method)
        self.robot = robot
        self.method = method

    def acceleration(self, q, qd, tau) -> np.ndarray:
        """Return qdd = FD(q, qd, tau + passive(q, qd))."""
        passive = np.empty(len(q))
        passive_torques(self.joint, q, qd, passive)
        return self.robot.forward_dynamics(q, qd, tau + passive, self.method)

    def _run(self, steps, servo, h, integrator, divergence_velocity, feedforward):
        """Take up to ``steps`` steps, as :func:`denoc_dynamics.physics.advance` does."""
        n = len(self.mode)
        if feedforward:                    # the servos' held bias forces, at the start
            self.drive[TAU_FF] = self.robot.bias_forces(self.x[:n], self.x[n:])
        for step in range(steps):
            q, qd = self.x[:n].copy(), self.x[n:].copy()
            tau = self.scratch[TAU]
            try:
                if self._impacts(q, qd, h) and integrator == AB4:
                    self.count[0] = 0
                drive_efforts(self.joint, self.drive, self.mode, servo, q, qd, h, tau)
                q_new, qd_new = self._step(q, qd, tau, servo, h, integrator)
            except (ValueError, np.linalg.LinAlgError, FloatingPointError):
                q_new = qd_new = np.full(n, np.nan)
            speed = np.abs(qd_new).max()
            finite = bool(np.isfinite(q_new).all() and np.isfinite(qd_new).all())
            if not (finite and speed <= divergence_velocity):
                self.report[0] = speed
                self.count[0] = 0
                return step, NON_FINITE if not finite else DIVERGED
            self.x[:n], self.x[n:] = q_new, qd_new
        return steps, RUNNING

    def _impacts(self, q, qd, h):
        """Take the stops' impacts on qd in place: qd += M^-1 e_i p, joint by joint."""
        joint, M_inv, hit = self.joint, None, False
        for i in range(len(q)):
            target = impact_velocity(q[i], qd[i], joint[LOWER, i], joint[UPPER, i],
                                     joint[VELOCITY_LIMIT, i], h)
            if target != qd[i]:
                if M_inv is None:
                    M_inv = np.linalg.inv(self.robot.inertia_matrix(q))
                qd += M_inv[:, i] * ((target - qd[i]) / M_inv[i, i])
                hit = True
        return hit

    def _step(self, q, qd, tau, servo, h, integrator):
        """Return (q, qd) after one step, the drives holding their velocity limits."""
        n, joint = len(q), self.joint
        command = tau.copy()
        active = np.array([driving(self.mode, servo, tau, i) for i in range(n)], dtype=float)
        qdd = self.acceleration(q, qd, tau)
        multistep = integrator == AB4 and self.count[0] >= 3
        if integrator == AB4:
            push_history(self.x, self.history, self.count, qdd)
        M_inv, v = None, qd + h * qdd
        for attempt in range(DRIVE_PASSES + 1):
            if attempt:
                q_new, qd_new = self._integrate(q, qd, tau, qdd, h, integrator, multistep)
                v = qd_new.copy()
                if (integrator == SEMI_IMPLICIT_EULER or attempt == DRIVE_PASSES
                        or not beyond_limits(joint, active, v)):
                    return q_new, qd_new
            elif not beyond_limits(joint, active, v):
                continue
            if M_inv is None:
                M_inv = np.linalg.inv(self.robot.inertia_matrix(q))
            before = tau.copy()
            hs = h * 55.0 / 24.0 if multistep and attempt else h
            hold_velocity_limits(joint, active, command, hs, M_inv, tau, v)
            if attempt and np.array_equal(tau, before):
                return q_new, qd_new
            qdd = qdd + M_inv @ (tau - before)
            if integrator == AB4:
                self.history[0, n:] = qdd

    def _integrate(self, q, qd, tau, qdd, h, integrator, multistep):
        if integrator == SEMI_IMPLICIT_EULER:
            qd = qd + h * qdd
            return q + h * qd, qd
        if multistep:
            q_new, qd_new = np.empty(len(q)), np.empty(len(q))
            adams_bashforth(self.x, self.history, h, q_new, qd_new)
            return q_new, qd_new
        f = self.acceleration
        q_2, qd_2 = q + (0.5 * h) * qd, qd + (0.5 * h) * qdd
        qdd_2 = f(q_2, qd_2, tau)
        q_3, qd_3 = q + (0.5 * h) * qd_2, qd + (0.5 * h) * qdd_2
        qdd_3 = f(q_3, qd_3, tau)
        q_4, qd_4 = q + h * qd_3, qd + h * qdd_3
        qdd_4 = f(q_4, qd_4, tau)
        return (q + (h / 6.0) * (qd + 2.0 * (qd_2 + qd_3) + qd_4),
                qd + (h / 6.0) * (qdd + 2.0 * (qdd_2 + qdd_3) + qdd_4))
