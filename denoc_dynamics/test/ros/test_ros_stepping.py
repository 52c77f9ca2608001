"""
Stepping ends on PAUSED, STOPPED, a reset or a caller that is gone; one at a time.

sim_node's StepSimulation over real DDS, on /clock: a stepping under way stops when
the state is set or the simulation reset, or when its caller disconnects; concurrent
step requests are refused, each answered, and never step N times as fast.
"""

from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.joint_io import REQUEST_QOS
import pytest
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from rosgraph_msgs.msg import Clock

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

NS = '/stepping'
LONG = 1_000_000      # steps: 1000 s of simulated time, far more than a test waits


@pytest.fixture(scope='module')
def sim(ros2_msgs):
    proc = NodeProcess('sim_node', ros_args(
        urdf_path=bundled_urdf(), start_mode='paused', publish_clock=True,
        status_period=0.0) + ['-r', f'__ns:={NS}'])
    yield proc
    proc.stop()


class Client(RosClient):

    def __init__(self, name='stepping_test'):
        from simulation_interfaces.srv import ResetSimulation
        from simulation_interfaces.srv import SetSimulationState
        from simulation_interfaces.srv import StepSimulation
        from std_srvs.srv import SetBool
        from std_srvs.srv import Trigger
        super().__init__(name)
        self.clock = self.collect(Clock, '/clock', qos_profile_sensor_data)
        self.services = {name: self.node.create_client(srv, f'{NS}/sim_node/{name}')
                         for name, srv in (('step_simulation', StepSimulation),
                                           ('set_simulation_state', SetSimulationState),
                                           ('reset_simulation', ResetSimulation),
                                           ('pause', SetBool), ('reset', Trigger))}

    def ready(self):
        return self.clock and all(c.service_is_ready() for c in self.services.values())

    def now(self):
        n = len(self.clock)
        assert self.spin_until(lambda: len(self.clock) > n + 1)
        stamp = self.clock[-1].clock
        return stamp.sec + 1e-9 * stamp.nanosec

    def step_async(self, steps, client=None):
        from simulation_interfaces.srv import StepSimulation
        client = client or self.services['step_simulation']
        return client.call_async(StepSimulation.Request(steps=steps))

    def set_state(self, state):
        from simulation_interfaces.srv import SetSimulationState
        request = SetSimulationState.Request()
        request.state.state = state
        return self.call(self.services['set_simulation_state'], request)


@pytest.fixture(scope='module')
def client(sim):
    c = Client()
    assert c.spin_until(c.ready), sim.describe()
    yield c
    c.close()


def pause(client):
    from simulation_interfaces.msg import SimulationState
    client.set_state(SimulationState.STATE_PAUSED)


def advancing(client, seconds=1.0):
    """Return the simulated time that passed over ``seconds`` of wall time."""
    start = client.now()
    client.spin_for(seconds)
    return client.now() - start


@pytest.mark.parametrize('case', ['paused', 'stopped', 'reset all', 'reset'])
def test_stepping_ends_when_the_state_is_set_or_the_simulation_reset(client, case):
    from simulation_interfaces.msg import Result
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import ResetSimulation
    from std_srvs.srv import Trigger
    pause(client)
    future = client.step_async(LONG)
    client.spin_for(0.5)
    assert not future.done()
    if case == 'paused':
        client.set_state(SimulationState.STATE_PAUSED)
    elif case == 'stopped':
        client.set_state(SimulationState.STATE_STOPPED)
    elif case == 'reset all':
        client.call(client.services['reset_simulation'], ResetSimulation.Request(
            scope=ResetSimulation.Request.SCOPE_ALL))
    else:
        client.call(client.services['reset'], Trigger.Request())
        pause(client)
    assert client.spin_until(future.done, 5.0), 'the stepping went on'
    result = future.result().result
    assert result.result == Result.RESULT_OPERATION_FAILED
    assert 'set or reset' in result.error_message, result.error_message
    assert advancing(client) == 0.0           # paused (or stopped): time stands


def test_concurrent_step_requests_are_refused_not_multiplied(client):
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation
    pause(client)
    # deep client queues: every client of a service reads every answer (one response
    # topic) and keeps its own, so with rclpy's depth of 10 the other 19 answers can push
    # a client's own out (the server answers all 20; see joint_io.REQUEST_DEPTH)
    callers = [client.node.create_client(StepSimulation, f'{NS}/sim_node/step_simulation',
                                         qos_profile=REQUEST_QOS)
               for _ in range(20)]
    assert client.spin_until(lambda: all(c.service_is_ready() for c in callers)), \
        f'{sum(not c.service_is_ready() for c in callers)} of 20 callers never found the service'
    start = client.now()
    futures = [client.step_async(500, caller) for caller in callers]
    assert client.spin_until(lambda: all(f.done() for f in futures), 30.0), \
        f'{sum(not f.done() for f in futures)} of 20 step requests unanswered'
    results = [f.result().result for f in futures]
    refused = [r for r in results if 'already stepping' in r.error_message]
    assert sum(r.result == Result.RESULT_OK for r in results) + len(refused) == 20
    stepped = client.now() - start
    ok = sum(r.result == Result.RESULT_OK for r in results)
    # each answered request that ran took its 500 steps, no more: time never runs N x
    assert stepped == pytest.approx(0.5 * ok, abs=1e-9), (stepped, ok, len(refused))
    assert ok >= 1 and refused


def test_a_caller_that_disconnects_ends_the_stepping(client):
    pause(client)
    other = Client('stepping_caller')
    assert other.spin_until(other.ready)
    other.step_async(LONG)
    other.spin_for(0.5)
    other.close()                           # the caller dies mid-call
    client.spin_for(2.0)                    # the graph tells the sim it is gone
    assert advancing(client) == 0.0
