"""
launch_testing test of launch/dynamics.launch.py (the dynamics node alone).

Runs under pytest (launch_testing's plugin) and as ``launch_test FILE``.  The launch
file is included twice, each in its own namespace, so that every launch argument is
given a non-default value once and checked at the node:

* ``/dyn_file``: ``urdf`` (a file), ``use_sim_time:=true``, ``params_file`` (a YAML of
  this test), ``joint_states`` remapped to a global topic and ``effort_commands`` to a
  relative one;
* ``/dyn_topic``: no ``urdf``: the model comes from the *relative* robot_description
  topic, i.e. ``/dyn_topic/robot_description``, which this test publishes.
"""

import os
import sys
import unittest

from ament_index_python.packages import get_package_share_directory
from denoc_dynamics import load_urdf
from denoc_dynamics.sample_urdfs import planar_urdf
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.srv import ForwardDynamics
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
import launch
from launch.actions import GroupAction
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing
from launch_testing.actions import ReadyToTest
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_msgs.msg import String

# `launch_test FILE` runs without test/conftest.py: put test/ (ros_helpers) on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ros_helpers import assert_clean_exits  # noqa: E402, I100
from ros_helpers import isolate  # noqa: E402
from ros_helpers import RosClient  # noqa: E402
from ros_helpers import write_temp  # noqa: E402

SHARE = get_package_share_directory('denoc_dynamics')
URDF = os.path.join(SHARE, 'urdf', 'denoc_arm7.urdf')
TIMEOUT = 30.0
#: The params_file of /dyn_file: every value differs from config/sim_arm.yaml's.
PARAMS = """\
/**/dynamics_node:
  ros__parameters:
    inertia_every_n: 3
    fd_method: cholesky
    publish_gravity_torques: false
"""
#: The model /dyn_topic gets from its robot_description topic (not the launch's urdf).
TOPIC_URDF = planar_urdf([0.5, 0.4, 0.3], [2.0, 1.5, 1.0]).replace(
    'name="joint', 'name="topic_joint')


def _include(namespace, **arguments):
    return GroupAction(scoped=True, actions=[IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'dynamics.launch.py')),
        launch_arguments=dict(arguments, namespace=namespace).items())])


@pytest.mark.launch_test
def generate_test_description():
    isolate()  # a ROS domain of this test file's own; the nodes inherit it
    params = write_temp('.yaml', PARAMS)
    return launch.LaunchDescription([
        _include('dyn_file', urdf=URDF, use_sim_time='true', params_file=params,
                 joint_states='/launch_test/joint_states', effort_commands='commands_in'),
        _include('dyn_topic'),
        ReadyToTest(),
    ])


class TestDynamicsLaunch(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.client = RosClient('dynamics_launch_test')
        cls.robot = load_urdf(URDF)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()

    def test_arguments_reach_the_node(self):
        values = self.client.parameters('/dyn_file/dynamics_node', [
            'urdf_path', 'use_sim_time', 'inertia_every_n', 'fd_method',
            'publish_gravity_torques'])
        self.assertEqual(values, {'urdf_path': URDF, 'use_sim_time': True,
                                  'inertia_every_n': 3, 'fd_method': 'cholesky',
                                  'publish_gravity_torques': False})
        values = self.client.parameters('/dyn_topic/dynamics_node', ['urdf_path',
                                                                     'use_sim_time'])
        self.assertEqual(values, {'urdf_path': '', 'use_sim_time': False})

    def test_remapped_joint_states_and_effort_commands(self):
        node = self.client.node
        received = self.client.collect(JointAccelerations,
                                       '/dyn_file/dynamics_node/joint_accelerations')
        states = node.create_publisher(JointState, '/launch_test/joint_states', 10)
        commands = node.create_publisher(Float64MultiArray, '/dyn_file/commands_in', 10)
        q, tau = np.full(7, 0.2), np.linspace(-2.0, 2.0, 7)
        expected = self.robot.forward_dynamics(q, np.zeros(7), tau)
        msg = JointState(name=self.robot.joint_names, position=q.tolist(), velocity=[0.0] * 7)

        def commanded():
            commands.publish(Float64MultiArray(data=tau.tolist()))
            states.publish(msg)
            self.client.spin_for(0.1)
            return received and np.allclose(received[-1].acceleration, expected)

        self.assertTrue(self.client.spin_until(commanded, TIMEOUT),
                        f'no accelerations for the commanded effort: {received[-1:]}')

    def test_model_from_the_relative_robot_description_topic(self):
        from denoc_dynamics.ros.robot_model import ROBOT_DESCRIPTION_QOS
        node = self.client.node
        publisher = node.create_publisher(String, '/dyn_topic/robot_description',
                                          ROBOT_DESCRIPTION_QOS)
        publisher.publish(String(data=TOPIC_URDF))
        client = node.create_client(ForwardDynamics, '/dyn_topic/dynamics_node/forward_dynamics')
        robot = load_urdf(TOPIC_URDF)
        request = ForwardDynamics.Request()
        request.state = JointState(name=robot.joint_names, position=[0.1, 0.2, 0.3],
                                   velocity=[0.0] * 3, effort=[0.0] * 3)

        def answered():
            response = self.client.call(client, request)
            return response.success

        self.assertTrue(self.client.spin_until(answered, TIMEOUT), 'no model from the topic')
        response = self.client.call(client, request)
        np.testing.assert_allclose(response.accelerations.acceleration,
                                   robot.forward_dynamics([0.1, 0.2, 0.3], np.zeros(3),
                                                          np.zeros(3)))
        self.assertEqual(list(response.accelerations.joint_names), robot.joint_names)
        # the other namespace's node keeps its own model
        response = self.client.call(
            node.create_client(GetInertiaMatrix, '/dyn_file/dynamics_node/get_inertia_matrix'),
            GetInertiaMatrix.Request(state=JointState(name=self.robot.joint_names,
                                                      position=[0.0] * 7)))
        self.assertTrue(response.success, response.message)
        self.assertEqual(list(response.inertia.joint_names), self.robot.joint_names)


@launch_testing.post_shutdown_test()
class TestDynamicsShutdown(unittest.TestCase):

    def test_every_node_exits_cleanly(self, proc_info, proc_output):
        assert_clean_exits(self, proc_info, proc_output)
