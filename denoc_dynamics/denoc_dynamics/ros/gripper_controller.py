"""
gripper_controller: the gripper actions MoveIt sends, on a simulated (or real) finger drive.

A parallel gripper whose fingers move as one coordinate (the bundled
``denoc_arm7_gripper``: ``left_finger_joint``, the right finger its mimic), driven as
ros2_control's gripper_action_controller and parallel_gripper_action_controller drive
one: by its position, with a force limit.

Action servers (where control_msgs is installed)
  ``~/gripper_cmd`` (control_msgs/action/GripperCommand, the name and type MoveIt's
  simple controller manager uses): ``command.position`` is the position of the finger
  joint [m] (each finger's travel from closed on the bundled gripper: the gap is
  twice it), ``command.max_effort`` [N] the force limit (0: the ``max_effort``
  parameter).
  ``~/parallel_gripper_cmd`` (control_msgs/action/ParallelGripperCommand):
  ``command.name`` the finger joint (or empty), one ``position``, optional
  ``velocity`` (the largest finger speed) and ``effort`` (the force limit).

  A goal outside the finger's limits, with a NaN or Inf, a negative effort or velocity,
  or another joint's name is rejected.  A new goal preempts the running one (aborted,
  with the state reached); a cancel holds the fingers where they are.  Feedback with
  every joint state: position, effort, stalled, reached_goal; the effort is the force
  the drive exerts (the finger drive's ``F`` below), not the joint state's effort: a
  link-side torque sensor (sim_node's tau_J) reads the drive's force net of the
  finger's friction and stops, about zero for a finger resting on a stop.  The goal ends
  ``reached_goal`` (succeeded) once the finger rests within ``goal_tolerance`` of the
  goal, or ``stalled`` once it has rested short of it for ``stall_time`` with the
  drive at its force limit (an object between the fingers, a finger stop):
  succeeded if ``allow_stalling`` (a grasp), else aborted.  After a goal the drive
  keeps its last target and force limit (a grasp keeps squeezing).

The finger drive
  At every joint state (``joint_states``, by name) the reference r moves toward the
  goal at the largest finger speed (the goal's, else 0.9 times the URDF velocity
  limit), at most 0.1 s at that speed ahead of the finger; the
  force ``F = clamp(kp (r - q) + I - kd qd, -F_max, F_max)``, with the integral
  ``I = clamp(I + ki (r - q) dt, -F_max, F_max)`` (while r is at the goal or the
  finger rests, and not while F is at its limit toward the error: no wind-up), goes
  to the arm as an effort
  command of the finger joint, a sensor_msgs/JointState on ``robot_joint_commands``
  (sim_node's JointState commands, topic_based_ros2_control's layout).  ``F_max`` is
  the goal's ``max_effort`` (0: the ``max_effort`` parameter, which defaults to the
  URDF effort limit), so the force limit is honoured by the drive itself; the integral
  takes a finger held short of its goal to that limit, as a gripper's grasp does.

/diagnostics: ``gripper_controller: gripper`` (position, goal, force, state) and
``gripper_controller: inputs`` (rejected goals and joint states).
"""

import math
import sys

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import QoSProfile
from rclpy.task import Future
from sensor_msgs.msg import JointState

from .diagnostics import Diagnostics
from .diagnostics import OK
from .diagnostics import STALE
from .joint_io import Rejected
from .joint_io import Rejections
from .launch_support import finger_joint
from .node_main import run_node
from .parameters import GRIPPER_CONTROLLER
from .robot_model import RobotModelSource

#: How a goal ended, and the result flags of each ending.
REACHED, STALLED = 'reached', 'stalled'

#: The drive's reference leads the finger by at most this long at the finger speed [s].
LEAD_TIME = 0.1


def gripper_actions():
    """Return (GripperCommand, ParallelGripperCommand) of control_msgs; ImportError."""
    from control_msgs.action import GripperCommand
    from control_msgs.action import ParallelGripperCommand
    return GripperCommand, ParallelGripperCommand


