"""Trajectory checking and interpolation, against closed-form polynomials."""

from denoc_dynamics.trajectory import check_trajectory
from denoc_dynamics.trajectory import demo_trajectory
from denoc_dynamics.trajectory import evaluate
from denoc_dynamics.trajectory import segment_coefficients
from denoc_dynamics.trajectory import Trajectory
from denoc_dynamics.trajectory import TrajectoryError
from denoc_dynamics.trajectory import TrajectoryPoint
import numpy as np
import pytest

NAMES = ['a', 'b', 'c']
LOWER = np.array([-1.0, -2.0, -np.inf])
UPPER = np.array([1.0, 2.0, np.inf])


def polynomial(c, s):
    """p, p', p'' of sum c_j s^j, straight from the definition (c: (degree + 1, n))."""
    j = np.arange(c.shape[0])[:, None]
    p = (c * s ** j).sum(0)
    v = (c[1:] * j[1:] * s ** (j[1:] - 1)).sum(0)
    a = (c[2:] * j[2:] * (j[2:] - 1) * s ** (j[2:] - 2)).sum(0)
    return p, v, a


@pytest.mark.parametrize('order', [1, 3, 5])
def test_segment_reproduces_a_polynomial_of_its_degree(order):
    # Hermite interpolation is unique: given the end values of a polynomial of degree
    # `order`, the segment must be that very polynomial everywhere.
    rng = np.random.default_rng(order)
    T = 1.7
    c = rng.normal(size=(order + 1, 4))
    p0, v0, a0 = polynomial(c, 0.0)
    p1, v1, a1 = polynomial(c, T)
    coefficients = segment_coefficients(p0, v0, a0, p1, v1, a1, T, order)
    for s in (0.0, 0.3, 0.9, 1.4, T):
        for got, expected in zip(evaluate(coefficients, s), polynomial(c, s)):
            np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize('order,conditions', [(1, 1), (3, 2), (5, 3)])
def test_segment_meets_the_boundary_conditions(order, conditions):
    rng = np.random.default_rng(10 + order)
    T = 0.8
    start, end = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    coefficients = segment_coefficients(*start, *end, T, order)
    for s, values in ((0.0, start), (T, end)):
        got = evaluate(coefficients, s)
        for k in range(conditions):
            np.testing.assert_allclose(got[k], values[k], rtol=1e-11, atol=1e-11)


def check(names, points):
    return check_trajectory(NAMES, LOWER, UPPER, names, points)


def test_positions_only_is_linear_with_constant_velocity():
    # joint_trajectory_controller: positions alone interpolate linearly
    checked = check(NAMES, [TrajectoryPoint(1.0, [0.5, -1.0, 3.0])])
    trajectory = Trajectory.from_checked(checked, 10.0, 10.0, (np.zeros(3),) * 3)
    q, qd, qdd = trajectory.sample(10.25)
    np.testing.assert_allclose(q, [0.125, -0.25, 0.75])
    np.testing.assert_allclose(qd, [0.5, -1.0, 3.0])
    np.testing.assert_allclose(qdd, 0.0)
    assert trajectory.orders == [1]


def test_first_point_later_starts_from_the_current_reference():
    reference = (np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.0, -0.5]),
                 np.array([1.0, 2.0, 3.0]))
    points = [TrajectoryPoint(2.0, [0.4, 0.4, 0.4], [0.0] * 3, [0.0] * 3),
              TrajectoryPoint(3.0, [0.0, 0.0, 0.0], [0.0] * 3, [0.0] * 3)]
    trajectory = Trajectory.from_checked(check(NAMES, points), 5.0, 5.0, reference)
    assert trajectory.orders == [5, 5]
    for got, expected in zip(trajectory.sample(5.0), reference):
        np.testing.assert_allclose(got, expected)
    # quintic from (reference) to point 0: the closed form with the same end values
    c = segment_coefficients(*reference, [0.4] * 3, [0.0] * 3, [0.0] * 3, 2.0, 5)
    for got, expected in zip(trajectory.sample(6.1), evaluate(c, 1.1)):
        np.testing.assert_allclose(got, expected)
    q, qd, qdd = trajectory.sample(7.0)
    np.testing.assert_allclose(q, 0.4)
    np.testing.assert_allclose(qd, 0.0, atol=1e-12)


