"""
Time in ROS messages, and the simulated time as ROS hands it out: ``/clock`` and a clock.

:func:`seconds` reads a builtin_interfaces Time or Duration (a stamp, a
``time_from_start``) in seconds; :func:`set_duration` writes seconds into one (the
controller's ``time_from_start``, the sim node's stamps).  :class:`SimulatedClock` is
the sim node's simulated time as a ROS clock for nodes composed in its process
(``denoc_sim_arm``'s controller), set as ``/clock`` would set it, without the trip
through DDS, and published on ``/clock`` when ``publish_clock`` is true.
"""

from rclpy.clock import ROSClock
from rclpy.time_source import TimeSource
from rosgraph_msgs.msg import Clock


def seconds(stamp) -> float:
    """Return a builtin_interfaces Time or Duration in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def set_duration(msg, value: float):
    """Set a builtin_interfaces Duration (or Time) to ``value`` >= 0 seconds."""
    nanoseconds = int(round(max(value, 0.0) * 1e9))
    msg.sec, msg.nanosec = divmod(nanoseconds, 1_000_000_000)


class SimulatedClock:
    """The simulated time: :attr:`clock` in this process, and ``/clock`` if ``publish``."""

    def __init__(self, node, publish: bool):
        """Make the ROS clock; create the ``/clock`` publisher of ``node`` if ``publish``."""
        self.clock = ROSClock()
        self._source = TimeSource()
        self._source.attach_clock(self.clock)
        self._source.ros_time_is_active = True
        self._msg = Clock()
        self.publisher = node.create_publisher(Clock, '/clock', 10) if publish else None

    def set_time(self, seconds: float):
        """Set the clock to ``seconds`` of simulated time; publish it on ``/clock``."""
        set_duration(self._msg.clock, seconds)
        self._source.clock_callback(self._msg)
        if self.publisher is not None:
            self.publisher.publish(self._msg)
