"""
Hostile goals, jumps of time and foreign joint states, in both layouts of the arm.

``launch``: the launch file's processes (sim_node publishing /clock; the trajectory
controller on ``use_sim_time``, reading the sim's own ``robot_joint_states``, with
the simulated friction), as ``sim_arm.launch.py use_sim_time:=true`` starts them.
``denoc_sim_arm``: the single process (sim_arm_main), whose controller gets the
sim's states and clock in-process.  Each layout is started once for the module.

In each: goals whose interpolation leaves the limits (the quintic swing, the cubic
overshoot, the jump of a first point at t = 0, the late start) are aborted,
INVALID_GOAL; a goal under a jump of simulated time (STOPPED, pause + reset ALL,
reset TIME, reset) is aborted, "clock jumped back" (or "the arm jumped", where the
reset arm's state comes before the /clock), and the arm held where it is; a
state stamped an hour ahead, a replayed one and a second arm publishing the arm's
joint_states neither end a goal early nor move the arm past its limits (a controller
held up during a replay: test_trajectory_controller_clock.py, in-process, since a
process stopped with SIGSTOP breaks Fast DDS's shared-memory ports for the later
tests of the domain); 40 action
clients at once all get their answers; Ctrl-C of the controller's process during a
goal ends it ABORTED, "shutting down".
"""

import time

from denoc_dynamics import load_urdf
from denoc_dynamics.passive import STOP_BOUND
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.joint_io import REQUEST_QOS
from denoc_dynamics.runner import SimulationRunner
import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import matched
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from ros_helpers import wait_for

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

POSE = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
NAMES = [f'joint{k}' for k in range(1, 8)]
ROBOT = load_urdf(bundled_urdf())
ABORTED, SUCCEEDED = 6, 4       # action_msgs/GoalStatus
INVALID_GOAL = -1               # FollowJointTrajectory.Result.INVALID_GOAL
CLIENTS = 40


def start(layout, prefix):
    """
    Start the arm in ``layout`` under the namespace ``prefix``; return the processes.

    The launch layout's /clock is remapped into the namespace: /clock is global, and a
    controller on use_sim_time would follow another test's sim (a jump of time).
    """
    ns = ['-r', f'__ns:=/{prefix}', '-r', f'/clock:=/{prefix}/clock']
    if layout == 'denoc_sim_arm':
        return [NodeProcess('denoc_sim_arm', ['--no-viewer', '--ros-args', '-p',
                                              'status_period:=0.0'] + ns)]
    sim = NodeProcess('sim_node', ros_args(
        urdf_path=bundled_urdf(), initial_positions=POSE.tolist(), status_period=0.0,
        publish_clock=True) + ns)
    controller = NodeProcess('trajectory_controller', ros_args(
        urdf_path=bundled_urdf(), use_sim_time=True, simulated_friction=True,
        initial_positions=POSE.tolist()) + ns + ['-r', 'joint_states:=robot_joint_states'])
    return [sim, controller]


@pytest.fixture(scope='module', params=['launch', 'denoc_sim_arm'])
def arm(ros2_msgs, request):
    from moveit_client import MoveItLikeClient
    prefix = f'both_{request.param}'
    processes = start(request.param, prefix)
    ros = RosClient(f'{prefix}_client')
    client = MoveItLikeClient(ros, namespace=prefix)
    client.prefix, client.processes = prefix, processes
    client.reference, client.moved = [], False
    follow_reference(client)
    try:
        wait_started(processes)
        client.wait_ready(NAMES)
    except AssertionError as failed:
        output = f'{failed}\n' + ''.join(p.describe() for p in processes)
        ros.close()
        for process in processes:         # a failed set-up leaves no process behind
            process.stop()
        raise AssertionError(output)
    yield client
    ros.close()
    for process in processes:
        process.stop()


