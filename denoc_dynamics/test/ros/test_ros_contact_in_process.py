"""
sim_node's wrench services, topic, wall and F/T sensor; dynamics_node's observer.

Built in-process, callbacks called directly (as test_ros_nodes_in_process.py does):
good and bad requests and messages, each bad one refused with its reason and counted,
the nodes still working afterwards.
"""

import copy

from builtin_interfaces.msg import Duration
from denoc_dynamics.computed_torque import ComputedTorque, sampled_loop
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.servo import POSITION
from denoc_dynamics.trajectory import check_trajectory, demo_trajectory, Trajectory
from denoc_dynamics_interfaces.msg import VirtualWall
from denoc_dynamics_interfaces.srv import ApplyLinkWrench
from denoc_dynamics_interfaces.srv import SetVirtualWalls
from geometry_msgs.msg import Point, Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_helpers import Recorder
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

pytestmark = [pytest.mark.ros]

Q = [0.3, 0.5, -0.2, -1.2, 0.1, 0.8, 0.0]


def make(node_class, context, **params):
    return node_class(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])


def call(node, service, request):
    srv = next(s for s in node.services if s.srv_name.endswith('/' + service))
    return srv.callback(request, srv.srv_type.Response())


def wrench_request(link='flange', force=(0.0, 0.0, -10.0), frame='world', point=(0, 0, 0),
                   seconds=0):
    return ApplyLinkWrench.Request(
        link=link, wrench=Wrench(force=Vector3(x=float(force[0]), y=float(force[1]),
                                               z=float(force[2]))),
        reference_frame=frame, point=Point(x=float(point[0]), y=float(point[1]),
                                           z=float(point[2])),
        duration=Duration(sec=seconds))


@pytest.fixture
def sim(context):
    node = make(SimNode, context, urdf_path=bundled_urdf(), initial_positions=Q,
                ft_sensors=['flange_joint'], status_period=0.0)
    node.js_pub = Recorder()
    node.contact.ft_pubs = [Recorder(copy.deepcopy)]
    yield node
    node.destroy_node()


def test_apply_and_clear_link_wrenches(sim):
    """Good requests succeed and push; clear removes them all, the topic's too."""
    response = call(sim, 'apply_link_wrench', wrench_request())
    assert response.success, response.message
    assert call(sim, 'apply_link_wrench', wrench_request('link7', (1, 0, 0), 'link7',
                                                         (0, 0, 0.05), 1)).success
    msg = WrenchStamped()
    msg.header.frame_id = 'flange'
    msg.wrench.force.y = 2.0
    sim.contact._on_wrench(msg)
    assert len(sim.sim.loads.applied) == 2 and sim.sim.loads.topic is not None
    response = call(sim, 'clear_link_wrenches', Trigger.Request())
    assert response.success and '3' in response.message
    assert sim.sim.loads.applied == [] and sim.sim.loads.topic is None


@pytest.mark.parametrize('request_args, reason', [
    ({'link': 'no_such_link'}, 'unknown link'),
    ({'link': 'base_link'}, 'does not move'),
    ({'force': (float('nan'), 0.0, 0.0)}, 'finite'),
    ({'force': (1e12, 0.0, 0.0)}, 'beyond'),
    ({'frame': 'no_frame'}, 'unknown link'),
    ({'point': (0.0, 500.0, 0.0)}, 'm from'),
])
def test_bad_wrench_requests_are_refused_with_a_reason(sim, request_args, reason):
    response = call(sim, 'apply_link_wrench', wrench_request(**request_args))
    assert not response.success and reason in response.message, response.message
    assert sim.sim.loads.applied == []
    assert call(sim, 'apply_link_wrench', wrench_request()).success    # still working


def test_bad_link_wrench_messages_are_counted(sim):
    for frame, force in (('no_link', 1.0), ('flange', float('inf')), ('', 1.0)):
        msg = WrenchStamped()
        msg.header.frame_id = frame
        msg.wrench.force.x = force
        sim.contact._on_wrench(msg)
    assert sim.contact.rejections.counts == {'invalid': 3}
    assert sim.sim.loads.topic is None


def test_virtual_walls_service(sim):
    wall = VirtualWall(point=Point(z=0.5), normal=Vector3(z=2.0), stiffness=1e4, damping=50.0)
    response = call(sim, 'set_virtual_walls', SetVirtualWalls.Request(walls=[wall]))
    assert response.success and np.allclose(sim.sim.loads.planes[0, 3:6], [0, 0, 1])
    bad = VirtualWall(point=Point(z=0.5), normal=Vector3(), stiffness=1e4, damping=50.0)
    response = call(sim, 'set_virtual_walls', SetVirtualWalls.Request(walls=[wall, bad]))
    assert not response.success and 'plane 1' in response.message
    assert len(sim.sim.loads.planes) == 1


