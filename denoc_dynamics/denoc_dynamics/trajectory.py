"""
Joint trajectories: checking and interpolation (no ROS in here).

The conventions are those of ros2_control's joint_trajectory_controller (the
``trajectory_msgs/JointTrajectory`` topic interface), so that a trajectory behaves
here as it does on a ros2_control robot:

* Between two points the interpolation depends on what both points give: positions
  only, linear (constant velocity, zero acceleration); positions and velocities, a
  cubic; positions, velocities and accelerations, a quintic.  Each polynomial meets
  the given values at both ends of the segment (Hermite interpolation).
* Times are ``time_from_start`` after the start time: the message's
  ``header.stamp``, or the time the trajectory is received when the stamp is zero.
* If the first point lies after the time of reception, a first segment runs from
  the state at reception (the controller's current reference: position, velocity
  and acceleration) to the first point, with the first point's kind of
  interpolation.  A first point at ``time_from_start`` 0 is jumped to.
* After the last point the trajectory holds the last positions (zero velocity and
  acceleration).
* A trajectory may name a subset of the joints, in any order (mapped by name); the
  others hold their current reference position.

:func:`check_trajectory` rejects what must not move the arm (unknown or duplicate
joints, non-increasing times, NaN or Inf, positions outside the limits, wrong array
lengths, too many points, times beyond a limit) with :class:`TrajectoryError`, and
:meth:`Trajectory.check_velocity` what would drive a joint faster than its
``<limit velocity>``.  The velocity check is per segment, so that no point is skipped
however close the points are: the mean velocity of every segment (between two points,
and from the reference at reception to the first point) and every given point
velocity must be within the limit.

The points are not the motion: between two points a cubic or a quintic may leave
the limits the points keep (a quintic from rest to rest peaks at 1.875 times its
mean velocity; point accelerations of 400 rad/s^2 at points that all equal the
current pose swing the reference by radians).  :func:`check_execution` checks the
trajectory as it will be executed: the reference the controller will follow,
sampled by :func:`sample_reference` at :func:`sample_times` (``SAMPLES_PER_SEGMENT``
uniform samples on every segment, the one from the current reference to the first
point included), must stay within the position limits (``POSITION_SLACK``) and the
velocity limits (``VELOCITY_SLACK``), and must not jump at the start by more than
``start_tolerance`` (a first point at ``time_from_start`` 0, or a trajectory started
late, is jumped to; MoveIt's ``allowed_start_tolerance`` is the same bound).

The uniform samples miss a peak by at most |p''| h^2 / 8 between two samples h
apart (the parabola through the peak): with 64 samples on a segment of duration T,
h = T / 63, that is 3e-5 |p''| T^2, under 2e-4 of the segment's travel for a
quintic from rest to rest (|p''| <= 5.78 travel / T^2), and for the velocity
|p'''| h^2 / 8, under 2e-3 of its mean velocity (|p'''| <= 60 travel / T^3).
:func:`demo_trajectory` is the motion of the ``denoc_sim_arm`` demo.
"""

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from .names import name_list
from .names import repeated


class TrajectoryError(ValueError):
    """A trajectory that must not be executed; ``reason`` is a short counter key."""

    def __init__(self, reason: str, detail: str):
        """Keep the counter key ``reason`` and the human-readable ``detail``."""
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass
class TrajectoryPoint:
    """One waypoint: time from start [s] and per-joint arrays (velocities optional)."""

    time_from_start: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()


@dataclass
class CheckedTrajectory:
    """A trajectory that passed :func:`check_trajectory`, joints as chain indices."""

    joints: np.ndarray               # (m,) chain index of each trajectory joint
    times: np.ndarray                # (k,) time_from_start of each point [s]
    positions: np.ndarray            # (k, m)
    velocities: List[Optional[np.ndarray]]
    accelerations: List[Optional[np.ndarray]]


