"""
A publisher that knows, without asking the middleware, whether anyone listens.

A node that sends an output only while its topic has a subscriber (as
robot_state_publisher does) asks ``Publisher.get_subscription_count()`` per message:
a call through rcl into the middleware each time, several per joint state at 1 kHz.
:class:`ListenedPublisher` keeps the count instead, from the publisher's *matched*
events (``PublisherEventCallbacks(matched=...)``: the middleware's report of a
subscription matched or gone), which the node's executor runs like any callback: the
count changes when the graph does, and reading it costs an attribute.  Where the
middleware has no matched event, the count is asked for on every read, as before.

It stands in for the rclpy publisher where a node publishes (``publish``,
``get_subscription_count``, ``topic_name``): tests may put a recorder in its place.
"""

from rclpy.event_handler import PublisherEventCallbacks
from rclpy.event_handler import UnsupportedEventTypeError


class ListenedPublisher:
    """An rclpy publisher with its subscription count kept from its matched events."""

    def __init__(self, node, msg_type, topic: str, qos):
        """Create the publisher of ``msg_type`` on ``topic`` for ``node``."""
        self._count = None   # None: no matched events, ask the middleware
        try:
            self.publisher = node.create_publisher(
                msg_type, topic, qos,
                event_callbacks=PublisherEventCallbacks(matched=self._on_matched))
        except UnsupportedEventTypeError:
            self.publisher = node.create_publisher(msg_type, topic, qos)
        else:
            # the subscriptions matched before the handler existed: none can be missed,
            # each later change comes as an event
            self._count = self.publisher.get_subscription_count()

    def _on_matched(self, info):
        self._count = info.current_count

    def get_subscription_count(self) -> int:
        """Return the number of subscriptions matched to the publisher."""
        if self._count is None:
            return self.publisher.get_subscription_count()
        return self._count

    def publish(self, msg):
        """Publish ``msg``."""
        self.publisher.publish(msg)

    @property
    def topic_name(self) -> str:
        """Return the publisher's fully qualified topic name."""
        return self.publisher.topic_name
