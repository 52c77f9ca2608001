"""
send_trajectory: send one joint trajectory to the trajectory controller and report.

For machines without the ``ros2`` command (the PyPI path); on a ROS install
``ros2 topic pub --once /trajectory_controller/joint_trajectory ...`` does the same.
Each ``--point`` is ``TIME:POSITIONS`` (seconds after the start, then one position per
joint of ``--joints``); ``--velocities`` / ``--accelerations`` take the same form
(matched to the point of that time) for cubic or quintic segments::

    send_trajectory --joints joint1,joint4 --point 3:0.8,-1.6 --point 6:0,-1.2

It waits for the controller to subscribe, publishes, and then reads the
controller's ``~/status`` counters to say whether the trajectory was
accepted (exit code 0) or rejected (exit code 1; the reason is in the controller's
log).  Exit code 2: bad arguments or no controller within ``--timeout``.

With ``--action`` it sends the trajectory as a control_msgs/FollowJointTrajectory
goal instead (to ``follow_joint_trajectory`` next to the topic, as MoveIt does; what
``ros2 action send_goal`` does on a ROS install), waits for its end and prints the
result: exit code 0 if SUCCESSFUL, 1 with the error code and string otherwise.
"""

import argparse
import sys
import time

from denoc_dynamics_interfaces.msg import TrajectoryControllerState
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.utilities import remove_ros_args

from .node_main import destroy_node
from .trajectory_controller import trajectory_msg
from ..trajectory import TrajectoryPoint

DEFAULT_TOPIC = '/trajectory_controller/joint_trajectory'


def _timed_vector(text):
    try:
        time_text, values = text.split(':', 1)
        return float(time_text), [float(x) for x in values.replace(',', ' ').split()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f'expected TIME:V1,V2,... (e.g. 3:0.8,-1.6), got {text!r}') from exc