def check_trajectory(chain_joint_names: Sequence[str], lower, upper,
                     joint_names: Sequence[str], points: Sequence[TrajectoryPoint],
                     max_points: Optional[int] = None, max_time: Optional[float] = None,
                     allow_partial: bool = True) -> CheckedTrajectory:
    """
    Check a trajectory against a chain; return it mapped onto the chain.

    ``lower`` and ``upper`` are the chain's position limits (+-inf where none).
    Raise :class:`TrajectoryError` for: no joints or no points, a joint name that
    is not in the chain or appears twice, a subset of the chain's joints unless
    ``allow_partial``, more than ``max_points`` points, a positions/velocities/
    accelerations array of the wrong length (velocities and accelerations may be
    empty; accelerations need velocities), a non-finite value, times that are
    negative, later than ``max_time`` or not strictly increasing, and a position
    outside the joint limits.  The ``reason`` of the error is 'unknown joint',
    'duplicate joint' or 'partial joints' for the joint names (joint_trajectory_
    controller's INVALID_JOINTS), another key otherwise (INVALID_GOAL).
    """
    index = {name: i for i, name in enumerate(chain_joint_names)}
    names = list(joint_names)
    if not names:
        raise TrajectoryError('empty', 'the trajectory names no joints')
    if not points:
        raise TrajectoryError('empty', 'the trajectory has no points')
    if max_points is not None and len(points) > max_points:
        raise TrajectoryError('too many points', f'{len(points)} points, more than the '
                                                 f'{max_points} allowed (max_points)')
    unknown = [name for name in names if name not in index]
    if unknown:
        raise TrajectoryError('unknown joint', f'joint(s) {name_list(unknown)} are not in '
                                               f'the chain {name_list(chain_joint_names)}')
    if len(set(names)) < len(names):
        raise TrajectoryError('duplicate joint', f'joint(s) {name_list(repeated(names))} '
                                                 'appear more than once')
    if not allow_partial and len(names) < len(index):
        given = set(names)
        missing = [name for name in chain_joint_names if name not in given]
        raise TrajectoryError('partial joints', f'joint(s) {name_list(missing)} missing, and '
                                                'allow_partial_joints_goal is false')
    m = len(names)
    joints = np.array([index[name] for name in names], dtype=int)
    times = np.empty(len(points))
    positions = np.empty((len(points), m))
    velocities, accelerations = [], []
    for k, point in enumerate(points):
        fields = (('positions', point.positions, False), ('velocities', point.velocities, True),
                  ('accelerations', point.accelerations, True))
        arrays = []
        for field, values, optional in fields:
            if optional and len(values) == 0:
                arrays.append(None)
                continue
            if len(values) != m:
                raise TrajectoryError('length', f'point {k}: {len(values)} {field} for {m} '
                                                f'joints {names}')
            array = np.asarray(values, dtype=float)
            if not np.all(np.isfinite(array)):
                raise TrajectoryError('non-finite', f'point {k}: {field} contain NaN or Inf')
            arrays.append(array)
        if arrays[2] is not None and arrays[1] is None:
            raise TrajectoryError('length', f'point {k}: accelerations without velocities')
        time = float(point.time_from_start)
        if not np.isfinite(time) or time < 0.0:
            raise TrajectoryError('time', f'point {k}: time_from_start {time} is not a '
                                          'finite time >= 0')
        if max_time is not None and time > max_time:
            raise TrajectoryError('time', f'point {k}: time_from_start {time:g} s is later '
                                          f'than {max_time:g} s (max_duration)')
        if k > 0 and not time > times[k - 1]:
            raise TrajectoryError('time', f'point {k}: time_from_start {time} s does not '
                                          f'increase (previous point {times[k - 1]} s)')
        outside = (arrays[0] < lower[joints]) | (arrays[0] > upper[joints])
        if np.any(outside):
            bad = [f'{names[j]}={arrays[0][j]:g} not in [{lower[joints[j]]:g}, '
                   f'{upper[joints[j]]:g}]' for j in np.flatnonzero(outside)]
            raise TrajectoryError('limits', f'point {k}: position(s) outside the joint '
                                            f'limits: {", ".join(bad)}')
        times[k] = time
        positions[k] = arrays[0]
        velocities.append(arrays[1])
        accelerations.append(arrays[2])
    return CheckedTrajectory(joints, times, positions, velocities, accelerations)


