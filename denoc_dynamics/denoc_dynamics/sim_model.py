"""
The model of a simulated arm: the joint table of its compiled physics, and what it gives.

MuJoCo splits a simulation into the model (what stays put) and the data (the state);
here :class:`SimModel` is the model: the robot, the settings, the step, and per joint
the rows of :attr:`.physics.Physics.joint` (the URDF's limits, damping and friction,
the passive gains of :func:`.passive.passive_gains`, the servo gains of
:func:`.servo.default_gains`), each a view of
that table, so that what is set here is what the compiled step reads.  It evaluates the
passive efforts and the dynamics at any state, and says in a line what it runs.
:class:`~.simulation.Simulation` holds the state and the mode, :class:`~.drives.Drives`
the commands.
"""

import math
from typing import List

import numpy as np

from . import physics
from .core.call import FORWARD_DYNAMICS
from .passive import passive_gains, stability_warnings
from .servo import default_gains, saturation_error
from .sim_settings import INTEGRATORS

#: What the start-up log says the forward dynamics is, per ``fd_method``.
FD_DESCRIPTIONS = {'denoc': "Saha's O(n) forward dynamics (compiled)",
                   'cholesky': 'composite-body GIM + Cholesky, O(n^3) (compiled)'}


class SimModel:
    """
    The constants of ``robot`` simulated under ``params``, in the joint table of ``buffers``.

    ``buffers``: the :class:`~.physics.Physics` whose joint table the rows are;
    ``pose``: the initial positions, sampled with the other poses for the joints'
    effective inertia (:func:`.passive.effective_inertia`).
    """

    def __init__(self, robot, params, buffers, pose):
        """Write the URDF's joint physics and the passive gains into the joint table."""
        self.robot, self.params, self.n = robot, params, robot.n
        self.h = 1.0 / params.physics_rate
        self.integrator = INTEGRATORS.index(params.integrator)
        self.table = buffers.joint
        (self.lower, self.upper, self.velocity_limit, self.effort_limit, self.damping,
         self.friction, self.friction_velocity, self.stop_stiffness, self.stop_damping,
         self.kp, self.kd, self.max_error) = self.table
        joints = robot.joints
        # the chain already holds +-inf where there is no limit (continuous joints too)
        self.lower[:], self.upper[:] = joints.lower, joints.upper
        self.effort_limit[:] = joints.effort         # inf where the URDF gives none
        self.velocity_limit[:] = joints.velocity     # inf where the URDF gives none
        self.damping[:] = joints.damping
        self.friction[:] = joints.friction
        # Passive-physics gains within the integrator's stability budget (.passive).
        gains = passive_gains(robot, params, pose)
        self.inertia, self.stop_omega = gains.inertia, gains.stop_omega
        self.stop_stiffness[:], self.stop_damping[:] = gains.stop_stiffness, gains.stop_damping
        self.friction_velocity[:] = gains.friction_velocity
        #: The effort that takes a joint from rest past divergence_velocity in one step.
        self.effort_bound = gains.effort_bound
        # the servos' default gains (Drives.set_servo_gains changes them)
        self.kp[:], self.kd[:] = default_gains(self.inertia, self.h, params.servo_frequency,
                                               params.servo_damping_ratio)
        saturation_error(self.effort_limit, self.kp, self.max_error)

    def passive_torques(self, q, qd) -> np.ndarray:
        """Return damping + smooth Coulomb friction + limit-stop efforts at (q, qd)."""
        q, qd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd))
        out = np.empty(self.n)
        physics.passive_torques(self.table, q, qd, out)
        return out

    def acceleration(self, q, qd, tau) -> np.ndarray:
        """Return qdd = FD(q, qd, tau + passive(q, qd)), the one dynamics of every integrator."""
        return self.robot.forward_dynamics(q, qd, tau + self.passive_torques(q, qd),
                                           self.params.fd_method)

    def stability_warnings(self) -> List[str]:
        """Return warnings for joints whose URDF damping alone makes the integrator unstable."""
        return stability_warnings(self.robot, self.params, self.inertia)

    def describe(self) -> str:
        """Return a one-line description of the physics settings."""
        p, robot = self.params, self.robot
        hz = self.stop_omega / (2.0 * math.pi)
        dynamics = FD_DESCRIPTIONS[p.fd_method]
        mimics = robot.n_bodies - robot.n
        if mimics:
            dynamics = (f'{dynamics} with {mimics} mimic joints, one pair of sweeps'
                        if robot.fd_algorithms[p.fd_method] == FORWARD_DYNAMICS else
                        'the constrained GIM + Cholesky of the mimic joints (compiled)')
        return (f'{robot.n} joints, {p.integrator} at {p.physics_rate:g} Hz on '
                f'{dynamics}, limit stops '
                f'{hz.min():.1f}-{hz.max():.1f} Hz (zeta {p.limit_stop_damping_ratio:g}), '
                f'friction v_eps {self.friction_velocity.min():.3g}-'
                f'{self.friction_velocity.max():.3g}')
