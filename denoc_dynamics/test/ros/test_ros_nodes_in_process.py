"""
Both nodes built in-process, their callbacks called directly: bad input, no DDS wait.

Next to the DDS tests (test_ros_dynamics_node.py, test_ros_sim_node.py), which run the
installed executables; here every message is handled at once and deterministically.
"""

import math
import re

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.joint_io import Rejected
from denoc_dynamics.ros.joint_io import Rejections
from denoc_dynamics.ros.joint_io import WARN_THROTTLE_SEC
from denoc_dynamics.ros.node_main import run_node
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.sample_urdfs import planar_urdf
from denoc_dynamics.sample_urdfs import random_chain_urdf
from denoc_dynamics_interfaces.srv import ForwardDynamics
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
from denoc_dynamics_interfaces.srv import InverseDynamics
import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_helpers import Recorder
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

pytestmark = [pytest.mark.ros, pytest.mark.filterwarnings('ignore::RuntimeWarning')]

Q = [0.3, 0.7, -0.4, -1.3, 0.5, 1.1, -0.2]


def make(node_class, context, **params):
    node = node_class(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])
    return node


class WarningLog:
    """Stands in for a logger: keeps the warnings (and any throttle argument)."""

    def __init__(self):
        self.lines = []

    def warning(self, text, **kwargs):
        assert not kwargs, 'throttled by Rejections itself, not by the logger'
        self.lines.append(text)


def test_rejections_warn_once_per_reason_per_throttle_period():
    log, now = WarningLog(), [100.0]
    rejections = Rejections(log, 'joint state', clock=lambda: now[0])
    for reason in ('length', 'length', 'duplicate joint', 'length', 'non-finite result'):
        rejections.add(Rejected(reason, f'a {reason} problem'))
    assert rejections.counts == {'length': 3, 'duplicate joint': 1, 'non-finite result': 1}
    # every reason gets its first warning, even right after another reason's
    assert [line.split(' (')[1].split(',')[0] for line in log.lines] == [
        'length', 'duplicate joint', 'non-finite result']
    now[0] += WARN_THROTTLE_SEC
    rejections.add(Rejected('length', 'again'))
    assert log.lines[-1] == 'rejected joint state (length, 4 so far): again'
    assert str(rejections) == '6 (duplicate joint: 1, length: 4, non-finite result: 1)'


def call(node, service, request):
    """Call the node's service callback ``service`` (e.g. 'forward_dynamics')."""
    srv = next(s for s in node.services if s.srv_name.endswith('/' + service))
    return srv.callback(request, srv.srv_type.Response())


def state(names, position, velocity=(), effort=()):
    return JointState(name=list(names), position=[float(v) for v in position],
                      velocity=[float(v) for v in velocity],
                      effort=[float(v) for v in effort])


@pytest.fixture
def dynamics(context):
    node = make(DynamicsNode, context, urdf_path=bundled_urdf(), diagnostics_period=0.0)
    node.acc_pub = Recorder()
    yield node
    node.destroy_node()


def test_a_state_that_overflows_is_rejected_and_nothing_is_published(dynamics):
    names = dynamics.robot.joint_names
    dynamics._on_joint_state(state(names, Q, [0.1] * 7))
    assert len(dynamics.acc_pub.messages) == 1

    # a speed above max_velocity (default 1000 rad/s)
    dynamics._on_joint_state(state(names, Q, [1e155] + [0.0] * 6))
    assert dynamics.state_rejections.counts == {'out of range': 1}
    # a finite but absurd effort command: accepted, then the dynamics overflow
    dynamics._on_command(Float64MultiArray(data=[1e308] * 7))
    dynamics._on_joint_state(state(names, Q, [0.1] * 7))
    assert dynamics.state_rejections.counts == {'out of range': 1, 'non-finite result': 1}
    assert len(dynamics.acc_pub.messages) == 1
    assert all(math.isfinite(a) for m in dynamics.acc_pub.messages for a in m.acceleration)

    # a chain joint named twice
    dynamics._on_command(Float64MultiArray(data=[0.0] * 7))
    dynamics._on_joint_state(state(names + ['joint3'], Q + [0.9], [0.0] * 8))
    assert dynamics.state_rejections.counts['duplicate joint'] == 1
    dynamics._on_joint_state(state(names, Q, [0.1] * 7))
    assert len(dynamics.acc_pub.messages) == 2


