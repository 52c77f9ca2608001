"""
The settings of a simulated arm: its physics, its start mode, its initial pose.

The one list of each choice (integrators, start modes, effort modes; the forward
dynamics methods come from the core's Robot), which the simulation, the nodes, the
launch files and the command lines import; :class:`PhysicsParameters` checks its
fields by the rules of :mod:`denoc_dynamics.settings`.
"""

from dataclasses import dataclass

import numpy as np

from .core.robot import FD_METHODS
from .settings import check_fields, Setting, setting_field

#: The integrators and start modes of the simulation (and, from the core's Robot, the
#: forward dynamics methods): the one list of each, which the nodes, the launch files
#: and the command lines import.
INTEGRATORS = ('rk4', 'ab4', 'semi_implicit_euler')
START_MODES = ('hold', 'paused', 'running')
#: The start mode of a :class:`~.simulation.Simulation` (the sim node's ``start_mode`` parameter).
START_MODE = Setting(
    'hold', "'hold': frozen at initial_positions until the first effort command; "
    "'paused': paused until ~/pause false; 'running': integrate from the start",
    choices=START_MODES)
#: What an effort command is: the joint torque itself (``raw``), or the torque on top
#: of the arm's own gravity, which the drives add (``gravity_compensated``, as
#: torque-controlled arms such as Franka's and KUKA's do).
EFFORT_MODES = ('raw', 'gravity_compensated')


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
    (:meth:`.drives.Drives.set_joint_command`) older than this turns into a position hold
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
