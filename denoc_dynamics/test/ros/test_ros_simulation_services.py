"""
sim_node's simulation_interfaces services and action over real DDS.

Needs the simulation_interfaces package (not on PyPI: built from ../shared/ros2-msgs).
Where ../shared/ros2-msgs exists these tests are required: test/conftest.py turns
their absence or a skip into a failure.  Every step is checked in simulated time, on
/clock, to the nanosecond: a step is exactly 1 / physics_rate.
"""

from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from rclpy.action import ActionClient
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import matched
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result
from simulation_interfaces.msg import SimulationState
from simulation_interfaces.msg import SimulatorFeatures
from simulation_interfaces.srv import GetSimulationState
from simulation_interfaces.srv import GetSimulatorFeatures
from simulation_interfaces.srv import ResetSimulation
from simulation_interfaces.srv import SetSimulationState
from simulation_interfaces.srv import StepSimulation
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from std_srvs.srv import Trigger

pytestmark = pytest.mark.ros

# Leaning forward: under gravity alone, every step moves the arm.
Q0 = [0.2, 0.7, -0.3, -1.4, 0.4, 1.2, -0.5]
STEP_NS = 1_000_000   # physics_rate 1000 Hz
PAUSED, PLAYING, STOPPED = (SimulationState.STATE_PAUSED, SimulationState.STATE_PLAYING,
                            SimulationState.STATE_STOPPED)


@pytest.fixture(scope='module')
def sim():
    proc = NodeProcess('sim_node', ros_args(
        urdf_path=bundled_urdf(), start_mode='paused', initial_positions=Q0,
        publish_clock=True, status_period=0.0))
    yield proc
    proc.stop()


class Client(RosClient):

    def __init__(self):
        super().__init__('simulation_services_test')
        n = self.node
        self.clock = self.collect(Clock, '/clock', qos_profile_sensor_data)
        self.states = self.collect(JointState, 'joint_states', qos_profile_sensor_data)
        self.services = {
            name: n.create_client(srv_type, f'/sim_node/{name}') for name, srv_type in (
                ('get_simulator_features', GetSimulatorFeatures),
                ('reset_simulation', ResetSimulation),
                ('get_simulation_state', GetSimulationState),
                ('set_simulation_state', SetSimulationState),
                ('step_simulation', StepSimulation),
                ('pause', SetBool), ('reset', Trigger))}
        self.steps = ActionClient(n, SimulateSteps, '/sim_node/simulate_steps')
        self.efforts = n.create_publisher(Float64MultiArray, 'effort_commands', 10)

    def ready(self):
        """Return what the tests wait for first (:meth:`RosClient.wait_all`)."""
        return ([('/clock', lambda: len(self.clock) > 0),
                 ('joint_states', lambda: len(self.states) > 0),
                 ('action /sim_node/simulate_steps', self.steps.server_is_ready)]
                + [(f'service {c.srv_name}', c.service_is_ready)
                   for c in self.services.values()])

    def service(self, name, request=None):
        client = self.services[name]
        return self.call(client, request if request is not None else client.srv_type.Request())

    def state(self):
        response = self.service('get_simulation_state')
        assert response.result.result == Result.RESULT_OK, response.result.error_message
        return response.state.state

    def set_state(self, state):
        request = SetSimulationState.Request()
        request.state.state = state
        return self.service('set_simulation_state', request).result

    def step(self, steps):
        return self.service('step_simulation', StepSimulation.Request(steps=steps)).result

    def reset(self, scope):
        return self.service('reset_simulation', ResetSimulation.Request(scope=scope)).result

    def release(self):
        """End hold mode (after a reset) with a zero effort command: the arm falls."""
        self.wait_all(matched(self.efforts))
        self.efforts.publish(Float64MultiArray(data=[0.0] * 7))
        self.spin_for(0.3)

    def latest(self):
        """Return (simulated time [ns], positions) once two more states have arrived."""
        first = len(self.states)
        self.wait_all(('two more joint states', lambda: len(self.states) >= first + 2),
                      ('/clock', lambda: len(self.clock) > 0))
        msg = self.states[-1]
        return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec, \
            np.array(msg.position)


@pytest.fixture(scope='module')
def client(sim):
    c = Client()
    c.wait_all(*c.ready(), detail=sim.describe)
    yield c
    c.close()


def ok(result):
    assert result.result == Result.RESULT_OK, (result.result, result.error_message)


def test_features_are_exactly_what_is_supported(client):
    features = client.service('get_simulator_features').features
    F = SimulatorFeatures
    assert sorted(features.features) == sorted([
        F.SIMULATION_RESET, F.SIMULATION_RESET_TIME, F.SIMULATION_RESET_STATE,
        F.SIMULATION_STATE_GETTING, F.SIMULATION_STATE_SETTING, F.SIMULATION_STATE_PAUSE,
        F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE, F.STEP_SIMULATION_ACTION,
        F.ENTITY_STATE_GETTING, F.ENTITY_INFO_GETTING, F.ENTITY_CATEGORIES])
    assert list(features.spawn_formats) == []