def test_an_unusable_effort_costs_the_estimate_and_not_the_accelerations(context):
    """
    With the observer on, one bound check reads positions, velocities and efforts.

    A state whose efforts cannot be used (NaN, not one per name, none) still gives its
    accelerations; the estimate rejects it, counted by reason.  A NaN position rejects
    the whole state; NaNs of a joint outside the chain are ignored.
    """
    node = make(DynamicsNode, context, urdf_path=bundled_urdf(),
                estimate_external_torques=True, diagnostics_period=0.0)
    try:
        node.acc_pub = Recorder()
        node.external.pubs = (Recorder(),) + node.external.pubs[1:]
        torques = node.external.pubs[0].messages
        names = node.robot.joint_names
        sec = [0]

        def send(effort, position=Q, extra=None):
            msg = state(names, position, [0.1] * 7, effort)
            if extra is not None:
                msg = state(names + ['finger'], position + [extra], [0.1] * 7 + [extra],
                            effort + [extra])
            sec[0] += 1
            msg.header.stamp.sec = sec[0]
            node._on_joint_state(msg)

        send([1.0] * 7)
        send([1.0] * 6 + [math.nan])
        send([1.0] * 6)
        send([])
        assert node.state_rejections.counts == {'non-finite': 1, 'length': 1, 'no effort': 1}
        assert len(node.acc_pub.messages) == 4 and len(torques) == 1
        send([1.0] * 7, extra=math.nan)
        assert len(node.acc_pub.messages) == 5 and len(torques) == 2
        send([math.nan] * 7, position=[math.nan] + Q[1:])
        assert node.state_rejections.counts['non-finite'] == 2
        assert len(node.acc_pub.messages) == 5 and len(torques) == 2
        assert node.state_rejections.total == 4
    finally:
        node.destroy_node()


def test_max_velocity_is_a_parameter(context):
    node = make(DynamicsNode, context, urdf_path=bundled_urdf(), max_velocity=2.0)
    try:
        names = node.robot.joint_names
        node._on_joint_state(state(names, Q, [0.0] * 6 + [-2.5]))
        assert node.state_rejections.counts == {'out of range': 1}
        response = call(node, 'forward_dynamics',
                        ForwardDynamics.Request(state=state(names, Q, [0.0] * 6 + [2.5])))
        assert not response.success
        assert re.search(r"out of range: joint 'joint7' velocity 2.5 exceeds max_velocity 2",
                         response.message), response.message
    finally:
        node.destroy_node()


@pytest.mark.parametrize('what, reason', [
    ('FD, velocity 1e155', 'out of range'),
    ('FD, velocity 1e200', 'out of range'),
    ('FD, effort 1e308', 'non-finite result'),
    ('ID, acceleration 1e308', 'non-finite result'),
    ('FD, joint named twice', 'duplicate joint'),
    ('ID, joint named twice', 'duplicate joint'),
])
def test_service_requests_that_would_give_nan_fail_with_the_reason(dynamics, what, reason):
    names = dynamics.robot.joint_names
    if what.startswith('FD, velocity'):
        v = float(what.split()[-1])
        service, request = 'forward_dynamics', ForwardDynamics.Request(
            state=state(names, Q, [v] * 7))
    elif what == 'FD, effort 1e308':
        service, request = 'forward_dynamics', ForwardDynamics.Request(
            state=state(names, Q, effort=[1e308] * 7))
    elif what == 'ID, acceleration 1e308':
        service, request = 'inverse_dynamics', InverseDynamics.Request(
            state=state(names, Q), acceleration=[1e308] * 7)
    elif what == 'FD, joint named twice':
        service, request = 'forward_dynamics', ForwardDynamics.Request(
            state=state(names + ['joint2'], Q + [0.0]))
    else:
        service, request = 'inverse_dynamics', InverseDynamics.Request(
            state=state(['joint5'] + names, [0.0] + Q))
    response = call(dynamics, service, request)
    assert not response.success
    assert response.message.startswith(reason + ': '), response.message
    if reason == 'duplicate joint':
        assert "'joint2'" in response.message or "'joint5'" in response.message
    # a failed answer carries no numbers at all
    values = (response.accelerations.acceleration if service == 'forward_dynamics'
              else response.effort)
    assert len(values) == 0
    assert dynamics.request_rejections.counts == {reason: 1}


def test_inertia_matrix_service_refuses_overflowing_positions(context):
    text = random_chain_urdf(np.random.default_rng(3), 6, prismatic=0.6)
    robot = load_urdf(text)
    node = make(DynamicsNode, context, robot_description=text)
    try:
        q = np.where(robot.chain.prismatic, 1e300, 0.1)
        request = GetInertiaMatrix.Request(state=state(robot.joint_names, q),
                                           include_decomposition=True, include_inverse=True)
        response = call(node, 'get_inertia_matrix', request)
        assert not response.success and response.message.startswith('non-finite result')
        assert len(response.inertia.data) == len(response.u) == len(response.inverse) == 0
        request.state = state(robot.joint_names, np.full(6, 0.1))
        assert call(node, 'get_inertia_matrix', request).success
    finally:
        node.destroy_node()


