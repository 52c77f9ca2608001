"""
FollowJointTrajectory over real DDS: sim_node and trajectory_controller as processes.

A client that behaves like MoveIt's simple controller manager (moveit_client.py)
drives the arm; the controller gets the simulated arm's friction model as the launch
file gives it (launch_support).  Needs control_msgs (built from ../shared/ros2-msgs
by `make test`); where that exists, a skip here is a failure (conftest.py).
"""

import unittest

from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.launch_support import controller_friction_parameters
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
    friction = controller_friction_parameters(bundled_urdf(), None,
                                              initial_positions=POSE)
    sim = NodeProcess('sim_node', ros_args(urdf_path=bundled_urdf(), initial_positions=POSE,
                                           status_period=0.0))
    controller = NodeProcess('trajectory_controller', ros_args(
        urdf_path=bundled_urdf(), **friction))
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
