"""
sim_node's simulation_interfaces entity services over real DDS: every link an entity.

GetEntities, GetEntitiesStates, GetEntityState and GetEntityInfo on the bundled arm,
paused and stepped: the state of ``flange`` (a link merged into link7 by a fixed
joint) equals the API's placement and velocity at the published joint state, and its
acceleration the rate of that velocity over a step.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from sensor_msgs.msg import JointState
from simulation_interfaces.msg import Bounds
from simulation_interfaces.msg import EntityCategory
from simulation_interfaces.msg import Result
from simulation_interfaces.msg import SimulatorFeatures
from simulation_interfaces.srv import GetEntities
from simulation_interfaces.srv import GetEntitiesStates
from simulation_interfaces.srv import GetEntityInfo
from simulation_interfaces.srv import GetEntityState
from simulation_interfaces.srv import GetSimulatorFeatures
from simulation_interfaces.srv import StepSimulation

pytestmark = pytest.mark.ros

Q0 = [0.2, 0.7, -0.3, -1.4, 0.4, 1.2, -0.5]
H = 1e-3   # physics_rate 1000 Hz


@pytest.fixture(scope='module')
def robot():
    return load_urdf(bundled_urdf())


@pytest.fixture(scope='module')
def sim():
    proc = NodeProcess('sim_node', ros_args(
        urdf_path=bundled_urdf(), start_mode='paused', initial_positions=Q0,
        publish_clock=True, status_period=0.0, publish_tf=False))
    yield proc
    proc.stop()


@pytest.fixture(scope='module')
def client(sim):
    c = RosClient('sim_entities_test')
    c.states = c.collect(JointState, 'joint_states', qos_profile_sensor_data)
    c.clients = {name: c.node.create_client(srv_type, f'/sim_node/{name}')
                 for name, srv_type in (('get_entities', GetEntities),
                                        ('get_entities_states', GetEntitiesStates),
                                        ('get_entity_state', GetEntityState),
                                        ('get_entity_info', GetEntityInfo),
                                        ('get_simulator_features', GetSimulatorFeatures),
                                        ('step_simulation', StepSimulation))}
    c.wait_all(('joint_states', lambda: len(c.states) > 0),
               *((f'service {x.srv_name}', x.service_is_ready) for x in c.clients.values()),
               detail=sim.describe)
    yield c
    c.close()


def call(client, name, **fields):
    service = client.clients[name]
    return client.call(service, service.srv_type.Request(**fields))


def ok(result):
    assert result.result == Result.RESULT_OK, (result.result, result.error_message)


def step_and_read(client):
    """Step once; return the joint state published after the step, and the flange's state."""
    count = len(client.states)
    ok(call(client, 'step_simulation', steps=1).result)
    assert client.spin_until(lambda: len(client.states) > count)
    response = call(client, 'get_entity_state', entity='flange')
    ok(response.result)
    return client.states[-1], response.state


def test_features_list_the_entity_services(client):
    features = call(client, 'get_simulator_features').features.features
    for feature in (SimulatorFeatures.ENTITY_STATE_GETTING,
                    SimulatorFeatures.ENTITY_INFO_GETTING, SimulatorFeatures.ENTITY_CATEGORIES):
        assert feature in features


def test_every_link_is_an_entity(client, robot):
    response = call(client, 'get_entities')
    ok(response.result)
    assert list(response.entities) == robot.frames
    request = GetEntities.Request()
    request.filters.filter = '^link[1-3]$'
    response = client.call(client.clients['get_entities'], request)
    assert list(response.entities) == ['link1', 'link2', 'link3']
    request.filters.filter = ''
    request.filters.categories = [EntityCategory(category=EntityCategory.CATEGORY_HUMAN)]
    response = client.call(client.clients['get_entities'], request)
    ok(response.result)
    assert list(response.entities) == []
    info = call(client, 'get_entity_info', entity='flange')
    ok(info.result)
    assert info.info.category.category == EntityCategory.CATEGORY_ROBOT
    assert 'joint7' in info.info.description


def test_entity_state_of_the_flange_equals_the_api(client, robot):
    # away from rest first: the friction law tanh(qd / v_eps) is steep near qd = 0
    ok(call(client, 'step_simulation', steps=200).result)
    first, s1 = step_and_read(client)
    second, s2 = step_and_read(client)
    for msg, state in ((first, s1), (second, s2)):
        q, qd = np.array(msg.position), np.array(msg.velocity)
        T = robot.frame_placement(q, 'flange')
        p = state.pose.position
        np.testing.assert_array_equal([p.x, p.y, p.z], T[:3, 3])
        assert state.header.frame_id == 'base_link'
        assert state.header.stamp == msg.header.stamp
        twist = [state.twist.linear.x, state.twist.linear.y, state.twist.linear.z,
                 state.twist.angular.x, state.twist.angular.y, state.twist.angular.z]
        np.testing.assert_array_equal(twist, robot.frame_velocity(q, qd, 'flange'))
    assert np.linalg.norm(twist) > 1e-3, 'the arm moves under gravity'

    def acceleration(state):
        a = state.acceleration
        return np.array([a.linear.x, a.linear.y, a.linear.z, a.angular.x, a.angular.y,
                         a.angular.z])

    def velocity(state):
        t = state.twist
        return np.array([t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y,
                         t.angular.z])

    # the acceleration is the rate of the velocity over the step (RK4, h = 1 ms), to 1%
    rate = (velocity(s2) - velocity(s1)) / H
    mean = 0.5 * (acceleration(s1) + acceleration(s2))
    np.testing.assert_allclose(mean, rate, rtol=0, atol=1e-2 * np.abs(rate).max())


def test_entities_states_and_bad_requests(client, robot):
    response = call(client, 'get_entities_states')
    ok(response.result)
    assert list(response.entities) == robot.frames and len(response.states) == len(robot.frames)
    one = call(client, 'get_entity_state', entity=robot.frames[3])
    assert response.states[3].pose == one.state.pose
    missing = call(client, 'get_entity_state', entity='gripper')
    assert missing.result.result == Result.RESULT_NOT_FOUND
    assert 'flange' in missing.result.error_message
    assert call(client, 'get_entity_info', entity='').result.result == Result.RESULT_NOT_FOUND
    request = GetEntities.Request()
    request.filters.filter = '(unclosed'
    response = client.call(client.clients['get_entities'], request)
    assert response.result.result == Result.RESULT_OPERATION_FAILED
    request = GetEntities.Request()
    request.filters.tags.tags = ['arm']
    assert client.call(client.clients['get_entities'], request).result.result == \
        Result.RESULT_FEATURE_UNSUPPORTED
    request = GetEntities.Request()
    request.filters.bounds.type = Bounds.TYPE_SPHERE
    assert client.call(client.clients['get_entities'], request).result.result == \
        Result.RESULT_FEATURE_UNSUPPORTED
