"""
launch_testing test of sim_node's JointState command interface, in separate processes.

launch starts sim_node as a user would for ros2_control's JointStateTopicSystem (the
package's config/sim_arm.yaml, real time); this test process plays JointStateTopicSystem
over DDS: position commands on /robot_joint_commands (reliable, depth 1) at 100 Hz
until the positions on /robot_joint_states (best effort) agree, then silence.  The arm
must get there and stay.  Runs under pytest (launch_testing's plugin) and as
``launch_test FILE``.
"""

import os
import subprocess
import sys
import time
import unittest

from ament_index_python.packages import get_package_share_directory
import launch
import launch_ros.actions
import launch_testing
from launch_testing.actions import ReadyToTest
import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

# `launch_test FILE` runs without test/conftest.py: put test/ (ros_helpers) on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ros_helpers import assert_clean_exits  # noqa: E402, I100
from ros_helpers import isolate  # noqa: E402
from ros_helpers import RosClient  # noqa: E402

SHARE = get_package_share_directory('denoc_dynamics')
URDF = os.path.join(SHARE, 'urdf', 'denoc_arm7.urdf')
TIMEOUT = 30.0
NAMES = [f'joint{i}' for i in range(1, 8)]
Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])   # config/sim_arm.yaml
TARGET = Q0 + np.array([0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3])
TRIGGER_THRESHOLD = 1e-5   # JointStateTopicSystem's trigger_joint_command_threshold


@pytest.mark.launch_test
def generate_test_description():
    isolate()  # a ROS domain of this test file's own; the node inherits it
    return launch.LaunchDescription([
        launch_ros.actions.Node(
            package='denoc_dynamics', executable='sim_node', name='sim_node',
            output='screen', parameters=[os.path.join(SHARE, 'config', 'sim_arm.yaml'),
                                         {'urdf_path': URDF, 'status_period': 1.0}]),
        ReadyToTest(),
    ])


class TestJointStateTopicSystem(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.client = RosClient('joint_state_topic_system')
        node = cls.client.node
        cls.states = cls.client.collect(JointState, '/robot_joint_states',
                                        qos_profile_sensor_data)
        cls.commands = node.create_publisher(JointState, '/robot_joint_commands',
                                             QoSProfile(depth=1))

    @classmethod
    def tearDownClass(cls):
        cls.client.close()

    def position(self):
        msg = self.states[-1]
        index = [list(msg.name).index(name) for name in NAMES]
        return np.asarray(msg.position)[index]

    def drive(self, target, quiet_cycles, timeout):
        """
        Be JointStateTopicSystem until it has been silent ``quiet_cycles`` cycles in a row.

        Return (the number of commands sent, the positions of the silent cycles); None
        for these if it is not silent so long within ``timeout`` [s].
        """
        sent, quiet = 0, []
        end = time.monotonic() + timeout
        while time.monotonic() < end and len(quiet) < quiet_cycles:
            self.client.spin_for(0.01)   # its control cycle, 100 Hz
            q = self.position()
            if np.abs(target - q).sum() > TRIGGER_THRESHOLD:
                self.commands.publish(JointState(name=NAMES, position=target.tolist()))
                sent += 1
                quiet = []
            else:
                quiet.append(q)
        return sent, (np.array(quiet) if len(quiet) >= quiet_cycles else None)

    def test_1_position_commands_reach_and_hold_the_target(self, proc_output):
        self.client.wait_all(('a state on /robot_joint_states', lambda: len(self.states) > 0),
                             ('a subscriber of /robot_joint_commands matched',
                              lambda: self.commands.get_subscription_count() > 0),
                             timeout=TIMEOUT)
        np.testing.assert_array_equal(self.position(), Q0)   # hold mode
        # silent for 200 cycles (2 s) in a row: the states agree with the command
        sent, q = self.drive(TARGET, 200, timeout=4 * TIMEOUT)
        self.assertIsNotNone(q, 'the states never agreed with the command')
        self.assertGreater(sent, 10)
        # and meanwhile, with no command, the arm held the target
        self.assertLess(np.abs(q - TARGET).max(), 2e-3, np.abs(q - TARGET).max(axis=0))
        # the status line counts no rejected joint command
        proc_output.assertWaitFor('joint commands rejected: 0', timeout=TIMEOUT)

    def test_2_bad_commands_are_rejected_and_nothing_moves(self, proc_output):
        self.client.spin_for(0.5)
        before = self.position()
        for msg in (JointState(name=NAMES[:6] + ['gripper'], position=Q0.tolist()),
                    JointState(name=NAMES, position=[float('nan')] * 7),
                    JointState(name=NAMES, position=Q0[:5].tolist())):
            self.commands.publish(msg)
            self.client.spin_for(0.2)
        self.client.spin_for(1.0)
        self.assertLess(np.abs(self.position() - before).max(), 1e-6)
        proc_output.assertWaitFor(
            'joint commands rejected: 3 (length: 1, non-finite: 1, unknown joint: 1)',
            timeout=TIMEOUT)

    def test_3_mixed_interfaces_velocity_and_position(self, proc_output):
        # joint1 by velocity, the others hold by position: one message, full arrays
        # of each interface for the joints named
        self.commands.publish(JointState(name=['joint1'], velocity=[0.2]))
        self.assertTrue(self.client.spin_until(
            lambda: abs(self.states[-1].velocity[0] - 0.2) < 0.01, TIMEOUT),
            self.states[-1].velocity)
        start = self.position()[0]
        self.client.spin_for(0.5)
        self.assertGreater(self.position()[0], start + 0.01)
        self.commands.publish(JointState(name=['joint1'], velocity=[0.0]))
        self.assertTrue(self.client.spin_until(
            lambda: abs(self.states[-1].velocity[0]) < 1e-3, TIMEOUT),
            self.states[-1].velocity)
        self.assertLess(np.abs(self.position()[1:] - TARGET[1:]).max(), 2e-3)

    def test_4_the_ros2_topic_pub_command_of_docs_ros2_control_md(self, proc_output):
        # the command as docs/ros2_control.md gives it
        proc = subprocess.run(
            ['ros2', 'topic', 'pub', '--once', '--keep-alive', '1', '/robot_joint_commands',
             'sensor_msgs/msg/JointState', '{name: [joint1, joint4], position: [0.3, -1.0]}'],
            capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertTrue(self.client.spin_until(
            lambda: abs(self.position()[0] - 0.3) < 2e-3 and abs(self.position()[3] + 1.0)
            < 2e-3, TIMEOUT), self.position())


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):

    def test_sim_node_exits_cleanly(self, proc_info, proc_output):
        assert_clean_exits(self, proc_info, proc_output)
