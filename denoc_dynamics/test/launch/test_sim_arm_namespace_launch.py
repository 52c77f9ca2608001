"""
launch_testing test of launch/sim_arm.launch.py with non-default arguments.

``namespace:=arm_ns``, ``integrator:=ab4``, a URDF and a params_file of this test.
The params_file sets the integrator too (``semi_implicit_euler``): the launch
argument must win.  Every topic and service of the two nodes must be under the
namespace, and none of them outside it.
"""

import os
import sys
import unittest

from ament_index_python.packages import get_package_share_directory
from denoc_dynamics import load_urdf
from denoc_dynamics.sample_urdfs import planar_urdf
from denoc_dynamics_interfaces.msg import InertiaMatrix
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
import launch
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing
from launch_testing.actions import ReadyToTest
import pytest
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

# `launch_test FILE` runs without test/conftest.py: put test/ (ros_helpers) on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ros_helpers import assert_clean_exits  # noqa: E402, I100
from ros_helpers import isolate  # noqa: E402
from ros_helpers import RosClient  # noqa: E402
from ros_helpers import write_temp  # noqa: E402

SHARE = get_package_share_directory('denoc_dynamics')
TIMEOUT = 30.0
NS = '/arm_ns'
URDF_TEXT = planar_urdf([0.5, 0.4, 0.3], [2.0, 1.5, 1.0]).replace(
    'name="joint', 'name="ns_joint')
PARAMS = """\
/**:
  ros__parameters:
    command_timeout: 0.25
/**/sim_node:
  ros__parameters:
    integrator: semi_implicit_euler
    physics_rate: 500.0
    initial_positions: [0.1, 0.2, 0.3]
/**/dynamics_node:
  ros__parameters:
    inertia_every_n: 2
"""
FILES = {}


@pytest.mark.launch_test
def generate_test_description():
    isolate()  # a ROS domain of this test file's own; the nodes inherit it
    FILES.update(urdf=write_temp('.urdf', URDF_TEXT), params=write_temp('.yaml', PARAMS))
    return launch.LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'sim_arm.launch.py')),
            launch_arguments={'namespace': NS.strip('/'), 'integrator': 'ab4',
                              'urdf': FILES['urdf'], 'params_file': FILES['params']}.items()),
        ReadyToTest(),
    ])


class TestSimArmNamespaceLaunch(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.client = RosClient('sim_arm_namespace_launch_test')
        cls.robot = load_urdf(URDF_TEXT)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()

    def test_arguments_and_params_file_reach_the_nodes(self):
        sim = self.client.parameters(f'{NS}/sim_node', [
            'integrator', 'urdf_path', 'publish_clock', 'physics_rate', 'command_timeout'])
        self.assertEqual(sim, {'integrator': 'ab4', 'urdf_path': FILES['urdf'],
                               'publish_clock': False, 'physics_rate': 500.0,
                               'command_timeout': 0.25})
        dyn = self.client.parameters(f'{NS}/dynamics_node', [
            'urdf_path', 'use_sim_time', 'inertia_every_n', 'command_timeout'])
        self.assertEqual(dyn, {'urdf_path': FILES['urdf'], 'use_sim_time': False,
                               'inertia_every_n': 2, 'command_timeout': 0.25})

    def test_namespaced_topics_and_services(self):
        states = self.client.collect(JointState, f'{NS}/joint_states', qos_profile_sensor_data)
        inertia = self.client.collect(InertiaMatrix, f'{NS}/dynamics_node/inertia_matrix')
        self.assertTrue(self.client.spin_until(lambda: states and inertia, TIMEOUT),
                        f'states: {len(states)}, inertia matrices: {len(inertia)}')
        self.assertEqual(list(states[0].name), self.robot.joint_names)
        self.assertEqual(len(inertia[0].data), self.robot.n ** 2)

        node = self.client.node
        response = self.client.call(
            node.create_client(GetInertiaMatrix, f'{NS}/dynamics_node/get_inertia_matrix'),
            GetInertiaMatrix.Request())
        self.assertTrue(response.success, response.message)
        self.assertEqual(list(response.inertia.joint_names), self.robot.joint_names)
        response = self.client.call(node.create_client(Trigger, f'{NS}/sim_node/reset'),
                                    Trigger.Request())
        self.assertTrue(response.success, response.message)

        topics = {name for name, _ in node.get_topic_names_and_types()}
        services = {name for name, _ in node.get_service_names_and_types()}
        for name in ('joint_states', 'effort_commands', 'dynamics_node/joint_accelerations'):
            self.assertIn(f'{NS}/{name}', topics)
            self.assertNotIn(f'/{name}', topics)
        for name in ('sim_node/reset', 'sim_node/pause', 'dynamics_node/forward_dynamics'):
            self.assertIn(f'{NS}/{name}', services)
            self.assertNotIn(f'/{name}', services)
        self.assertNotIn('/clock', topics)  # use_sim_time false: no /clock


@launch_testing.post_shutdown_test()
class TestSimArmNamespaceShutdown(unittest.TestCase):

    def test_every_node_exits_cleanly(self, proc_info, proc_output):
        assert_clean_exits(self, proc_info, proc_output)
