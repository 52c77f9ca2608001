"""
launch_testing test of launch/sim_arm.launch.py (sim, dynamics, trajectory controller).

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
from denoc_dynamics_interfaces.msg import JointAccelerations  # noqa: E402
from denoc_dynamics_interfaces.msg import TrajectoryControllerState  # noqa: E402
from denoc_dynamics_interfaces.srv import GetInertiaMatrix  # noqa: E402
import rclpy  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

TIMEOUT = 30.0


@pytest.mark.launch_test
def generate_test_description():
    share = get_package_share_directory('denoc_dynamics')
    return launch.LaunchDescription([
        launch_actions.IncludeLaunchDescription(
            launch_sources.PythonLaunchDescriptionSource(
                os.path.join(share, 'launch', 'sim_arm.launch.py')),
            launch_arguments={'use_sim_time': 'true', 'integrator': 'rk4'}.items()),
        launch_testing_actions.ReadyToTest(),
    ])


class TestSimArmLaunch(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('sim_arm_launch_test')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def wait_for_message(self, msg_type, topic, qos=10):
        received = []
        sub = self.node.create_subscription(msg_type, topic, received.append, qos)
        end = time.monotonic() + TIMEOUT
        while not received and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.1)
        self.node.destroy_subscription(sub)
        self.assertTrue(received, f'nothing received on {topic}')
        return received[0]

    def call(self, srv_type, name, request):
        client = self.node.create_client(srv_type, name)
        self.assertTrue(client.wait_for_service(timeout_sec=TIMEOUT), f'{name} not available')
        future = client.call_async(request)
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=TIMEOUT)
        self.assertTrue(future.done(), f'no answer from {name}')
        self.node.destroy_client(client)
        return future.result()

    def test_topics(self):
        state = self.wait_for_message(JointState, '/joint_states', qos_profile_sensor_data)
        self.assertEqual(list(state.name), [f'joint{k}' for k in range(1, 8)])
        self.assertEqual(len(state.position), 7)
        self.wait_for_message(Clock, '/clock', qos_profile_sensor_data)
        acc = self.wait_for_message(JointAccelerations, '/dynamics_node/joint_accelerations')
        self.assertEqual(len(acc.acceleration), 7)
        control = self.wait_for_message(TrajectoryControllerState,
                                        '/trajectory_controller/controller_state')
        self.assertEqual(list(control.joint_names), list(state.name))
        self.assertFalse(control.trajectory_active)   # holding the initial pose

    def test_services(self):
        response = self.call(GetInertiaMatrix, '/dynamics_node/get_inertia_matrix',
                             GetInertiaMatrix.Request(include_inverse=True))
        self.assertTrue(response.success, response.message)
        self.assertEqual(len(response.inertia.data), 49)
        self.assertEqual(len(response.inverse), 49)
        response = self.call(SetBool, '/sim_node/pause', SetBool.Request(data=False))
        self.assertTrue(response.success, response.message)


@launch_testing.post_shutdown_test()
class TestSimArmShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing_asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
