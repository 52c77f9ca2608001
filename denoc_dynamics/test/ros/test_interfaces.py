"""The generated denoc_dynamics_interfaces types and the installed ROS 2 environment."""

import os
import subprocess
import sys
import textwrap
import time

from ament_index_python.packages import get_package_prefix
from ament_index_python.packages import get_package_share_directory
from denoc_dynamics_interfaces.msg import InertiaMatrix
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.srv import ForwardDynamics
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
from denoc_dynamics_interfaces.srv import InverseDynamics
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.serialization import deserialize_message
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState


def test_ament_index_finds_both_packages_in_install_space():
    for pkg in ('denoc_dynamics', 'denoc_dynamics_interfaces'):
        share = get_package_share_directory(pkg)
        assert os.path.isfile(os.path.join(share, 'package.xml'))
        assert os.sep + 'install' + os.sep in get_package_prefix(pkg) + os.sep
    for pkg in ('sensor_msgs', 'std_msgs', 'builtin_interfaces'):
        get_package_share_directory(pkg)  # raises if the venv prefix is missing


def test_message_fields_and_round_trip():
    msg = InertiaMatrix()
    msg.header.frame_id = 'base'
    msg.header.stamp.sec = 7
    msg.joint_names = ['j1', 'j2']
    msg.data = [2.0, 0.5, 0.5, 1.0]
    back = deserialize_message(serialize_message(msg), InertiaMatrix)
    assert back == msg
    assert list(back.data) == [2.0, 0.5, 0.5, 1.0]
    assert back.header.stamp.sec == 7

    acc = JointAccelerations(joint_names=['a'], acceleration=[-1.5])
    assert deserialize_message(serialize_message(acc), JointAccelerations) == acc


def test_service_fields():
    req = GetInertiaMatrix.Request()
    assert isinstance(req.state, JointState)
    assert req.include_decomposition is False and req.include_inverse is False
    res = GetInertiaMatrix.Response()
    for field in ('success', 'message', 'inertia', 'u', 'd', 'inverse'):
        assert hasattr(res, field)
    assert isinstance(res.inertia, InertiaMatrix)

    fd = ForwardDynamics.Response()
    assert isinstance(fd.accelerations, JointAccelerations)
    assert isinstance(ForwardDynamics.Request().state, JointState)

    idr = InverseDynamics.Request(acceleration=[1.0, 2.0])
    assert list(idr.acceleration) == [1.0, 2.0]
    assert hasattr(InverseDynamics.Response(), 'effort')


SERVER = textwrap.dedent("""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from denoc_dynamics_interfaces.msg import JointAccelerations
    from denoc_dynamics_interfaces.srv import GetInertiaMatrix

    def handle(request, response):
        n = len(request.state.name)
        response.inertia.joint_names = list(request.state.name)
        response.inertia.data = [float(i == j) for i in range(n) for j in range(n)]
        response.success = True
        response.message = 'identity of size %d' % n
        return response

    rclpy.init()
    node = rclpy.create_node('denoc_test_server')
    node.create_service(GetInertiaMatrix, 'denoc_test/get_inertia', handle)
    pub = node.create_publisher(JointAccelerations, 'denoc_test/acc', 10)
    node.create_timer(0.1, lambda: pub.publish(
        JointAccelerations(joint_names=['j'], acceleration=[3.0])))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
""")


@pytest.mark.ros
def test_topic_and_service_between_processes():
    """A subprocess serves GetInertiaMatrix and publishes; this process uses both."""
    server = subprocess.Popen([sys.executable, '-c', SERVER])
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node('denoc_test_client', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        received = []
        node.create_subscription(
            JointAccelerations, 'denoc_test/acc', received.append, 10)
        client = node.create_client(GetInertiaMatrix, 'denoc_test/get_inertia')

        deadline = time.monotonic() + 30.0
        while not client.service_is_ready() or not received:
            assert server.poll() is None, 'server process died'
            assert time.monotonic() < deadline, \
                f'no discovery: service ready={client.service_is_ready()}, ' \
                f'messages={len(received)}'
            executor.spin_once(timeout_sec=0.1)
        assert list(received[0].acceleration) == [3.0]

        request = GetInertiaMatrix.Request()
        request.state.name = ['a', 'b']
        future = client.call_async(request)
        executor.spin_until_future_complete(future, timeout_sec=10.0)
        response = future.result()
        assert response is not None and response.success
        assert list(response.inertia.joint_names) == ['a', 'b']
        assert list(response.inertia.data) == [1.0, 0.0, 0.0, 1.0]
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
