"""
The publishing helpers of the nodes: subscriber counts from matched events, QoS depths.

:class:`~denoc_dynamics.ros.listened.ListenedPublisher` keeps its subscription count
from the publisher's matched events, on either executor the nodes run on; it must
follow the middleware's own count as subscriptions come and go.
:func:`~denoc_dynamics.ros.joint_io.with_depth` gives a profile another depth (KEEP_LAST)
and keeps every other policy.
"""

import time

from denoc_dynamics.ros.joint_io import REQUEST_QOS
from denoc_dynamics.ros.joint_io import STATE_QOS
from denoc_dynamics.ros.joint_io import with_depth
from denoc_dynamics.ros.listened import ListenedPublisher
from denoc_dynamics.ros.node_main import make_executor
from denoc_dynamics.ros.trajectory_controller import GOAL_REQUEST_QOS
import pytest
import rclpy
from rclpy.qos import DurabilityPolicy
from rclpy.qos import HistoryPolicy
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import qos_profile_services_default
from rclpy.qos import QoSProfile
from rclpy.qos import ReliabilityPolicy
from ros_helpers import matched
from ros_helpers import RosClient
from std_msgs.msg import Bool

pytestmark = pytest.mark.ros

TIMEOUT = 30.0


def _spin_until(executor, predicate):
    end = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < end, 'timed out'
        executor.spin_once(timeout_sec=0.05)


@pytest.mark.parametrize('kind', ['single', 'events'])
def test_listened_publisher_follows_subscriptions(context, kind):
    node = rclpy.create_node('listened_publisher_test', context=context)
    peer = rclpy.create_node('listened_publisher_peer', context=context)
    executor = make_executor(kind, context=context)
    try:
        listened = ListenedPublisher(node, Bool, 'listened', 10)
        assert listened.topic_name == '/listened'
        assert listened.get_subscription_count() == 0
        executor.add_node(node)
        executor.add_node(peer)
        received = []
        first = peer.create_subscription(Bool, 'listened', received.append, 10)
        _spin_until(executor, lambda: listened.get_subscription_count() == 1)
        second = peer.create_subscription(Bool, 'listened', received.append, 10)
        _spin_until(executor, lambda: listened.get_subscription_count() == 2)
        assert listened.publisher.get_subscription_count() == 2

        def delivered():
            if not received:
                listened.publish(Bool(data=True))
            return len(received) >= 2
        _spin_until(executor, delivered)
        peer.destroy_subscription(first)
        peer.destroy_subscription(second)
        _spin_until(executor, lambda: listened.get_subscription_count() == 0)
        assert listened.publisher.get_subscription_count() == 0
    finally:
        executor.shutdown()
        peer.destroy_node()
        node.destroy_node()


@pytest.mark.parametrize('profile', [qos_profile_sensor_data, qos_profile_services_default])
def test_with_depth_changes_the_depth_alone(profile):
    before = (profile.history, profile.depth, profile.reliability, profile.durability,
              profile.deadline, profile.lifespan, profile.liveliness,
              profile.liveliness_lease_duration, profile.avoid_ros_namespace_conventions)
    deeper = with_depth(profile, 321)
    assert deeper.depth == 321
    assert deeper is not profile and profile.depth == before[1]    # the original unchanged
    after = (deeper.history, profile.depth, deeper.reliability, deeper.durability,
             deeper.deadline, deeper.lifespan, deeper.liveliness,
             deeper.liveliness_lease_duration, deeper.avoid_ros_namespace_conventions)
    assert after == before


def test_with_depth_keeps_the_last_depth_samples_of_a_keep_all_base():
    """A depth means nothing under KEEP_ALL: the copy keeps the last ``depth``."""
    keep_all = QoSProfile(history=HistoryPolicy.KEEP_ALL,
                          reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
    deeper = with_depth(keep_all, 7)
    assert (deeper.history, deeper.depth) == (HistoryPolicy.KEEP_LAST, 7)
    assert (deeper.reliability, deeper.durability) == (ReliabilityPolicy.RELIABLE,
                                                       DurabilityPolicy.TRANSIENT_LOCAL)
    assert keep_all.history == HistoryPolicy.KEEP_ALL     # the original unchanged


def test_the_node_profiles():
    """The three profiles made by with_depth: each base's policies, their own depths."""
    assert (STATE_QOS.reliability, STATE_QOS.durability, STATE_QOS.depth) == (
        ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE, 100)
    for profile, depth in ((REQUEST_QOS, 100), (GOAL_REQUEST_QOS, 1000)):
        assert (profile.history, profile.reliability, profile.durability, profile.depth) == (
            HistoryPolicy.KEEP_LAST, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE,
            depth)


def test_a_setup_wait_names_the_conditions_still_false():
    """RosClient.wait_all: a failed wait says which conditions held not, and the detail."""
    client = RosClient('wait_all_test')
    try:
        lonely = client.node.create_publisher(Bool, 'wait_all_nobody', 10)
        client.wait_all(('met', lambda: True), timeout=0.1)
        with pytest.raises(AssertionError) as failed:
            client.wait_all(('met', lambda: True), ('not met', lambda: False),
                            matched(lonely), timeout=0.2, detail=lambda: 'the output')
        waiting, detail = str(failed.value).split('\n', 1)
        assert waiting.split(': ', 1)[1].split('; ') == [
            'not met', '1 subscriber(s) of /wait_all_nobody matched (has 0)']
        assert detail == 'the output'
    finally:
        client.close()