#: A process is up once it has said what it simulates or controls (its model loaded);
#: under a load of 8-15 on two cores that took over 30 s (wait_ready's DISCOVERY waits
#: then ran out before the nodes existed).
STARTED = 'robot model from'
START_TIMEOUT = 180.0


def wait_started(processes, timeout=START_TIMEOUT):
    """Wait until every process has loaded its model (or one died: AssertionError)."""
    assert wait_for(lambda: all(STARTED in p.output() or not p.alive() for p in processes),
                    timeout), 'not started within {:g} s: {}'.format(
        timeout, ', '.join(p.name for p in processes if STARTED not in p.output()))
    assert all(p.alive() for p in processes), 'died: ' + ', '.join(
        p.name for p in processes if not p.alive())


def follow_reference(client):
    """Keep the controller's latest reference positions in ``client.reference``."""
    from control_msgs.msg import JointTrajectoryControllerState

    def keep(msg):
        client.reference[:] = list(msg.reference.positions)
    client.ros.node.create_subscription(
        JointTrajectoryControllerState,
        f'/{client.prefix}/trajectory_controller/controller_state', keep, 10)


def describe(client):
    return ''.join(p.describe()[-3000:] for p in client.processes)


def go_to_pose(client):
    """Bring the arm to POSE (the demo of denoc_sim_arm stops at the first goal)."""
    from moveit_client import quintic
    here = client.positions(NAMES)
    # the first goal always: denoc_sim_arm's demo may pass by POSE, and runs on until then
    if np.abs(here - POSE).max() > 0.02 or not client.moved:
        # from the controller's reference (after an abort the arm is held where a state
        # found it, which may be more than the start tolerance from where it is now)
        trajectory = quintic(NAMES, client.reference or here, POSE, 2.0, 4)
        del trajectory.points[0]
        status, result = client.result(client.send(trajectory))
        assert status == SUCCEEDED, (status, result, describe(client))
        client.moved = True
    assert client.wait_for_rest(NAMES, timeout=30.0)


def call(client, srv_type, name, request):
    service = client.ros.node.create_client(srv_type, f'/{client.prefix}/sim_node/{name}')
    assert service.wait_for_service(timeout_sec=10.0), name
    return client.ros.call(service, request)


def now(client):
    """Return the stamp of the arm's latest joint state: the simulated time [s]."""
    return stamp_of(next(m for m in reversed(client.states) if not foreign(m)))


