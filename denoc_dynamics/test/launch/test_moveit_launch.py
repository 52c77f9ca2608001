"""
launch_testing test: MoveIt-like FollowJointTrajectory goals in the launch layout.

launch/sim_arm.launch.py with its defaults (sim_node, dynamics_node and
trajectory_controller as separate processes), driven by a client that behaves like
MoveIt's simple controller manager (moveit_client.py), and the commands and the
moveit_controllers.yaml of docs/moveit.md run as written there.
"""

import importlib.util
import os
import re
import subprocess
import sys
import time
import unittest

from ament_index_python.packages import get_package_share_directory
from denoc_dynamics import load_urdf
from denoc_dynamics.sim_settings import leading_pose
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import launch
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing
from launch_testing.actions import ReadyToTest
import numpy as np
import pytest
import yaml

# `launch_test FILE` runs without test/conftest.py: put test/ (ros_helpers) on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from moveit_client import MoveItLikeClient  # noqa: E402, I100
from ros_helpers import assert_clean_exits  # noqa: E402
from ros_helpers import isolate  # noqa: E402
from ros_helpers import RosClient  # noqa: E402

SHARE = get_package_share_directory('denoc_dynamics')
URDF = os.path.join(SHARE, 'urdf', 'denoc_arm7.urdf')
PARAMS = os.path.join(SHARE, 'config', 'sim_arm.yaml')
DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'docs',
                   'moveit.md')
TIMEOUT = 60.0
OFFSETS = [0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3]


@pytest.mark.launch_test
def generate_test_description():
    isolate()  # a ROS domain of this test file's own; the nodes inherit it
    return launch.LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'sim_arm.launch.py'))),
        ReadyToTest(),
    ])


def doc_blocks(language):
    """Return the ```language blocks of docs/moveit.md."""
    with open(DOC) as stream:
        return re.findall(rf'```{language}\n(.*?)```', stream.read(), re.S)


class TestMoveItLaunch(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.ros = RosClient('moveit_launch_test')
        cls.robot = load_urdf(URDF)
        cls.names = cls.robot.joint_names
        cls.client = MoveItLikeClient(cls.ros)
        cls.client.wait_ready(cls.names, TIMEOUT)

    @classmethod
    def tearDownClass(cls):
        cls.ros.close()
        subprocess.run(['ros2', 'daemon', 'stop'], capture_output=True, timeout=TIMEOUT)

    def test_1_the_controller_has_the_friction_model_of_the_sim(self):
        with open(PARAMS) as f:
            shared = yaml.safe_load(f)['/**']['ros__parameters']
        physics = PhysicsParameters(**{key: shared[key] for key in (
            'physics_rate', 'integrator', 'friction_velocity', 'limit_stop_frequency',
            'limit_stop_damping_ratio')})
        sim = Simulation(self.robot, physics,
                         initial_positions=leading_pose(self.robot, shared['initial_positions']))
        expected = {f'gains.{name}.friction_velocity': float(v)
                    for name, v in zip(self.names, sim.model.friction_velocity)}
        got = self.ros.parameters('/trajectory_controller', list(expected))
        self.assertEqual(got, pytest.approx(expected))
        self.assertGreater(got['gains.joint7.friction_velocity'], 0.1)   # raised by the sim

    def test_2_a_quintic_move_succeeds_and_rests_within_a_milliradian(self):
        self.client.check_quintic_move(self, self.names, OFFSETS)

    def test_3_an_unknown_joint_gives_invalid_joints(self):
        self.client.check_unknown_joint(self, self.names)

    def test_4_a_tiny_goal_tolerance_gives_goal_tolerance_violated(self):
        self.client.check_goal_tolerance_violated(self, self.names)

    def test_5_cancel_leaves_the_arm_holding(self):
        self.client.check_cancel_holds(self, self.names)

    def test_6_a_second_goal_preempts_the_first(self):
        self.client.check_preemption(self, self.names)

    def test_7_the_moveit_controllers_yaml_names_this_action(self):
        config = yaml.safe_load(doc_blocks('yaml')[0])
        manager = config['moveit_simple_controller_manager']
        (name,) = manager['controller_names']
        controller = manager[name]
        self.assertEqual(controller['type'], 'FollowJointTrajectory')
        self.assertEqual(controller['joints'], self.names)
        action = f'/{name}/{controller["action_ns"]}'
        self.assertEqual(action, self.client.action_name)
        self.assertTrue(self.client.client.server_is_ready(), action)

    def test_8_the_commands_of_the_doc(self):
        lines = [line.split('#')[0].strip() for line in doc_blocks('sh')[0].splitlines()]
        action = [line for line in lines if line.startswith('ros2 action send_goal')]
        send = [line for line in lines if ' send_trajectory --action ' in line]
        query = [line for line in lines if line.startswith('ros2 service call')]
        self.assertEqual((len(action), len(send), len(query)), (1, 1, 1), lines)
        goals = [send[0].replace('.ci/env.sh ', '')]   # already in the ROS environment
        if importlib.util.find_spec('ros2action') is not None:   # a ROS install
            goals.insert(0, action[0])
        for command in goals:
            out = self.shell(command)
            self.assertRegex(out, 'SUCCEEDED|goal SUCCESSFUL')
            if 'send_goal' in command:
                text = re.search(r'positions: \[([^\]]*)\]', command).group(1)
            else:
                text = command.split('--point 2:')[1]
            target = [float(x) for x in text.split(',')]
            self.ros.spin_for(1.0)   # 1 s after the last point: within 1 mrad
            error = np.abs(self.client.positions(self.names) - target).max()
            self.assertLess(error, 1e-3, command)
        out = self.shell(query[0])
        self.assertIn('success=False', out)   # holding: no trajectory running
        self.assertIn('joint7', out)

    @staticmethod
    def shell(command, tries=5):
        """Return the output of a command of the doc, run by bash in this test's domain."""
        for _ in range(tries):
            proc = subprocess.run(command, shell=True, capture_output=True, text=True,
                                  timeout=TIMEOUT)
            if proc.returncode == 0 or 'not found' not in proc.stdout + proc.stderr \
                    and 'not available' not in proc.stdout + proc.stderr:
                break
            time.sleep(2.0)
        assert proc.returncode == 0, f'{command}: {proc.stdout}{proc.stderr}'
        return proc.stdout


@launch_testing.post_shutdown_test()
class TestMoveItLaunchShutdown(unittest.TestCase):

    def test_every_node_exits_cleanly(self, proc_info, proc_output):
        assert_clean_exits(self, proc_info, proc_output)
