"""dynamics_node over real DDS: topics, services, and the rejection of bad input."""

import math

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics_interfaces.msg import InertiaMatrix
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.srv import ForwardDynamics
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
from denoc_dynamics_interfaces.srv import InverseDynamics
import numpy as np
import pytest
from ros_helpers import matched
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from ros_helpers import stamp
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

pytestmark = pytest.mark.ros

NODE = '/dynamics_node'
COMMAND_TIMEOUT = 1.0
Q = np.array([0.3, 0.7, -0.4, -1.3, 0.5, 1.1, -0.2])
QD = np.array([0.5, -0.3, 0.8, 0.2, -0.6, 0.4, 1.0])


@pytest.fixture(scope='module')
def robot():
    return load_urdf(bundled_urdf())


@pytest.fixture(scope='module')
def node():
    proc = NodeProcess('dynamics_node', ros_args(
        urdf_path=bundled_urdf(), inertia_every_n=1, publish_gravity_torques=True,
        publish_bias_forces=True, command_timeout=COMMAND_TIMEOUT, diagnostics_period=1.0))
    yield proc
    proc.stop()


class Client(RosClient):
    """Publishers, subscriptions and service clients talking to the dynamics node."""

    def __init__(self):
        super().__init__('dynamics_node_test')
        n = self.node
        self.states = n.create_publisher(JointState, 'joint_states', 10)
        self.commands = n.create_publisher(Float64MultiArray, 'effort_commands', 10)
        self.acc = self.collect(JointAccelerations, NODE + '/joint_accelerations')
        self.inertia = self.collect(InertiaMatrix, NODE + '/inertia_matrix')
        self.gravity = self.collect(JointState, NODE + '/gravity_torques')
        self.bias = self.collect(JointState, NODE + '/bias_forces')
        self.get_inertia = n.create_client(GetInertiaMatrix, NODE + '/get_inertia_matrix')
        self.fd = n.create_client(ForwardDynamics, NODE + '/forward_dynamics')
        self.id = n.create_client(InverseDynamics, NODE + '/inverse_dynamics')
        self._sec = 100

    def ready(self):
        """Return what the tests wait for first (:meth:`RosClient.wait_all`)."""
        return ([matched(self.states), matched(self.commands)]
                + [(f'a publisher of {s.topic_name}', lambda s=s: s.get_publisher_count() > 0)
                   for s in self.node.subscriptions]
                + [(f'service {c.srv_name}', c.service_is_ready)
                   for c in (self.get_inertia, self.fd, self.id)])

    def next_stamp(self):
        self._sec += 1
        return stamp(self._sec, 250)

    def send_state(self, names, position, velocity, extra=None):
        msg = JointState(name=list(names), position=[float(v) for v in position],
                         velocity=[float(v) for v in velocity])
        msg.header.stamp = self.next_stamp()
        if extra:
            extra(msg)
        self.states.publish(msg)
        return msg.header.stamp

    def send_command(self, tau):
        self.commands.publish(Float64MultiArray(data=[float(v) for v in tau]))

    def accelerations_for(self, st, timeout=3.0):
        def find():
            return next((m for m in self.acc if m.header.stamp == st), None)
        self.spin_until(lambda: find() is not None, timeout)
        return find()


@pytest.fixture(scope='module')
def client(node, robot):
    c = Client()
    c.wait_all(*c.ready(), detail=node.describe)
    yield c
    c.close()


def chain_state(robot, q=Q, qd=QD):
    return robot.joint_names, q, qd


def await_acceleration(client, node, expected, names, q, qd, tries=20):
    """
    Publish the state until the output matches ``expected`` (commands race states).

    joint_states are best effort (sensor-data QoS): a state published before the
    node's subscription has matched this publisher is lost by contract, so a missing
    answer is retried too; none in ``tries`` is a failure.
    """
    msg = answered = None
    for _ in range(tries):
        st = client.send_state(names, q, qd)
        msg = client.accelerations_for(st)
        if msg is not None:
            answered = msg
            if np.allclose(msg.acceleration, expected, rtol=1e-9, atol=1e-9):
                return msg
        client.spin_for(0.1)
    assert answered is not None, 'no acceleration output\n' + node.describe()
    pytest.fail(f'accelerations {list(answered.acceleration)} != FD {expected}\n'
                + node.describe())


