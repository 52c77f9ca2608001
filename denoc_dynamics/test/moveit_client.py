"""
A FollowJointTrajectory client that behaves like MoveIt's simple controller manager.

MoveIt 2 (moveit_simple_controller_manager) waits for a complete ``joint_states``,
sends the planned trajectory as a FollowJointTrajectory goal to
``<controller_name>/<action_ns>``, aborts an execution that runs past 1.1 times the
planned duration plus 0.5 s, and afterwards waits for the arm to stop.  The scenarios
here (:class:`MoveItLikeClient` methods ``check_*``) are shared by the test that
starts the nodes as processes (test_ros_follow_joint_trajectory.py) and the launch
tests (test_moveit_launch.py, test_two_arms_launch.py).

Before the first goal the client also waits for the controller's
``~/controller_state`` (one per joint state it used): in the launch layout the
controller reads ``robot_joint_states``, not the ``joint_states`` the client sees, and
under load that topic's discovery can come seconds later (the first goal would then
wait for it, within MoveIt's deadline).
"""

import time

from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from control_msgs.msg import JointTrajectoryControllerState
import numpy as np
from rclpy.action import ActionClient
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

Result = FollowJointTrajectory.Result
TIMEOUT = 30.0


def duration(msg, value):
    """Set a Duration message to ``value`` seconds."""
    nanoseconds = int(round(value * 1e9))
    msg.sec, msg.nanosec = divmod(nanoseconds, 1_000_000_000)
    return msg


def quintic(names, start, target, total=3.0, points=10):
    """
    Return a rest-to-rest quintic JointTrajectory over ``total`` s, as MoveIt plans it.

    A first point at time 0 at ``start`` (MoveIt's trajectories begin with the current
    state), then ``points`` points.
    """
    start, target = np.asarray(start, dtype=float), np.asarray(target, dtype=float)
    msg = JointTrajectory(joint_names=list(names))
    for k in range(0, points + 1):
        s = k / points
        blend = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
        rate = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / total
        accel = (60 * s - 180 * s ** 2 + 120 * s ** 3) / total ** 2
        point = JointTrajectoryPoint(positions=(start + blend * (target - start)).tolist(),
                                     velocities=(rate * (target - start)).tolist(),
                                     accelerations=(accel * (target - start)).tolist())
        duration(point.time_from_start, total * s)
        msg.points.append(point)
    return msg


