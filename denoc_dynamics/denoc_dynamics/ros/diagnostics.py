"""
``/diagnostics`` of the denoc_dynamics nodes, as ROS's diagnostic_updater publishes it.

Each node adds named tasks (:meth:`Diagnostics.add`); every ``diagnostic_updater.period``
seconds of wall time (the parameter of diagnostic_updater, default 1 s; 0: none) one
diagnostic_msgs/DiagnosticArray on ``/diagnostics`` carries one DiagnosticStatus per
task, named ``'<node name>: <task>'`` (``sim_node: simulation``, ``dynamics_node:
inputs``), ``hardware_id`` the robot's name, its values as key/value pairs, the level
and a one-line message.  rqt_robot_monitor and diagnostic_aggregator read it.

The levels follow one rule in every node: OK; WARN while a rejection counter rose
since the previous report (:meth:`Report.counter`) or a rate falls short of its
target; ERROR when the node cannot do its job (a diverged simulation); STALE before the
robot model is loaded.
"""

from typing import Callable, Dict, List

from diagnostic_msgs.msg import DiagnosticArray
from diagnostic_msgs.msg import DiagnosticStatus
from diagnostic_msgs.msg import KeyValue
from rclpy.clock import Clock
from rclpy.clock import ClockType

from .parameters import DIAGNOSTICS

OK, WARN, ERROR, STALE = (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR,
                          DiagnosticStatus.STALE)

#: The ordering of the levels (STALE ranks above ERROR, as diagnostic_aggregator's).
RANK = {OK: 0, WARN: 1, ERROR: 2, STALE: 3}


class Report:
    """One task's status being filled in: a level, messages, key/value pairs."""

    def __init__(self, name: str, hardware_id: str, previous: Dict[str, int]):
        """Start at OK; ``previous`` holds the counters' totals of the last report."""
        self.status = DiagnosticStatus(name=name, hardware_id=hardware_id, level=OK)
        self._messages: List[str] = []
        self._previous = previous

    def add(self, key: str, value):
        """Add a key/value pair (the value as text; floats with 6 significant digits)."""
        text = f'{value:.6g}' if isinstance(value, float) else str(value)
        self.status.values.append(KeyValue(key=key, value=text))

    def summary(self, level, message: str):
        """Raise the level to ``level`` (never lower it) and add ``message``."""
        if RANK[level] > RANK[self.status.level]:
            self.status.level = level
        if message:
            self._messages.append(message)

    def counter(self, key: str, rejections):
        """
        Add the rejection counter ``rejections`` (:class:`.joint_io.Rejections`).

        The level is WARN if it rose: if its total is above the one of the previous
        report of this task.
        """
        total = rejections.total
        self.add(key, str(rejections))
        rise = total - self._previous.get(key, 0)
        self._previous[key] = total
        if rise > 0:
            self.summary(WARN, f'{rise} {key}')

    def finish(self) -> DiagnosticStatus:
        """Return the status, its message the messages joined ('OK' if none)."""
        self.status.message = '; '.join(self._messages) or 'OK'
        return self.status


class Diagnostics:
    """
    A node's ``/diagnostics``: the tasks, the period timer, the publisher.

    ``hardware_id`` is a callable returning the robot's name ('' without a model).
    """

    def __init__(self, node, hardware_id: Callable[[], str] = lambda: ''):
        """Declare ``diagnostic_updater.period`` and start publishing."""
        self.node = node
        self.hardware_id = hardware_id
        self.period = DIAGNOSTICS.declare(node)['diagnostic_updater.period']
        self.tasks = []
        self._previous: Dict[str, Dict[str, int]] = {}
        self.publisher = None
        if self.period > 0.0:
            self.publisher = node.create_publisher(DiagnosticArray, '/diagnostics', 10)
            node.create_timer(self.period, self.publish,
                              clock=Clock(clock_type=ClockType.STEADY_TIME))

    def add(self, task: str, fill: Callable[[Report], None]):
        """Add the task ``task``: ``fill(report)`` sets its level, message and values."""
        self.tasks.append((task, fill))

    def report(self) -> DiagnosticArray:
        """Return the DiagnosticArray of every task now."""
        array = DiagnosticArray()
        array.header.stamp = self.node.get_clock().now().to_msg()
        hardware_id = self.hardware_id()
        for task, fill in self.tasks:
            report = Report(f'{self.node.get_name()}: {task}', hardware_id,
                            self._previous.setdefault(task, {}))
            try:
                fill(report)
            except Exception as exc:  # a task that fails must not stop the others
                report.summary(ERROR, f'diagnostic task failed: {exc!r}')
            array.status.append(report.finish())
        return array

    def publish(self):
        """Publish :meth:`report` on ``/diagnostics``."""
        if self.publisher is not None:
            self.publisher.publish(self.report())
