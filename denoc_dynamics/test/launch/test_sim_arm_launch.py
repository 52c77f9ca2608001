"""
launch_testing test of launch/sim_arm.launch.py with ``use_sim_time:=true``.

Runs under pytest (launch_testing's plugin) and as ``launch_test FILE``.  It checks
that every launch argument given here reaches its node (``use_sim_time``: sim_node
publishes /clock and stamps with it, dynamics_node runs on it; ``urdf`` and
``integrator`` at their defaults), that the README's ros2 CLI commands work against
the nodes, and that launch's own SIGINT at the end gives exit code 0 for each node.
test_sim_arm_namespace_launch.py starts the same file with non-default arguments.
"""

import os
import subprocess
import sys
import unittest

from ament_index_python.packages import get_package_share_directory
from denoc_dynamics import load_urdf
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.msg import TrajectoryControllerState
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
import launch
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing
from launch_testing.actions import ReadyToTest
import pytest
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool

try:
    from control_msgs.msg import JointTrajectoryControllerState
except ImportError:   # the fallback: denoc_dynamics_interfaces/TrajectoryControllerState
    JointTrajectoryControllerState = None

# `launch_test FILE` runs without test/conftest.py: put test/ (ros_helpers) on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ros_helpers import assert_clean_exits  # noqa: E402, I100
from ros_helpers import isolate  # noqa: E402
from ros_helpers import ros2 as ros2_cli  # noqa: E402
from ros_helpers import RosClient  # noqa: E402
from ros_helpers import sigint_at_default  # noqa: E402

SHARE = get_package_share_directory('denoc_dynamics')
URDF = os.path.join(SHARE, 'urdf', 'denoc_arm7.urdf')
TIMEOUT = 30.0


@pytest.mark.launch_test
def generate_test_description():
    isolate()  # a ROS domain of this test file's own; the nodes inherit it
    return launch.LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'sim_arm.launch.py')),
            launch_arguments={'use_sim_time': 'true'}.items()),
        ReadyToTest(),
    ])


def ros2(*args):
    """Run a ros2 CLI command (:func:`ros_helpers.ros2`); assert it succeeded; its stdout."""
    proc = ros2_cli(*args, timeout=TIMEOUT)
    assert proc.returncode == 0, f'ros2 {" ".join(args)}: {proc.stdout}{proc.stderr}'
    return proc.stdout


class TestSimArmLaunch(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.client = RosClient('sim_arm_launch_test')
        cls.robot = load_urdf(URDF)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        subprocess.run(['ros2', 'daemon', 'stop'], capture_output=True, timeout=TIMEOUT)

    def first(self, msg_type, topic, qos=10):
        received = self.client.collect(msg_type, topic, qos)
        self.assertTrue(self.client.spin_until(lambda: received, TIMEOUT),
                        f'nothing received on {topic}')
        return received[0]

    def test_use_sim_time_publishes_clock_and_stamps_with_it(self):
        clocks = self.client.collect(Clock, '/clock', qos_profile_sensor_data)
        state = self.first(JointState, '/joint_states', qos_profile_sensor_data)
        self.assertEqual(list(state.name), self.robot.joint_names)
        self.assertTrue(self.client.spin_until(lambda: len(clocks) >= 2, TIMEOUT),
                        'nothing received on /clock')
        # simulated time: starts at 0 and runs at the publish rate (100 Hz)
        t = clocks[-1].clock.sec + 1e-9 * clocks[-1].clock.nanosec
        self.assertLess(t, 1e6, 'the /clock is not the simulated time')
        acc = self.first(JointAccelerations, '/dynamics_node/joint_accelerations')
        self.assertEqual(len(acc.acceleration), self.robot.n)
        control = self.first(TrajectoryControllerState, '/trajectory_controller/status')
        self.assertEqual(list(control.joint_names), self.robot.joint_names)
        self.assertFalse(control.trajectory_active)   # holding the initial pose
        # joint_trajectory_controller's message where control_msgs is installed
        state_type = (JointTrajectoryControllerState if JointTrajectoryControllerState
                      is not None else TrajectoryControllerState)
        state = self.first(state_type, '/trajectory_controller/controller_state')
        self.assertEqual(list(state.joint_names), self.robot.joint_names)

    def test_launch_arguments_reach_the_nodes(self):
        sim = self.client.parameters('/sim_node', ['publish_clock', 'integrator', 'urdf_path'])
        self.assertEqual(sim, {'publish_clock': True, 'integrator': 'rk4', 'urdf_path': URDF})
        dyn = self.client.parameters('/dynamics_node', ['use_sim_time', 'urdf_path'])
        self.assertEqual(dyn, {'use_sim_time': True, 'urdf_path': URDF})
        ctl = self.client.parameters('/trajectory_controller', ['use_sim_time', 'urdf_path'])
        self.assertEqual(ctl, {'use_sim_time': True, 'urdf_path': URDF})

    def test_services(self):
        response = self.client.call(
            self.client.node.create_client(GetInertiaMatrix,
                                           '/dynamics_node/get_inertia_matrix'),
            GetInertiaMatrix.Request(include_inverse=True))
        self.assertTrue(response.success, response.message)
        self.assertEqual(len(response.inertia.data), self.robot.n ** 2)
        self.assertEqual(len(response.inverse), self.robot.n ** 2)
        response = self.client.call(
            self.client.node.create_client(SetBool, '/sim_node/pause'),
            SetBool.Request(data=False))
        self.assertTrue(response.success, response.message)

    # --- the commands of the README ----------------------------------------------------
    def test_ros2_param_describe(self):
        out = ros2('param', 'describe', '/sim_node', 'integrator')
        self.assertIn('Type: string', out)
        self.assertIn('Runge-Kutta', out)
        self.assertIn('Read only: true', out)

    def test_ros2_service_call_get_inertia_matrix(self):
        out = ros2('service', 'call', '/dynamics_node/get_inertia_matrix',
                   'denoc_dynamics_interfaces/srv/GetInertiaMatrix',
                   '{include_decomposition: true}')
        self.assertIn('success=True', out)
        self.assertIn("message='inertia matrix at the latest joint state'", out)

    def test_ros2_topic_hz(self):
        proc = subprocess.Popen(['ros2', 'topic', 'hz', '/joint_states'],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=sigint_at_default)
        try:
            out, _ = proc.communicate(timeout=8.0)
        except subprocess.TimeoutExpired:
            proc.send_signal(2)
            out, _ = proc.communicate(timeout=TIMEOUT)
        rates = [float(line.split(':')[1]) for line in out.splitlines()
                 if line.startswith('average rate:')]
        self.assertTrue(rates, out)
        # publish_rate 100 Hz of simulated time, at a real-time factor of 1
        self.assertAlmostEqual(rates[-1], 100.0, delta=25.0)


@launch_testing.post_shutdown_test()
class TestSimArmShutdown(unittest.TestCase):

    def test_every_node_exits_cleanly(self, proc_info, proc_output):
        assert_clean_exits(self, proc_info, proc_output)
