"""
sim_node's JointState command interface in-process: the servos, mixed interfaces, bad input.

The node is built in this process and its callbacks are called directly (as in
test_ros_nodes_in_process.py): the physics runs one publish period per call of its
timer callback, as fast as possible, so every test is deterministic.
test_sim_joint_commands_launch.py drives the installed sim_node over DDS.
"""

from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.servo import EFFORT
from denoc_dynamics.servo import POSITION
from denoc_dynamics.servo import VELOCITY
import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.qos import ReliabilityPolicy
from ros_helpers import Recorder
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

pytestmark = [pytest.mark.ros]

Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
# the reported move, every joint at once
TARGET = Q0 + np.array([0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3])
NAMES = [f'joint{i}' for i in range(1, 8)]

#: topic_based_ros2_control's default trigger_joint_command_threshold: the sum over
#: the joints of |position command - position state| below which it stops publishing.
TRIGGER_THRESHOLD = 1e-5


def _copy(msg):
    # the node reuses its message object: keep a copy of what was sent
    return JointState(name=list(msg.name), position=list(msg.position),
                      velocity=list(msg.velocity), effort=list(msg.effort))


def drive_effort(node, msg):
    """
    Return the drives' torque in a published joint state.

    The effort published is tau_J, what a link-side joint torque sensor reads: the
    drives' torque plus the joints' friction, damping and stops at the state published.
    """
    q, qd = np.asarray(msg.position), np.asarray(msg.velocity)
    return np.asarray(msg.effort) - node.sim.model.passive_torques(q, qd)


def make_sim(context, **params):
    params = dict(urdf_path=bundled_urdf(), initial_positions=list(Q0), real_time_factor=0.0,
                  status_period=0.0, **params)
    node = SimNode(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])
    node.real_robot_js_pub = node.robot_js_pub
    node.js_pub = Recorder(_copy)
    node.robot_js_pub = Recorder(_copy)
    return node


@pytest.fixture
def sim(context):
    node = make_sim(context)
    yield node
    node.destroy_node()


def run(node, seconds):
    """Run ``seconds`` of simulated time; return the robot_joint_states published."""
    first = len(node.robot_js_pub.messages)
    for _ in range(int(round(seconds * node.params.publish_rate))):
        node._tick()
    return node.robot_js_pub.messages[first:]


class TopicSystemClient:
    """
    What JointStateTopicSystem does every control cycle (100 Hz), for position joints.

    It reads the latest message on robot_joint_states, and writes the command on
    robot_joint_commands unless the summed |command - state| of the positions is at most
    ``trigger_joint_command_threshold``: once the arm is there, it goes silent.
    """

    def __init__(self, node, target):
        self.node = node
        self.target = np.asarray(target, dtype=float)
        self.sent = []   # the simulated times of the commands sent

    def cycle(self):
        states = self.node.robot_js_pub.messages
        position = np.asarray(states[-1].position) if states else None
        if position is not None and np.abs(self.target - position).sum() <= TRIGGER_THRESHOLD:
            return
        self.node._on_joint_command(JointState(name=NAMES, position=self.target.tolist()))
        self.sent.append(self.node.sim.t)

    def run(self, seconds):
        """Run the client and the sim for ``seconds``; return the positions [s x joints]."""
        positions = []
        for _ in range(int(round(seconds * self.node.params.publish_rate))):
            self.cycle()
            self.node._tick()
            positions.append(self.node.robot_js_pub.messages[-1].position)
        return np.array(positions)


def test_position_commands_reach_and_hold_the_target(sim):
    client = TopicSystemClient(sim, TARGET)
    q = client.run(6.0)
    assert sim.joint_command_rejections.total == 0
    error = np.abs(q - TARGET)
    # there within 2 s, and held to the end within 2 mrad on every joint
    assert error[200:].max() < 2e-3, error[200:].max(axis=0)
    # the client went silent once the states agreed: the sim holds the last command
    assert client.sent and client.sent[-1] < 3.0, client.sent[-5:]
    assert len(client.sent) < 300
    # after the silence, still there: 3 s without a command
    assert error[-100:].max() < 2e-3
    # the effort published is the servo's, within the URDF limits
    effort = np.asarray(sim.robot_js_pub.messages[-1].effort)
    assert np.all(np.abs(effort) <= sim.sim.model.effort_limit)
    assert np.allclose(effort, sim.sim.robot.gravity_torques(TARGET), atol=0.05)