def test_joints_parameter_naming_a_joint_twice_is_refused(context):
    with pytest.raises(RuntimeError, match=r"\['joint2'\] more than once"):
        make(DynamicsNode, context, urdf_path=bundled_urdf(),
             joints=['joint1', 'joint2', 'joint2'])


@pytest.mark.parametrize('setting, words', [
    ('max_velocity:=abc', "'max_velocity' to 'abc' of type 'STRING', expecting type 'DOUBLE'"),
    ('max_velocity:=-1.0', 'max_velocity out of range'),
    ('max_dof:=0', 'max_dof out of range'),
    ('max_dof:=6', 'has 7 joints, more than max_dof = 6'),
    ('joints:=[joint1,joint1]', "names ['joint1'] more than once")])
def test_a_bad_parameter_stops_the_node_with_one_line(capsys, setting, words):
    args = ['dynamics_node', '--ros-args', '-p', f'urdf_path:={bundled_urdf()}',
            '-p', setting]
    assert run_node(DynamicsNode, 'dynamics_node', args=args) == 1
    err = capsys.readouterr().err
    assert err.startswith('dynamics_node: ') and words in err, err
    assert 'Traceback' not in err


def unlimited_planar_urdf():
    """planar_urdf with continuous joints and no limits (no effort or velocity bound)."""
    text = planar_urdf([0.5, 0.4, 0.3], [2.0, 1.5, 1.0])
    text = re.sub(r'<limit [^>]*/>', '', text)
    return text.replace('type="revolute"', 'type="continuous"')


def test_sim_node_refuses_an_absurd_effort_command(context):
    node = make(SimNode, context, robot_description=unlimited_planar_urdf(),
                start_mode='running', status_period=0.0)
    try:
        sim = node.sim
        model = sim.model
        assert np.all(np.isinf(model.effort_limit)) and np.all(np.isinf(model.velocity_limit))
        node._on_command(Float64MultiArray(data=[1.0, 2.0, 3.0]))
        assert np.array_equal(sim.drives.command(sim.steps), [1.0, 2.0, 3.0])
        node._on_command(Float64MultiArray(data=[1e308, 0.0, 0.0]))
        node._on_command(Float64MultiArray(data=[0.0, 0.0, -1e12]))
        assert node.command_rejections.counts == {'out of range': 2}
        assert np.array_equal(sim.drives.command(sim.steps), [1.0, 2.0, 3.0])
        # the simulation runs on with the last good command
        assert sim.advance(200) == 200 and sim.failure is None
        assert np.all(np.isfinite(np.concatenate((sim.q, sim.qd, sim.applied_effort))))
        assert np.array_equal(sim.applied_effort, [1.0, 2.0, 3.0])
    finally:
        node.destroy_node()


@pytest.mark.parametrize('urdf, gripper', [('denoc_arm7_gripper', 'auto'),
                                           ('denoc_arm7_gripper', 'left_finger_joint'),
                                           ('denoc_arm7_gripper', 'false'),
                                           ('denoc_arm7', 'auto')])
def test_the_nodes_leave_the_finger_of_a_gripper_out_of_their_effort_commands(
        context, urdf, gripper):
    arm = [f'joint{k}' for k in range(1, 8)]
    with_gripper = urdf == 'denoc_arm7_gripper' and gripper != 'false'
    for node_class in (SimNode, DynamicsNode):
        node = make(node_class, context, urdf_path=bundled_urdf(urdf), gripper=gripper,
                    **{'diagnostic_updater.period': 0.0})
        try:
            robot = node.model.robot
            assert node.commands.joints == (arm if with_gripper else robot.joint_names)
            finger = robot.joint_names.index('left_finger_joint') if with_gripper else None
            assert (node.commands.covered is None) == (not with_gripper)
            if with_gripper:
                assert finger not in node.commands.covered
        finally:
            node.destroy_node()


def test_a_gripper_joint_that_is_not_a_coordinate_refuses_the_model(context):
    with pytest.raises(RuntimeError, match="gripper joint 'no_such_joint' is not a coordinate"):
        make(SimNode, context, urdf_path=bundled_urdf('denoc_arm7_gripper'),
             gripper='no_such_joint', **{'diagnostic_updater.period': 0.0})


def test_joint_states_are_read_best_effort_with_room_for_a_pause(dynamics):
    """Sensor-data QoS, but a history of 0.1 s at 1 kHz: a 5 ms pause drops no state."""
    from rclpy.qos import DurabilityPolicy
    from rclpy.qos import ReliabilityPolicy
    qos = dynamics.state_sub.qos_profile
    assert qos.reliability == ReliabilityPolicy.BEST_EFFORT
    assert qos.durability == DurabilityPolicy.VOLATILE
    assert qos.depth >= 100
