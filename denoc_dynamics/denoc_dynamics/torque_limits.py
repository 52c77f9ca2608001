"""
Torque-feasible trajectories: inverse dynamics along the interpolation, and retiming.

A trajectory (a :class:`~.trajectory.Trajectory`, as the controller will follow it)
is sampled along its interpolation, ``SAMPLES_PER_SEGMENT`` samples on every segment,
and the inverse dynamics at each sample, tau(t) = ID(q, qd, qdd) of the robot with its
current payload (the rigid-body efforts; the URDF's joint damping and friction are not
counted), must be within the URDF's ``<limit effort>``.

Uniform time scaling.  Run k times slower, q_k(t) = q(t / k) has qd_k = qd / k and
qdd_k = qdd / k^2.  The inverse dynamics is M(q) qdd + C(q, qd) qd + g(q) with the
Coriolis and centrifugal terms quadratic in qd, so along the same path

    tau_k = g + (tau_1 - g) / k^2,    g = ID(q, 0, 0),

exactly, at each sample.  With d = tau_1 - g and the limit L, |g + d / k^2| <= L holds
for every k >= 1 once |g| <= L, from

    k^2 >= d / (L - g)  (d > 0),    k^2 >= -d / (L + g)  (d < 0),

so the smallest feasible k is the largest of these bounds over the samples (and 1);
no k helps where gravity alone exceeds the limit (the path itself is infeasible).
The retiming aims at :data:`FEEDFORWARD_SHARE` of each limit, L = share x the
URDF's limit, and leaves the rest to the controller's feedback, which a retimed
trajectory at exactly the limit would drive into saturation; where gravity alone
takes more than that share, the whole limit is the bound.
The same samples of the scaled trajectory are the samples of this one, so the bound
is exact for the check: the trajectory retimed by k passes it.  A segment that starts
from a moving reference is not a pure time scaling of the path; the retimed goal is
checked again when it is sent.  (Hollerbach, "Dynamic scaling of manipulator
trajectories", 1984, gives the same scaling law.)
"""

import numba
import numpy as np

from .trajectory import sample_reference, sample_times, TrajectoryError

#: Uniform samples (both ends included) on every segment, as the execution check's.
SAMPLES_PER_SEGMENT = 64

#: At most about this many samples in all: long trajectories get fewer per segment
#: (but at least MIN_PER_SEGMENT).
MAX_SAMPLES, MIN_PER_SEGMENT = 4096, 8

#: The retiming keeps the inverse dynamics within this share of each effort limit; the
#: rest is the feedback's (module doc).
FEEDFORWARD_SHARE = 0.9

#: The retimed trajectory's time scaling is raised by this fraction above the bound
#: (round-off: the scaled samples must pass the check).
SCALE_MARGIN = 1e-6


def sampled(trajectory, start: float, per_segment: int = SAMPLES_PER_SEGMENT):
    """
    Return (t, q, qd, qdd) of ``trajectory`` sampled on every segment from ``start``.

    The samples of the controller's execution check (:func:`.trajectory.sample_times`,
    :func:`.trajectory.sample_reference`), fewer per segment on long trajectories.
    """
    segments = max(1, len(trajectory.times) - 1)
    per_segment = max(MIN_PER_SEGMENT, min(per_segment, MAX_SAMPLES // segments))
    t = sample_times(trajectory, per_segment, start=start)
    return (t,) + tuple(sample_reference(trajectory, t))


def on_this_thread(call, *args):
    """
    Return ``call(*args)`` (a batch of the core) run on the calling thread alone.

    The controller checks a goal between two control steps: a parallel region would
    wait for numba's worker threads, which a loaded machine schedules late (64 or
    640 states of inverse dynamics: 15 ms on two threads at a load average of 4 on
    two cores, 0.3 and 1.9 ms on this thread), and they would compete with the
    control loop.  ``numba.set_num_threads`` is per thread; it is restored after.
    """
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return call(*args)
    finally:
        numba.set_num_threads(threads)


def check_efforts(robot, trajectory, now: float, joint_names=None,
                  per_segment: int = SAMPLES_PER_SEGMENT):
    """
    Raise TrajectoryError('effort limit', ...) unless ID stays within the effort limits.

    The detail names the joint, the time from ``now`` and the torque (the worst
    excess over its limit), and says how much slower the trajectory would pass.
    """
    names = list(joint_names or robot.joint_names)
    limit = robot.joints.effort
    t, q, qd, qdd = sampled(trajectory, now, per_segment)
    tau = on_this_thread(robot.inverse_dynamics, q, qd, qdd)
    excess = np.abs(tau) / limit
    if np.all(excess <= 1.0):
        return
    s, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
    try:
        k = f'; {time_scaling(robot, trajectory, now, per_segment):.3g} times slower passes'
    except TrajectoryError as exc:
        k = f'; no retiming passes: {exc.detail}'
    raise TrajectoryError('effort limit', f'joint {names[j]} needs {tau[s, j]:.4g} N m at '
                                          f't = {t[s] - now:.4g} s from now, beyond its '
                                          f'effort limit {limit[j]:.4g}{k}')


def time_scaling(robot, trajectory, now: float, per_segment: int = SAMPLES_PER_SEGMENT):
    """
    Return the smallest k >= 1 with ``trajectory`` k times slower within the effort limits.

    Within :data:`FEEDFORWARD_SHARE` of them where gravity leaves room (module doc).

    See the module doc; TrajectoryError where gravity alone exceeds them.
    """
    limit = robot.joints.effort
    t, q, qd, qdd = sampled(trajectory, now, per_segment)
    tau = on_this_thread(robot.inverse_dynamics, q, qd, qdd)
    g = on_this_thread(robot.gravity_torques, q)
    over = np.abs(g) > limit
    if np.any(over):
        s, j = np.argwhere(over)[0]
        raise TrajectoryError('effort limit', f'joint {robot.joint_names[j]} needs '
                                              f'{g[s, j]:.4g} N m against gravity alone at '
                                              f't = {t[s] - now:.4g} s (limit {limit[j]:.4g})')
    d = tau - g
    share = FEEDFORWARD_SHARE * limit
    usable = np.where(np.abs(g) < share, share, limit)   # the feedback's headroom if any
    with np.errstate(divide='ignore', invalid='ignore'):
        bound = np.where(d > 0.0, d / (usable - g), -d / (usable + g))
    bound = np.nan_to_num(bound, nan=0.0, posinf=np.inf)
    if not np.all(np.isfinite(bound)):    # gravity exactly at the limit, d pushing beyond
        s, j = np.argwhere(~np.isfinite(bound))[0]
        raise TrajectoryError('effort limit', f'joint {robot.joint_names[j]} is held at its '
                                              f'effort limit by gravity at t = '
                                              f'{t[s] - now:.4g} s: no retiming passes')
    return max(1.0, float(np.sqrt(bound.max())) * (1.0 + SCALE_MARGIN))