def test_step_while_paused_advances_exactly_n_steps(client, sim):
    assert client.state() == PAUSED   # start_mode paused
    t0, q0 = client.latest()
    ok(client.step(137))
    t1, q1 = client.latest()
    assert t1 - t0 == 137 * STEP_NS
    assert np.abs(q1 - q0).max() > 1e-5, 'the arm moved under gravity'
    ok(client.step(1))
    t2, _ = client.latest()
    assert t2 - t1 == STEP_NS
    # still paused: the time stands
    client.spin_for(0.3)
    assert client.latest()[0] == t2
    assert client.state() == PAUSED
    assert sim.alive(), sim.describe()


def test_simulate_steps_action(client):
    assert client.state() == PAUSED
    t0, _ = client.latest()
    feedback = []
    goal = client.steps.send_goal_async(SimulateSteps.Goal(steps=250),
                                        feedback_callback=lambda f: feedback.append(f.feedback))
    assert client.spin_until(goal.done)
    handle = goal.result()
    assert handle.accepted
    result = handle.get_result_async()
    assert client.spin_until(result.done)
    ok(result.result().result.result)
    t1, _ = client.latest()
    assert t1 - t0 == 250 * STEP_NS
    # one feedback a publish period (10 steps), the last one complete
    assert len(feedback) >= 2
    assert (feedback[-1].completed_steps, feedback[-1].remaining_steps) == (250, 0)
    assert all(f.completed_steps + f.remaining_steps == 250 for f in feedback)


def test_playing_paused_stopped(client):
    ok(client.set_state(PLAYING))
    assert client.state() == PLAYING
    # stepping needs a paused simulation
    result = client.step(10)
    assert result.result == Result.RESULT_OPERATION_FAILED
    assert 'not paused' in result.error_message
    t0, _ = client.latest()
    client.spin_for(0.3)
    assert client.latest()[0] > t0, 'the time runs'
    assert client.set_state(PLAYING).result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE

    ok(client.set_state(PAUSED))
    assert client.state() == PAUSED
    t1, _ = client.latest()
    client.spin_for(0.3)
    assert client.latest()[0] == t1

    # stopped: reset and paused, time zero, the initial pose
    ok(client.set_state(STOPPED))
    assert client.state() == STOPPED
    t2, q2 = client.latest()
    assert t2 == 0 and np.array_equal(q2, Q0)
    assert client.set_state(STOPPED).result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    ok(client.step(3))
    assert client.state() == PAUSED
    assert client.latest()[0] == 3 * STEP_NS
    request = SetSimulationState.Request()
    request.state.state = SimulationState.STATE_QUITTING
    result = client.service('set_simulation_state', request).result
    assert result.result == Result.RESULT_FEATURE_UNSUPPORTED


def test_reset_scopes(client):
    if client.state() != PAUSED:
        ok(client.set_state(PAUSED))
    client.release()
    ok(client.step(300))
    t0, q0 = client.latest()
    assert t0 > 0 and not np.array_equal(q0, Q0)

    ok(client.reset(ResetSimulation.Request.SCOPE_TIME))     # time only
    t1, q1 = client.latest()
    assert t1 == 0 and np.array_equal(q1, q0)
    assert client.state() == PAUSED, 'paused stays paused'

    ok(client.step(100))
    t2, q2 = client.latest()
    ok(client.reset(ResetSimulation.Request.SCOPE_STATE))    # state only
    t3, q3 = client.latest()
    assert t3 == t2 == 100 * STEP_NS and np.array_equal(q3, Q0)

    ok(client.step(100))
    ok(client.reset(ResetSimulation.Request.SCOPE_ALL))
    t4, q4 = client.latest()
    assert t4 == 0 and np.array_equal(q4, Q0)
    ok(client.reset(ResetSimulation.Request.SCOPE_DEFAULT))

    result = client.reset(ResetSimulation.Request.SCOPE_SPAWNED)
    assert result.result == Result.RESULT_FEATURE_UNSUPPORTED


def test_pause_and_reset_still_work(client, sim):
    response = client.service('pause', SetBool.Request(data=False))
    assert response.success
    assert client.state() == PLAYING
    response = client.service('pause', SetBool.Request(data=True))
    assert response.success and client.state() == PAUSED
    response = client.service('reset')
    assert response.success and 'reset' in response.message
    assert client.state() == PLAYING   # ~/reset: the initial state, unpaused, hold mode
    assert sim.alive(), sim.describe()
