"""
trajectory_controller built in-process, its callbacks called directly (no DDS wait).

Bad trajectories (old stamps, implied velocities above the limits, too many
points, huge or negative times, NaN, Inf, wrong lengths) are rejected and nothing
moves; a trajectory before the first joint state waits for it; the INFO line per
accepted trajectory is summarized.
"""


from builtin_interfaces.msg import Duration
from denoc_dynamics.ros.trajectory_controller import AcceptLog
from denoc_dynamics.ros.trajectory_controller import TrajectoryController
import numpy as np
import pytest
from ros_helpers import goal_of
from ros_helpers import make
from ros_helpers import NAMES
from ros_helpers import POSE
from ros_helpers import step
from ros_helpers import T0
from ros_helpers import target
from ros_helpers import trajectory

pytestmark = pytest.mark.ros


def test_a_trajectory_before_the_first_joint_state_starts_from_it(context):
    node = make(context)
    try:
        assert node.follow(trajectory(NAMES, [(1.0, target())])) is None   # waits
        assert node.rejections.total == 0
        step(node, T0)
        assert node.active and node.accepted == 1
        assert node.trajectory.end_time == pytest.approx(T0 + 1.0)
        np.testing.assert_allclose(node.trajectory.sample(T0)[0], POSE)
        np.testing.assert_allclose(node.trajectory.sample(T0 + 2.0)[0], target())
    finally:
        node.destroy_node()


def test_a_waiting_trajectory_expires_after_joint_state_timeout(context):
    node = make(context, joint_state_timeout=0.0)
    try:
        assert node.follow(trajectory(NAMES, [(1.0, target())])) is None
        node._expire_pending()
        assert node.pending is None
        assert node.rejections.counts == {'no state': 1}
        step(node, T0)
        assert not node.active and node.accepted == 0
    finally:
        node.destroy_node()


def many_points(count, step=1e-3, swing=0.2):
    """joint7 swinging +-swing every step seconds (5x its velocity limit)."""
    return [(step * (k + 1), POSE[:6] + [POSE[6] + (swing if k % 2 else -swing)])
            for k in range(count)]


BAD = {
    'old header timestamp': lambda: trajectory(NAMES, [(2.0, target())], stamp=T0 - 3600.0),
    'velocity limit': lambda: trajectory(NAMES, many_points(1000)),
    'too many points': lambda: trajectory(NAMES, many_points(10000, step=1.0, swing=0.01)),
    'time': lambda: trajectory(NAMES, [(1e9, target())]),
    'non-finite': lambda: trajectory(NAMES, [(1.0, target(float('nan')))]),
    'length': lambda: trajectory(NAMES, [(1.0, target()[:6])]),
    'partial joints': lambda: trajectory(NAMES[:3], [(1.0, target()[:3])]),
}


@pytest.mark.parametrize('reason', sorted(BAD))
def test_bad_trajectories_are_rejected_and_nothing_moves(context, reason):
    node = make(context)
    try:
        step(node, T0)
        held = node.effort_pub.messages[-1].data
        assert node.follow(BAD[reason]()) is False
        assert node.rejections.counts == {reason: 1}
        step(node, T0 + 0.5)
        assert not node.active
        np.testing.assert_allclose(node.effort_pub.messages[-1].data, held)
    finally:
        node.destroy_node()


def test_negative_and_infinite_times_are_rejected(context):
    node = make(context)
    try:
        step(node, T0)
        negative = trajectory(NAMES, [(1.0, target())])
        negative.points[0].time_from_start = Duration(sec=-5)
        infinite = trajectory(NAMES, [(1.0, target())])
        infinite.points[0].positions[2] = float('inf')
        assert node.follow(negative) is False and node.follow(infinite) is False
        assert node.rejections.counts == {'time': 1, 'non-finite': 1}
    finally:
        node.destroy_node()


def test_the_same_points_within_the_velocity_limits_are_accepted(context):
    # the 'velocity limit' trajectory slowed to 0.2 rad per 0.1 s (2 rad/s < 2.61)
    node = make(context, allow_partial_joints_goal=True)
    try:
        step(node, T0)
        slow = trajectory(['joint7'], [(0.1 * (k + 1), [POSE[6] + (0.1 if k % 2 else -0.1)])
                                       for k in range(10)])
        assert node.follow(slow) is True
        fast = trajectory(['joint7'], [(0.01 * (k + 1), [POSE[6] + (0.1 if k % 2 else -0.1)])
                                       for k in range(10)])
        assert node.follow(fast) is False
        assert node.rejections.counts == {'velocity limit': 1}
    finally:
        node.destroy_node()


def test_a_recent_stamp_is_accepted(context):
    node = make(context)
    try:
        step(node, T0)
        assert node.follow(trajectory(NAMES, [(2.0, target())], stamp=T0 - 1.0)) is True
        assert node.trajectory.end_time == pytest.approx(T0 + 1.0)
    finally:
        node.destroy_node()


class InfoLog:

    def __init__(self):
        self.lines = []

    def info(self, text):
        self.lines.append(text)