def parse_args(argv):
    """Parse the command line (ROS arguments after --ros-args are left to rclpy)."""
    parser = argparse.ArgumentParser(
        prog='send_trajectory', description=__doc__.split('\n')[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split('\n\n', 1)[1])
    parser.add_argument('--joints', required=True,
                        help='comma-separated joint names, e.g. joint1,joint4')
    parser.add_argument('--point', type=_timed_vector, action='append', required=True,
                        metavar='TIME:POSITIONS', help='a waypoint (repeatable)')
    parser.add_argument('--velocities', type=_timed_vector, action='append', default=[],
                        metavar='TIME:VELOCITIES', help='velocities of the point at TIME')
    parser.add_argument('--accelerations', type=_timed_vector, action='append', default=[],
                        metavar='TIME:ACCELERATIONS',
                        help='accelerations of the point at TIME')
    parser.add_argument('--topic', default=DEFAULT_TOPIC,
                        help=f"the controller's trajectory topic (default {DEFAULT_TOPIC})")
    parser.add_argument('--action', action='store_true',
                        help='send a FollowJointTrajectory goal and wait for its result')
    parser.add_argument('--timeout', type=float, default=10.0,
                        help='seconds to wait for the controller (default 10)')
    args = parser.parse_args(argv)
    args.joint_names = [name.strip() for name in args.joints.split(',') if name.strip()]
    extra = {}
    for field in ('velocities', 'accelerations'):
        extra[field] = dict(getattr(args, field))
        unknown = sorted(set(extra[field]) - {t for t, _ in args.point})
        if unknown:
            parser.error(f'--{field} for time(s) {unknown} without a --point')
    args.points = [TrajectoryPoint(t, p, extra['velocities'].get(t, ()),
                                   extra['accelerations'].get(t, ()))
                   for t, p in args.point]
    return args


def state_topic(trajectory_topic):
    """Return the status topic next to a controller's joint_trajectory topic."""
    return trajectory_topic.rsplit('/', 1)[0] + '/status'


def send(node, executor, msg, topic, timeout):
    """Publish ``msg`` once the controller listens; return 'accepted', 'rejected' or why not."""
    publisher = node.create_publisher(type(msg), topic, 10)
    states = []
    node.create_subscription(TrajectoryControllerState, state_topic(topic),
                             states.append, 10)
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0 or not states:
        if time.monotonic() > deadline:
            if publisher.get_subscription_count() == 0:
                return f'no subscriber on {topic} within {timeout:g} s'
            break  # a subscriber but no state: publish anyway, report 'sent'
        executor.spin_once(timeout_sec=0.05)
    before = states[-1] if states else None
    publisher.publish(msg)
    if before is None:
        return 'sent'
    deadline = time.monotonic() + min(timeout, 5.0)
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
        latest = states[-1]
        if latest.trajectories_rejected > before.trajectories_rejected:
            return 'rejected'
        if latest.trajectories_accepted > before.trajectories_accepted:
            return 'accepted'
    return 'sent (no answer on the controller status)'


def send_goal(node, executor, msg, topic, timeout):
    """Send ``msg`` as a FollowJointTrajectory goal; return (exit code, what happened)."""
    try:
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
    except ImportError as exc:
        return 2, f'no control_msgs ({exc}): send without --action'
    from .joint_io import REQUEST_QOS
    name = topic.rsplit('/', 1)[0] + '/follow_joint_trajectory'
    # every client of the action reads every answer (one response topic) and keeps its
    # own: deep queues, so that a burst of other clients' answers cannot push it out
    client = ActionClient(node, FollowJointTrajectory, name, goal_service_qos_profile=REQUEST_QOS,
                          result_service_qos_profile=REQUEST_QOS,
                          cancel_service_qos_profile=REQUEST_QOS)

    def wait(predicate, seconds):
        deadline = time.monotonic() + seconds
        while not predicate():
            if time.monotonic() > deadline:
                return False
            executor.spin_once(timeout_sec=0.05)
        return True

    if not wait(client.server_is_ready, timeout):
        return 2, f'no action server {name} within {timeout:g} s'
    future = client.send_goal_async(FollowJointTrajectory.Goal(trajectory=msg))
    if not wait(future.done, timeout) or not future.result().accepted:
        return 1, f'goal not accepted by {name}'
    last = msg.points[-1].time_from_start
    result = future.result().get_result_async()
    if not wait(result.done, timeout + 1.1 * (last.sec + 1e-9 * last.nanosec) + 0.5):
        return 1, f'no result from {name}'
    codes = {value: key for key, value in vars(FollowJointTrajectory.Result).items()
             if key.isupper() and isinstance(value, int)}
    answer = result.result().result
    text = f'goal {codes.get(answer.error_code, answer.error_code)} on {name}'
    if answer.error_string:
        text += f': {answer.error_string}'
    return (0 if answer.error_code == FollowJointTrajectory.Result.SUCCESSFUL else 1), text


def main(argv=None):
    """Send the trajectory given on the command line; return the exit status."""
    argv = list(sys.argv) if argv is None else ['send_trajectory'] + list(argv)
    args = parse_args(remove_ros_args(argv)[1:])
    msg = trajectory_msg(args.joint_names, args.points)
    rclpy.init(args=argv)
    node = None
    try:
        node = rclpy.create_node('send_trajectory')
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        if args.action:
            code, result = send_goal(node, executor, msg, args.topic, args.timeout)
        else:
            code = None
            result = send(node, executor, msg, args.topic, args.timeout)
    except KeyboardInterrupt:
        return 130
    finally:
        if node is not None:
            destroy_node(node)   # with its action client
        rclpy.try_shutdown()
    if code is not None:
        print(f'send_trajectory: {len(msg.points)} point(s) for {args.joint_names}: {result}',
              flush=True)
        return code
    print(f'send_trajectory: {len(msg.points)} point(s) for {args.joint_names} on '
          f'{args.topic}: {result}', flush=True)
    if result == 'rejected':
        print("send_trajectory: the reason is in the controller's log", file=sys.stderr)
        return 1
    if result.startswith('no subscriber'):
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
