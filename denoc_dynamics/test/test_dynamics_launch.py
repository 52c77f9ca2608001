"""
launch_testing test of launch/dynamics.launch.py (the dynamics node alone).

Needs launch, launch_ros and launch_testing (a ROS 2 installation); skipped where
they cannot be imported, e.g. with the PyPI wheels of this repository's venv.
"""

import os
import time
import unittest

import pytest

from ros_helpers import import_launch_modules  # noqa: I100

(launch, launch_actions, launch_sources, _, launch_testing, launch_testing_actions,
 launch_testing_asserts) = import_launch_modules()

from ament_index_python.packages import get_package_share_directory  # noqa: E402, I100
from denoc_dynamics import load_urdf  # noqa: E402
from denoc_dynamics_interfaces.msg import JointAccelerations  # noqa: E402
from denoc_dynamics_interfaces.srv import ForwardDynamics  # noqa: E402
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

TIMEOUT = 30.0
URDF = os.path.join(get_package_share_directory('denoc_dynamics'), 'urdf', 'denoc_arm7.urdf')


@pytest.mark.launch_test
def generate_test_description():
    share = get_package_share_directory('denoc_dynamics')
    return launch.LaunchDescription([
        launch_actions.IncludeLaunchDescription(
            launch_sources.PythonLaunchDescriptionSource(
                os.path.join(share, 'launch', 'dynamics.launch.py')),
            launch_arguments={'urdf': URDF, 'joint_states': '/test/joint_states'}.items()),
        launch_testing_actions.ReadyToTest(),
    ])


class TestDynamicsLaunch(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('dynamics_launch_test')
        cls.robot = load_urdf(URDF)

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_forward_dynamics_service(self):
        client = self.node.create_client(ForwardDynamics, '/dynamics_node/forward_dynamics')
        self.assertTrue(client.wait_for_service(timeout_sec=TIMEOUT))
        q = np.linspace(-0.5, 0.5, 7)
        request = ForwardDynamics.Request()
        request.state = JointState(name=self.robot.joint_names, position=q.tolist())
        future = client.call_async(request)
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=TIMEOUT)
        response = future.result()
        self.assertTrue(response.success, response.message)
        np.testing.assert_allclose(response.accelerations.acceleration,
                                   self.robot.forward_dynamics(q, np.zeros(7), np.zeros(7)))

    def test_accelerations_for_remapped_joint_states(self):
        received = []
        self.node.create_subscription(JointAccelerations, '/dynamics_node/joint_accelerations',
                                      received.append, 10)
        pub = self.node.create_publisher(JointState, '/test/joint_states', 10)
        q = np.full(7, 0.2)
        msg = JointState(name=self.robot.joint_names, position=q.tolist(),
                         velocity=[0.0] * 7)
        end = time.monotonic() + TIMEOUT
        while not received and time.monotonic() < end:
            pub.publish(msg)
            rclpy.spin_once(self.node, timeout_sec=0.2)
        self.assertTrue(received, 'no joint accelerations')
        np.testing.assert_allclose(received[0].acceleration,
                                   self.robot.forward_dynamics(q, np.zeros(7), np.zeros(7)))


@launch_testing.post_shutdown_test()
class TestDynamicsShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing_asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