def test_accelerations_match_the_core_by_name(client, node, robot):
    # a zero command, then a state in shuffled order with an unknown joint mixed in;
    # the unknown joint is ignored altogether, even its NaN velocity
    client.send_command(np.zeros(7))
    names = list(reversed(robot.joint_names)) + ['gripper_finger']
    order = [robot.joint_names.index(name) for name in names[:-1]]
    q = list(Q[order]) + [0.123]
    qd = list(QD[order]) + [math.nan]
    expected = robot.forward_dynamics(Q, QD, np.zeros(7))
    msg = await_acceleration(client, node, expected, names, q, qd)
    assert list(msg.joint_names) == robot.joint_names
    st = msg.header.stamp

    # stamped like the input; the other outputs for the same state
    assert client.spin_until(lambda: any(m.header.stamp == st for m in client.inertia)
                             and any(m.header.stamp == st for m in client.bias), 5.0)
    inertia = next(m for m in client.inertia if m.header.stamp == st)
    assert list(inertia.joint_names) == robot.joint_names
    assert np.allclose(np.reshape(inertia.data, (7, 7)), robot.inertia_matrix(Q))
    gravity = next(m for m in client.gravity if m.header.stamp == st)
    assert list(gravity.name) == robot.joint_names
    assert np.allclose(gravity.effort, robot.gravity_torques(Q))
    bias = next(m for m in client.bias if m.header.stamp == st)
    assert np.allclose(bias.effort, robot.bias_forces(Q, QD))


def test_effort_command_is_used_and_times_out(client, node, robot):
    tau = np.array([5.0, -20.0, 3.0, 10.0, -1.0, 0.5, 0.2])
    client.send_command(tau)
    await_acceleration(client, node, robot.forward_dynamics(Q, QD, tau), *chain_state(robot))
    client.spin_for(COMMAND_TIMEOUT + 0.3)  # the command is now too old
    st = client.send_state(*chain_state(robot))
    msg = client.accelerations_for(st)
    assert np.allclose(msg.acceleration, robot.forward_dynamics(Q, QD, np.zeros(7)))


def test_get_inertia_matrix_service(client, robot):
    # empty state: the latest joint state received (Q from the tests above)
    request = GetInertiaMatrix.Request(include_decomposition=True, include_inverse=True)
    response = client.call(client.get_inertia, request)
    assert response.success, response.message
    m = np.reshape(response.inertia.data, (7, 7))
    assert np.allclose(m, robot.inertia_matrix(Q))
    u = np.reshape(response.u, (7, 7))
    d = np.asarray(response.d)
    assert np.allclose(u @ np.diag(d) @ u.T, m, rtol=1e-10, atol=1e-12)
    assert np.allclose(np.tril(u, -1), 0.0) and np.allclose(np.diag(u), 1.0)
    assert np.all(d > 0.0)
    inverse = np.reshape(response.inverse, (7, 7))
    assert np.allclose(inverse @ m, np.eye(7), atol=1e-9)

    # an explicit state, without the extras
    q = np.linspace(-0.5, 0.5, 7)
    request = GetInertiaMatrix.Request()
    request.state = JointState(name=robot.joint_names, position=q.tolist())
    request.state.header.stamp = stamp(7, 8)
    response = client.call(client.get_inertia, request)
    assert response.success, response.message
    assert response.inertia.header.stamp == stamp(7, 8)
    assert np.allclose(np.reshape(response.inertia.data, (7, 7)), robot.inertia_matrix(q))
    assert len(response.u) == len(response.d) == len(response.inverse) == 0


def test_forward_and_inverse_dynamics_services(client, robot):
    tau = np.array([1.0, -2.0, 3.0, -4.0, 0.5, -0.5, 0.1])
    names = list(reversed(robot.joint_names))
    request = ForwardDynamics.Request()
    request.state = JointState(name=names, position=Q[::-1].tolist(),
                               velocity=QD[::-1].tolist(), effort=tau[::-1].tolist())
    response = client.call(client.fd, request)
    assert response.success, response.message
    assert list(response.accelerations.joint_names) == names
    qdd = robot.forward_dynamics(Q, QD, tau)
    assert np.allclose(response.accelerations.acceleration, qdd[::-1])

    # inverse dynamics of those accelerations gives back tau (request order)
    request = InverseDynamics.Request(acceleration=qdd[::-1].tolist())
    request.state = JointState(name=names, position=Q[::-1].tolist(),
                               velocity=QD[::-1].tolist())
    response = client.call(client.id, request)
    assert response.success, response.message
    assert np.allclose(response.effort, tau[::-1], atol=1e-9)

    # empty velocity and acceleration: the gravity torques
    request = InverseDynamics.Request()
    request.state = JointState(name=robot.joint_names, position=Q.tolist())
    response = client.call(client.id, request)
    assert response.success, response.message
    assert np.allclose(response.effort, robot.gravity_torques(Q))


def _bad_state(robot, what):
    names, q, qd = list(robot.joint_names), list(Q), list(QD)
    if what == 'wrong length':
        q = q[:-1]
    elif what == 'NaN':
        q[2] = math.nan
    elif what == 'Inf velocity':
        qd[0] = math.inf
    elif what == 'unknown joints only':
        names = [f'other_{k}' for k in range(7)]
    elif what == 'missing joint':
        names, q, qd = names[:-1], q[:-1], qd[:-1]
    elif what == 'duplicate joint':
        names, q, qd = names + ['joint3'], q + [0.0], qd + [0.0]
    elif what == 'velocity 1e155':
        qd[3] = 1e155
    return names, q, qd


