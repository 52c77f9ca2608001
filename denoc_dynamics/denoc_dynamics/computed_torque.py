"""
Computed-torque control of a serial arm through the DeNOC core (no ROS in here).

The control law (inverse-dynamics control; Craig, "Introduction to Robotics", 1989,
ch. 10; Siciliano et al., "Robotics: Modelling, Planning and Control", 2009,
sec. 8.5.2) linearizes and decouples the arm with its own dynamics model::

    tau = M(q) (qdd_d + K_d (qd_d - qd) + K_p (q_d - q)) + b(q, qd)

with M(q) the generalized inertia matrix (GIM, Saha 1999, "Analytical expression for
the inverted inertia matrix of serial robots", eq. 22, by composite bodies) and
b(q, qd) = ID(q, qd, 0) the Coriolis, centrifugal and gravity efforts.  With a
perfect model the error e = q_d - q then obeys ``e'' + K_d e' + K_p e = 0`` on every
joint alone: K_p = omega^2, K_d = 2 omega gives a critically damped error of natural
frequency omega.  With ``friction_compensation`` the URDF's joint ``<dynamics>``
(viscous damping and Coulomb friction, regularized as the simulated arm does) is
added as f(qd_d + lambda e), at the desired velocity corrected by the position error:
equal to the friction at zero error, and unable to destabilize the loop where the
model's friction is off (compensating at the measured velocity would add negative
damping there).  The correction ``lambda e`` (``friction_feedback`` lambda [1/s]) is
what brings a joint with much friction and little inertia to rest on its goal: M(q)
K_p is tiny on a light wrist (0.11 N m/rad on denoc_arm7's joint7 for 0.1 N m of
Coulomb friction), so a joint that arrives late, or whose friction is not quite the
model's, otherwise creeps for seconds at the friction's regularization velocity.
With lambda e the compensation pushes towards the goal with up to the model's
friction, a stiffness of friction * lambda / v_eps near it; it vanishes at zero error
and, at speed, saturates (tanh).  Measured on denoc_arm7 (benchmarks/bench_tracking.py,
test_computed_torque.py): with the friction model scaled by 0.5 or 1.5, lambda = 15
puts every joint within 1 mrad of the goal 1 s after the last point, where without
it joints stay 100 to 200 mrad off.  The efforts are clamped to the URDF's effort
limits.

:class:`PDGravity`, PD plus gravity compensation ``tau = g(q) + D (K_p e + K_d e')``,
is the classic peer that needs no inertia matrix; with D = diag(M(q_0)) at a nominal
pose, each joint alone has the same natural frequency and damping as under the
computed torque with the same K_p, K_d ("the same gains").
"""

import numpy as np


def joint_friction(qd, damping, friction, velocity):
    """
    Return the effort the URDF joint friction takes at velocity qd.

    ``damping * qd + friction * tanh(qd / velocity)``: viscous damping plus Coulomb
    friction regularized over ``velocity`` [rad/s].
    """
    return damping * qd + friction * np.tanh(qd / velocity)


def _gains(value, n, name):
    gains = np.asarray(value, dtype=float)
    if gains.shape not in ((), (n,)):
        raise ValueError(f'{name} must be one number or {n}, got {value!r}')
    gains = np.broadcast_to(gains, (n,)).copy()
    if not np.all(np.isfinite(gains)) or np.any(gains < 0.0):
        raise ValueError(f'{name} must be {n} finite numbers >= 0, got {value!r}')
    return gains


