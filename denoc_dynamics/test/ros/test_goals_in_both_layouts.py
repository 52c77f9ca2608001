"""
Hostile goals, jumps of time and foreign joint states, in both layouts of the arm.

``launch``: the launch file's processes (sim_node publishing /clock; the trajectory
controller on ``use_sim_time``, reading the sim's own ``robot_joint_states``, with
the simulated friction), as ``sim_arm.launch.py use_sim_time:=true`` starts them.
``denoc_sim_arm``: the single process (sim_arm_main), whose controller gets the
sim's states and clock in-process.  Each layout is started once for the module.
(test_ros_goal_lifecycle.py and test_action_burst.py check the launch layout alone.)

In each: goals whose interpolation leaves the limits (the quintic swing, the cubic
overshoot, the jump of a first point at t = 0, the late start) are aborted,
INVALID_GOAL; a goal under a jump of simulated time (STOPPED, pause + reset ALL,
reset TIME, reset) is aborted, "clock jumped back", and the arm held where it is; a
state stamped an hour ahead, a replayed one and a second arm publishing the arm's
joint_states neither end a goal early nor move the arm past its limits; 40 action
clients at once all get their answers.
"""

import time

from denoc_dynamics import load_urdf
from denoc_dynamics.passive import STOP_BOUND
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.joint_io import REQUEST_QOS
import numpy as np
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

POSE = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
NAMES = [f'joint{k}' for k in range(1, 8)]
ROBOT = load_urdf(bundled_urdf())
ABORTED, SUCCEEDED = 6, 4       # action_msgs/GoalStatus
INVALID_GOAL = -1               # FollowJointTrajectory.Result.INVALID_GOAL
CLIENTS = 40


def start(layout, prefix):
    """Start the arm in ``layout`` under the namespace ``prefix``; return the processes."""
    ns = ['-r', f'__ns:=/{prefix}']
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
    try:
        client.wait_ready(NAMES)
    except AssertionError:
        raise AssertionError(''.join(p.describe() for p in processes))
    yield client
    ros.close()
    for process in processes:
        process.stop()


def describe(client):
    return ''.join(p.describe()[-3000:] for p in client.processes)


def go_to_pose(client):
    """Bring the arm to POSE (the demo of denoc_sim_arm stops at the first goal)."""
    from moveit_client import quintic
    here = client.positions(NAMES)
    if np.abs(here - POSE).max() > 0.02:
        status, result = client.result(client.send(quintic(NAMES, here, POSE, 2.0, 4)))
        assert status == SUCCEEDED, (status, result, describe(client))
    assert client.wait_for_rest(NAMES)


def call(client, srv_type, name, request):
    service = client.ros.node.create_client(srv_type, f'/{client.prefix}/sim_node/{name}')
    assert service.wait_for_service(timeout_sec=10.0), name
    return client.ros.call(service, request)


def now(client):
    """Return the latest joint state's stamp: the simulated time [s]."""
    stamp = client.states[-1].header.stamp
    return stamp.sec + 1e-9 * stamp.nanosec


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
    status, result = arm.result(arm.send(make(now(arm))))
    assert status == ABORTED, (status, result)
    assert result.error_code == INVALID_GOAL and result.error_string.startswith(reason), (
        result.error_code, result.error_string)
    arm.ros.spin_for(0.5)
    assert np.abs(arm.positions(NAMES) - POSE).max() < 0.02, 'nothing moved'


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
    assert 'clock jumped back' in result.error_string, result.error_string
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


#: The foreign states' mark (their efforts): the test's reader of the arm skips them.
MARK = -12345.0


@pytest.mark.parametrize('case', ['future stamp', 'replay', 'second arm'])
def test_foreign_joint_states_neither_end_a_goal_nor_move_the_arm(arm, case):
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    go_to_pose(arm)
    own = []
    reader = arm.ros.node.create_subscription(
        JointState, f'/{arm.prefix}/joint_states',
        lambda msg: own.append(msg.position) if msg.effort[0] != MARK else None,
        qos_profile_sensor_data)
    publishers = [arm.ros.node.create_publisher(JointState, f'/{arm.prefix}/{topic}',
                                                qos_profile_sensor_data)
                  for topic in ('joint_states', 'robot_joint_states')]
    seconds = 4.0
    here = arm.positions(NAMES)
    goal_end = here + 0.5 * np.sign(0.1 - here)
    handle = far_goal(arm, seconds)
    sent = time.monotonic()
    future = handle.get_result_async()
    rng = np.random.default_rng(0)
    msg = JointState(name=NAMES, velocity=[0.0] * 7, effort=[MARK] * 7)
    while time.monotonic() - sent < seconds + 6.0 and not future.done():
        t = now(arm)
        if case == 'future stamp':      # the goal's end, an hour ahead
            stamp, q = t + 3600.0, goal_end
        elif case == 'replay':          # a bag of this arm at its start, 30 s old
            stamp, q = t - 30.0, POSE
        else:                           # another arm, on the same names and clock
            stamp, q = t, rng.uniform(ROBOT.joints.lower, ROBOT.joints.upper)
        msg.header.stamp.sec = int(stamp)
        msg.header.stamp.nanosec = int((stamp - int(stamp)) * 1e9)
        msg.position = [float(x) for x in q]
        for publisher in publishers:
            publisher.publish(msg)
        arm.ros.spin_for(0.01)
    elapsed = time.monotonic() - sent
    for publisher in publishers:
        arm.ros.node.destroy_publisher(publisher)
    arm.ros.node.destroy_subscription(reader)
    assert future.done(), describe(arm)
    status, result = future.result().status, future.result().result
    # simulated time runs at most as fast as real time here: no success before the end
    assert status == SUCCEEDED and elapsed >= seconds - 0.1, (status, result, elapsed)
    own = np.array(own)
    assert len(own) > 100 * seconds * 0.5, len(own)
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
    from rclpy.action import ActionClient
    go_to_pose(arm)
    ros = arm.ros
    goal = FollowJointTrajectory.Goal(trajectory=quintic(NAMES, POSE, POSE + 0.05, 2.0, 4))
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
        assert ros.spin_until(lambda: all(c.server_is_ready() for c in clients))
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
        assert sum(r.result().status == SUCCEEDED for r in results) == 1
        assert sum(r.result().status == ABORTED for r in results) == CLIENTS - 1
    finally:
        for client, node in zip(clients, nodes):
            client.destroy()
            ros.executor.remove_node(node)
            node.destroy_node()
