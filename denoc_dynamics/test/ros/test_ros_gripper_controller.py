"""
gripper_controller on the simulated gripper arm: GripperCommand and ParallelGripperCommand.

The sim node (denoc_arm7_gripper), the gripper controller and an action client in one
process, spun together: a goal to 0.03 m ends reached_goal with the finger within 1 mm;
closing on a finger stop (an object 4 cm wide) ends stalled at the stop with the force
limit; out-of-limit, NaN and negative-effort goals are rejected; preemption, cancel and
the parallel gripper action.
"""

import math

from action_msgs.msg import GoalStatus
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.gripper_controller import GripperController
from denoc_dynamics.ros.sim_node import SimNode
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from ros_helpers import DISCOVERY_TIMEOUT
from ros_helpers import spin_until
from ros_helpers import wait_all
from sensor_msgs.msg import JointState

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

ARM = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0]
FINGER = 'left_finger_joint'


class Rig:
    """The sim, the gripper controller and an action client, in one executor."""

    def __init__(self, context):
        from control_msgs.action import GripperCommand
        from control_msgs.action import ParallelGripperCommand
        from rclpy.action import ActionClient
        urdf = bundled_urdf('denoc_arm7_gripper')
        off = Parameter('diagnostic_updater.period', value=0.0)
        self.sim = SimNode(context=context, parameter_overrides=[
            Parameter('urdf_path', value=urdf), Parameter('initial_positions', value=ARM),
            Parameter('real_time_factor', value=2.0), off])
        self.gripper = GripperController(context=context, parameter_overrides=[
            Parameter('urdf_path', value=urdf), off])
        self.client_node = rclpy.create_node('gripper_test_client', context=context)
        self.GripperCommand = GripperCommand
        self.Parallel = ParallelGripperCommand
        self.client = ActionClient(self.client_node, GripperCommand,
                                   '/gripper_controller/gripper_cmd')
        self.parallel = ActionClient(self.client_node, ParallelGripperCommand,
                                     '/gripper_controller/parallel_gripper_cmd')
        self.executor = SingleThreadedExecutor(context=context)
        for node in (self.sim, self.gripper, self.client_node):
            self.executor.add_node(node)
        # a loaded machine may take long to match the actions: wait for each, then say
        # which one never came
        wait_all(self.executor,
                 ('gripper_cmd server', self.client.server_is_ready),
                 ('parallel_gripper_cmd server', self.parallel.server_is_ready),
                 ("the controller's first joint state", lambda: self.gripper.state is not None),
                 timeout=3 * DISCOVERY_TIMEOUT, period=0.01,
                 detail=lambda: 'sim joint states published to '
                                f'{self.sim.count_subscribers("/joint_states")} subscriptions')
        self.finger = self.sim.sim.robot.joint_names.index(FINGER)

    def spin_until(self, predicate, timeout=20.0):
        """Spin the rig until ``predicate()`` is true; return whether it became true."""
        return spin_until(self.executor, predicate, timeout, period=0.01)

    def send(self, position, max_effort=0.0, client=None, feedback=None):
        """Send a goal; return its handle (None if rejected)."""
        if client is None:
            goal = self.GripperCommand.Goal()
            goal.command.position, goal.command.max_effort = position, max_effort
            client = self.client
        else:
            goal = self.Parallel.Goal(command=position)
        future = client.send_goal_async(goal, feedback_callback=feedback)
        assert self.spin_until(future.done)
        handle = future.result()
        return handle if handle.accepted else None

    def result(self, handle, timeout=20.0):
        future = handle.get_result_async()
        assert self.spin_until(future.done, timeout), 'no result'
        return future.result()

    def close(self):
        self.executor.shutdown()
        for node in (self.client_node, self.gripper, self.sim):
            node.destroy_node()


@pytest.fixture
def rig(context, ros2_msgs):
    rig = Rig(context)
    yield rig
    rig.close()


def test_a_goal_to_3_cm_ends_reached_within_a_millimetre(rig):
    feedback = []
    handle = rig.send(0.03, 10.0, feedback=feedback.append)
    assert handle is not None
    answer = rig.result(handle)
    assert answer.status == GoalStatus.STATUS_SUCCEEDED
    result = answer.result
    assert result.reached_goal and not result.stalled
    assert abs(result.position - 0.03) < 1e-3
    assert abs(rig.sim.sim.q[rig.finger] - 0.03) < 1e-3
    assert abs(result.effort) < 10.0
    assert len(feedback) > 5 and not feedback[0].feedback.reached_goal
    positions = [f.feedback.position for f in feedback]
    assert positions[-1] > positions[0]
    # the finger is held there afterwards
    rig.spin_until(lambda: False, timeout=0.5)
    assert abs(rig.sim.sim.q[rig.finger] - 0.03) < 1e-3


def test_closing_on_a_finger_stop_ends_stalled_at_the_force_limit(rig):
    assert rig.result(rig.send(0.04)).result.reached_goal
    rig.sim.sim.model.lower[rig.finger] = 0.02     # a stop: an object 4 cm wide in the hand
    answer = rig.result(rig.send(0.0, 5.0))
    result = answer.result
    assert answer.status == GoalStatus.STATUS_SUCCEEDED    # allow_stalling: a grasp
    assert result.stalled and not result.reached_goal
    assert abs(result.position - 0.02) < 2e-3
    assert result.effort == pytest.approx(-5.0, rel=0.05)   # closing: a negative force


@pytest.mark.parametrize('position, effort', [
    (0.05, 0.0), (-0.01, 0.0), (math.nan, 0.0), (0.02, -1.0), (0.02, math.inf)])
def test_a_goal_outside_the_limits_nan_or_with_negative_effort_is_rejected(rig, position,
                                                                           effort):
    assert rig.send(position, effort) is None
    assert rig.gripper.goal_rejections.total == 1
    assert rig.gripper.target is None           # nothing moves


def test_a_new_goal_preempts_and_a_cancel_holds(rig):
    slow = JointState(name=[FINGER], position=[0.04], velocity=[0.01])
    first = rig.send(slow, client=rig.parallel)
    rig.spin_until(lambda: False, timeout=0.3)
    second = rig.send(0.01)
    assert rig.result(first).status == GoalStatus.STATUS_ABORTED
    assert rig.result(second).result.reached_goal
    handle = rig.send(slow, client=rig.parallel)
    rig.spin_until(lambda: False, timeout=0.5)
    cancel = handle.cancel_goal_async()
    assert rig.spin_until(cancel.done)
    answer = rig.result(handle)
    assert answer.status == GoalStatus.STATUS_CANCELED
    stopped = answer.result.state.position[0]
    assert 0.012 < stopped < 0.03
    rig.spin_until(lambda: False, timeout=0.5)
    assert abs(rig.sim.sim.q[rig.finger] - stopped) < 2e-3


def test_the_parallel_gripper_action_reports_the_joint_state(rig):
    answer = rig.result(rig.send(JointState(name=[FINGER], position=[0.02], effort=[8.0]),
                                 client=rig.parallel))
    result = answer.result
    assert answer.status == GoalStatus.STATUS_SUCCEEDED and result.reached_goal
    assert list(result.state.name) == [FINGER]
    assert abs(result.state.position[0] - 0.02) < 1e-3
    for bad in (JointState(name=['joint1'], position=[0.02]),
                JointState(name=[FINGER], position=[0.02, 0.03]),
                JointState(name=[FINGER], position=[0.02], velocity=[-0.1])):
        assert rig.send(bad, client=rig.parallel) is None
    assert rig.gripper.goal_rejections.total == 3
