"""Both nodes take their model from the robot_description topic when not given one."""

from pathlib import Path

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import random_chain_urdf
from denoc_dynamics_interfaces.srv import ForwardDynamics
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy
from rclpy.qos import QoSProfile
from rclpy.qos import ReliabilityPolicy
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from sensor_msgs.msg import JointState
from std_msgs.msg import String

pytestmark = pytest.mark.ros

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture(scope='module')
def client():
    c = RosClient('robot_description_test')
    c.description = c.node.create_publisher(String, '/robot_description', LATCHED)
    # published before the nodes start: transient_local delivers it late joiners
    c.description.publish(String(data=Path(bundled_urdf('denoc_arm7')).read_text()))
    c.states = c.collect(JointState, '/joint_states', 10)
    c.fd = c.node.create_client(ForwardDynamics, '/dynamics_node/forward_dynamics')
    yield c
    c.close()


@pytest.fixture(scope='module')
def nodes(client):
    # no robot_description / urdf_path parameter; publish_rate low to keep it light
    # max_dof 7: the arm (7 joints) is accepted, a longer chain is not
    dyn = NodeProcess('dynamics_node', ros_args(diagnostics_period=0.0, max_dof=7))
    sim = NodeProcess('sim_node', ros_args(publish_rate=50.0, status_period=0.0, max_dof=7))
    yield dyn, sim
    dyn.stop()
    sim.stop()


def forward_dynamics(client, robot, q):
    request = ForwardDynamics.Request()
    request.state = JointState(name=robot.joint_names, position=list(q))
    return client.call(client.fd, request)


def test_model_from_topic_and_rebuilt_on_a_new_description(client, nodes):
    arm = load_urdf(bundled_urdf('denoc_arm7'))
    q = np.linspace(-0.4, 0.4, 7)
    # the service may come up before the latched description is delivered
    assert client.spin_until(lambda: forward_dynamics(client, arm, q).success), \
        nodes[0].describe()
    response = forward_dynamics(client, arm, q)
    assert np.allclose(response.accelerations.acceleration,
                       arm.forward_dynamics(q, np.zeros(7), np.zeros(7)))
    assert client.spin_until(lambda: len(client.states) > 0), nodes[1].describe()
    assert list(client.states[-1].name) == arm.joint_names
    assert 'the robot_description topic' in nodes[0].output()

    # a new description replaces the model in both nodes
    planar = load_urdf(bundled_urdf('planar3'))
    client.description.publish(String(data=Path(bundled_urdf('planar3')).read_text()))
    assert client.spin_until(
        lambda: list(client.states[-1].name) == planar.joint_names), nodes[1].describe()
    q3 = np.array([0.3, -0.2, 0.1])
    assert client.spin_until(lambda: forward_dynamics(client, planar, q3).success, 10.0)
    response = forward_dynamics(client, planar, q3)
    assert np.allclose(response.accelerations.acceleration,
                       planar.forward_dynamics(q3, np.zeros(3), np.zeros(3)))
    response = forward_dynamics(client, arm, q)  # joint4..7 are no longer in the chain
    assert response.success and 'joint4' in response.message
    assert list(response.accelerations.joint_names) == planar.joint_names

    # a broken description is refused; the model stays
    client.description.publish(String(data='<robot name="broken">'))
    client.spin_for(1.0)
    assert forward_dynamics(client, planar, q3).success
    assert all(p.alive() for p in nodes)
    assert 'ignoring the robot description' in nodes[0].output()

    # so is one with more joints than max_dof, in both nodes
    client.description.publish(String(data=random_chain_urdf(np.random.default_rng(1), 8)))
    for node in nodes:
        assert client.spin_until(lambda: 'more than max_dof = 7' in node.output(), 10.0), \
            node.describe()
    first = len(client.states)
    client.spin_for(0.5)
    assert len(client.states) > first + 5, nodes[1].describe()
    assert all(list(m.name) == planar.joint_names for m in client.states[first:])
    response = forward_dynamics(client, planar, q3)
    expected = planar.forward_dynamics(q3, np.zeros(3), np.zeros(3))
    assert response.success
    assert np.allclose(response.accelerations.acceleration, expected)
    assert all(p.alive() for p in nodes), '\n'.join(p.describe() for p in nodes)
