"""
FollowJointTrajectory over real DDS: sim_node and trajectory_controller as processes.

A client that behaves like MoveIt's simple controller manager (moveit_client.py)
drives the arm; the controller gets the simulated arm's friction model as the launch
file gives it (simulated_friction).  Needs control_msgs (built from ../shared/ros2-msgs
by `make test`); where that exists, a skip here is a failure (conftest.py).
"""

import unittest

from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

POSE = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0]
NAMES = [f'joint{k}' for k in range(1, 8)]
OFFSETS = [0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3]
STORM_GOALS, STORM_RATE = 1000, 100.0     # a goal storm: 10 s of goals at 100 Hz


@pytest.fixture(scope='module')
def arm(ros2_msgs):
    from moveit_client import MoveItLikeClient
    sim = NodeProcess('sim_node', ros_args(urdf_path=bundled_urdf(), initial_positions=POSE,
                                           status_period=0.0))
    controller = NodeProcess('trajectory_controller', ros_args(
        urdf_path=bundled_urdf(), simulated_friction=True, initial_positions=POSE))
    ros = RosClient('moveit_like_client')
    client = MoveItLikeClient(ros)
    try:
        try:
            client.wait_ready(NAMES)
        except AssertionError as failed:
            raise AssertionError(f'{failed}\n' + sim.describe() + controller.describe())
        yield client, (sim, controller)
    finally:    # the processes too when the setup failed: no orphans for the next module
        ros.close()
        controller.stop()
        sim.stop()


@pytest.fixture
def check():
    return unittest.TestCase()


def test_a_quintic_move_succeeds_in_time_and_rests_within_a_milliradian(arm, check):
    client, nodes = arm
    client.check_quintic_move(check, NAMES, OFFSETS)
    client.check_quintic_move(check, NAMES, -np.asarray(OFFSETS))
    assert all(node.alive() for node in nodes)


def test_an_unknown_joint_gives_invalid_joints(arm, check):
    arm[0].check_unknown_joint(check, NAMES)


def test_a_tiny_goal_tolerance_gives_goal_tolerance_violated(arm, check):
    arm[0].check_goal_tolerance_violated(check, NAMES)


def test_cancel_leaves_the_arm_holding(arm, check):
    arm[0].check_cancel_holds(check, NAMES)


def test_a_second_goal_preempts_the_first(arm, check):
    arm[0].check_preemption(check, NAMES)


def rss_kib(pid):
    """Return the resident memory of process ``pid`` [KiB]."""
    with open(f'/proc/{pid}/status') as stream:
        for line in stream:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise AssertionError(f'no VmRSS for {pid}')


def flood(client, names, seconds):
    """
    Send goals and topic trajectories (1-point holds) as fast as possible, up to 1 kHz each.

    Each preempts the last.  Return the number of goals and of trajectories sent.
    """
    from control_msgs.action import FollowJointTrajectory
    from moveit_client import quintic
    from trajectory_msgs.msg import JointTrajectory
    import time
    here = client.positions(names)
    hold = quintic(names, here, here, 1.0, 1)
    goal = FollowJointTrajectory.Goal(trajectory=hold)
    if not hasattr(client, 'topic'):
        client.topic = client.ros.node.create_publisher(
            JointTrajectory, '/trajectory_controller/joint_trajectory', 10)
    goals = messages = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        tick = time.monotonic()
        client.client.send_goal_async(goal)
        goals += 1
        client.topic.publish(hold)
        messages += 1
        client.ros.executor.spin_once(timeout_sec=0.0)
        time.sleep(max(0.0, 0.001 - (time.monotonic() - tick)))
    return goals, messages