def test_accepted_trajectories_are_logged_at_most_once_a_period():
    log, now = InfoLog(), [0.0]
    accepted = AcceptLog(log, clock=lambda: now[0])
    for _ in range(1000):
        accepted('trajectory accepted')
        now[0] += 0.001
    assert log.lines == ['trajectory accepted']
    now[0] += 5.0
    accepted('trajectory accepted')
    assert len(log.lines) == 2 and '999 more accepted' in log.lines[1]


def test_without_control_msgs_the_controller_runs_on_the_topic_and_says_so(
        context, monkeypatch):
    from denoc_dynamics.ros import trajectory_controller
    from denoc_dynamics_interfaces.msg import TrajectoryControllerState

    def missing():
        raise ImportError("No module named 'control_msgs'")

    monkeypatch.setattr(trajectory_controller, 'control_msgs_interfaces', missing)
    lines = []
    monkeypatch.setattr(TrajectoryController, 'get_logger',
                        lambda self: type('Log', (), {
                            'info': lambda _, text: lines.append(text),
                            'warning': lambda _, text: lines.append(text)})())
    node = make(context)
    try:
        assert node.action is None and node.action_server is None
        assert node.state_pub.msg_type is TrajectoryControllerState
        said = [line for line in lines if 'control_msgs is not installed' in line]
        assert len(said) == 1 and 'no ~/follow_joint_trajectory' in said[0]
        step(node, T0)
        assert node.follow(trajectory(NAMES, [(1.0, target())])) is True
    finally:
        node.destroy_node()


@pytest.mark.ros2_msgs
def test_with_control_msgs_the_controller_serves_the_action(context, ros2_msgs):
    from control_msgs.msg import JointTrajectoryControllerState
    node = make(context)
    try:
        assert node.action_server is not None
        assert node.state_pub.msg_type is JointTrajectoryControllerState
        names = [service.srv_name for service in node.services]
        assert any(name.endswith('/query_state') for name in names), names
    finally:
        node.destroy_node()


@pytest.mark.ros2_msgs
def test_goal_semantics_in_process(context, ros2_msgs):
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
    codes = FollowJointTrajectory.Result
    node = make(context)
    try:
        step(node, T0)
        # bad goals: aborted at once with joint_trajectory_controller's codes
        for msg, fields, code in [
                (trajectory(NAMES[:6] + ['elbow'], [(1.0, target())]), {},
                 codes.INVALID_JOINTS),
                (trajectory(NAMES, [(1.0, target())], stamp=T0 - 3600.0), {},
                 codes.OLD_HEADER_TIMESTAMP),
                (trajectory(NAMES, [(1.0, target(float('inf')))]), {}, codes.INVALID_GOAL),
                (trajectory(NAMES, [(1.0, target())]),
                 {'goal_tolerance': [JointTolerance(name='joint1', position=-2.0)]},
                 codes.INVALID_GOAL)]:
            handle = goal_of(msg, **fields)
            goal = node.follow(msg, 'action', handle)
            assert handle.states == ['aborted'] and goal.future.result().error_code == code
        assert not node.active
        # a goal, then a second one: the first is preempted (INVALID_GOAL)
        first = goal_of(trajectory(NAMES, [(1.0, target())]))
        one = node.follow(first.request.trajectory, 'action', first)
        step(node, T0 + 0.1)
        assert first.feedback and first.feedback[-1].index == 0
        second = goal_of(trajectory(NAMES, [(1.0, target(0.05))]))
        two = node.follow(second.request.trajectory, 'action', second)
        assert first.states == ['aborted'] and 'preempted' in one.future.result().error_string
        # cancel: holds where the arm is, goal canceled
        second.is_cancel_requested = True
        moved = [q + 0.01 for q in POSE]
        step(node, T0 + 0.2, moved)
        assert second.states == ['canceled'] and two.done and not node.active
        np.testing.assert_allclose(node.trajectory.sample(T0 + 5.0)[0], moved)
        # success once past the last point within the (default) tolerances
        third = goal_of(trajectory(NAMES, [(0.5, moved)]))
        node.follow(third.request.trajectory, 'action', third)
        step(node, T0 + 0.8, moved)
        assert third.states == ['succeeded']
        # goal tolerance 1e-9 with goal_time_tolerance 0.01: GOAL_TOLERANCE_VIOLATED
        fourth = goal_of(trajectory(NAMES, [(0.1, POSE)]),
                         goal_tolerance=[JointTolerance(name=n, position=1e-9) for n in NAMES])
        fourth.request.goal_time_tolerance.nanosec = 10_000_000
        goal = node.follow(fourth.request.trajectory, 'action', fourth)
        step(node, T0 + 0.905, moved)   # past the end, 1 cm off
        assert fourth.states == []                          # within goal_time_tolerance
        step(node, T0 + 0.95, moved)
        assert fourth.states == ['aborted']
        assert goal.future.result().error_code == codes.GOAL_TOLERANCE_VIOLATED
        # path tolerance: aborted while moving, PATH_TOLERANCE_VIOLATED
        fifth = goal_of(trajectory(NAMES, [(1.0, target())]),
                        path_tolerance=[JointTolerance(name='joint1', position=1e-3)])
        goal = node.follow(fifth.request.trajectory, 'action', fifth)
        step(node, T0 + 1.0, [q - 0.05 for q in POSE])
        assert goal.future.result().error_code == codes.PATH_TOLERANCE_VIOLATED
    finally:
        node.destroy_node()