def test_ft_sensor_publishes_with_the_joint_states(sim):
    """In hold mode, with 10 N down on the flange: 10 N more along the weight's line."""
    sim.sim.advance(10)
    sim._publish(sim.runner.snapshot())
    before = sim.contact.ft_pubs[0].messages[-1]
    assert before.header.frame_id == 'flange'
    assert call(sim, 'apply_link_wrench', wrench_request(force=(0.0, 0.0, -10.0))).success
    sim._publish(sim.runner.snapshot())
    after = sim.contact.ft_pubs[0].messages[-1]

    def force(msg):
        return np.array([msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z])
    weight = force(before)
    assert np.isclose(np.linalg.norm(weight), 0.15 * 9.81)
    np.testing.assert_allclose(force(after), weight * (1.0 + 10.0 / (0.15 * 9.81)),
                               rtol=1e-9)


def test_ft_sensor_and_tf_without_subscribers_compute_nothing(sim):
    """No subscriber on ~/ft/<joint> nor /tf: no wrench pass, no transforms; one: both."""
    sim.contact.ft_pubs = [Recorder(copy.deepcopy, subscribers=0)]
    reads = []
    read = sim.contact.sensors.read
    sim.contact.sensors.read = lambda *args, **kwargs: reads.append(1) or read(*args, **kwargs)
    tf = sim.tf
    if tf is not None:
        tf.tf_pub = Recorder(copy.deepcopy, subscribers=0)
    sim.sim.advance(10)
    sim._publish(sim.runner.snapshot())
    assert not reads and not sim.contact.ft_pubs[0].messages
    assert tf is None or not tf.tf_pub.messages
    sim.contact.ft_pubs[0].subscribers = 1
    if tf is not None:
        tf.tf_pub.subscribers = 1
    sim._publish(sim.runner.snapshot())
    assert reads == [1] and len(sim.contact.ft_pubs[0].messages) == 1
    assert tf is None or len(tf.tf_pub.messages) == 1


def test_bad_ft_and_wall_parameters_stop_the_node(context):
    for params in ({'ft_sensors': ['joint3']}, {'ft_sensors': ['no_joint']},
                   {'wall_planes': [0.0, 0.0, 0.0]}, {'wall_links': ['nowhere']},
                   {'ft_sensors': ['flange_joint'], 'ft_bias': [1.0]}):
        with pytest.raises(RuntimeError):
            make(SimNode, context, urdf_path=bundled_urdf(), **params)


def _joint_state(names, t, q, qd, tau):
    msg = JointState(name=list(names), position=list(map(float, q)),
                     velocity=list(map(float, qd)), effort=list(map(float, tau)))
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
    return msg


def test_observer_in_dynamics_node_feels_a_push(context):
    """The sim's joint states at 1 kHz: ~/external_torques reach J^T f, ~/contact turns on."""
    dynamics = make(DynamicsNode, context, urdf_path=bundled_urdf(),
                    estimate_external_torques=True, external_torque_gain=100.0,
                    external_wrench_frame='flange', diagnostics_period=0.0)
    sim = make(SimNode, context, urdf_path=bundled_urdf(), initial_positions=Q,
               status_period=0.0)
    try:
        recorders = [Recorder(copy.deepcopy) for _ in range(3)]
        dynamics.external.pubs = tuple(recorders)
        s = sim.sim
        n = s.n
        s.set_joint_command(np.arange(n), [POSITION] * n, np.zeros(n), s.q, np.zeros(n))
        names = dynamics.robot.joint_names
        force = np.array([0.0, 8.0, -12.0])
        for step in range(600):
            if step == 200:
                s.loads.apply('flange', force, np.zeros(3), 'world', now=s.t)
            s.advance(1)
            dynamics._on_joint_state(_joint_state(names, 1.0 + s.t, s.q, s.qd,
                                                  s.joint_torque))
        assert dynamics.state_rejections.total == 0
        torques, wrenches, contact = (r.messages for r in recorders)
        assert not any(m.data for m in contact[:200]) and contact[-1].data
        wrench = wrenches[-1].wrench
        estimate = np.array([wrench.force.x, wrench.force.y, wrench.force.z])
        np.testing.assert_allclose(estimate, force, atol=0.05 * np.linalg.norm(force))
        # a stamp that does not move on, and a state without effort: rejected, counted
        dynamics._on_joint_state(_joint_state(names, 1.0 + s.t, s.q, s.qd, s.joint_torque))
        bad = _joint_state(names, 2.0 + s.t, s.q, s.qd, s.joint_torque)
        bad.effort = []
        dynamics._on_joint_state(bad)
        assert dynamics.state_rejections.counts == {'stamp': 1, 'no effort': 1}
        assert len(torques) == 600
    finally:
        sim.destroy_node()
        dynamics.destroy_node()


