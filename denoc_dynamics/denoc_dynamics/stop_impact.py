"""
The impact of a joint on its position-limit stop faster than its velocity limit.

The stops of :mod:`.passive` are spring-dampers sized for what a drive brings: a joint
pressed in by its own drive at full effort, arriving at up to its velocity limit
v_max, stays within :data:`.passive.STOP_BOUND`.  A limp joint (its drive off) falling
under gravity, or flung by the others, can arrive several times faster, and a spring of
fixed frequency w lets it in about ``|qd| / w``: stiffer springs would hold it, but
their impacts would jolt the other joints of a driven arm past their velocity limits.
So what a joint brings beyond v_max is taken out at contact, in a perfectly inelastic
impact (restitution 0), as a rigid stop would: the spring-damper then stops the rest,
as it stops a drive's joint.

The impact is an impulse ``p`` on joint i alone, so the whole arm's velocities change
as a rigid body system's do (M dqd = e_i p):

    dqd = M^-1 e_i p,        p = (qd_i+ - qd_i) / (M^-1)_ii,

which sets joint i's velocity to ``qd_i+`` and moves the others by the coupling
``(M^-1)_ki / (M^-1)_ii`` times the change.  Contact is taken a fraction of a step
early, as time-stepping contact methods do (the gap closing within the step): with
the gap ``g >= 0`` to the limit ahead, a joint that would cross it this step
(``|qd_i| h > g``) at more than :data:`IMPACT_SPEED` v_max keeps
``|qd_i+| = max(v_max, g / h)``, so that it reaches the limit
at the end of the step (Euler's prediction) and no faster than v_max beyond it.
Joints within :data:`IMPACT_SPEED` times their velocity limits (a drive's joint: its
drive holds it within 1.3 % of v_max), and those without a limit, are never touched.
Several joints in one step take their impulses one after the other, each on the
velocities the earlier ones left.
"""

import numba

#: Compiled once into numba's cache, IEEE arithmetic (the physics' settings).
njit = numba.njit(cache=True, error_model='numpy')

#: A joint faster than this many times its v_max takes an impact on its stop: above
#: what a drive lets its own joint reach (NOT_BRAKING, 1.015, in the tests), so that a
#: drive's joint at v_max, give or take round-off, never switches between the laws.
IMPACT_SPEED = 1.05


@njit
def impact_velocity(q, qd, lower, upper, v_max, h):
    """
    Return joint velocity ``qd+`` after its impact on a stop within the step (``qd`` if none).

    ``q``, ``qd``: the joint's position and velocity at the step's start; ``lower``,
    ``upper``: its limits (+-inf where there are none); ``v_max`` its velocity limit;
    ``h`` the step.
    """
    if qd > IMPACT_SPEED * v_max and q + h * qd > upper:
        return max(v_max, (upper - q) / h)
    if -qd > IMPACT_SPEED * v_max and q + h * qd < lower:
        return -max(v_max, (q - lower) / h)
    return qd
