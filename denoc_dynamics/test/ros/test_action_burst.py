"""
A burst of 40 FollowJointTrajectory clients, each its own node, sending at once.

The controller answers every goal request (its action services queue REQUEST_DEPTH
requests), and every client gets its answer when its own response queue is deep
enough: every client of an action reads every answer on the one response topic and
keeps its own, so a client with rclpy's default depth of 10 can lose its answer among
the other 39 (docs/bad-input.md, "Requests").  denoc_dynamics' own clients
(send_trajectory) use the deep queue.
"""

import time

from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.joint_io import REQUEST_QOS
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

CLIENTS = 40
NAMES = [f'joint{k}' for k in range(1, 8)]


def test_forty_clients_at_once_all_get_an_answer(ros2_msgs):
    from control_msgs.action import FollowJointTrajectory
    from moveit_client import MoveItLikeClient
    from moveit_client import quintic
    import rclpy
    from rclpy.action import ActionClient
    sim = NodeProcess('sim_node', ros_args(urdf_path=bundled_urdf(), status_period=0.0)
                      + ['-r', '__ns:=/burst'])
    controller = NodeProcess('trajectory_controller', ros_args(urdf_path=bundled_urdf())
                             + ['-r', '__ns:=/burst'])
    ros = RosClient('burst_probe')
    try:
        probe = MoveItLikeClient(ros, namespace='burst')
        probe.wait_ready(NAMES)
        here = probe.positions(NAMES)
        goal = FollowJointTrajectory.Goal(trajectory=quintic(NAMES, here, here + 0.05, 2.0, 4))
        clients = []
        for k in range(CLIENTS):
            node = rclpy.create_node(f'burst_client_{k}', context=ros.context)
            ros.executor.add_node(node)
            clients.append(ActionClient(
                node, FollowJointTrajectory, probe.action_name,
                goal_service_qos_profile=REQUEST_QOS, result_service_qos_profile=REQUEST_QOS,
                cancel_service_qos_profile=REQUEST_QOS))
        assert ros.spin_until(lambda: all(c.server_is_ready() for c in clients))
        futures = [c.send_goal_async(goal) for c in clients]
        start = time.monotonic()
        ros.spin_until(lambda: all(f.done() for f in futures), 30.0)
        answered = [f.result() for f in futures if f.done()]
        assert len(answered) == CLIENTS, (
            f'{CLIENTS - len(answered)} of {CLIENTS} goal requests unanswered after '
            f'{time.monotonic() - start:.1f} s' + controller.describe())
        assert all(handle.accepted for handle in answered)   # each preempts the one before
        # and each accepted goal ends: the last one runs, the others were preempted
        results = [h.get_result_async() for h in answered]
        assert ros.spin_until(lambda: all(r.done() for r in results), 30.0)
        assert sum(r.result().status == 4 for r in results) == 1      # SUCCEEDED
        assert sum(r.result().status == 6 for r in results) == CLIENTS - 1   # ABORTED
    finally:
        ros.close()
        controller.stop()
        sim.stop()
