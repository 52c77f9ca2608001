"""
The trajectory controller owns its clock; a joint state's stamp is never the time.

In-process, callbacks called directly: the controller's ROS clock is set as /clock
would set it under use_sim_time.  The report's cases (a simulation STOPPED, paused
and reset, its time reset during a goal; a state stamped an hour ahead; a replayed
state; the arm reset under a wall-clock controller) end the goal as aborted with the
reason, never as a success, and the arm is then held where it is.
"""

from denoc_dynamics.ros.trajectory_controller import TrajectoryController
import numpy as np
import pytest
from ros_helpers import at
from ros_helpers import goal_of
from ros_helpers import make
from ros_helpers import NAMES
from ros_helpers import POSE
from ros_helpers import step
from ros_helpers import target
from ros_helpers import trajectory

pytestmark = pytest.mark.ros

T0 = 8.0          # simulated time when the goal starts [s]
INITIAL = POSE    # where a reset puts the arm
FAR = [q + 0.5 for q in POSE]
STRANGER = {'publisher_gid': {'implementation_identifier': 'rmw_fastrtps_cpp',
                              'data': b'another arm'}}


def start_move(node, goal=False):
    """Hold at T0, then a 2.5 s move of 0.5 rad on every joint; return the goal or None."""
    step(node, T0)
    msg = trajectory(NAMES, [(2.5, FAR)])
    if not goal:
        assert node.follow(msg) is True
        return None
    from control_msgs.msg import JointTolerance
    handle = goal_of(msg, goal_tolerance=[JointTolerance(name=n, position=0.05)
                                          for n in NAMES])
    return handle, node.follow(msg, 'action', handle)


def test_the_reference_runs_on_the_clock_not_on_the_stamps(context):
    node = make(context)
    try:
        start_move(node)
        # a stamp of zero (a STOPPED sim's) does not move the reference; one an hour
        # ahead, or another publisher's (a second arm, a replay), is rejected
        step(node, T0 + 0.5, stamp=0.0)
        assert node.state_rejections.total == 0
        step(node, T0 + 0.6, stamp=T0 + 3600.0)
        step(node, T0 + 0.7, stamp=T0 - 30.0, info=STRANGER)
        step(node, T0 + 0.8, FAR, info=STRANGER)
        assert node.state_rejections.counts == {'stamp from the future': 1,
                                                'second publisher': 2}
        assert node.active and not node.finished
        step(node, T0 + 1.25)
        q_d = np.array(node.effort_pub.messages[-1].data)
        assert np.all(np.isfinite(q_d))
        np.testing.assert_allclose(node.trajectory.sample(node.now())[0],
                                   (np.array(POSE) + np.array(FAR)) / 2.0, atol=1e-12)
        assert node.latest_time == T0 + 1.25
    finally:
        node.destroy_node()


@pytest.mark.parametrize('case', ['stopped', 'paused and reset all', 'reset time'])
def test_a_clock_that_jumps_back_drops_the_trajectory_and_holds(context, case):
    node = make(context)
    try:
        start_move(node)
        step(node, T0 + 1.0, [0.8 * a + 0.2 * b for a, b in zip(POSE, FAR)])
        moved = [q + 0.05 for q in POSE]
        # STOPPED or reset ALL: time 0, the arm back at its initial pose; reset TIME:
        # time 0, the arm where it is
        q_after = moved if case == 'reset time' else INITIAL
        step(node, 0.0 if case != 'paused and reset all' else 0.01, q_after)
        assert node.time_jumps == 1 and not node.active
        # held where the state after the jump found it, however time runs on: the old
        # trajectory never resumes when the simulated time reaches it again
        for t in (0.5, T0 + 1.0, T0 + 3.0, T0 + 9.0):
            step(node, t, q_after)
            np.testing.assert_allclose(node.trajectory.sample(node.now())[0], q_after)
        assert node.time_jumps == 1 and not node.active
    finally:
        node.destroy_node()