BAD_STATES = ['wrong length', 'NaN', 'Inf velocity', 'unknown joints only', 'missing joint',
              'duplicate joint', 'velocity 1e155']


def test_bad_joint_states_are_rejected(client, node, robot):
    stamps = []
    for what in BAD_STATES:  # paced: sensor-data QoS keeps only the last 5
        stamps.append(client.send_state(*_bad_state(robot, what)))
        client.spin_for(0.05)
    # a good state afterwards is answered, the bad ones before it never are
    good = client.send_state(*chain_state(robot))
    assert client.accelerations_for(good) is not None, node.describe()
    client.spin_for(0.3)
    answered = [what for what, st in zip(BAD_STATES, stamps)
                if any(m.header.stamp == st for m in client.acc)]
    assert answered == []
    assert node.alive(), node.describe()
    assert client.spin_until(lambda: 'rejected: 7 (duplicate joint: 1, length: 1, missing '
                             'joint: 2, non-finite: 2, out of range: 1)' in node.output(),
                             5.0), node.describe()


def test_bad_commands_are_rejected(client, node, robot):
    tau = np.array([2.0, 4.0, -1.0, 3.0, 0.2, -0.3, 0.1])
    client.send_command(tau)
    await_acceleration(client, node, robot.forward_dynamics(Q, QD, tau), *chain_state(robot))
    client.send_command([1.0] * 6)                     # wrong length
    client.send_command([math.nan] + [0.0] * 6)        # non-finite
    client.send_command([0.0] * 6 + [math.inf])
    client.spin_for(0.3)
    st = client.send_state(*chain_state(robot))
    msg = client.accelerations_for(st)
    assert msg is not None and node.alive(), node.describe()
    assert np.allclose(msg.acceleration, robot.forward_dynamics(Q, QD, tau))


def test_an_effort_command_that_overflows_the_dynamics_publishes_nothing(client, node, robot):
    # finite, so accepted; but FD with it is not: every state is rejected until the
    # next command
    client.send_command([1e308] * 7)
    client.spin_for(0.3)
    st = client.send_state(*chain_state(robot))
    assert client.spin_until(lambda: 'non-finite result' in node.output(), 5.0), \
        node.describe()
    assert client.accelerations_for(st, timeout=1.0) is None
    assert all(math.isfinite(a) for m in client.acc for a in m.acceleration)
    tau = np.array([1.0, -1.0, 0.5, 2.0, 0.1, 0.0, -0.1])
    client.send_command(tau)
    await_acceleration(client, node, robot.forward_dynamics(Q, QD, tau), *chain_state(robot))


@pytest.mark.parametrize('what, reason', [
    ('effort 1e308', 'non-finite result'), ('acceleration 1e308', 'non-finite result'),
    ('velocity 1e200', 'out of range'), ('duplicate joint', 'duplicate joint')])
def test_requests_that_would_answer_nan_fail_with_the_reason(
        client, node, robot, what, reason):
    names, q, qd = _bad_state(robot, what)
    if what == 'velocity 1e200':
        qd = [1e200] * 7
    if what == 'acceleration 1e308':
        request = InverseDynamics.Request(acceleration=[1e308] * 7)
        request.state = JointState(name=names, position=q)
        response = client.call(client.id, request)
        values = response.effort
    else:
        request = ForwardDynamics.Request()
        request.state = JointState(name=names, position=q, velocity=qd)
        if what == 'effort 1e308':
            request.state.effort = [1e308] * 7
        response = client.call(client.fd, request)
        values = response.accelerations.acceleration
    assert not response.success and response.message.startswith(reason), response.message
    assert len(values) == 0
    assert node.alive(), node.describe()


@pytest.mark.parametrize('what', ['missing joint', 'NaN', 'wrong length', 'no names',
                                  'duplicate joint'])
def test_bad_service_requests_fail_with_a_reason(client, node, robot, what):
    names, q, qd = _bad_state(robot, what)
    if what == 'no names':
        names, q, qd = [], list(Q), []
    for service, request in ((client.fd, ForwardDynamics.Request()),
                             (client.id, InverseDynamics.Request()),
                             (client.get_inertia, GetInertiaMatrix.Request())):
        request.state = JointState(name=names, position=[float(v) for v in q],
                                   velocity=[float(v) for v in qd])
        response = client.call(service, request)
        assert not response.success, (service.srv_name, what)
        assert response.message, (service.srv_name, what)
    request = InverseDynamics.Request(acceleration=[0.0] * 3)
    request.state = JointState(name=robot.joint_names, position=Q.tolist())
    response = client.call(client.id, request)
    assert not response.success and 'accelerations' in response.message
    assert node.alive(), node.describe()
    # still answering
    response = client.call(client.get_inertia, GetInertiaMatrix.Request())
    assert response.success, response.message