def test_a_flood_of_goals_leaves_the_controller_alive_with_flat_memory(arm):
    # 1 kHz for 10 s; here twice 4 s, each followed by the 10 s after which
    # the action server forgets finished goals (rclpy's result_timeout)
    client, (sim, controller) = arm
    goals, messages = flood(client, NAMES, 4.0)
    client.ros.spin_for(11.0)
    first = rss_kib(controller.proc.pid)
    more = flood(client, NAMES, 4.0)
    goals, messages = goals + more[0], messages + more[1]
    client.ros.spin_for(11.0)
    second = rss_kib(controller.proc.pid)
    assert controller.alive() and sim.alive(), controller.describe()
    assert goals > 500 and messages > 500, f'only {goals} goals, {messages} trajectories'
    sent = goals + messages
    assert second - first < 4096, f'RSS grew from {first} to {second} KiB'
    # one INFO line per accepted trajectory at most every 5 s (ACCEPT_LOG_PERIOD)
    lines = controller.output().count('trajectory accepted')
    print(f'flood: {goals} goals and {messages} trajectories, controller RSS {first} -> '
          f'{second} KiB, {lines} INFO lines')
    assert lines < 15, f'{lines} INFO lines for {sent} goals'
    # still in control, once the flood's queued goals are worked through (at a load of
    # 9 they lasted longer than the 11 s above: a goal sent then started late, from
    # where the arm had sagged meanwhile, and was refused as a start jump)
    client.wait_answered(120.0)
    assert client.wait_for_rest(NAMES, timeout=30.0), 'the arm did not come to rest'
    client.check_quintic_move(unittest.TestCase(), NAMES, OFFSETS)


#: What the control loop keeps through the storm, on 2 cores with the machine loaded:
#: the share of the arm's states it answers, of those it answers without a storm in
#: the same run, and its longest silence [s of simulated time] (docs/bad-input.md,
#: "Requests": 59-88 % measured at a load average of 4-6).
STORM_CONTROL_SHARE, STORM_LONGEST_GAP = 0.4, 0.5

#: The control loop's share without a storm is measured over this long [s] just
#: before it: 100 % on a quiet machine, 55 % at a load average of 9 (2 cores), where
#: the machine, not the storm, took the rest.
QUIET_SPAN = 2.0


def answered(stamps):
    """Return the share of the arm's 100 Hz states answered, the longest gap, the span."""
    span = stamps[-1] - stamps[0]
    return (len(stamps) - 1) / (100.0 * span), np.diff(stamps).max(), span