class MoveItLikeClient:
    """The action client and a joint_states listener on a RosClient's node."""

    def __init__(self, ros, namespace='', controller='trajectory_controller',
                 action_ns='follow_joint_trajectory'):
        """Connect to ``<namespace>/<controller>/<action_ns>``."""
        self.ros = ros
        prefix = f'/{namespace.strip("/")}' if namespace.strip('/') else ''
        self.action_name = f'{prefix}/{controller}/{action_ns}'
        self.client = ActionClient(ros.node, FollowJointTrajectory, self.action_name)
        self.states = []
        ros.node.create_subscription(JointState, f'{prefix}/joint_states', self._on_state,
                                     qos_profile_sensor_data)
        self.controller_states = 0
        ros.node.create_subscription(JointTrajectoryControllerState,
                                     f'{prefix}/{controller}/controller_state',
                                     self._on_controller_state, 10)

    def _on_state(self, msg):
        self.states.append(msg)
        del self.states[:-500]

    def _on_controller_state(self, msg):
        self.controller_states += 1

    def wait_ready(self, names, timeout=TIMEOUT):
        """Wait for the action server, a complete joint state (MoveIt: 1 s) and the controller."""
        assert self.ros.spin_until(self.client.server_is_ready, timeout), \
            f'no action server {self.action_name}'
        assert self.ros.spin_until(lambda: self.states and set(names) <= set(
            self.states[-1].name), timeout), 'no complete joint_states'
        # the controller commands the arm: it has its own joint states (module docstring)
        assert self.ros.spin_until(lambda: self.controller_states > 0, timeout), \
            'no controller_state: the controller has no joint state'
        # The answer to a first goal can be lost while DDS discovery has not yet matched
        # the server's response writer with this client
        self.wait_answered(timeout)

    def wait_answered(self, timeout=TIMEOUT):
        """
        Wait until the action server answers a new goal (an empty one: it aborts it).

        The server answers goals in the order they came: the answer also says it has
        worked through the goals queued before (a flood's, for tens of seconds on a
        loaded machine), and that discovery has matched this client's response reader.
        """
        wait_answered(self.ros, self.client, timeout, f'the action server {self.action_name}')

    def positions(self, names):
        """Return the latest joint positions of ``names``."""
        state = self.states[-1]
        index = {name: i for i, name in enumerate(state.name)}
        return np.array([state.position[index[name]] for name in names])

    def velocities(self, names):
        """Return the latest joint velocities of ``names``."""
        state = self.states[-1]
        index = {name: i for i, name in enumerate(state.name)}
        return np.array([state.velocity[index[name]] for name in names])

    def send(self, trajectory, **fields):
        """Send a goal; return its (accepted) goal handle."""
        goal = FollowJointTrajectory.Goal(trajectory=trajectory, **fields)
        future = self.client.send_goal_async(goal)
        assert self.ros.spin_until(future.done, TIMEOUT), 'no answer to the goal'
        handle = future.result()
        assert handle.accepted, 'goal not accepted'
        return handle

    def result(self, handle, timeout=TIMEOUT):
        """Return (status, result) of a goal, or (None, None) if it did not end in time."""
        future = handle.get_result_async()
        if not self.ros.spin_until(future.done, timeout):
            return None, None
        response = future.result()
        return response.status, response.result

    def execute(self, trajectory, slack=1.0, **fields):
        """Run a goal as MoveIt does; return (status, result, seconds it took)."""
        total = duration_of(trajectory)
        start = time.monotonic()
        status, result = self.result(self.send(trajectory, **fields),
                                     slack * (1.1 * total + 0.5))
        return status, result, time.monotonic() - start

    def wait_for_rest(self, names, speed=1e-3, timeout=5.0):
        """Wait until every joint is slower than ``speed`` (MoveIt waits for the stop)."""
        return self.ros.spin_until(
            lambda: np.abs(self.velocities(names)).max() < speed, timeout)

    # --- scenarios ---------------------------------------------------------------------
    def check_quintic_move(self, test, names, offsets, total=3.0, deadline=1.0):
        """
        Check that a 10-point quintic ends SUCCESSFUL in time and rests within 1 mrad.

        In time: within ``deadline`` times MoveIt's 1.1 ``total`` + 0.5 s.
        """
        start = self.positions(names)
        target = start + np.asarray(offsets, dtype=float)
        status, result, took = self.execute(quintic(names, start, target, total),
                                            slack=deadline)
        test.assertEqual(status, GoalStatus.STATUS_SUCCEEDED,
                         f'status {status}, result {result}, after {took:.2f} s')
        test.assertEqual(result.error_code, Result.SUCCESSFUL, result.error_string)
        test.assertLess(took, deadline * (1.1 * total + 0.5))
        self.ros.spin_for(max(0.0, total + 1.0 - took))   # 1 s after the last point
        error = np.abs(self.positions(names) - target)
        test.assertLess(error.max(), 1e-3, f'errors [mrad] {np.round(error * 1e3, 3)}')
        return target

    def check_unknown_joint(self, test, names):
        """Check that a goal naming an unknown joint ends INVALID_JOINTS."""
        bad = list(names[:-1]) + ['no_such_joint']
        start = self.positions(names)
        status, result, _ = self.execute(quintic(bad, start, start, 1.0, 2))
        test.assertEqual(status, GoalStatus.STATUS_ABORTED)
        test.assertEqual(result.error_code, Result.INVALID_JOINTS, result.error_string)
        test.assertIn('no_such_joint', result.error_string)

    def check_goal_tolerance_violated(self, test, names):
        """Check that goal tolerance 1e-9 rad in 0.01 s gives GOAL_TOLERANCE_VIOLATED."""
        start = self.positions(names)
        target = start + 0.05
        status, result, _ = self.execute(
            quintic(names, start, target, 1.0, 4),
            goal_tolerance=[JointTolerance(name=name, position=1e-9) for name in names],
            goal_time_tolerance=duration(FollowJointTrajectory.Goal().goal_time_tolerance,
                                         0.01))
        test.assertEqual(status, GoalStatus.STATUS_ABORTED)
        test.assertEqual(result.error_code, Result.GOAL_TOLERANCE_VIOLATED,
                         result.error_string)

    def check_cancel_holds(self, test, names):
        """Check that a goal canceled halfway ends CANCELED and the arm holds there."""
        start = self.positions(names)
        target = start + 0.3
        handle = self.send(quintic(names, start, target, 3.0))
        self.ros.spin_for(1.2)
        future = handle.cancel_goal_async()
        assert self.ros.spin_until(future.done, TIMEOUT)
        status, _ = self.result(handle)
        test.assertEqual(status, GoalStatus.STATUS_CANCELED)
        self.ros.spin_for(1.0)   # it stops from its speed, within a few mrad
        held = self.positions(names)
        test.assertGreater(np.abs(held - start).max(), 0.01, 'the arm did not move')
        test.assertGreater(np.abs(held - target).max(), 0.1, 'the arm went on to the goal')
        self.ros.spin_for(2.0)   # past the canceled trajectory's end
        drift = np.abs(self.positions(names) - held).max()
        test.assertLess(drift, 1e-3, f'the arm moved on by {drift * 1e3:.2f} mrad')

    def check_preemption(self, test, names):
        """Check that a second goal preempts the first (aborted, INVALID_GOAL)."""
        start = self.positions(names)
        first = self.send(quintic(names, start, start + 0.3, 3.0))
        self.ros.spin_for(0.5)
        target = start - 0.1
        sent = time.monotonic()
        second = self.send(quintic(names, self.positions(names), target, 2.0))
        status, result = self.result(first, 5.0)
        test.assertEqual(status, GoalStatus.STATUS_ABORTED)
        test.assertEqual(result.error_code, Result.INVALID_GOAL)
        test.assertIn('preempted', result.error_string)
        status, result = self.result(second, 20.0)
        took = time.monotonic() - sent
        test.assertEqual(status, GoalStatus.STATUS_SUCCEEDED, f'{status} {result}')
        test.assertLess(took, 1.1 * 2.0 + 0.5)
        self.ros.spin_for(1.0)
        test.assertLess(np.abs(self.positions(names) - target).max(), 1e-3)


def wait_answered(ros, client, timeout=TIMEOUT, server='the action server'):
    """
    Wait until the server of the action client ``client`` answers it an empty goal.

    ``server_is_ready`` says that this client has matched the server's endpoints; the
    server may not yet have matched this client's response reader, and an answer it
    sends before that can be lost.  An answer received says both sides have.  The
    server aborts the empty goal (INVALID_GOAL).
    """
    deadline = time.monotonic() + timeout
    while not ros.spin_until(client.send_goal_async(FollowJointTrajectory.Goal()).done, 3.0):
        assert time.monotonic() < deadline, f'{server} answered no goal in {timeout:g} s'


def duration_of(trajectory):
    """Return the time_from_start of the last point [s]."""
    last = trajectory.points[-1].time_from_start
    return last.sec + 1e-9 * last.nanosec
