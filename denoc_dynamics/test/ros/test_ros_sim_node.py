"""sim_node over real DDS: falling, gravity compensation, reset, pause, /clock."""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.srv import InverseDynamics
import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import matched
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from std_srvs.srv import Trigger

pytestmark = pytest.mark.ros

# Leaning forward, well away from the straight-up pose where gravity has no torque.
Q0 = np.array([0.2, 0.7, -0.3, -1.4, 0.4, 1.2, -0.5])


@pytest.fixture(scope='module')
def robot():
    return load_urdf(bundled_urdf())


@pytest.fixture(scope='module')
def nodes():
    sim = NodeProcess('sim_node', ros_args(
        urdf_path=bundled_urdf(), start_mode='running', initial_positions=list(Q0),
        publish_clock=True, command_timeout=0.5, status_period=1.0))
    # as in the launch layout: on the simulated time, reading the sim's own joint states
    # (a reset moves both back; the state gate rejects stamps back in time otherwise)
    dyn = NodeProcess('dynamics_node', ros_args(urdf_path=bundled_urdf(), use_sim_time=True)
                      + ['-r', 'joint_states:=robot_joint_states'])
    yield sim, dyn
    sim.stop()
    dyn.stop()


class Client(RosClient):

    def __init__(self):
        super().__init__('sim_node_test')
        n = self.node
        self.states = self.collect(JointState, 'joint_states', qos_profile_sensor_data)
        self.clock = self.collect(Clock, '/clock', qos_profile_sensor_data)
        self.acc = self.collect(JointAccelerations, '/dynamics_node/joint_accelerations')
        self.commands = n.create_publisher(Float64MultiArray, 'effort_commands', 10)
        self.reset = n.create_client(Trigger, '/sim_node/reset')
        self.pause = n.create_client(SetBool, '/sim_node/pause')
        self.inverse_dynamics = n.create_client(InverseDynamics,
                                                '/dynamics_node/inverse_dynamics')

    def ready(self):
        """Return what the tests wait for first (:meth:`RosClient.wait_all`)."""
        return [('joint_states', lambda: len(self.states) > 0),
                ('/clock', lambda: len(self.clock) > 0),
                ("the dynamics node's accelerations", lambda: len(self.acc) > 0),
                # sim_node's and dynamics_node's: a command sent when only the
                # dynamics node had matched would never reach the sim
                matched(self.commands, 2),
                ('service /sim_node/reset', self.reset.service_is_ready),
                ('service /sim_node/pause', self.pause.service_is_ready),
                ('service /dynamics_node/inverse_dynamics',
                 self.inverse_dynamics.service_is_ready)]

    def record(self, seconds, during=None):
        """Return the joint states received in the next ``seconds`` (as arrays)."""
        first = len(self.states)
        if during is None:
            self.spin_for(seconds)
        else:
            during(seconds)
        msgs = self.states[first:]
        t = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in msgs])
        return (t, np.array([m.position for m in msgs]), np.array([m.velocity for m in msgs]),
                np.array([m.effort for m in msgs]))

    def publish_for(self, tau, seconds, period=0.05):
        msg = Float64MultiArray(data=[float(v) for v in tau])
        for _ in range(int(round(seconds / period))):
            self.commands.publish(msg)
            self.spin_for(period)

    def do_reset(self):
        response = self.call(self.reset, Trigger.Request())
        assert response.success, response.message
        return response


@pytest.fixture(scope='module')
def client(nodes):
    c = Client()
    c.wait_all(*c.ready(), detail=lambda: '\n'.join(p.describe() for p in nodes))
    yield c
    c.close()


