"""
launch_testing test of the simulated arm's /tf and /tf_static, as robot_state_publisher's.

Two arms from launch/sim_arm.launch.py: the bundled denoc_arm7 with no namespace and
the gripper arm (denoc_arm7_gripper: fingers, one a mimic joint) in the namespace
``gripper``, whose frames get robot_state_publisher's ``frame_prefix`` ``gripper/``.
A subscriber to /tf and /tf_static rebuilds every link's pose from the base link,
transform after transform, and finds it equal to ``Robot.frame_placement`` at the
joint state published with the same stamp.
"""

import os
import sys
import unittest

from ament_index_python.packages import get_package_share_directory
from denoc_dynamics import load_urdf
import launch
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing
from launch_testing.actions import ReadyToTest
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

# `launch_test FILE` runs without test/conftest.py: put test/ (ros_helpers) on the path.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ros_helpers import assert_clean_exits  # noqa: E402, I100
from ros_helpers import isolate  # noqa: E402
from ros_helpers import RosClient  # noqa: E402

SHARE = get_package_share_directory('denoc_dynamics')
ARMS = {'': 'denoc_arm7.urdf', 'gripper': 'denoc_arm7_gripper.urdf'}
TIMEOUT = 30.0


@pytest.mark.launch_test
def generate_test_description():
    isolate()  # a ROS domain of this test file's own; the nodes inherit it
    source = os.path.join(SHARE, 'launch', 'sim_arm.launch.py')
    arms = [IncludeLaunchDescription(PythonLaunchDescriptionSource(source), launch_arguments={
        'namespace': namespace, 'urdf': os.path.join(SHARE, 'urdf', urdf)}.items())
        for namespace, urdf in ARMS.items()]
    return launch.LaunchDescription(arms + [ReadyToTest()])


def _pose(transform):
    """Return the 4x4 pose of a geometry_msgs/Transform."""
    t, r = transform.translation, transform.rotation
    w, x, y, z = r.w, r.x, r.y, r.z
    T = np.eye(4)
    T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    T[:3, 3] = t.x, t.y, t.z
    return T


class TestSimArmTf(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.client = RosClient('sim_arm_tf_test')

    @classmethod
    def tearDownClass(cls):
        cls.client.close()

    def test_tf_rebuilds_every_link_pose(self):
        client = self.client
        tf = client.collect(TFMessage, '/tf', QoSProfile(depth=100))
        static = client.collect(TFMessage, '/tf_static', QoSProfile(
            depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        states = {ns: client.collect(JointState, f'/{ns}/joint_states' if ns else
                                     '/joint_states', qos_profile_sensor_data)
                  for ns in ARMS}
        for namespace, urdf in ARMS.items():
            robot = load_urdf(os.path.join(SHARE, 'urdf', urdf))
            prefix = f'{namespace}/' if namespace else ''
            base = prefix + robot.frames[0]
            frames = {prefix + name: name for name in robot.frames}

            def matched():
                """Return (q, {child: (parent, pose)}) of one stamp, or None."""
                fixed = {t.child_frame_id: (t.header.frame_id, _pose(t.transform))
                         for m in static for t in m.transforms
                         if t.child_frame_id in frames}
                by_stamp = {}
                for m in tf:
                    for t in m.transforms:
                        if t.child_frame_id in frames:
                            key = (t.header.stamp.sec, t.header.stamp.nanosec)
                            by_stamp.setdefault(key, {})[t.child_frame_id] = (
                                t.header.frame_id, _pose(t.transform))
                for s in reversed(states[namespace]):
                    key = (s.header.stamp.sec, s.header.stamp.nanosec)
                    moving = by_stamp.get(key, {})
                    if len(fixed) + len(moving) == len(frames) - 1:
                        index = {name: k for k, name in enumerate(s.name)}
                        q = np.array([s.position[index[j]] for j in robot.joint_names])
                        return q, dict(fixed, **moving)
                return None

            self.assertTrue(client.spin_until(lambda: matched() is not None, TIMEOUT),
                            f'no complete TF tree of {urdf} with its joint state')
            q, tree = matched()
            for child, name in frames.items():
                T, link = np.eye(4), child
                while link != base:
                    parent, X = tree[link]
                    T = X @ T
                    link = parent
                np.testing.assert_allclose(T, robot.frame_placement(q, name), rtol=0,
                                           atol=1e-12, err_msg=f'{urdf}: {child}')


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info, proc_output):
        assert_clean_exits(self, proc_info, proc_output)