def segment_coefficients(p0, v0, a0, p1, v1, a1, duration: float, order: int) -> np.ndarray:
    """
    Return the coefficients c_0..c_5 (rows) of p(s) = sum c_j s^j on [0, duration].

    ``order`` 1: linear through p0 and p1 (v and a ignored); 3: the cubic that meets
    (p0, v0) and (p1, v1); 5: the quintic that meets (p0, v0, a0) and (p1, v1, a1).
    The arrays are per joint; unused coefficients are zero.
    """
    T = float(duration)
    p0, v0, a0, p1, v1, a1 = (np.asarray(x, dtype=float) for x in (p0, v0, a0, p1, v1, a1))
    c = np.zeros((6,) + p0.shape)
    c[0] = p0
    if order == 1:
        c[1] = (p1 - p0) / T
    elif order == 3:
        c[1] = v0
        c[2] = (3.0 * (p1 - p0) - (2.0 * v0 + v1) * T) / T ** 2
        c[3] = (2.0 * (p0 - p1) + (v0 + v1) * T) / T ** 3
    elif order == 5:
        T2 = T * T
        c[1] = v0
        c[2] = 0.5 * a0
        c[3] = (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * T
                - (3.0 * a0 - a1) * T2) / (2.0 * T ** 3)
        c[4] = (30.0 * (p0 - p1) + (14.0 * v1 + 16.0 * v0) * T
                + (3.0 * a0 - 2.0 * a1) * T2) / (2.0 * T ** 4)
        c[5] = (12.0 * (p1 - p0) - 6.0 * (v1 + v0) * T
                - (a0 - a1) * T2) / (2.0 * T ** 5)
    else:
        raise ValueError(f'order must be 1, 3 or 5, got {order!r}')
    return c


#: d^r/ds^r of s^j is _DERIVATIVE[r, j] s^(j - r).
_DERIVATIVE = np.array([[1, 1, 1, 1, 1, 1],
                        [0, 1, 2, 3, 4, 5],
                        [0, 0, 2, 6, 12, 20]], dtype=float)


def evaluate(c: np.ndarray, s: float):
    """Return (p, v, a) of the polynomial with coefficients ``c`` (6, n) at ``s``."""
    powers = np.array([1.0, s, s * s, s ** 3, s ** 4, s ** 5])
    p = powers @ c
    v = (_DERIVATIVE[1, 1:] * powers[:5]) @ c[1:]
    a = (_DERIVATIVE[2, 2:] * powers[:4]) @ c[2:]
    return p, v, a


