"""
The passive-physics budget of an explicit integrator: limit stops and friction, per joint.

A pure function of the robot, the physics settings and a pose, so that the simulation,
the launch files and the trajectory controller compute the same numbers without
building a simulation.

Per joint, the passive terms form a damped oscillator ``I s^2 + c s + k`` (I the
joint's effective inertia; c the viscous damping plus the slope ``friction / v_eps``
of the regularized Coulomb friction ``friction * tanh(qd / v_eps)`` plus the stop
damping; k the stop stiffness), whose eigenvalues satisfy
``|s| <= max(c / I, sqrt(k / I))``.  Each integrator is stable for ``h |s|`` below
about :data:`STABILITY_LIMIT`.  The effective inertia is the smallest ``1 / (M^-1)_ii``
over sampled poses (the inertia joint i feels when all the others move freely), and
``h |s|`` is kept under :data:`STABILITY_MARGIN` times the limit: what the URDF damping
leaves of the budget is split between the friction (``v_eps`` raised where needed) and
the stop damping (its damping ratio lowered where needed).  With w the stop
frequency and zeta its damping ratio, the stop of joint i is a spring ``I_i w^2`` and
a damper ``2 zeta I_i w`` acting beyond the limit.

Hard stops: a joint pressed into its stop by its own drive at full effort must stay
within :data:`STOP_BOUND` of the limit, so the stop is at least as stiff as
``effort / STOP_DEFLECTION`` (w at least ``sqrt(effort / (STOP_DEFLECTION I))``),
up to the budget; the stop frequency w stays within :data:`STOP_FREQUENCY_SHARE` of
``rate_max`` and its damping within half the spare budget (the friction has the
other half), so that ``|s| <= rate_max`` either way.  A joint that arrives faster than
its velocity limit (a limp one falling, or one the others fling) loses the excess at
contact in an inelastic impact (:mod:`.stop_impact`), so that the spring-damper stops
at most what a drive brings.
"""

import math
from typing import List, NamedTuple, Optional

import numpy as np

#: Largest stable ``h * rate`` on the negative real axis (rate = damping / inertia):
#: RK4 about 2.785, AB4 0.3, semi-implicit Euler 2 (velocity update is explicit).
STABILITY_LIMIT = {'rk4': 2.785, 'ab4': 0.3, 'semi_implicit_euler': 2.0}

#: Fraction of :data:`STABILITY_LIMIT` that the passive physics may use.
STABILITY_MARGIN = 0.8

#: Fraction of the budget ``rate_max`` that a stop's frequency may use: semi-implicit
#: Euler, explicit in the damping, keeps a damped oscillator stable only while
#: ``(h w)^2 + 2 h c / I < 4``: with w <= rate_max / 2 and c / I <= rate_max that holds.
STOP_FREQUENCY_SHARE = {'rk4': 1.0, 'ab4': 1.0, 'semi_implicit_euler': 0.5}

#: Hard stops: a joint pressed into its position-limit stop by its own drive (at up to
#: its full effort, arriving at up to its velocity limit) stays within STOP_BOUND [rad,
#: m] of the limit (docs/bad-input.md, test/sim/test_hard_stops.py).  The stop's
#: stiffness is at least effort / STOP_DEFLECTION, 0.3 of the bound (the rest is for
#: the overshoot of a joint that arrives at speed, and gravity), where the integrator's
#: budget allows.  Stiffer stops would hold closer, but their impacts would drag the
#: other joints further past their velocity limits (test/sim/test_sim_physics.py).
#: A joint arriving faster than its velocity limit is slowed to it at contact
#: (:mod:`.stop_impact`), so the bound holds for limp joints too.
STOP_BOUND = 0.01
STOP_DEFLECTION = 0.3 * STOP_BOUND


class PassiveGains(NamedTuple):
    """The passive physics of each joint within the integrator's budget."""

    inertia: np.ndarray             # smallest effective inertia 1 / (M^-1)_ii
    stop_omega: np.ndarray          # limit-stop natural frequency w [rad/s]
    stop_stiffness: np.ndarray      # I w^2
    stop_damping: np.ndarray        # 2 zeta I w, within half the spare budget
    friction_velocity: np.ndarray   # v_eps of the Coulomb friction
    effort_bound: np.ndarray        # the effort that takes the joint from rest past
    #                                 divergence_velocity in one step


def effective_inertia(robot, samples: int = 64, seed: int = 0,
                      q_extra: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Return each joint's smallest effective inertia 1 / (M^-1)_ii over sampled poses.

    Poses are drawn uniformly within the position limits (+-pi where there are none),
    plus the zero pose and ``q_extra``.
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


def passive_gains(robot, params, pose=None) -> PassiveGains:
    """
    Return the passive gains of ``robot`` under ``params`` (PhysicsParameters).

    ``pose``: the initial positions, sampled with the other poses.
    """
    h = 1.0 / params.physics_rate
    joints = robot.joints
    inertia = effective_inertia(robot, q_extra=pose)
    rate_max = STABILITY_MARGIN * STABILITY_LIMIT[params.integrator] / h
    spare = np.maximum(rate_max - joints.damping / inertia, 0.1 * rate_max)
    # hard stops: at least effort / STOP_DEFLECTION stiff, within the frequency share
    held = np.where(np.isfinite(joints.effort), joints.effort, 0.0)
    omega = np.maximum(2.0 * math.pi * params.limit_stop_frequency,
                       np.sqrt(held / (STOP_DEFLECTION * inertia)))
    omega = np.minimum(omega, STOP_FREQUENCY_SHARE[params.integrator] * rate_max)
    # the damping ratio at that frequency, within half the spare budget
    damping = inertia * np.minimum(2.0 * params.limit_stop_damping_ratio * omega,
                                   0.5 * spare)
    return PassiveGains(
        inertia, omega, inertia * omega ** 2, damping,
        np.maximum(params.friction_velocity, joints.friction / (inertia * 0.5 * spare)),
        inertia * params.divergence_velocity / h)


def stability_warnings(robot, params, inertia) -> List[str]:
    """Return warnings for joints whose URDF damping alone makes the integrator unstable."""
    limit = STABILITY_MARGIN * STABILITY_LIMIT[params.integrator]
    damping = robot.joints.damping
    rates = damping / inertia / params.physics_rate
    warnings = []
    for i in np.flatnonzero(rates > limit):
        needed = damping[i] / inertia[i] / limit
        warnings.append(
            f'{robot.joint_names[i]}: damping {damping[i]:g} on an effective inertia of '
            f'{inertia[i]:.3g} gives h*c/I = {rates[i]:.2f}, above the {params.integrator} '
            f'stability bound {limit:.2f}; use physics_rate >= {needed:.0f} Hz or another '
            'integrator')
    return warnings