def stamp_of(msg):
    """Return the stamp of a message [s]."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


#: The foreign states' mark (their efforts): the test's readers of the arm skip them.
MARK = -12345.0


def foreign(msg):
    """Return True for a joint state the test published (marked with MARK)."""
    return len(msg.effort) > 0 and msg.effort[0] == MARK


def set_stamp(stamp, seconds):
    """Set a builtin_interfaces Time to ``seconds`` (>= 0)."""
    nanoseconds = int(round(max(seconds, 0.0) * 1e9))
    stamp.sec, stamp.nanosec = divmod(nanoseconds, 1_000_000_000)


def points_msg(points, stamp=None):
    """Return a JointTrajectory of (t, q, qd, qdd) points (empty qd, qdd: none)."""
    from moveit_client import duration
    from trajectory_msgs.msg import JointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint
    msg = JointTrajectory(joint_names=NAMES)
    if stamp is not None:
        duration(msg.header.stamp, stamp)
    for t, q, qd, qdd in points:
        point = JointTrajectoryPoint(positions=[float(x) for x in q],
                                     velocities=[float(x) for x in qd],
                                     accelerations=[float(x) for x in qdd])
        duration(point.time_from_start, t)
        msg.points.append(point)
    return msg


def offset(joint, value):
    q = POSE.copy()
    q[joint] += value
    return q


REST = [0.0] * 7
SWING = [400.0, -400.0, 400.0, -400.0, 400.0, -400.0, 400.0]
BAD = {   # what the points hide, and the reason the controller gives
    'quintic swing': (lambda t: points_msg([(1.0, POSE, REST, SWING),
                                            (2.0, POSE, REST, [-a for a in SWING]),
                                            (3.0, POSE, REST, SWING)]), 'limits'),
    'cubic overshoot': (lambda t: points_msg([(1.0, offset(1, 1.1), [0, 2.1] + [0] * 5, []),
                                              (2.0, offset(1, 1.1), REST, [])]), 'limits'),
    'first point at t = 0': (lambda t: points_msg([(0.0, offset(0, 1.5), [], []),
                                                   (2.0, offset(0, 1.5), [], [])]),
                             'start jump'),
    'late start': (lambda t: points_msg([(0.5, offset(0, 0.3), [], []),
                                         (3.0, offset(0, 0.3), [], [])], stamp=t - 1.0),
                   'start jump'),
}


@pytest.mark.parametrize('case', sorted(BAD))
def test_a_goal_whose_interpolation_leaves_the_limits_is_aborted(arm, case):
    make, reason = BAD[case]
    go_to_pose(arm)
    before = arm.positions(NAMES)
    status, result = arm.result(arm.send(make(now(arm))))
    assert status == ABORTED, (status, result)
    assert result.error_code == INVALID_GOAL and result.error_string.startswith(reason), (
        result.error_code, result.error_string)
    arm.ros.spin_for(0.5)
    moved = np.abs(arm.positions(NAMES) - before).max()
    assert moved < 0.01, f'the arm moved {moved:.3f} rad'


def far_goal(client, seconds=4.0):
    from moveit_client import quintic
    here = client.positions(NAMES)
    return client.send(quintic(NAMES, here, here + 0.5 * np.sign(0.1 - here), seconds, 4))


@pytest.mark.parametrize('case', ['reset', 'pause and reset all', 'reset time', 'stopped'])
def test_a_goal_under_a_jump_of_simulated_time_is_aborted(arm, case):
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import ResetSimulation
    from simulation_interfaces.srv import SetSimulationState
    from std_srvs.srv import SetBool
    from std_srvs.srv import Trigger
    go_to_pose(arm)
    handle = far_goal(arm)
    arm.ros.spin_for(1.5)
    if case == 'reset':
        call(arm, Trigger, 'reset', Trigger.Request())
    elif case == 'pause and reset all':
        call(arm, SetBool, 'pause', SetBool.Request(data=True))
        call(arm, ResetSimulation, 'reset_simulation',
             ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_ALL))
    elif case == 'reset time':
        call(arm, ResetSimulation, 'reset_simulation',
             ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_TIME))
    else:
        call(arm, SetSimulationState, 'set_simulation_state', SetSimulationState.Request(
            state=SimulationState(state=SimulationState.STATE_STOPPED)))
    status, result = arm.result(handle, timeout=10.0)
    assert status == ABORTED, (status, result, describe(arm))
    # a reset arm is back at its initial pose: where its first state reaches the
    # controller before the /clock that went back (two topics, no order between
    # them), the jump of the arm is what the controller sees first
    reasons = ('clock jumped back',) + (('the arm jumped',) if case != 'reset time' else ())
    assert any(reason in result.error_string for reason in reasons), result.error_string
    if case in ('pause and reset all', 'stopped'):
        state = SimulationState(state=SimulationState.STATE_PLAYING)
        call(arm, SetSimulationState, 'set_simulation_state',
             SetSimulationState.Request(state=state))
    # held where the arm is: no motion resumes when the simulated time gets back there
    arm.ros.spin_for(0.5)
    here = arm.positions(NAMES)
    arm.ros.spin_for(5.0)
    moved = np.abs(arm.positions(NAMES) - here).max()
    assert moved < 0.02, f'the arm moved {moved:.3f} rad after the abort'


@pytest.mark.parametrize('case', ['future stamp', 'replay', 'second arm'])
def test_foreign_joint_states_neither_end_a_goal_nor_move_the_arm(arm, case):
    """Foreign states on the arm's topics: the goal ends when the arm is there, not before."""
    from rclpy.qos import QoSProfile
    from rclpy.qos import ReliabilityPolicy
    from sensor_msgs.msg import JointState
    go_to_pose(arm)
    own = []
    # the arm's every state, however late this process takes them (best effort, as sent)
    deep = QoSProfile(depth=5000, reliability=ReliabilityPolicy.BEST_EFFORT)
    reader = arm.ros.node.create_subscription(
        JointState, f'/{arm.prefix}/joint_states',
        lambda msg: None if foreign(msg) else own.append((stamp_of(msg), msg.position)), deep)
    publishers = [arm.ros.node.create_publisher(JointState, f'/{arm.prefix}/{topic}',
                                                qos_profile_sensor_data)
                  for topic in ('joint_states', 'robot_joint_states')]
    # every subscriber of the arm's topics (the controller's among them) hears the
    # foreign states from the first one: else a case could pass with none delivered
    arm.ros.wait_all(*[matched(p, arm.ros.node) for p in publishers],
                     detail=lambda: describe(arm))
    seconds = 4.0
    here = arm.positions(NAMES)
    goal_end = here + 0.5 * np.sign(0.1 - here)
    try:
        sent = time.monotonic()        # before the goal: its acceptance may come late
        handle = far_goal(arm, seconds)
        simulated = now(arm)
        future = handle.get_result_async()
        rng = np.random.default_rng(0)
        msg = JointState(name=NAMES, velocity=[0.0] * 7, effort=[MARK] * 7)
        # until the goal ends, or 5 s of simulated time after its end (the simulated
        # time runs slower than the wall clock under load)
        while (not future.done() and now(arm) - simulated < seconds + 5.0
               and time.monotonic() - sent < 120.0):
            t = now(arm)
            if case == 'future stamp':      # the goal's end, an hour ahead
                stamp, q = t + 3600.0, goal_end
            elif case == 'replay':          # a bag of this arm at its start, 30 s old
                stamp, q = t - 30.0, POSE
            else:                           # another arm, on the same names and clock
                stamp, q = t, rng.uniform(ROBOT.joints.lower, ROBOT.joints.upper)
            set_stamp(msg.header.stamp, stamp)
            msg.position = [float(x) for x in q]
            for publisher in publishers:
                publisher.publish(msg)
            arm.ros.spin_for(0.01)
        elapsed = time.monotonic() - sent
        assert future.done(), describe(arm)
        # the deep reader's backlog: this process may take the states late
        arm.ros.spin_until(lambda: own and own[-1][0] >= now(arm) - 0.05, 30.0)
    finally:
        for publisher in publishers:
            arm.ros.node.destroy_publisher(publisher)
        arm.ros.node.destroy_subscription(reader)
        arm.states[:] = [m for m in arm.states if not foreign(m)]   # for the next tests
    status, result = future.result().status, future.result().result
    # no success before the end: simulated time runs as fast as real time, and faster
    # only while it catches up a lag of at most SimulationRunner.MAX_LAG
    assert status == SUCCEEDED and elapsed >= seconds - SimulationRunner.MAX_LAG, (
        status, result, elapsed)
    read = own[-1][0] - simulated
    own = np.array([q for _, q in own])
    # 100 Hz of simulated time: the arm's states were read (best effort: most of them)
    assert len(own) >= 0.5 * 100 * read, (len(own), read)
    worst = np.maximum(ROBOT.joints.lower - own, own - ROBOT.joints.upper).max()
    assert worst <= STOP_BOUND, worst
    assert np.abs(own[-1] - goal_end).max() < 0.05, (own[-1], goal_end)