def test_states_that_stop_abort_the_trajectory(context):
    node = make(context, joint_state_timeout=1.0)
    try:
        start_move(node)
        at(node, T0 + 1.5)
        node._watch_state()
        assert node.time_jumps == 1 and not node.active
    finally:
        node.destroy_node()


def test_an_arm_reset_under_a_wall_clock_drops_the_trajectory(context):
    # the clock runs on (no /clock), but the arm is back at its initial pose 10 ms later
    node = make(context)
    try:
        start_move(node)
        step(node, T0 + 1.0, [0.6 * a + 0.4 * b for a, b in zip(POSE, FAR)])
        step(node, T0 + 1.01, INITIAL)
        assert node.time_jumps == 1 and not node.active
        step(node, T0 + 3.0, INITIAL)
        np.testing.assert_allclose(node.trajectory.sample(node.now())[0], INITIAL)
    finally:
        node.destroy_node()


def test_states_that_waited_in_the_queue_are_bounded_by_their_stamps(context):
    """
    Two states taken at one reading of the clock: the arm had their stamps' advance.

    The previous stamp is the gate's (the followed publisher's own): 0.3 rad in 0.1 s
    of stamps is within the velocity limits, but would be a jump in no time.
    """
    node = make(context)
    try:
        start_move(node)
        before = [0.8 * a + 0.2 * b for a, b in zip(POSE, FAR)]
        step(node, T0 + 1.0, before)
        step(node, T0 + 1.0, [q + 0.3 for q in before], stamp=T0 + 1.1)
        assert node.gate.previous_stamp == T0 + 1.0
        assert node.time_jumps == 0 and node.active
        step(node, T0 + 1.0, [q + 0.6 for q in before], stamp=T0 + 1.1)   # no advance
        assert node.time_jumps == 1 and not node.active
    finally:
        node.destroy_node()


def test_a_new_publisher_is_checked_for_jumps_on_the_clock_alone(context):
    """
    The followed publisher left (its sim restarted) and a new one is followed.

    The arm-jump check bounds the motion by the clock's advance alone: the previous
    stamp is the old publisher's (0 here, as a STOPPED sim's), so the stamps' advance
    would allow any jump.
    """
    import time
    node = make(context)
    try:
        start_move(node)
        step(node, T0 + 0.5, stamp=0.0)
        node.gate._publishers = lambda: [b'new arm']     # the followed one left the topic
        new = {'publisher_gid': {'implementation_identifier': 'rmw_fastrtps_cpp',
                                 'data': b'new arm'},
               'received_timestamp': int((time.time() + 2.0) * 1e9)}   # after 2 s of silence
        step(node, T0 + 0.51, FAR, info=new)             # 0.5 rad in 10 ms
        assert node.gate.handovers == 1
        assert node.time_jumps == 1 and not node.active
        inputs = node.diagnostics.report().status[1]           # beside the rejections
        assert inputs.name == 'trajectory_controller: inputs'
        assert {kv.key: kv.value for kv in inputs.values}[
            'joint-state publisher handovers'] == '1', inputs
    finally:
        node.destroy_node()


def test_no_state_is_used_before_simulated_time_starts(context):
    node = make(context)
    try:
        at(node, 0.0)
        node.on_joint_state(step.__globals__['joint_state'](5.0))
        assert node.trajectory is None and not node.effort_pub.messages
    finally:
        node.destroy_node()


@pytest.mark.ros2_msgs
@pytest.mark.parametrize('case', ['stopped', 'reset time', 'future stamp', 'replay'])
def test_a_goal_never_succeeds_on_a_jump_of_time(context, ros2_msgs, case):
    from control_msgs.action import FollowJointTrajectory
    node = make(context)
    try:
        handle, goal = start_move(node, goal=True)
        stuck = [0.6 * a + 0.4 * b for a, b in zip(POSE, FAR)]
        step(node, T0 + 1.0, stuck)
        if case == 'stopped':
            step(node, 0.0, INITIAL)
            stuck = INITIAL
        elif case == 'reset time':
            step(node, 0.0, stuck)
        elif case == 'future stamp':
            step(node, T0 + 1.01, FAR, stamp=T0 + 3600.0)
        else:
            step(node, T0 + 1.01, POSE, stamp=T0 - 30.0, info=STRANGER)
        for t in np.arange(T0 + 1.02, T0 + 5.0, 0.01):
            step(node, t, stuck)           # the arm never gets to the goal
        assert 'succeeded' not in handle.states
        if case in ('stopped', 'reset time'):
            assert handle.states == ['aborted']
            result = goal.future.result()
            assert result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
            assert 'clock jumped back' in result.error_string
        else:
            assert node.state_rejections.total == 1
            assert node.active   # the rejected state changed nothing
    finally:
        node.destroy_node()