def test_velocities_give_a_cubic_and_the_end_holds():
    points = [TrajectoryPoint(1.0, [0.2, 0.0, 0.0], [0.1, 0.0, 0.0]),
              TrajectoryPoint(2.0, [0.4, 0.0, 0.0], [0.0, 0.0, 0.0])]
    trajectory = Trajectory.from_checked(check(NAMES, points), 0.0, 0.0, (np.zeros(3),) * 3)
    assert trajectory.orders == [3, 3]
    c = segment_coefficients([0.2, 0, 0], [0.1, 0, 0], 0, [0.4, 0, 0], [0, 0, 0], 0, 1.0, 3)
    for got, expected in zip(trajectory.sample(1.6), evaluate(c, 0.6)):
        np.testing.assert_allclose(got, expected)
    q, qd, qdd = trajectory.sample(100.0)   # after the end: the last positions, at rest
    np.testing.assert_allclose(q, [0.4, 0.0, 0.0])
    np.testing.assert_allclose(qd, 0.0)
    np.testing.assert_allclose(qdd, 0.0)


def test_mixed_points_take_what_both_ends_give():
    points = [TrajectoryPoint(1.0, [0.1, 0, 0], [0, 0, 0], [0, 0, 0]),
              TrajectoryPoint(2.0, [0.2, 0, 0], [0, 0, 0]),
              TrajectoryPoint(3.0, [0.3, 0, 0]),
              TrajectoryPoint(4.0, [0.4, 0, 0], [0, 0, 0], [0, 0, 0])]
    trajectory = Trajectory.from_checked(check(NAMES, points), 0.0, 0.0, (np.zeros(3),) * 3)
    assert trajectory.orders == [5, 3, 1, 1]


def test_partial_trajectory_holds_the_other_joints_by_name():
    reference = (np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.6, 0.7]), np.zeros(3))
    checked = check(['c', 'a'], [TrajectoryPoint(1.0, [1.5, -0.5])])
    np.testing.assert_array_equal(checked.joints, [2, 0])
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, reference)
    q, qd, _ = trajectory.sample(0.5)
    assert q[1] == 0.2 and qd[1] == 0.0   # 'b' holds its reference position
    np.testing.assert_allclose(trajectory.sample(1.0)[0], [-0.5, 0.2, 1.5])


def test_zero_time_point_and_a_late_trajectory_are_jumped_to():
    points = [TrajectoryPoint(0.0, [0.5, 0.5, 0.5]), TrajectoryPoint(1.0, [0.6, 0.6, 0.6]),
              TrajectoryPoint(2.0, [0.7, 0.7, 0.7])]
    jump = Trajectory.from_checked(check(NAMES, points), 3.0, 3.0, (np.zeros(3),) * 3)
    np.testing.assert_allclose(jump.sample(3.0)[0], 0.5)
    np.testing.assert_allclose(jump.sample(3.5)[0], 0.55)
    # started 1.5 s ago (a stamp in the past): no segment from the reference, which
    # jumps onto the trajectory where it is now
    late = Trajectory.from_checked(check(NAMES, points), 1.5, 3.0, (np.zeros(3),) * 3)
    assert late.times[0] == 1.5 and late.times[-1] == 3.5
    np.testing.assert_allclose(late.sample(3.0)[0], 0.65)


