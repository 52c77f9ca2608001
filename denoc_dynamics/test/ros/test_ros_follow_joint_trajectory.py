"""
FollowJointTrajectory over real DDS: sim_node and trajectory_controller as processes.

A client that behaves like MoveIt's simple controller manager (moveit_client.py)
drives the arm; the controller gets the simulated arm's friction model as the launch
file gives it (simulated_friction).  Needs control_msgs (built from ../shared/ros2-msgs
by `make test`); where that exists, a skip here is a failure (conftest.py).
"""

import unittest

from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

POSE = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0]
NAMES = [f'joint{k}' for k in range(1, 8)]
OFFSETS = [0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3]


@pytest.fixture(scope='module')
def arm(ros2_msgs):
    from moveit_client import MoveItLikeClient
    sim = NodeProcess('sim_node', ros_args(urdf_path=bundled_urdf(), initial_positions=POSE,
                                           status_period=0.0))
    controller = NodeProcess('trajectory_controller', ros_args(
        urdf_path=bundled_urdf(), simulated_friction=True, initial_positions=POSE))
    ros = RosClient('moveit_like_client')
    client = MoveItLikeClient(ros)
    try:
        client.wait_ready(NAMES)
    except AssertionError:
        raise AssertionError(sim.describe() + controller.describe())
    yield client, (sim, controller)
    ros.close()
    controller.stop()
    sim.stop()


@pytest.fixture
def check():
    return unittest.TestCase()


def test_a_quintic_move_succeeds_in_time_and_rests_within_a_milliradian(arm, check):
    client, nodes = arm
    client.check_quintic_move(check, NAMES, OFFSETS)
    client.check_quintic_move(check, NAMES, -np.asarray(OFFSETS))
    assert all(node.alive() for node in nodes)


def test_an_unknown_joint_gives_invalid_joints(arm, check):
    arm[0].check_unknown_joint(check, NAMES)


def test_a_tiny_goal_tolerance_gives_goal_tolerance_violated(arm, check):
    arm[0].check_goal_tolerance_violated(check, NAMES)


def test_cancel_leaves_the_arm_holding(arm, check):
    arm[0].check_cancel_holds(check, NAMES)


def test_a_second_goal_preempts_the_first(arm, check):
    arm[0].check_preemption(check, NAMES)


def rss_kib(pid):
    """Return the resident memory of process ``pid`` [KiB]."""
    with open(f'/proc/{pid}/status') as stream:
        for line in stream:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise AssertionError(f'no VmRSS for {pid}')


def flood(client, names, seconds):
    """
    Send goals and topic trajectories (1-point holds) as fast as possible, up to 1 kHz each.

    Each preempts the last.  Return the number of goals and of trajectories sent.
    """
    from control_msgs.action import FollowJointTrajectory
    from moveit_client import quintic
    from trajectory_msgs.msg import JointTrajectory
    import time
    here = client.positions(names)
    hold = quintic(names, here, here, 1.0, 1)
    goal = FollowJointTrajectory.Goal(trajectory=hold)
    if not hasattr(client, 'topic'):
        client.topic = client.ros.node.create_publisher(
            JointTrajectory, '/trajectory_controller/joint_trajectory', 10)
    goals = messages = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        tick = time.monotonic()
        client.client.send_goal_async(goal)
        goals += 1
        client.topic.publish(hold)
        messages += 1
        client.ros.executor.spin_once(timeout_sec=0.0)
        time.sleep(max(0.0, 0.001 - (time.monotonic() - tick)))
    return goals, messages


def test_a_flood_of_goals_leaves_the_controller_alive_with_flat_memory(arm):
    # 1 kHz for 10 s; here twice 4 s, each followed by the 10 s after which
    # the action server forgets finished goals (rclpy's result_timeout)
    client, (sim, controller) = arm
    goals, messages = flood(client, NAMES, 4.0)
    client.ros.spin_for(11.0)
    first = rss_kib(controller.proc.pid)
    more = flood(client, NAMES, 4.0)
    goals, messages = goals + more[0], messages + more[1]
    client.ros.spin_for(11.0)
    second = rss_kib(controller.proc.pid)
    assert controller.alive() and sim.alive(), controller.describe()
    assert goals > 500 and messages > 500, f'only {goals} goals, {messages} trajectories'
    sent = goals + messages
    assert second - first < 4096, f'RSS grew from {first} to {second} KiB'
    # one INFO line per accepted trajectory at most every 5 s (ACCEPT_LOG_PERIOD)
    lines = controller.output().count('trajectory accepted')
    print(f'flood: {goals} goals and {messages} trajectories, controller RSS {first} -> '
          f'{second} KiB, {lines} INFO lines')
    assert lines < 15, f'{lines} INFO lines for {sent} goals'
    client.check_quintic_move(unittest.TestCase(), NAMES, OFFSETS)   # still in control