@pytest.mark.ros2_msgs
def test_a_goal_succeeds_only_within_the_goal_tolerance_at_the_end(context, ros2_msgs):
    from control_msgs.msg import JointTolerance
    node = make(context)
    try:
        step(node, T0)
        msg = trajectory(NAMES, [(0.5, target(0.05))])
        handle = goal_of(msg, goal_tolerance=[JointTolerance(name=n, position=0.01)
                                              for n in NAMES])
        node.follow(msg, 'action', handle)
        step(node, T0 + 0.6, POSE)                 # past the end, 5 cm away
        assert handle.states == []
        step(node, T0 + 0.7, target(0.045))        # within 1 cm
        assert handle.states == ['succeeded']
    finally:
        node.destroy_node()


#: How long the controller's executor is held up [s, wall]: longer than the gate's
#: PUBLISHER_HANDOVER, as on a loaded machine.
HELD_UP = 1.3


def test_a_controller_held_up_keeps_following_its_arm_over_dds(context):
    """
    The controller's executor held up while its arm and a replay both publish.

    Over DDS, with the subscription's own message info: the arm publishes its states
    (stamped on the clock) at 100 Hz, a replay its start pose 30 s old at 100 Hz from
    another publisher; the controller is not spun for HELD_UP s (a loaded machine), so
    its queue holds whichever came last and the arm looks silent from the node's side.
    The arm is still on the topic: it stays followed (:mod:`.state_gate`), the replay's
    states are rejected, and the controller's state is the arm's.  The middleware's
    threads run on: a process stopped with SIGSTOP instead breaks Fast DDS's
    shared-memory ports for every later process of the domain.
    """
    import time

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from ros_helpers import joint_state, matched, wait_all
    from sensor_msgs.msg import JointState
    node = make(context)
    sender = rclpy.create_node('held_up_arm_and_replay', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    arm, replay = (sender.create_publisher(JointState, 'joint_states', qos_profile_sensor_data)
                   for _ in range(2))
    start = time.monotonic()
    arm_pose = [q + 0.01 for q in POSE]

    def publish(replaying, spinning, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t = T0 + time.monotonic() - start
            at(node, t)
            arm.publish(joint_state(t, arm_pose))
            if replaying:
                replay.publish(joint_state(t - 30.0, POSE))
            if spinning:
                executor.spin_once(timeout_sec=0.01)
            else:
                time.sleep(0.01)
    try:
        wait_all(executor, matched(arm), matched(replay))
        publish(replaying=False, spinning=True, seconds=0.5)
        assert node.latest_state is not None, 'no state of the arm reached the controller'
        followed = node.gate.publisher
        publish(replaying=True, spinning=False, seconds=HELD_UP)   # held up
        publish(replaying=True, spinning=True, seconds=0.5)
        rejected = node.state_rejections.counts
        assert rejected.get('second publisher', 0) > 0, rejected
        assert node.gate.publisher == followed and node.gate.handovers == 0
        np.testing.assert_allclose(node.latest_state[0], arm_pose, atol=1e-12)
        assert node.time_jumps == 0
    finally:
        executor.shutdown()
        sender.destroy_node()
        node.destroy_node()


def test_the_controller_class_is_the_one_tested():
    assert make.__module__ == 'ros_helpers'   # the helpers every controller test shares
    assert TrajectoryController.now.__doc__ and 'never' in TrajectoryController.now.__doc__