class Trajectory:
    """
    A trajectory of the whole chain in absolute time, ready to sample.

    Built from a :class:`CheckedTrajectory` by :meth:`from_checked`, or a constant
    one by :meth:`hold`.  :meth:`sample` returns the reference (q, qd, qdd) at any
    time; before the first point it holds the start state, after the last point the
    last positions.
    """

    def __init__(self, times, positions, velocities, accelerations, orders):
        """Take absolute point times (k,), (k, n) arrays and the k - 1 segment orders."""
        self.times = np.asarray(times, dtype=float)
        self.positions = np.asarray(positions, dtype=float)
        self.velocities = np.asarray(velocities, dtype=float)
        self.accelerations = np.asarray(accelerations, dtype=float)
        self.orders = list(orders)
        self._coefficients = [
            segment_coefficients(self.positions[k], self.velocities[k], self.accelerations[k],
                                 self.positions[k + 1], self.velocities[k + 1],
                                 self.accelerations[k + 1],
                                 self.times[k + 1] - self.times[k], order)
            for k, order in enumerate(self.orders)]

    @classmethod
    def hold(cls, time: float, q):
        """Return the trajectory that holds ``q`` (zero velocity) from ``time`` on."""
        q = np.asarray(q, dtype=float)
        zero = np.zeros_like(q)
        return cls([time], [q], [zero], [zero], [])

    @classmethod
    def from_checked(cls, checked: CheckedTrajectory, start_time: float, now: float,
                     reference):
        """
        Return the trajectory of ``checked`` started at ``start_time`` [s].

        ``now`` is the time of reception and ``reference`` = (q, qd, qdd) the
        controller's reference then; joints the trajectory does not name hold the
        reference position.  If the first point is not after ``now``, there is no
        segment from the reference: the reference jumps onto the trajectory where it
        is at ``now`` (a late trajectory, or a first point at time 0).
        """
        q_r, qd_r, qdd_r = (np.asarray(x, dtype=float) for x in reference)
        joints = checked.joints
        # the start state has every field; joints not in the trajectory hold q_r
        times, positions, velocities, accelerations = [now], [q_r], [qd_r], [qdd_r]
        has_v, has_a = [True], [True]
        orders = []
        for k, time_from_start in enumerate(checked.times):
            p = q_r.copy()
            p[joints] = checked.positions[k]
            v = np.zeros_like(q_r)
            a = np.zeros_like(q_r)
            if checked.velocities[k] is not None:
                v[joints] = checked.velocities[k]
            if checked.accelerations[k] is not None:
                a[joints] = checked.accelerations[k]
            point = (start_time + float(time_from_start), p, v, a,
                     checked.velocities[k] is not None, checked.accelerations[k] is not None)
            if point[0] <= times[-1]:
                # only the first point can be due already: it replaces the start state
                times[0], positions[0], velocities[0], accelerations[0], has_v[0], has_a[0] = point
                continue
            orders.append(5 if point[5] and has_a[-1] else 3 if point[4] and has_v[-1] else 1)
            for values, item in zip((times, positions, velocities, accelerations, has_v, has_a),
                                    point):
                values.append(item)
        return cls(times, positions, velocities, accelerations, orders)

    def check_velocity(self, limits, joint_names: Sequence[str]):
        """
        Raise TrajectoryError if a segment or a point is faster than ``limits``.

        ``limits`` are the chain's velocity limits (inf where none).  Every segment's
        mean velocity |p_k+1 - p_k| / (t_k+1 - t_k) and every point's velocity must be
        within them (module doc); a relative 1e-9 allows for round-off.
        """
        limits = np.asarray(limits, dtype=float) * (1.0 + 1e-9)
        if len(self.times) > 1:
            mean = np.abs(np.diff(self.positions, axis=0)) / np.diff(self.times)[:, None]
            self._raise_if_faster(mean, limits, joint_names, 'segment', 'mean velocity')
        self._raise_if_faster(np.abs(self.velocities), limits, joint_names, 'point',
                              'velocity')

    @staticmethod
    def _raise_if_faster(speeds, limits, joint_names, what, quantity):
        excess = speeds > limits
        if np.any(excess):
            k, j = np.argwhere(excess)[0]
            raise TrajectoryError('velocity limit', f'{what} {k}: {quantity} '
                                                    f'{speeds[k, j]:.4g} of {joint_names[j]} '
                                                    f'exceeds its limit {limits[j]:.4g} '
                                                    f'({int(excess.any(axis=1).sum())} '
                                                    f'{what}(s) too fast)')

    @property
    def coefficients(self) -> np.ndarray:
        """Return the coefficients of every segment, (k - 1, 6, n): segment_coefficients."""
        if not self._coefficients:
            return np.zeros((0, 6, self.positions.shape[1]))
        return np.stack(self._coefficients)

    @property
    def end_time(self) -> float:
        """Return the time of the last point [s]."""
        return float(self.times[-1])

    def sample(self, t: float):
        """Return the reference (q, qd, qdd), arrays of the chain, at time ``t`` [s]."""
        times = self.times
        if t >= times[-1]:
            zero = np.zeros_like(self.positions[-1])
            return self.positions[-1].copy(), zero, zero.copy()
        if t <= times[0]:
            return (self.positions[0].copy(), self.velocities[0].copy(),
                    self.accelerations[0].copy())
        k = int(np.searchsorted(times, t, side='right')) - 1
        return evaluate(self._coefficients[k], t - times[k])