def cpu_seconds(pid):
    """Return the CPU time process ``pid`` has used so far (user and system) [s]."""
    import os
    with open(f'/proc/{pid}/stat') as stream:
        fields = stream.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def test_a_100_hz_goal_storm_is_answered_and_the_arm_kept_under_control(arm):
    """
    1000 goals at 100 Hz, each preempting the last: every one answered, control kept.

    Before: 52 (at load 7: 841) of 1000 never answered, nothing logged, control at 61
    Hz.  The client's queues are as deep as the controller's (GOAL_REQUEST_QOS): a
    client with rclpy's default depth of 10 loses answers of its own burst.  The
    controller takes goals more slowly than 100 Hz when the machine is loaded: they
    wait in its queue (GOAL_REQUEST_DEPTH) and are all answered after the storm.

    The control loop must answer at least STORM_CONTROL_SHARE of the states it answers
    in the same run without the storm (QUIET_SPAN before it): on a quiet machine 40 %
    of them all, as before; on a loaded one, the states the scheduler's share of the
    cores already cost it are not the storm's (at a load of 9 the controller got 0.14
    of a core through the storm and answered 55 % of the states before it).

    The storm is sent on the action's own goal and result services, as an action
    client sends it, without an action client's status subscription: the server
    publishes the status of every goal it keeps (1000 here) at each change, and an
    rclpy client turns each of those arrays into Python objects, about half a core
    that the controller and the sim need on a loaded 2-core machine.
    """
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
    from denoc_dynamics.ros.trajectory_controller import GOAL_REQUEST_QOS
    from moveit_client import quintic
    import os
    import time
    from unique_identifier_msgs.msg import UUID
    client, (sim, controller) = arm
    here = client.positions(NAMES)
    goal = FollowJointTrajectory.Goal(trajectory=quintic(NAMES, here, here, 1.0, 1))
    # a node of its own, spun alone: this process must keep up with 1000 answers
    ros = RosClient('goal_storm')
    action = FollowJointTrajectory.Impl
    send_goal = ros.node.create_client(action.SendGoalService,
                                       f'{client.action_name}/_action/send_goal',
                                       qos_profile=GOAL_REQUEST_QOS)
    get_result = ros.node.create_client(action.GetResultService,
                                        f'{client.action_name}/_action/get_result',
                                        qos_profile=GOAL_REQUEST_QOS)
    stamps = []
    ros.node.create_subscription(   # every state the controller answered
        JointTrajectoryControllerState, '/trajectory_controller/controller_state',
        lambda msg: stamps.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec),
        10 * STORM_GOALS)
    processes = {'controller': controller.proc.pid, 'sim': sim.proc.pid,
                 'test': os.getpid()}
    try:
        ros.wait_all(*((f'service {c.srv_name}', c.service_is_ready)
                       for c in (send_goal, get_result)), timeout=60.0)
        ros.spin_for(0.5)
        quiet = len(stamps)
        ros.spin_for(QUIET_SPAN)
        first = len(stamps)
        futures, ids = [], []
        begin = ros.node.get_clock().now().nanoseconds * 1e-9   # the controller's clock
        used = {name: cpu_seconds(pid) for name, pid in processes.items()}
        start = tick = time.monotonic()
        for k in range(STORM_GOALS):
            ids.append(UUID(uuid=list(os.urandom(16))))
            futures.append(send_goal.call_async(action.SendGoalService.Request(
                goal_id=ids[-1], goal=goal)))
            tick += 1.0 / STORM_RATE
            while time.monotonic() < tick:
                ros.executor.spin_once(timeout_sec=max(0.0, tick - time.monotonic()))
        sending = time.monotonic() - start
        ros.spin_until(lambda: all(f.done() for f in futures), 120.0)
        last = len(stamps)
        wall = time.monotonic() - start
        used = {name: (cpu_seconds(pid) - used[name]) / wall
                for name, pid in processes.items()}
        lost = sum(not f.done() for f in futures)
        refused = sum(f.done() and not f.result().accepted for f in futures)
        assert lost == 0 and refused == 0, (lost, refused, controller.describe()[-3000:])
        # when the controller accepted each (its clock; this process reads them later)
        took = max(f.result().stamp.sec + 1e-9 * f.result().stamp.nanosec
                   for f in futures) - begin
        # the last one's result, asked for once it was accepted (as an action client)
        result = get_result.call_async(action.GetResultService.Request(goal_id=ids[-1]))
        assert ros.spin_until(result.done, 30.0), 'no result for the last goal'
        status = result.result().status
        ros.spin_for(0.5)    # the controller's states of the storm, still on their way
    finally:
        ros.close()
    # the control loop through the storm: the states it answered (100 Hz of simulated
    # time, whatever the real-time factor) until it had accepted the last goal (taken
    # as `took` s of simulated time, which runs at most as fast as the wall clock); it
    # answers the latest, skipping any that waited while it took goals (sensor data)
    during = np.unique(stamps[first:last])
    during = during[during <= during[0] + took]
    share, gap, span = answered(during)
    before = answered(np.unique(stamps[quiet:first]))
    load = os.getloadavg()[0]
    report = (f'storm: {STORM_GOALS} goals sent in {sending:.1f} s, all accepted within '
              f'{took:.1f} s; control loop answered {100 * share:.0f} % of the states over '
              f'{span:.1f} s of simulated time, longest gap {1e3 * gap:.0f} ms (before the '
              f'storm: {100 * before[0]:.0f} %, {1e3 * before[1]:.0f} ms); CPU used [cores] '
              + ', '.join(f'{name} {value:.2f}' for name, value in used.items())
              + f'; load average {load:.1f}')
    print(report)
    assert status == 4, status                     # the last one ran to the end
    assert share >= STORM_CONTROL_SHARE * min(1.0, before[0]), report
    assert gap <= STORM_LONGEST_GAP, report
    assert controller.alive() and sim.alive()