def test_the_servo_gains_are_typed_parameters_per_joint(context):
    node = make_sim(context, **{'servo.joint7.kp': 0.5, 'servo.joint7.kd': 0.02})
    try:
        assert node.sim.drives.kp[6] == 0.5 and node.sim.drives.kd[6] == 0.02
        descriptor = node.describe_parameter('servo.joint1.kp')
        assert descriptor.type == Parameter.Type.DOUBLE.value and not descriptor.read_only
        assert 'joint1' in descriptor.description and 'runtime' in descriptor.description
        # the default: critically damped at servo_frequency on the smallest inertia
        kp1 = node.get_parameter('servo.joint1.kp').value
        assert kp1 == pytest.approx(node.sim.model.inertia[0] * (2 * np.pi * 25.0) ** 2)
        # a softer wrist: joint7 now settles slowly, the others as before
        client = TopicSystemClient(node, TARGET)
        q = client.run(1.0)
        assert abs(q[-1, 6] - TARGET[6]) > 5e-3
        assert np.abs(q[-1, :6] - TARGET[:6]).max() < 2e-3
    finally:
        node.destroy_node()


def test_mixed_interfaces_in_the_compact_layout(context):
    # JointStateTopicSystem's message for joints with different command interfaces:
    # every name, and each array only for the joints that have that interface
    node = make_sim(context, **{'command_interfaces.joint5': ['velocity'],
                                'command_interfaces.joint7': ['effort']}
                    | {f'command_interfaces.joint{i}': ['position'] for i in (1, 2, 3, 4, 6)})
    try:
        hold = Q0[[0, 1, 2, 3, 5]]
        msg = JointState(name=NAMES, position=hold.tolist(), velocity=[0.3], effort=[0.02])
        node._on_joint_command(msg)
        assert node.joint_command_rejections.total == 0
        assert node.sim.drives.mode.tolist() == [POSITION] * 4 + [VELOCITY, POSITION, EFFORT]
        states = run(node, 2.0)
        q = np.array([m.position for m in states])
        qd = np.array([m.velocity for m in states])
        effort = np.array([drive_effort(node, m) for m in states])
        # position joints hold, the velocity joint moves at 0.3 rad/s (no error left by
        # its friction), the effort joint's drive gets exactly its torque
        assert np.abs(q[:, [0, 1, 2, 3, 5]] - hold).max() < 2e-3
        assert np.abs(qd[50:, 4] - 0.3).max() < 3e-3, qd[50:, 4]
        assert q[-1, 4] - Q0[4] == pytest.approx(0.6, abs=0.02)
        assert np.allclose(effort[:, 6], 0.02, rtol=0.0, atol=1e-12)
        assert q[-1, 6] > Q0[6] + 0.01   # pushed against its friction, it slides
        # full-length arrays mean every named joint: velocity for joint5 and joint6
        node._on_joint_command(JointState(name=['joint5', 'joint6'], velocity=[0.0, 0.0]))
        assert node.sim.drives.mode.tolist() == [POSITION] * 4 + [VELOCITY, VELOCITY, EFFORT]
        states = run(node, 1.0)
        assert np.abs(states[-1].velocity[4:6]).max() < 1e-3
    finally:
        node.destroy_node()


def test_position_with_velocity_and_effort_feedforward(sim):
    target = Q0.copy()
    target[3] = -1.0
    sim._on_joint_command(JointState(name=NAMES, position=target.tolist(),
                                     velocity=[0.0] * 7, effort=[0.0] * 7))
    assert sim.sim.drives.mode.tolist() == [POSITION] * 7
    states = run(sim, 2.0)
    assert np.abs(np.asarray(states[-1].position) - target).max() < 2e-3


@pytest.mark.parametrize('msg, reason', [
    (JointState(name=NAMES[:6] + ['joint8'], position=list(TARGET)), 'unknown joint'),
    (JointState(name=NAMES, position=list(TARGET[:6]) + [float('nan')]), 'non-finite'),
    (JointState(name=NAMES, velocity=[0.1] * 6 + [float('inf')]), 'non-finite'),
    (JointState(name=NAMES, position=list(TARGET[:6])), 'length'),
    (JointState(name=NAMES, position=list(TARGET), effort=[1.0, 2.0]), 'length'),
    (JointState(name=NAMES[:6] + ['joint1'], position=list(TARGET)), 'duplicate joint'),
    (JointState(name=NAMES), 'empty'),
    (JointState(), 'empty'),
    (JointState(name=NAMES, position=list(TARGET[:6]) + [3.5]), 'out of range'),
])
def test_bad_commands_are_rejected_and_nothing_moves(sim, msg, reason):
    sim._on_joint_command(msg)
    assert sim.joint_command_rejections.counts == {reason: 1}
    states = run(sim, 0.3)
    # still in hold mode: not a hair moved
    assert sim.sim.mode == 'hold' and not sim.sim.drives.joint_commanded
    assert all(list(m.position) == list(Q0) for m in states)

    # after a good command, a bad one changes nothing either
    sim._on_joint_command(JointState(name=NAMES, position=list(TARGET)))
    run(sim, 0.1)
    reference = sim.sim.drives.q_ref.copy(), sim.sim.drives.mode.copy()
    sim._on_joint_command(msg)
    assert sim.joint_command_rejections.counts == {reason: 2}
    assert np.array_equal(sim.sim.drives.q_ref, reference[0])
    assert np.array_equal(sim.sim.drives.mode, reference[1])