def test_future_stamp_interpolates_from_now_to_the_start():
    checked = check(NAMES, [TrajectoryPoint(1.0, [0.3, 0.0, 0.0])])
    trajectory = Trajectory.from_checked(checked, 12.0, 10.0, (np.zeros(3),) * 3)
    assert trajectory.times.tolist() == [10.0, 13.0]
    np.testing.assert_allclose(trajectory.sample(11.5)[0], [0.15, 0.0, 0.0])


def test_hold():
    trajectory = Trajectory.hold(2.0, [0.1, 0.2, 0.3])
    for t in (0.0, 2.0, 50.0):
        q, qd, qdd = trajectory.sample(t)
        np.testing.assert_array_equal(q, [0.1, 0.2, 0.3])
        assert not qd.any() and not qdd.any()


GOOD = TrajectoryPoint(1.0, [0.1, 0.2, 0.3])


@pytest.mark.parametrize('names,points,reason', [
    (['a', 'x'], [TrajectoryPoint(1.0, [0.0, 0.0])], 'unknown joint'),
    (['a', 'a'], [TrajectoryPoint(1.0, [0.0, 0.0])], 'duplicate joint'),
    ([], [GOOD], 'empty'),
    (NAMES, [], 'empty'),
    (NAMES, [GOOD, TrajectoryPoint(1.0, [0.0] * 3)], 'time'),
    (NAMES, [GOOD, TrajectoryPoint(0.5, [0.0] * 3)], 'time'),
    (NAMES, [TrajectoryPoint(-1.0, [0.0] * 3)], 'time'),
    (NAMES, [TrajectoryPoint(float('nan'), [0.0] * 3)], 'time'),
    (NAMES, [TrajectoryPoint(1.0, [0.0, float('nan'), 0.0])], 'non-finite'),
    (NAMES, [TrajectoryPoint(1.0, [0.0] * 3, [0.0, float('inf'), 0.0])], 'non-finite'),
    (NAMES, [TrajectoryPoint(1.0, [1.2, 0.0, 0.0])], 'limits'),
    (NAMES, [TrajectoryPoint(1.0, [0.0, -2.1, 0.0])], 'limits'),
    (NAMES, [TrajectoryPoint(1.0, [0.0, 0.0])], 'length'),
    (NAMES, [TrajectoryPoint(1.0, [0.0] * 3, [0.0] * 2)], 'length'),
    (NAMES, [TrajectoryPoint(1.0, [0.0] * 3, [0.0] * 3, [0.0] * 4)], 'length'),
    (NAMES, [TrajectoryPoint(1.0, [0.0] * 3, [], [0.0] * 3)], 'length'),
], ids=['unknown', 'duplicate', 'no-joints', 'no-points', 'equal-times', 'decreasing-times',
        'negative-time', 'nan-time', 'nan-position', 'inf-velocity', 'above-limit',
        'below-limit', 'positions-length', 'velocities-length', 'accelerations-length',
        'accelerations-without-velocities'])
def test_bad_trajectories_are_rejected(names, points, reason):
    with pytest.raises(TrajectoryError) as error:
        check(names, points)
    assert error.value.reason == reason


def test_a_continuous_joint_has_no_position_limit():
    checked = check(['c'], [TrajectoryPoint(1.0, [100.0])])
    assert checked.positions[0, 0] == 100.0


def test_demo_trajectory_is_valid_and_returns_to_the_pose_at_rest():
    pose = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
    lower = np.array([-2.9, -1.76, -2.9, -2.7, -2.9, -2.7, -3.0])
    names = [f'joint{k}' for k in range(1, 8)]
    points = demo_trajectory(lower, -lower, pose)
    checked = check_trajectory(names, lower, -lower, names, points)
    assert checked.times[0] > 0.0
    np.testing.assert_allclose(points[-1].positions, pose)
    np.testing.assert_allclose(points[-1].velocities, 0.0)
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, (pose, np.zeros(7), np.zeros(7)))
    assert trajectory.orders == [5] * len(points)
    assert np.ptp(trajectory.positions, axis=0)[:4].min() >= 0.5   # it visibly moves