class ComputedTorque:
    """tau = M(q) (qdd_d + K_d e' + K_p e) + b(q, qd) [+ f(qd_d + lambda e)], clamped."""

    def __init__(self, robot, kp, kd, friction_compensation: bool = True,
                 friction_velocity=0.05, friction_feedback=15.0, friction_scale=1.0):
        """
        Control ``robot`` with gains ``kp`` [1/s^2] and ``kd`` [1/s] (scalars or per joint).

        ``friction_velocity`` [rad/s, m/s] (scalar or per joint) is the
        regularization of the Coulomb friction in the compensation: that of the arm's
        friction model (the simulated arm's ``Simulation.friction_velocity``).
        ``friction_feedback`` lambda [1/s] (scalar or per joint): the compensation is
        evaluated at qd_d + lambda (q_d - q) (module doc); 0: at qd_d.
        ``friction_scale`` multiplies the URDF damping and friction in the compensation
        (1: the URDF's; another value models a friction known to be off).
        """
        self.robot = robot
        n = robot.n
        self.kp = _gains(kp, n, 'kp')
        self.kd = _gains(kd, n, 'kd')
        joints = robot.joints
        self.effort_limit = joints.effort
        self.friction_compensation = bool(friction_compensation)
        self.friction_velocity = _gains(friction_velocity, n, 'friction_velocity')
        if not np.all(self.friction_velocity > 0.0):
            raise ValueError(f'friction_velocity must be > 0, got {friction_velocity!r}')
        self.friction_feedback = _gains(friction_feedback, n, 'friction_feedback')
        scale = float(friction_scale)
        if not (np.isfinite(scale) and scale >= 0.0):
            raise ValueError(f'friction_scale must be a finite number >= 0, '
                             f'got {friction_scale!r}')
        self.damping = scale * joints.damping
        self.friction = scale * joints.friction

    def acceleration(self, q, qd, q_d, qd_d, qdd_d) -> np.ndarray:
        """Return the commanded acceleration qdd_d + K_d (qd_d - qd) + K_p (q_d - q)."""
        return qdd_d + self.kd * (qd_d - qd) + self.kp * (q_d - q)

    def __call__(self, q, qd, q_d, qd_d, qdd_d) -> np.ndarray:
        """Return the clamped efforts for the state (q, qd) and reference (q_d, qd_d, qdd_d)."""
        a = self.acceleration(q, qd, q_d, qd_d, qdd_d)
        M, b = self.robot.equations_of_motion(q, qd)
        tau = M @ a + b
        if self.friction_compensation:
            velocity = qd_d + self.friction_feedback * (q_d - q)
            tau += joint_friction(velocity, self.damping, self.friction, self.friction_velocity)
        return np.clip(tau, -self.effort_limit, self.effort_limit)


class PDGravity:
    """The peer: tau = g(q) + D (K_p e + K_d e'), D = diag(M(q_0)), clamped."""

    def __init__(self, robot, kp, kd, q0):
        """Gains ``kp`` [1/s^2], ``kd`` [1/s] scaled by the joint inertias at ``q0``."""
        self.robot = robot
        n = robot.n
        scale = np.diag(robot.inertia_matrix(q0)).copy()
        self.kp = scale * _gains(kp, n, 'kp')
        self.kd = scale * _gains(kd, n, 'kd')
        self.effort_limit = robot.joints.effort

    def __call__(self, q, qd, q_d, qd_d, qdd_d) -> np.ndarray:
        """Return the clamped efforts (qdd_d is not used: no model of the inertia)."""
        tau = self.robot.gravity_torques(q) + self.kp * (q_d - q) + self.kd * (qd_d - qd)
        return np.clip(tau, -self.effort_limit, self.effort_limit)


def sampled_loop(sim, law, trajectory, rate: float, duration: float,
                 delay: int = 0, observe=None) -> np.ndarray:
    """
    Run ``law`` on the simulation ``sim`` as the controller node does; return the errors.

    Every 1 / ``rate`` seconds of simulated time the state is sampled, the reference
    taken from ``trajectory`` (:class:`denoc_dynamics.trajectory.Trajectory`, in
    simulated time) at that instant, and the effort ``law(q, qd, q_d, qd_d, qdd_d)``
    held until the next sample (zero-order hold), for ``duration`` seconds.  The
    physics rate of ``sim`` must be a multiple of ``rate``.  With ``delay`` > 0 each
    command acts that many periods late (the first one at once), as when the
    controller's answer misses the next physics chunk.  ``observe(sim)``, if given,
    sees the simulation at each sample, before the command.  Returns the position
    errors q_d - q at the samples, shape (samples, n).
    """
    steps = sim.params.physics_rate / rate
    chunk = int(round(steps))
    if chunk < 1 or abs(steps - chunk) > 1e-9:
        raise ValueError(f'the physics rate {sim.params.physics_rate:g} Hz is not a multiple '
                         f'of the control rate {rate:g} Hz')
    errors = []
    pending = []
    for _ in range(int(round(duration * rate))):
        if observe is not None:
            observe(sim)
        q, qd = sim.q, sim.qd
        q_d, qd_d, qdd_d = trajectory.sample(sim.t)
        errors.append(q_d - q)
        pending.append(law(q, qd, q_d, qd_d, qdd_d))
        if len(pending) > delay:
            sim.set_command(pending.pop(0))
        elif len(errors) == 1:
            sim.set_command(pending[0])   # the first command acts at once, then late ones
        if sim.advance(chunk) < chunk or sim.failure is not None:
            raise RuntimeError(f'the simulation stopped: {sim.failure}')
    return np.array(errors)
