"""dynamics_node's task space over real DDS: ~/get_task_space and the ~/task_space topic."""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics_interfaces.msg import TaskSpace
from denoc_dynamics_interfaces.srv import GetTaskSpace
import numpy as np
import pytest
from ros_helpers import matched
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from ros_helpers import stamp
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.ros

NODE = '/dynamics_node'
FRAME = 'flange'
Q = np.array([0.3, 0.7, -0.4, -1.3, 0.5, 1.1, -0.2])      # a state of the bundled arm
QD = np.array([0.5, -0.3, 0.8, 0.2, -0.6, 0.4, 1.0])


@pytest.fixture(scope='module')
def robot():
    return load_urdf(bundled_urdf())


@pytest.fixture(scope='module')
def node():
    proc = NodeProcess('dynamics_node', ros_args(urdf_path=bundled_urdf(), inertia_every_n=0,
                                                 task_space_frame=FRAME))
    yield proc
    proc.stop()


@pytest.fixture(scope='module')
def client(node):
    c = RosClient('task_space_test')
    c.states = c.node.create_publisher(JointState, 'joint_states', 10)
    c.topic = c.collect(TaskSpace, NODE + '/task_space')
    c.service = c.node.create_client(GetTaskSpace, NODE + '/get_task_space')
    c.wait_all(matched(c.states), (f'service {c.service.srv_name}', c.service.service_is_ready),
               detail=node.describe)
    yield c
    c.close()


def request(robot, frame=FRAME, q=Q, qd=QD, **fields):
    msg = GetTaskSpace.Request(frame=frame, **fields)
    msg.state.name = robot.joint_names
    msg.state.position, msg.state.velocity = q.tolist(), qd.tolist()
    return msg


def check_equals_api(task_space, robot, q, qd, frame, reference='local_world_aligned',
                     rows=tuple(range(6))):
    """Check that the message carries the API's numbers (float64 over DDS: to the bit)."""
    T = robot.frame_placement(q, frame)
    p = task_space.pose.position
    np.testing.assert_array_equal([p.x, p.y, p.z], T[:3, 3])
    o = task_space.pose.orientation
    R = np.array([[1 - 2 * (o.y ** 2 + o.z ** 2), 2 * (o.x * o.y - o.z * o.w),
                   2 * (o.x * o.z + o.y * o.w)],
                  [2 * (o.x * o.y + o.z * o.w), 1 - 2 * (o.x ** 2 + o.z ** 2),
                   2 * (o.y * o.z - o.x * o.w)],
                  [2 * (o.x * o.z - o.y * o.w), 2 * (o.y * o.z + o.x * o.w),
                   1 - 2 * (o.x ** 2 + o.y ** 2)]])
    np.testing.assert_allclose(R, T[:3, :3], rtol=0, atol=1e-15)
    assert task_space.frame == frame and task_space.reference == reference
    assert task_space.header.frame_id == robot.frames[0]
    assert list(task_space.joint_names) == robot.joint_names
    np.testing.assert_array_equal(np.reshape(task_space.jacobian, (6, robot.n)),
                                  robot.frame_jacobian(q, frame, reference))
    np.testing.assert_array_equal(task_space.velocity,
                                  robot.frame_velocity(q, qd, frame, reference))
    np.testing.assert_array_equal(task_space.acceleration_bias,
                                  robot.frame_acceleration_bias(q, qd, frame, reference))
    assert list(task_space.rows) == list(rows)
    np.testing.assert_array_equal(np.reshape(task_space.task_space_inertia,
                                             (len(rows), len(rows))),
                                  robot.task_space_inertia(q, frame, rows))


def test_get_task_space_equals_the_api(client, robot):
    response = client.call(client.service, request(robot))
    assert response.success, response.message
    check_equals_api(response.task_space, robot, Q, QD, FRAME)
    for reference in ('local', 'world'):
        response = client.call(
            client.service, request(robot, 'link6', reference=reference, rows=[0, 1, 2]))
        assert response.success, response.message
        check_equals_api(response.task_space, robot, Q, QD, 'link6', reference, (0, 1, 2))


def test_the_topic_follows_the_joint_states(client, robot):
    """Each accepted joint state gives one TaskSpace of task_space_frame, stamped like it."""
    msg = JointState(name=robot.joint_names, position=Q.tolist(), velocity=QD.tolist())
    for k in range(40):
        msg.header.stamp = stamp(500 + k)
        client.states.publish(msg)
        if client.spin_until(lambda: any(m.header.stamp == msg.header.stamp
                                         for m in client.topic), 0.5):
            break
    found = [m for m in client.topic if m.header.stamp == msg.header.stamp]
    assert found, 'no ~/task_space message'
    check_equals_api(found[0], robot, Q, QD, FRAME)
    # an empty request state: the latest joint state
    response = client.call(client.service, GetTaskSpace.Request(frame=FRAME))
    assert response.success and 'latest' in response.message, response.message
    assert response.task_space.header.stamp == msg.header.stamp
    check_equals_api(response.task_space, robot, Q, QD, FRAME)


@pytest.mark.parametrize('fields, match', [
    ({'frame': 'nowhere'}, "unknown frame 'nowhere'"),
    ({'frame': ''}, 'names no frame'),
    ({'frame': 'base_link'}, "frame 'base_link' is fixed to the base"),
    ({'reference': 'global'}, 'reference must be one of'),
    ({'rows': [0, 0]}, 'rows must be'),
    ({'rows': [7]}, 'rows must be'),
    ({'damping': -1.0}, 'damping must be'),
    ({'q': np.zeros(7)}, "frame 'flange': J I\\^-1 J\\^T is singular"),
    ({'q': np.full(7, np.nan)}, 'position contains NaN'),
])
def test_bad_requests_are_refused(client, robot, node, fields, match):
    """A bad request gets success false and the reason; the node keeps answering."""
    import re
    response = client.call(client.service, request(robot, **fields))
    assert not response.success
    assert re.search(match, response.message), response.message
    assert client.call(client.service, request(robot)).success, node.describe()


def test_a_singular_state_is_damped_on_request(client, robot):
    q = np.zeros(robot.n)
    response = client.call(client.service, request(robot, q=q, damping=1e-3))
    assert response.success, response.message
    np.testing.assert_array_equal(np.reshape(response.task_space.task_space_inertia, (6, 6)),
                                  robot.task_space_inertia(q, FRAME, damping=1e-3))