class GripperGoal:
    """The target of the finger drive: position, force limit, speed, and its goal."""

    def __init__(self, position, max_effort, max_velocity, handle=None, kind=None):
        """``handle``: the action goal that asked for it (None: a hold)."""
        self.position = float(position)
        self.max_effort = float(max_effort)
        self.max_velocity = float(max_velocity)
        self.handle = handle
        self.kind = kind            # 'gripper' or 'parallel': the result's type
        self.future = Future()
        self.rest_since = None      # time [s] since which the finger rests short of it
        self.outcome = None

    @property
    def active(self) -> bool:
        """Return True while its action goal waits for a result."""
        return self.handle is not None and not self.future.done()


class GripperController(Node):
    """GripperCommand and ParallelGripperCommand on a force-limited finger drive."""

    def __init__(self, node_name='gripper_controller', **kwargs):
        """Declare the parameters, load the model and start the action servers."""
        super().__init__(node_name, **kwargs)
        self.params = p = GRIPPER_CONTROLLER.declare(self)
        self.joint_param, self.max_effort_param = p.joint, p.max_effort
        self.kp, self.ki, self.kd = p.kp, p.ki, p.kd
        self.goal_tolerance, self.stopped_velocity = p.goal_tolerance, p.stopped_velocity
        self.stall_time, self.allow_stalling = p.stall_time, p.allow_stalling
        commands_topic = p.joint_commands_topic
        self.goal_rejections = Rejections(self.get_logger(), 'gripper goal')
        self.state_rejections = Rejections(self.get_logger(), 'joint state')
        self.robot = None
        self.joint = None
        self.limits = None          # (lower, upper, effort, velocity) of the finger
        self.state = None           # (t, q, qd, effort) of the latest joint state
        self.reference = None       # where the drive's reference is [m]
        self.target = None          # the GripperGoal being driven to
        self.force = 0.0            # the force sent last [N]
        self.integral = 0.0         # the drive's integral term [N]
        self.command_pub = self.create_publisher(JointState, commands_topic,
                                                 QoSProfile(depth=1))
        self._command = JointState()
        self.model = RobotModelSource(self, self._set_model)
        self.state_sub = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, qos_profile_sensor_data)
        self.actions = None
        self._setup_actions()
        self.diagnostics = Diagnostics(
            self, lambda: self.robot.chain.name if self.robot is not None else '')
        self.diagnostics.add('gripper', self._diagnose_gripper)
        self.diagnostics.add('inputs', self._diagnose_inputs)

    def _setup_actions(self):
        try:
            actions = gripper_actions()
            from rclpy.action import ActionServer
            from rclpy.action import CancelResponse
            from rclpy.action import GoalResponse
        except ImportError as exc:
            self.get_logger().warning(
                f'control_msgs is not installed ({exc}): no gripper actions')
            return
        self.actions = actions
        self._goal_response = GoalResponse
        for kind, action, name in (('gripper', actions[0], '~/gripper_cmd'),
                                   ('parallel', actions[1], '~/parallel_gripper_cmd')):
            ActionServer(self, action, name, self._executor_for(kind),
                         goal_callback=self._goal_checker(kind),
                         handle_accepted_callback=self._accepted,
                         cancel_callback=lambda handle: CancelResponse.ACCEPT)

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        joint = finger_joint(robot, self.joint_param)
        i = robot.joint_names.index(joint)
        joints = robot.joints
        effort = float(joints.effort[i])
        self.limits = (float(joints.lower[i]), float(joints.upper[i]),
                       effort if math.isfinite(effort) else math.inf,
                       float(joints.velocity[i]))
        self.robot, self.joint = robot, joint
        self._command = JointState(name=[joint])
        self.reference = None
        self.target = None
        self.get_logger().info(
            f'gripper on {joint}: [{self.limits[0]:g}, {self.limits[1]:g}] m, force limit '
            f'{self.default_max_effort():g} N')

    def default_max_effort(self) -> float:
        """Return the force limit of a goal with max_effort 0 [N]."""
        limit = self.limits[2]
        if self.max_effort_param > 0.0:
            return min(self.max_effort_param, limit)
        return limit if math.isfinite(limit) else 100.0

    # --- goals -----------------------------------------------------------------------
    def read_goal(self, kind, request) -> GripperGoal:
        """Return the GripperGoal of an action request, or raise Rejected saying why."""
        if self.robot is None:
            raise Rejected('no model', 'no robot model yet')
        lower, upper, limit, velocity = self.limits
        # a little below the drive's own velocity limit, which would hold the finger back
        speed = 0.9 * velocity if math.isfinite(velocity) and velocity > 0.0 else 0.1
        if kind == 'gripper':
            position, effort = request.command.position, request.command.max_effort
        else:
            command = request.command
            if list(command.name) not in ([], [self.joint]):
                raise Rejected('unknown joint', f'the gripper joint is {self.joint!r}, the '
                                                f'goal names {list(command.name)}')
            if len(command.position) != 1 or len(command.effort) > 1 \
                    or len(command.velocity) > 1:
                raise Rejected('length', 'a parallel gripper goal has one position and at '
                                         'most one velocity and one effort')
            position = command.position[0]
            effort = command.effort[0] if len(command.effort) else 0.0
            if len(command.velocity):
                if not (math.isfinite(command.velocity[0]) and command.velocity[0] >= 0.0):
                    raise Rejected('velocity', f'velocity {command.velocity[0]!r}: a finite '
                                               'number >= 0')
                if command.velocity[0] > 0.0:
                    speed = min(speed, command.velocity[0])
        if not (math.isfinite(position) and math.isfinite(effort)):
            raise Rejected('non-finite', 'the goal has a NaN or Inf')
        if effort < 0.0:
            raise Rejected('effort', f'max_effort {effort:g} < 0')
        if not lower <= position <= upper:
            raise Rejected('out of limits', f'position {position:g} is outside the finger '
                                            f'limits [{lower:g}, {upper:g}]')
        max_effort = self.default_max_effort() if effort == 0.0 else min(effort, limit)
        return GripperGoal(position, max_effort, speed)

    def _goal_checker(self, kind):
        def check(request):
            try:
                self.read_goal(kind, request)
            except Rejected as exc:
                self.goal_rejections.add(exc)
                return self._goal_response.REJECT
            return self._goal_response.ACCEPT
        return check

    def _accepted(self, handle):
        """Preempt the running goal; execute the new one."""
        if self.target is not None and self.target.active:
            self._finish(self.target, 'abort', 'preempted by a new goal')
        handle.execute()

    def _executor_for(self, kind):
        async def execute(handle):
            goal = self.read_goal(kind, handle.request)   # checked on acceptance
            goal.handle, goal.kind = handle, kind
            self.target = goal
            if self.reference is None and self.state is not None:
                self.reference = self.state[1]
            return await goal.future
        return execute

    def command(self, position, max_effort=0.0, max_velocity=0.0):
        """Drive the finger to ``position`` without an action (the demo; a hold)."""
        lower, upper, limit, velocity = self.limits
        self.target = GripperGoal(min(max(position, lower), upper),
                                  self.default_max_effort() if max_effort <= 0.0
                                  else min(max_effort, limit),
                                  max_velocity if max_velocity > 0.0 else 0.9 * velocity)

    # --- the drive -------------------------------------------------------------------
    def _on_joint_state(self, msg):
        if self.robot is None:
            self.state_rejections.add(Rejected('no model', 'no robot model yet'))
            return
        try:
            i = list(msg.name).index(self.joint)
        except ValueError:
            return   # another publisher's joints: not this gripper's
        try:
            q, qd = msg.position[i], msg.velocity[i]
            effort = msg.effort[i] if len(msg.effort) > i else math.nan
        except IndexError:
            self.state_rejections.add(Rejected('length', 'fewer positions or velocities '
                                                         'than names'))
            return
        if not (math.isfinite(q) and math.isfinite(qd)):
            self.state_rejections.add(Rejected('non-finite', 'NaN or Inf in the state'))
            return
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        previous = self.state
        self.state = (t, q, qd, effort)
        goal = self.target
        if goal is None:
            return
        if self.reference is None:
            self.reference = q
        dt = t - previous[0] if previous is not None else 0.0
        if goal.handle is not None and goal.handle.is_cancel_requested and goal.active:
            self.target = GripperGoal(q, goal.max_effort, goal.max_velocity)
            self.reference = q
            self._finish(goal, 'canceled', 'canceled')
            goal = self.target
        dt = max(dt, 0.0)
        step = goal.max_velocity * dt
        reference = self.reference + min(max(goal.position - self.reference, -step), step)
        # never further ahead of the finger than LEAD_TIME at its speed: an arm that
        # runs slower than the stamps' clock (a loaded sim) is not overrun
        lead = goal.max_velocity * LEAD_TIME
        self.reference = reference = min(max(reference, q - lead), q + lead)
        error = reference - q
        limit = goal.max_effort
        force = self.kp * error + self.integral - self.kd * qd
        # the integral acts while the finger holds (the reference at the goal) or is
        # held back (at rest short of it: a grasp), and not further while the force is
        # at its limit toward the error (no wind-up)
        holding = reference == goal.position or abs(qd) < self.stopped_velocity
        if holding and not (abs(force) >= limit and force * error > 0.0):
            self.integral += self.ki * error * dt
        self.integral = min(max(self.integral, -limit), limit)
        self.force = min(max(self.kp * error + self.integral - self.kd * qd, -limit), limit)
        self._command.header.stamp = msg.header.stamp
        self._command.effort = [self.force]
        self.command_pub.publish(self._command)
        if goal.active:
            self._supervise(goal, t, q, qd, effort)

    def _supervise(self, goal, t, q, qd, effort):
        """Send feedback; end the goal once reached or stalled."""
        resting = abs(qd) < self.stopped_velocity
        reached = resting and abs(goal.position - q) <= self.goal_tolerance
        saturated = abs(self.force) >= goal.max_effort * (1.0 - 1e-9)
        if resting and saturated and not reached:
            goal.rest_since = t if goal.rest_since is None else goal.rest_since
        else:
            goal.rest_since = None
        stalled = goal.rest_since is not None and t - goal.rest_since >= self.stall_time
        goal.handle.publish_feedback(self._message(goal, 'Feedback', stalled, reached))
        if reached:
            self._finish(goal, 'succeed', REACHED)
        elif stalled:
            self._finish(goal, 'succeed' if self.allow_stalling else 'abort', STALLED)

    def _message(self, goal, what, stalled, reached):
        """Return the Feedback or Result of ``goal`` with the state now."""
        action = self.actions[0 if goal.kind == 'gripper' else 1]
        message = getattr(action, what)()
        _, q, qd, _ = self.state if self.state is not None else (0, math.nan, 0, 0)
        effort = self.force   # the force exerted: the drive's (see the module docstring)
        if goal.kind == 'gripper':
            message.position, message.effort = float(q), float(effort)
        else:
            message.state = JointState(name=[self.joint], position=[float(q)],
                                       velocity=[float(qd)], effort=[float(effort)])
            message.state.header.stamp = self.get_clock().now().to_msg()
        if hasattr(message, 'stalled'):   # the parallel action's feedback has the state only
            message.stalled, message.reached_goal = bool(stalled), bool(reached)
        return message

    def _finish(self, goal, state, outcome):
        if not goal.active:
            return
        goal.outcome = outcome
        getattr(goal.handle, state)()
        goal.future.set_result(self._message(goal, 'Result', outcome == STALLED,
                                             outcome == REACHED))
        text = (f'gripper goal {goal.position:g} m ({goal.max_effort:g} N): {outcome}'
                + (f', at {self.state[1]:.4f} m' if self.state is not None else ''))
        if state == 'succeed':
            self.get_logger().info(text)
        else:
            self.get_logger().warning(text)

    # --- diagnostics -----------------------------------------------------------------
    def _diagnose_gripper(self, report):
        """/diagnostics ``gripper_controller: gripper``."""
        if self.robot is None:
            report.summary(STALE, 'no robot model yet')
            return
        report.add('joint', self.joint)
        report.add('actions', 'gripper_cmd, parallel_gripper_cmd' if self.actions
                   else 'none (control_msgs is not installed)')
        if self.state is None:
            report.summary(STALE, 'no joint state yet')
            return
        report.add('position [m]', float(self.state[1]))
        report.add('force [N]', float(self.force))
        goal = self.target
        if goal is None:
            report.summary(OK, 'idle')
            return
        report.add('goal [m]', goal.position)
        report.add('max_effort [N]', goal.max_effort)
        state = ('moving' if goal.active else goal.outcome or 'holding')
        report.add('state', state)
        report.summary(OK, state)

    def _diagnose_inputs(self, report):
        """/diagnostics ``gripper_controller: inputs``: rejected goals and joint states."""
        report.counter('goals rejected', self.goal_rejections)
        report.counter('joint states rejected', self.state_rejections)


def main(args=None):
    """Run the gripper controller until shutdown."""
    return run_node(GripperController, 'gripper_controller', args=args)


if __name__ == '__main__':
    sys.exit(main())