def test_observer_outputs_without_subscribers_are_not_sent(context):
    """
    An output nobody subscribes to is neither built nor sent; the observer still runs.

    The wrench topic gains a subscriber halfway: its first message is the estimate the
    observer had integrated all along (the same as a node that always published), and
    the joint accelerations, never listened to, are never sent.
    """
    nodes = [make(DynamicsNode, context, urdf_path=bundled_urdf(),
                  estimate_external_torques=True, external_wrench_frame='flange',
                  diagnostics_period=0.0) for _ in range(2)]
    sim = make(SimNode, context, urdf_path=bundled_urdf(), initial_positions=Q,
               status_period=0.0)
    try:
        quiet, always = nodes
        quiet.external.pubs = tuple(Recorder(copy.deepcopy, subscribers=0) for _ in range(3))
        always.external.pubs = tuple(Recorder(copy.deepcopy) for _ in range(3))
        quiet.acc_pub = Recorder(subscribers=0)
        s = sim.sim
        n = s.n
        s.set_joint_command(np.arange(n), [POSITION] * n, np.zeros(n), s.q, np.zeros(n))
        names = quiet.robot.joint_names
        s.loads.apply('flange', np.array([5.0, 0.0, -10.0]), np.zeros(3), 'world', now=s.t)
        for step in range(100):
            if step == 50:
                quiet.external.pubs[1].subscribers = 1
            s.advance(1)
            for node in nodes:
                node._on_joint_state(_joint_state(names, 1.0 + s.t, s.q, s.qd,
                                                  s.joint_torque))
        torques, wrenches, contact = (r.messages for r in quiet.external.pubs)
        assert not torques and not contact and not quiet.acc_pub.messages
        assert len(wrenches) == 50 and quiet.accepted == 100
        expected = always.external.pubs[1].messages[50:]
        for got, want in zip(wrenches, expected):
            assert got.header.stamp == want.header.stamp
            assert got.wrench == want.wrench
        assert wrenches[-1].wrench.force.z < -5.0    # the push, felt
    finally:
        sim.destroy_node()
        for node in nodes:
            node.destroy_node()


def test_observer_in_dynamics_node_at_100_hz_reads_no_contact(context):
    """
    The launch layout's rates: states and computed-torque commands at 100 Hz on the demo.

    With the default ``external_torque_hold`` (zero_order, the commands held from one
    state to the next) ~/external_torques stays below 0.05 N m RMS and ~/contact false.
    """
    dynamics = make(DynamicsNode, context, urdf_path=bundled_urdf(),
                    estimate_external_torques=True, diagnostics_period=0.0)
    sim = make(SimNode, context, urdf_path=bundled_urdf(), initial_positions=Q,
               status_period=0.0, start_mode='running')
    try:
        recorders = [Recorder(copy.deepcopy) for _ in range(3)]
        dynamics.external.pubs = tuple(recorders)
        assert dynamics.external.observer.hold == 'zero_order'
        s, robot = sim.sim, dynamics.robot
        chain, pose, zero = robot.chain, np.array(Q), np.zeros(robot.n)
        checked = check_trajectory(robot.joint_names, chain.lower, chain.upper,
                                   robot.joint_names,
                                   demo_trajectory(chain.lower, chain.upper, pose, 6.0))
        trajectory = Trajectory.from_checked(checked, 0.0, s.t, (pose, zero, zero))
        law = ComputedTorque(robot, 225.0, 30.0, friction_velocity=s.model.friction_velocity)
        names = robot.joint_names
        sampled_loop(s, law, trajectory, 100.0, 6.0, observe=lambda s: dynamics._on_joint_state(
            _joint_state(names, 1.0 + s.t, s.q, s.qd, s.joint_torque)))
        torques, _, contact = (r.messages for r in recorders)
        assert len(torques) == 600 and dynamics.state_rejections.total == 0
        r = np.array([m.effort for m in torques])
        assert np.sqrt(np.mean(r ** 2, axis=0)).max() < 0.05
        assert not any(m.data for m in contact)
    finally:
        sim.destroy_node()
        dynamics.destroy_node()