#: Uniform samples (both ends included) on every segment in :func:`sample_times`.
SAMPLES_PER_SEGMENT = 64
#: The sampled reference may pass a position limit by this much [rad, m] (round-off).
POSITION_SLACK = 1e-6
#: ... and a velocity limit by this fraction of it (the samples' error, module doc).
VELOCITY_SLACK = 5e-3
#: Largest jump [rad, m] of the reference at the start of a trajectory (a first point
#: at time 0 or a late start): MoveIt's default allowed_start_tolerance.
START_TOLERANCE = 0.01


def sample_times(trajectory, per_segment: int = SAMPLES_PER_SEGMENT,
                 start: Optional[float] = None) -> np.ndarray:
    """
    Return the times [s] at which to sample ``trajectory`` (a :class:`Trajectory`).

    ``per_segment`` uniform samples, both ends included, on every segment from
    ``start`` (default: the first point) on; the end time when no segment is left.
    Non-decreasing: a time shared by two segments appears twice.
    """
    times = trajectory.times
    first = times[0] if start is None else max(float(start), times[0])
    if len(times) < 2 or first >= times[-1]:
        return np.array([max(first, times[-1])])
    k0 = max(int(np.searchsorted(times, first, side='right')) - 1, 0)
    t0 = np.maximum(times[k0:-1], first)
    u = np.linspace(0.0, 1.0, per_segment)
    return (t0[:, None] + (times[k0 + 1:] - t0)[:, None] * u[None, :]).ravel()


def sample_reference(trajectory, times):
    """
    Return the reference (q, qd, qdd), arrays (len(times), n), at ``times`` [s].

    The values of :meth:`Trajectory.sample` at each time, for many times at once
    (each segment's polynomial evaluated where its samples fall): the reference of a
    :class:`Trajectory` along a control loop, or at the times of a check
    (:func:`sample_times`).
    """
    t = np.asarray(times, dtype=float).reshape(-1)
    point_times = trajectory.times
    n = trajectory.positions.shape[1]
    q = np.empty((t.size, n))
    qd = np.zeros((t.size, n))
    qdd = np.zeros((t.size, n))
    after = t >= point_times[-1]
    before = (t <= point_times[0]) & ~after
    q[after] = trajectory.positions[-1]
    q[before] = trajectory.positions[0]
    qd[before] = trajectory.velocities[0]
    qdd[before] = trajectory.accelerations[0]
    inside = ~(before | after)
    if np.any(inside):
        k = np.searchsorted(point_times, t[inside], side='right') - 1
        c = trajectory.coefficients[k]                       # (m, 6, n)
        s = (t[inside] - point_times[k])[:, None]
        powers = s ** np.arange(6)[None, :]                  # (m, 6): 1, s, ..., s^5
        q[inside] = np.einsum('mj,mjn->mn', powers, c)
        qd[inside] = np.einsum('mj,mjn->mn', _DERIVATIVE[1, 1:] * powers[:, :5], c[:, 1:])
        qdd[inside] = np.einsum('mj,mjn->mn', _DERIVATIVE[2, 2:] * powers[:, :4], c[:, 2:])
    return q, qd, qdd