def test_the_status_line_counts_the_rejected_joint_commands(sim):
    sim._on_joint_command(JointState(name=['nope'], position=[0.0]))
    sim._on_joint_command(JointState(name=NAMES, position=[0.0]))
    assert str(sim.joint_command_rejections) == '2 (length: 1, unknown joint: 1)'


def test_a_joint_command_timeout_holds_the_position(context):
    node = make_sim(context, joint_command_timeout=0.5)
    try:
        node._on_joint_command(JointState(name=['joint1'], velocity=[0.5]))
        # the joints it leaves out hold where they are
        assert node.sim.drives.mode.tolist() == [VELOCITY] + [POSITION] * 6
        states = run(node, 0.5)
        assert states[-1].velocity[0] == pytest.approx(0.5, abs=0.01)
        states = run(node, 1.5)
        q = np.array([m.position for m in states])
        # after the timeout the joint stops and holds
        assert abs(states[-1].velocity[0]) < 1e-3
        assert np.ptp(q[-50:, 0]) < 1e-3
        assert q[-1, 0] > Q0[0] + 0.2
    finally:
        node.destroy_node()


def test_without_a_timeout_the_last_command_is_held(sim):
    sim._on_joint_command(JointState(name=['joint1'], velocity=[0.2]))
    states = run(sim, 3.0)
    assert states[-1].velocity[0] == pytest.approx(0.2, abs=0.01)
    assert states[-1].position[0] == pytest.approx(0.6, abs=0.03)


def test_effort_commands_and_joint_commands_take_over_from_each_other(sim):
    sim._on_joint_command(JointState(name=NAMES, position=list(TARGET)))
    run(sim, 0.2)
    assert sim.sim.drives.joint_commanded
    gravity = sim.sim.robot.gravity_torques(sim.sim.q)
    sim._on_command(Float64MultiArray(data=gravity.tolist()))
    assert not sim.sim.drives.joint_commanded
    assert sim.sim.drives.mode.tolist() == [EFFORT] * 7
    states = run(sim, 0.1)
    assert np.allclose(drive_effort(sim, states[-1]),
                       np.clip(gravity, -sim.sim.model.effort_limit, sim.sim.model.effort_limit))
    sim._on_joint_command(JointState(name=NAMES, position=list(TARGET)))
    assert sim.sim.drives.joint_commanded
    states = run(sim, 3.0)
    assert np.abs(np.asarray(states[-1].position) - TARGET).max() < 2e-3


def test_joint_states_go_to_both_topics(sim):
    run(sim, 0.05)
    assert sim.js_pub.messages and sim.robot_js_pub.messages
    assert sim.js_pub.messages[-1] == sim.robot_js_pub.messages[-1]
    # JointStateTopicSystem's QoS: states best effort, commands reliable with depth 1
    publisher, subscription = sim.real_robot_js_pub, sim.joint_command_sub
    assert publisher.topic_name == '/robot_joint_states'
    assert publisher.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
    assert subscription.topic_name == '/robot_joint_commands'
    assert subscription.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert subscription.qos_profile.depth == 1


def test_without_simulation_interfaces_the_node_says_so_in_one_line(context, monkeypatch):
    from denoc_dynamics.ros import simulation_services

    def import_interfaces():
        raise ImportError("No module named 'simulation_interfaces'")

    lines = []
    monkeypatch.setattr(simulation_services, 'import_interfaces', import_interfaces)
    monkeypatch.setattr(SimNode, 'get_logger', lambda self: LogLines(lines))
    node = make_sim(context)
    try:
        assert node.simulation_services is None
        said = [line for line in lines if 'simulation_interfaces' in line]
        assert len(said) == 1 and 'standard simulator services are off' in said[0], lines
        # the rest works: a joint command moves the arm
        node._on_joint_command(JointState(name=['joint1'], position=[0.2]))
        states = run(node, 1.0)
        assert abs(states[-1].position[0] - 0.2) < 2e-3
        assert not any(s.srv_name.endswith('simulation') for s in node.services)
        assert any(s.srv_name == '~/reset' for s in node.services)
    finally:
        node.destroy_node()


def test_with_simulation_interfaces_the_services_are_there(sim):
    pytest.importorskip('simulation_interfaces')
    names = {s.srv_name for s in sim.services}   # as given: ~/ is the node's name
    assert {f'~/{name}' for name in (
        'get_simulator_features', 'reset_simulation', 'get_simulation_state',
        'set_simulation_state', 'step_simulation', 'reset', 'pause')} <= names


class LogLines:
    """Stands in for a logger: keeps every line."""

    def __init__(self, lines):
        self.lines = lines

    def _log(self, text, **kwargs):
        self.lines.append(text)

    info = warning = error = debug = _log