def test_forty_clients_at_once_all_get_an_answer(arm):
    """
    40 FollowJointTrajectory clients, each its own node, send a goal at once.

    The controller answers every goal request (its action services queue REQUEST_DEPTH
    requests), and every client gets its answer when its own response queue is deep
    enough: every client of an action reads every answer on the one response topic and
    keeps its own, so a client with rclpy's default depth of 10 can lose its answer
    among the other 39 (docs/bad-input.md, "Requests").
    """
    from control_msgs.action import FollowJointTrajectory
    from moveit_client import quintic
    import rclpy
    from moveit_client import wait_answered
    from rclpy.action import ActionClient
    go_to_pose(arm)
    ros = arm.ros
    # from the controller's reference, wherever the goals before moved it (each
    # preempts the one before, under load after it has moved the arm a little)
    trajectory = quintic(NAMES, POSE, POSE + 0.05, 2.0, 4)
    del trajectory.points[0]
    goal = FollowJointTrajectory.Goal(trajectory=trajectory)
    nodes, clients = [], []
    for k in range(CLIENTS):
        node = rclpy.create_node(f'{arm.prefix}_burst_{k}', context=ros.context)
        ros.executor.add_node(node)
        nodes.append(node)
        clients.append(ActionClient(
            node, FollowJointTrajectory, arm.action_name,
            goal_service_qos_profile=REQUEST_QOS, result_service_qos_profile=REQUEST_QOS,
            cancel_service_qos_profile=REQUEST_QOS))
    try:
        assert ros.spin_until(lambda: all(c.server_is_ready() for c in clients)), \
            f'{sum(not c.server_is_ready() for c in clients)} of {CLIENTS} clients never ' \
            'found the action server'
        for client in clients:     # each matched from the server's side too
            wait_answered(ros, client)
        futures = [c.send_goal_async(goal) for c in clients]
        start = time.monotonic()
        ros.spin_until(lambda: all(f.done() for f in futures), 30.0)
        answered = [f.result() for f in futures if f.done()]
        assert len(answered) == CLIENTS, (
            f'{CLIENTS - len(answered)} of {CLIENTS} goal requests unanswered after '
            f'{time.monotonic() - start:.1f} s' + describe(arm))
        assert all(handle.accepted for handle in answered)   # each preempts the one before
        # and each accepted goal ends: the last one runs, the others were preempted
        results = [h.get_result_async() for h in answered]
        assert ros.spin_until(lambda: all(r.done() for r in results), 30.0)
        outcomes = [(r.result().status, r.result().result.error_string) for r in results]
        assert sum(status == SUCCEEDED for status, _ in outcomes) == 1, outcomes
        assert sum(status == ABORTED for status, _ in outcomes) == CLIENTS - 1, outcomes
    finally:
        for client, node in zip(clients, nodes):
            client.destroy()
            ros.executor.remove_node(node)
            node.destroy_node()


@pytest.mark.parametrize('layout', ['launch', 'denoc_sim_arm'])
def test_ctrl_c_gives_the_running_goal_its_result(ros2_msgs, layout):
    """Ctrl-C of the controller's process during a goal: ABORTED, "shutting down"."""
    from moveit_client import MoveItLikeClient
    prefix = f'ctrl_c_{layout}'
    processes = start(layout, prefix)
    ros = RosClient(f'{prefix}_client')
    client = MoveItLikeClient(ros, namespace=prefix)
    client.prefix, client.processes = prefix, processes
    client.reference = []
    follow_reference(client)
    try:
        wait_started(processes)
        client.wait_ready(NAMES)
        future = far_goal(client, seconds=20.0).get_result_async()   # as MoveIt asks
        ros.spin_for(1.0)
        start_time = time.monotonic()
        code = processes[-1].interrupt()           # the controller's process
        assert ros.spin_until(future.done, 5.0), describe(client)
        status, result = future.result().status, future.result().result
        assert status == ABORTED and result.error_string == 'shutting down', (
            status, result, describe(client))
        assert code == 0 and time.monotonic() - start_time < 10.0, (code, describe(client))
    finally:
        ros.close()
        for process in processes:
            process.stop()
