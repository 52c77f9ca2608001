"""
Trajectories checked as they will be executed: the sampled reference, not the points.

The reference between and before the points (cubic and quintic splines, the segment
from the current reference to the first point, a first point at time 0, a late
start) is sampled (:func:`sample_times`, :func:`sample_reference`) against the
position and velocity limits (:func:`check_execution`); the controller rejects what
leaves them with INVALID_GOAL.
"""

from denoc_dynamics.trajectory import check_execution
from denoc_dynamics.trajectory import check_trajectory
from denoc_dynamics.trajectory import demo_trajectory
from denoc_dynamics.trajectory import sample_reference
from denoc_dynamics.trajectory import sample_times
from denoc_dynamics.trajectory import Trajectory
from denoc_dynamics.trajectory import TrajectoryError
from denoc_dynamics.trajectory import TrajectoryPoint
import numpy as np
import pytest

NAMES = [f'joint{k}' for k in range(1, 8)]
LOWER = np.array([-2.9, -1.76, -2.9, -2.7, -2.9, -2.7, -3.0])   # denoc_arm7
UPPER = -LOWER
VELOCITY = np.array([2.175] * 4 + [2.61] * 3)
POSE = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
REST = (POSE, np.zeros(7), np.zeros(7))
NOW = 100.0


def build(points, start=NOW, now=NOW, reference=REST):
    checked = check_trajectory(NAMES, LOWER, UPPER, NAMES, points)
    return Trajectory.from_checked(checked, start, now, reference)


def execution_error(points, start=NOW, now=NOW, reference=REST):
    """Return the reason check_execution gives, or None if it passes."""
    trajectory = build(points, start, now, reference)
    trajectory.check_velocity(VELOCITY, NAMES)   # the point checks pass for all of these
    try:
        check_execution(trajectory, now, reference, LOWER, UPPER, VELOCITY, NAMES)
    except TrajectoryError as exc:
        return exc.reason
    return None


def point(t, offsets=(), velocities=(), accelerations=(), base=POSE):
    q = np.array(base, dtype=float)
    for j, value in offsets:
        q[j] += value
    return TrajectoryPoint(t, q.tolist(), list(velocities), list(accelerations))


def quintic_swing():
    """Points that all equal the pose, at rest, with +-400 rad/s^2 (the report's goal)."""
    a = [400.0, -400.0, 400.0, -400.0, 400.0, -400.0, 400.0]
    return [point(1.0, velocities=[0.0] * 7, accelerations=a),
            point(2.0, velocities=[0.0] * 7, accelerations=[-x for x in a]),
            point(3.0, velocities=[0.0] * 7, accelerations=a)]


def cubic_overshoot():
    """joint2 reaches 1.7 at 2.1 rad/s and must stop there at 1.7: the cubic overshoots."""
    v1 = [0.0, 2.1, 0.0, 0.0, 0.0, 0.0, 0.0]
    return [point(1.0, [(1, 1.1)], v1), point(2.0, [(1, 1.1)], [0.0] * 7)]


BAD = {
    'quintic swing': (quintic_swing, {}, 'limits'),
    'cubic overshoot': (cubic_overshoot, {}, 'limits'),
    'first point at t = 0': (lambda: [point(0.0, [(0, 1.5)]), point(2.0, [(0, 1.5)])], {},
                             'start jump'),
    'late start': (lambda: [point(0.5, [(0, 0.3)]), point(3.0, [(0, 0.3)])],
                   {'start': NOW - 1.0}, 'start jump'),
    'fast first segment': (lambda: [point(1.0, [(0, 1.2)], [0.0] * 7, [0.0] * 7)], {},
                           'velocity limit'),
}


@pytest.mark.parametrize('case', sorted(BAD))
def test_what_the_points_hide_is_caught(case):
    make_points, kwargs, reason = BAD[case]
    assert execution_error(make_points(), **kwargs) == reason


def test_the_fast_first_segment_is_a_quintic_peaking_at_1_875_times_its_mean():
    # 1 rad in 1 s from rest to rest: mean 1 rad/s, peak 1.875 (limit 2.175 passes the
    # mean, and the old per-segment check); 1.2 rad: peak 2.25, beyond the limit
    ok = [point(1.0, [(0, 1.0)], [0.0] * 7, [0.0] * 7)]
    fast = [point(1.0, [(0, 1.2)], [0.0] * 7, [0.0] * 7)]
    q, qd, _ = sample_reference(build(ok), sample_times(build(ok), start=NOW))
    assert np.max(np.abs(qd[:, 0])) == pytest.approx(1.875, rel=1e-3)
    assert execution_error(ok) is None
    assert execution_error(fast) == 'velocity limit'


def test_a_detail_names_the_joint_the_value_and_the_time():
    trajectory = build(cubic_overshoot())
    with pytest.raises(TrajectoryError) as info:
        check_execution(trajectory, NOW, REST, LOWER, UPPER, VELOCITY, NAMES)
    assert 'joint2' in info.value.detail and 'from now' in info.value.detail
    assert float(info.value.detail.split('reaches ')[1].split(',')[0]) > 1.76


def test_good_motions_pass():
    demo = demo_trajectory(LOWER, UPPER, POSE)
    assert execution_error(demo) is None
    # a first point at time 0 where the reference is (MoveIt's first point), within
    # START_TOLERANCE of it
    assert execution_error([point(0.0, [(0, 0.005)]), point(2.0, [(0, 0.5)])]) is None
    # a late start where the trajectory still is at the reference
    assert execution_error([point(0.5), point(3.0, [(0, 0.3)])], start=NOW - 0.5) is None


def test_sample_reference_equals_sample_at_every_time():
    rng = np.random.default_rng(3)
    trajectory = build(quintic_swing())
    times = np.concatenate([[NOW - 1.0, NOW, NOW + 3.0, NOW + 9.0],
                            rng.uniform(NOW - 0.5, NOW + 3.5, 200)])
    q, qd, qdd = sample_reference(trajectory, times)
    for i, t in enumerate(times):
        expected = trajectory.sample(t)
        for got, want in zip((q[i], qd[i], qdd[i]), expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_sample_times_cover_every_segment_from_start_on():
    trajectory = build(quintic_swing())
    times = sample_times(trajectory, per_segment=8, start=NOW + 1.5)
    assert times[0] == NOW + 1.5 and times[-1] == trajectory.end_time
    assert np.all(np.diff(times) >= 0.0) and len(times) == 8 * 2
    # a segment shorter than the spacing of the others is sampled as finely
    assert set(np.round(np.diff(times[:8]), 12)) == {round(0.5 / 7, 12)}
    assert sample_times(Trajectory.hold(5.0, POSE)).tolist() == [5.0]