def check_execution(trajectory, now: float, reference, lower, upper, velocity,
                    joint_names: Sequence[str], start_tolerance: float = START_TOLERANCE,
                    per_segment: int = SAMPLES_PER_SEGMENT):
    """
    Raise TrajectoryError unless ``trajectory`` is within the limits from ``now`` on.

    ``reference`` = (q, qd, qdd) is the controller's reference at ``now``, from
    which :meth:`Trajectory.from_checked` built ``trajectory``; ``lower``, ``upper``
    and ``velocity`` are the chain's limits (inf where none).  Reasons: 'start jump'
    (the reference would jump by more than ``start_tolerance`` at ``now``),
    'limits' (the sampled reference leaves the position limits by more than
    POSITION_SLACK) and 'velocity limit' (faster than a limit by more than
    VELOCITY_SLACK of it); joint_trajectory_controller answers each with
    INVALID_GOAL.  The detail names the joint, the value, the time from ``now`` and
    the segment (0: from the reference to the first point).
    """
    names = list(joint_names)
    jump = np.abs(trajectory.sample(now)[0] - np.asarray(reference[0], dtype=float))
    if np.any(jump > start_tolerance):
        j = int(np.argmax(jump))
        raise TrajectoryError('start jump', f'the reference of {names[j]} would jump by '
                                            f'{jump[j]:.4g} at the start (more than '
                                            f'{start_tolerance:g}): a first point at time 0, '
                                            'or a late start, away from the current reference')
    times = sample_times(trajectory, per_segment, start=now)
    q, qd, _ = sample_reference(trajectory, times)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    velocity = np.asarray(velocity, dtype=float)
    with np.errstate(invalid='ignore'):  # inf - inf where a joint has no limit
        excess = np.nan_to_num(np.maximum(lower - POSITION_SLACK - q,
                                          q - upper - POSITION_SLACK), nan=-1.0)
    _raise_at_worst(excess, q, times, trajectory, now, names, 'limits',
                    lambda j: f'outside its limits [{lower[j]:g}, {upper[j]:g}]')
    excess = np.abs(qd) - velocity * (1.0 + VELOCITY_SLACK)
    _raise_at_worst(excess, qd, times, trajectory, now, names, 'velocity limit',
                    lambda j: f'beyond its velocity limit {velocity[j]:g}')


def _raise_at_worst(excess, values, times, trajectory, now, names, reason, what):
    """Raise TrajectoryError(reason) at the largest positive ``excess`` (samples, n)."""
    if not np.any(excess > 0.0):
        return
    i, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
    segment = int(np.searchsorted(trajectory.times, times[i], side='right')) - 1
    count = int(np.any(excess > 0.0, axis=0).sum())
    raise TrajectoryError(reason, f'the interpolated reference of {names[j]} reaches '
                                  f'{values[i, j]:.4g}, {what(j)}, {times[i] - now:.3f} s '
                                  f'from now (segment {segment}; {count} joint(s) leave '
                                  'their limits)')


def demo_trajectory(lower, upper, pose, period: float = 12.0) -> List[TrajectoryPoint]:
    """
    Return the ``denoc_sim_arm`` demo: a loop through four poses around ``pose``.

    Waypoints every ``period`` / 4 seconds, with velocities (central differences of
    the positions) and zero accelerations, so every segment is a quintic; the loop
    ends at ``pose`` at rest, and its first point comes after ``period`` / 4, so
    that it starts from the current reference and can be repeated.  Offsets of up
    to 0.6 rad on the first four joints and 0.5 rad on the wrist; any further joint (a
    gripper's fingers) opens and closes between its limits.  Every point stays inside
    the limits by 0.1 rad, or a tenth of the range where that is smaller.
    """
    pose = np.asarray(pose, dtype=float)
    n = pose.shape[0]
    offsets = np.zeros((5, n))
    pattern = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                        [0.6, 0.35, 0.5, 0.5, 0.5, -0.4, 0.5],
                        [0.0, -0.3, 0.0, -0.3, -0.5, 0.4, 0.0],
                        [-0.6, 0.35, -0.5, 0.5, 0.5, -0.4, -0.5],
                        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    width = min(n, pattern.shape[1])
    offsets[:, :width] = pattern[:, :width]
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    margin = np.minimum(0.1, 0.1 * (upper - lower))
    positions = np.clip(pose + offsets, lower + margin, upper - margin)
    extra = np.arange(n) >= width            # open, closed, open, back to the pose
    positions[1:4, extra] = np.where(np.arange(1, 4)[:, None] % 2, upper - margin,
                                     lower + margin)[:, extra]
    dt = period / 4.0
    velocities = np.zeros_like(positions)
    velocities[1:-1] = (positions[2:] - positions[:-2]) / (2.0 * dt)
    # no point at time 0: the loop starts from wherever the reference is, at rest
    return [TrajectoryPoint(k * dt, positions[k].tolist(), velocities[k].tolist(), [0.0] * n)
            for k in range(1, positions.shape[0])]