def test_falls_under_gravity_with_zero_torque(client, nodes, robot):
    # start_mode running, no command: it has been falling since the start
    first = client.states[0]
    # effort is what a link-side joint torque sensor reads (tau_J): no drive torque, so
    # only the joints' friction, damping and stops
    effort = np.asarray(first.effort)
    assert np.all(np.isfinite(effort))
    assert np.abs(np.asarray(first.position) - Q0).max() > 1e-3, nodes[0].describe()

    # more simulated time before the reset than the recording after it: the dynamics
    # node must follow the sim's time back (its clock jumps back with /clock)
    assert client.spin_until(lambda: client.states[-1].header.stamp.sec >= 2, timeout=30.0)
    client.do_reset()
    # one zero command leaves hold mode; it then times out (zero torque anyway)
    client.commands.publish(Float64MultiArray(data=[0.0] * 7))
    t, q, qd, effort = client.record(1.0)
    assert len(t) > 50, nodes[0].describe()
    assert np.all(np.isfinite(effort))   # tau_J: no drive torque, the passive torques only
    moved = q[-1] - Q0
    assert np.abs(moved).max() > 0.05, q[-1]
    # downhill: along the free acceleration from rest, and losing potential energy
    qdd0 = robot.forward_dynamics(Q0, np.zeros(7), np.zeros(7))
    assert float(moved @ qdd0) > 0.0
    assert robot.potential_energy(q[-1]) < robot.potential_energy(Q0) - 1.0
    # the dynamics node computes accelerations for the simulated states
    stamps = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in client.acc}
    assert (client.states[-5].header.stamp.sec,
            client.states[-5].header.stamp.nanosec) in stamps


def test_reset_holds_the_initial_pose(client, nodes):
    response = client.do_reset()
    assert 'reset' in response.message
    # rejected commands (wrong length, non-finite) do not end hold mode
    client.commands.publish(Float64MultiArray(data=[1.0] * 6))
    client.commands.publish(Float64MultiArray(data=[float('nan')] + [0.0] * 6))
    client.spin_for(0.1)
    t, q, qd, effort = client.record(0.5)
    assert len(t) > 20
    assert np.all(q == Q0) and np.all(qd == 0.0) and np.all(effort == 0.0)
    assert np.all(np.diff(t) > 0.0), 'simulated time runs in hold mode'
    assert client.spin_until(lambda: 'effort commands rejected: 2 (length: 1, non-finite: 1)'
                             in nodes[0].output(), 5.0), nodes[0].describe()


def test_gravity_compensation_holds_the_pose(client, nodes, robot):
    client.do_reset()
    request = InverseDynamics.Request()
    request.state = JointState(name=robot.joint_names, position=Q0.tolist())
    response = client.call(client.inverse_dynamics, request)
    assert response.success, response.message
    tau = np.asarray(response.effort)
    assert np.allclose(tau, robot.gravity_torques(Q0))
    assert np.abs(tau).max() > 5.0  # gravity matters in this pose

    t, q, qd, effort = client.record(2.5, lambda s: client.publish_for(tau, s))
    running = np.all(effort == tau, axis=1)
    assert running.sum() > 150, 'the command should be applied for about 2 s'
    assert np.abs(q[running] - Q0).max() < 1e-3
    assert np.abs(qd[running]).max() < 1e-2


def test_pause_and_resume(client, nodes):
    client.do_reset()
    client.commands.publish(Float64MultiArray(data=[0.0] * 7))
    client.spin_for(0.3)
    response = client.call(client.pause, SetBool.Request(data=True))
    assert response.success and response.message == 'paused'
    client.spin_for(0.2)
    t, q, _, _ = client.record(0.5)
    assert len(t) > 10, 'still publishing while paused'
    assert np.all(t == t[0]) and np.all(q == q[0]), 'time and state frozen'
    clock = client.clock[-1].clock
    assert clock.sec + 1e-9 * clock.nanosec == pytest.approx(t[0])

    response = client.call(client.pause, SetBool.Request(data=False))
    assert response.success and response.message == 'resumed'
    client.spin_for(0.1)
    t2, q2, _, _ = client.record(0.5)
    assert t2[-1] > t[0] + 0.3
    assert np.abs(q2[-1] - q[0]).max() > 1e-3, 'falling again'
    assert all(p.alive() for p in nodes), '\n'.join(p.describe() for p in nodes)
    assert 'real-time factor' in nodes[0].output()


@pytest.mark.parametrize('executable, name, value', [
    ('sim_node', 'fd_method', 'foo'), ('sim_node', 'integrator', 'euler'),
    ('sim_node', 'start_mode', 'fast'), ('dynamics_node', 'fd_method', 'foo')])
def test_bad_choice_parameters_are_rejected_at_start_up(executable, name, value):
    # before: sim_node accepted fd_method foo and failed at its first step
    proc = NodeProcess(executable, ros_args(urdf_path=bundled_urdf(), **{name: value}))
    try:
        assert proc.proc.wait(30.0) == 1, proc.describe()
        assert f'{name} must be one of' in proc.output(), proc.describe()
        assert 'Traceback' not in proc.output(), proc.describe()
    finally:
        proc.stop()
