"""
trajectory_controller: make an effort-controlled arm (or the sim) follow trajectories.

The interfaces of ros2_control's joint_trajectory_controller (the topic, the
FollowJointTrajectory action MoveIt uses, ``~/query_state``), with computed torque
through the DeNOC core as the control law (:mod:`denoc_dynamics.trajectory`,
:mod:`denoc_dynamics.computed_torque`).

Subscribes
  ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory): joints mapped by name (a
  subset holds the others if ``allow_partial_joints_goal``); linear, cubic or quintic
  interpolation as the points give positions, velocities, accelerations;
  ``header.stamp`` zero starts now.  A new trajectory (or goal) replaces the current
  one, starting from the current reference, and preempts a running goal.  The
  controller's time is its own clock (ROS time: ``/clock`` under ``use_sim_time``; see
  :meth:`now`), never a joint state's stamp.  A bad one
  (unknown or duplicate joints, non-increasing, negative or too late times, NaN or
  Inf, positions outside the limits, segments faster than the velocity limits, wrong
  array lengths, too many points, or an end before now with a non-zero stamp) is
  rejected, counted and logged (throttled); nothing moves.  So is one whose
  interpolated reference, sampled as it will be executed (from the current reference
  on, :func:`denoc_dynamics.trajectory.check_execution`), leaves the position or
  velocity limits, or jumps at the start by more than
  ``constraints.start_tolerance``; or whose inverse dynamics (with the current
  payload) along the same samples exceed the URDF ``<limit effort>`` (the error
  names the joint, the time and the torque; parameter ``check_effort_limits``).
  One received before the
  first joint state waits up to ``joint_state_timeout`` for it, then starts from it.
  ``joint_states`` (sensor_msgs/JointState, sensor-data QoS with a depth of 1: a
  controller that fell behind takes the newest state, :data:`STATE_QOS`): every
  accepted state gives one effort command, computed at the controller's time.  States from a second
  publisher, stamped before the previous one or ahead of the clock are rejected,
  counted and logged (:mod:`.state_gate`).  When the clock jumps back (a simulation
  reset or stopped), jumps forward or the states stop for ``joint_state_timeout``, or
  the arm jumps faster than its velocity limits allow (reset under a wall-clock
  controller), the trajectory is dropped, a running goal aborted (INVALID_GOAL, the
  reason in ``error_string``), and the arm held where the next state finds it.

Publishes
  ``effort_commands`` (std_msgs/Float64MultiArray), in the order of the ``joints``
  parameter (default: chain order): tau = M(q) (qdd_d + K_d e' + K_p e) + b(q, qd),
  plus the URDF joint friction at qd_d + friction_feedback e if
  ``friction_compensation``, clamped to the URDF effort limits.  With no trajectory it
  holds the first position it measured.
  ``~/controller_state``: control_msgs/JointTrajectoryControllerState where
  control_msgs is installed (reference, feedback, error, output = the efforts), else
  denoc_dynamics_interfaces/TrajectoryControllerState; one per command.
  ``~/status`` (denoc_dynamics_interfaces/TrajectoryControllerState): the same, plus
  whether a trajectory is running and the counts of accepted and rejected ones.

Action (where control_msgs is installed)
  ``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory), as
  joint_trajectory_controller: the goal is checked as a topic trajectory is, and a bad
  one ends aborted with ``error_code`` INVALID_JOINTS (unknown, duplicate or missing
  joints), OLD_HEADER_TIMESTAMP or INVALID_GOAL, and an ``error_string`` saying why.
  ``path_tolerance``, ``goal_tolerance`` and ``goal_time_tolerance`` override the
  ``constraints`` parameters per joint: 0 keeps the parameter, -1 removes the limit.
  While moving, an error beyond the path tolerance aborts with
  PATH_TOLERANCE_VIOLATED; after the last point the goal succeeds once every joint is
  within its goal tolerance and slower than ``constraints.stopped_velocity_tolerance``,
  or aborts with GOAL_TOLERANCE_VIOLATED once ``goal_time_tolerance`` has passed
  (0: waits).  After an abort or a cancel the arm holds where it is.  Feedback
  (desired, actual, error, index of the next point) comes with every command.  A new
  goal or topic trajectory preempts the running goal (aborted, INVALID_GOAL).  At
  shutdown every goal not finished ends aborted, "shutting down" (:meth:`end_goals`).
  The goal, cancel and result services queue ``GOAL_REQUEST_DEPTH`` (1000) requests,
  so a burst of clients or a goal storm is answered (a client needs response queues as
  deep as its bursts: docs/bad-input.md, "Requests").
Service (where control_msgs is installed)
  ``~/query_state`` (control_msgs/QueryTrajectoryState): the reference at a time of
  the running trajectory.
Services
  ``~/scale_to_torque_limits`` (denoc_dynamics_interfaces/ScaleToTorqueLimits): the
  trajectory retimed by the smallest uniform time scaling that keeps its inverse
  dynamics within the effort limits, 90 % of them where gravity leaves room (the rest
  is the feedback's; :mod:`denoc_dynamics.torque_limits`), started from the current
  reference.
  ``~/set_payload`` (denoc_dynamics_interfaces/SetPayload), with ``~/payload`` latched:
  the payload of the computed-torque model, switched at once (:mod:`.payload_service`;
  parameters ``payload.*`` at start-up).

Gains are per joint: ``gains.<joint>.kp`` [1/s^2], ``gains.<joint>.kd`` [1/s] and
``gains.<joint>.friction_velocity`` [rad/s], and tolerances
``constraints.<joint>.trajectory`` and ``constraints.<joint>.goal`` [rad], declared
when the model is loaded.  The robot model comes from the ``robot_description``
parameter, ``urdf_path`` or the ``robot_description`` topic, as for the other nodes.
"""

import math
import sys
import time

from denoc_dynamics_interfaces.msg import TrajectoryControllerState
from denoc_dynamics_interfaces.srv import ScaleToTorqueLimits
import numpy as np
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

from .diagnostics import Diagnostics
from .diagnostics import OK
from .diagnostics import STALE
from .joint_io import JointStateReader
from .joint_io import read_joint_state
from .joint_io import Rejections
from .joint_io import REQUEST_DEPTH
from .joint_io import REQUEST_QOS
from .joint_io import with_depth
from .launch_support import arm_joints
from .node_main import run_node
from .parameters import JOINTS
from .parameters import PASSIVE_PHYSICS
from .parameters import TRAJECTORY_CONTROLLER
from .payload_service import PayloadService
from .robot_model import RobotModelSource
from .ros_time import seconds
from .ros_time import set_duration
from .runtime_gains import RuntimeGains
from .state_gate import StateGate
from ..computed_torque import ComputedTorque
from ..gain_ramp import GainRamp
from ..passive import passive_gains
from ..sim_settings import leading_pose
from ..sim_settings import PhysicsParameters
from ..torque_limits import check_efforts
from ..torque_limits import time_scaling
from ..trajectory import check_execution
from ..trajectory import check_trajectory
from ..trajectory import Trajectory
from ..trajectory import TrajectoryError
from ..trajectory import TrajectoryPoint

#: The per-joint gain entries of TRAJECTORY_CONTROLLER, by key.
GAINS = f'gains.{JOINTS}.{{}}'

#: The reasons (TrajectoryError.reason) that joint_trajectory_controller answers with
#: INVALID_JOINTS; OLD_HEADER is OLD_HEADER_TIMESTAMP; every other one INVALID_GOAL.
JOINT_REASONS = ('unknown joint', 'duplicate joint', 'partial joints')
OLD_HEADER = 'old header timestamp'

#: A joint that moves faster than this many times its velocity limit between two
#: states, plus STATE_JUMP_MARGIN [rad, m], jumped: the arm was reset under the
#: controller (the simulated drives brake joints beyond their limits up to 3 times it).
STATE_JUMP_SPEEDS = 4.0
STATE_JUMP_MARGIN = 0.05

#: At most one INFO line about accepted trajectories every this many seconds; the
#: ones in between are counted and summarized in the next line.
ACCEPT_LOG_PERIOD = 5.0

#: Requests queued by the action's goal, cancel and result services: a 10 s storm of
#: goals at 100 Hz, even if none were served meanwhile.  Under load the controller
#: takes 40-100 goals a second (each is checked, accepted and preempts the one
#: before), so a burst waits here; DDS overwrites a request only beyond this many
#: waiting, before the controller sees it (it cannot be counted then).  KEEP_ALL,
#: which never overwrites, was tried: a client with KEEP_LAST queues then stalled the
#: controller's control loop for a minute (docs/bad-input.md, "Requests").
GOAL_REQUEST_DEPTH = 1000
GOAL_REQUEST_QOS = with_depth(REQUEST_QOS, GOAL_REQUEST_DEPTH)


#: joint_states as sensor data (best effort), the latest state only: a controller that
#: fell behind (a loaded machine) acts on the arm's newest state, as
#: joint_trajectory_controller reads its state interfaces at each update, never on a
#: queue of older ones.  With the sensor-data depth of 5 it ran 40-50 ms behind the arm
#: at a load of 5 on two cores, past the delay that kp, kd leave room for: the arm
#: oscillated about the goal at 3 Hz, and the goal never ended.
STATE_QOS = with_depth(qos_profile_sensor_data, 1)


def points_of(msg):
    """Return the points of a JointTrajectory message as TrajectoryPoints."""
    return [TrajectoryPoint(seconds(p.time_from_start), p.positions, p.velocities,
                            p.accelerations) for p in msg.points]


def trajectory_msg(joint_names, points) -> JointTrajectory:
    """Return a JointTrajectory (stamp zero: start on receipt) of TrajectoryPoints."""
    msg = JointTrajectory(joint_names=list(joint_names))
    for point in points:
        item = JointTrajectoryPoint(positions=[float(x) for x in point.positions],
                                    velocities=[float(x) for x in point.velocities],
                                    accelerations=[float(x) for x in point.accelerations])
        set_duration(item.time_from_start, point.time_from_start)
        msg.points.append(item)
    return msg


def control_msgs_interfaces():
    """Return (FollowJointTrajectory, JointTrajectoryControllerState, QueryTrajectoryState)."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
    from control_msgs.srv import QueryTrajectoryState
    return FollowJointTrajectory, JointTrajectoryControllerState, QueryTrajectoryState


def resolve_tolerance(default: float, value: float, what: str) -> float:
    """
    Return the tolerance a goal asks for: ``value`` > 0, or ``default`` if 0, or 0 if -1.

    0 in the result means no limit (control_msgs/JointTolerance); any other negative
    value or a NaN raises TrajectoryError.
    """
    if value > 0.0 and math.isfinite(value):
        return float(value)
    if value == 0.0:
        return default
    if abs(value + 1.0) < 1e-6:
        return 0.0
    raise TrajectoryError('tolerance', f'{what} {value!r}: a tolerance is > 0, 0 (the '
                                       'default) or -1 (no limit)')


class Tolerances:
    """Path and goal tolerances (n, 2) [position, velocity] per joint, goal time [s]."""

    def __init__(self, path, goal, goal_time: float):
        """Take the arrays (0: no limit) and the goal time tolerance (0: no limit)."""
        self.path = np.asarray(path, dtype=float)
        self.goal = np.asarray(goal, dtype=float)
        self.goal_time = float(goal_time)

    @staticmethod
    def violations(limits, error) -> np.ndarray:
        """Return a mask of the limits (> 0) that ``error`` (n, 2) exceeds."""
        return (limits > 0.0) & (np.abs(error) > limits)

    def from_goal(self, goal, joint_names):
        """Return the tolerances of an action goal over these defaults; TrajectoryError."""
        index = {name: i for i, name in enumerate(joint_names)}
        path, result = self.path.copy(), self.goal.copy()
        for field, table in (('path_tolerance', path), ('goal_tolerance', result)):
            for item in getattr(goal, field):
                if item.name not in index:
                    raise TrajectoryError('unknown joint', f'{field}: joint {item.name!r} is '
                                                           f'not in the chain')
                i = index[item.name]
                for column, value in enumerate((item.position, item.velocity)):
                    table[i, column] = resolve_tolerance(table[i, column], value,
                                                         f'{field} of {item.name}')
        goal_time = resolve_tolerance(self.goal_time, seconds(goal.goal_time_tolerance),
                                      'goal_time_tolerance')
        return Tolerances(path, result, goal_time)


class ActiveGoal:
    """A FollowJointTrajectory goal being executed: its handle, tolerances and result."""

    def __init__(self, handle, tolerances, result_type, point_times):
        """Keep the goal ``handle``; ``point_times`` are its points' absolute times."""
        self.handle = handle
        self.tolerances = tolerances
        self.result_type = result_type
        self.point_times = np.asarray(point_times, dtype=float)
        self.future = Future()
        self.first_sample = True

    @property
    def done(self) -> bool:
        """Return True once the goal has its result."""
        return self.future.done()

    def finish(self, state: str, code: int, text: str):
        """End the goal: ``state`` 'succeed', 'abort' or 'canceled', with its result."""
        if self.done:
            return
        getattr(self.handle, state)()
        self.future.set_result(self.result_type(error_code=code, error_string=text))


class AcceptLog:
    """One INFO line per accepted trajectory at most every ACCEPT_LOG_PERIOD, summarized."""

    def __init__(self, logger, clock=time.monotonic):
        """Log to ``logger``."""
        self._logger = logger
        self._clock = clock
        self._last = -math.inf
        self._skipped = 0

    def __call__(self, text: str):
        """Log ``text``, or count it if a line was logged less than a period ago."""
        now = self._clock()
        if now - self._last < ACCEPT_LOG_PERIOD:
            self._skipped += 1
            return
        if self._skipped:
            text += f' ({self._skipped} more accepted in the last {now - self._last:.0f} s)'
        self._logger.info(text)
        self._last = now
        self._skipped = 0


def simulated_friction_velocity(robot, values) -> np.ndarray:
    """
    Return the friction v_eps per joint of a simulated arm under the settings ``values``.

    sim_node raises a light joint's v_eps for its integrator (0.21 rad/s instead of 0.05
    on denoc_arm7's wrist); a controller that compensates the friction with another
    v_eps leaves that joint tens of mrad off its goal.
    """
    physics = PhysicsParameters(**{name: values[name] for name in PASSIVE_PHYSICS})
    pose = leading_pose(robot, values.initial_positions)
    return passive_gains(robot, physics, pose).friction_velocity


class TrajectoryController(Node):
    """Computed-torque trajectory tracking; add it to an executor and spin."""

    time_jumps = 0           # goals and trajectories dropped on a jump of time
    executing = 0            # execute callbacks running (goals awaiting a result)
    shutting_down = None     # why, once end_goals was called
    accepted = 0
    law = states = None      # with the robot model
    trajectory = None        # Trajectory being followed (or held); None: no state yet
    trajectory_start = 0.0   # start time of the current trajectory [s]
    active = False           # following a received trajectory (not holding)
    source = None            # who sent the current trajectory ('topic', ...)
    latest_time = None       # the controller's time at the latest joint state [s]
    latest_state = None      # (q, qd) of the latest joint state
    goal = None              # the ActiveGoal being executed
    pending = None           # (msg, source, goal, deadline) waiting for a state
    _unloaded = None         # the model without payload

    def __init__(self, node_name='trajectory_controller', **kwargs):
        """Declare the parameters and load the model (or subscribe to wait for it)."""
        super().__init__(node_name, **kwargs)
        self.params = p = TRAJECTORY_CONTROLLER.declare(self)
        self.allow_partial = p.allow_partial_joints_goal
        self.state_timeout = p.joint_state_timeout
        self.max_points, self.max_duration = p.max_points, p.max_duration
        self.stopped_velocity = p['constraints.stopped_velocity_tolerance']
        self.goal_time = p['constraints.goal_time']
        self.start_tolerance = p['constraints.start_tolerance']
        self.check_effort = p.check_effort_limits
        self.gains = RuntimeGains(self, TRAJECTORY_CONTROLLER, 'gains', ('kp', 'kd'))
        self.rejections = Rejections(self.get_logger(), 'joint trajectory')
        self.state_rejections = Rejections(self.get_logger(), 'joint state')
        self.gate = StateGate(self.state_rejections, logger=self.get_logger(),
                              publishers=self._state_publishers)
        self.clock = self.get_clock()
        self.log_accepted = AcceptLog(self.get_logger())
        self.effort_pub = self.create_publisher(Float64MultiArray, 'effort_commands', 10)
        self.status_pub = self.create_publisher(TrajectoryControllerState, '~/status', 10)
        self._setup_control_msgs()
        self.payload = PayloadService(self, lambda: self._unloaded, self._set_payload)
        self.model = RobotModelSource(self, self._set_model)
        self.state_sub = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state_info, STATE_QOS)
        self.create_subscription(JointTrajectory, '~/joint_trajectory', self._on_trajectory,
                                 REQUEST_DEPTH)
        self.create_timer(0.05, self._expire_pending)
        self.create_service(ScaleToTorqueLimits, '~/scale_to_torque_limits',
                            self._scale_to_torque_limits)
        self.create_timer(0.05, self._watch_state)
        self.diagnostics = Diagnostics(
            self, lambda: self.law.robot.chain.name if self.law is not None else '')
        self.diagnostics.add('controller', self._diagnose_controller)
        self.diagnostics.add('inputs', self._diagnose_inputs)

    def _setup_control_msgs(self):
        """Create the action server, ~/query_state and ~/controller_state (or the fallback)."""
        try:
            action, state, query = control_msgs_interfaces()
            from rclpy.action import ActionServer
            from rclpy.action import CancelResponse
            from rclpy.action import GoalResponse
        except ImportError as exc:
            self.action = self.action_server = None
            self.state_pub = self.create_publisher(
                TrajectoryControllerState, '~/controller_state', 10)
            self.get_logger().info(
                f'control_msgs is not installed ({exc}): no ~/follow_joint_trajectory action, '
                'no ~/query_state; ~/controller_state is '
                'denoc_dynamics_interfaces/TrajectoryControllerState')
            return
        self.action = action
        self.state_pub = self.create_publisher(state, '~/controller_state', 10)
        self._control_state_type = state
        # queues sized for bursts (GOAL_REQUEST_DEPTH: a goal storm), not rclpy's 10
        self.action_server = ActionServer(
            self, action, '~/follow_joint_trajectory', self._execute,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda handle: CancelResponse.ACCEPT,
            goal_service_qos_profile=GOAL_REQUEST_QOS,
            result_service_qos_profile=GOAL_REQUEST_QOS,
            cancel_service_qos_profile=GOAL_REQUEST_QOS)
        self.create_service(query, '~/query_state', self._query_state, qos_profile=REQUEST_QOS)

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        p = self.params
        self.gains.ramp = None   # the model's own gains until they are attached
        v_eps = (simulated_friction_velocity(robot, p) if p.simulated_friction
                 else [p.friction_velocity] * robot.n)
        values = TRAJECTORY_CONTROLLER.declare_joints(self, robot.joint_names, {
            GAINS.format('kp'): [p.kp] * robot.n, GAINS.format('kd'): [p.kd] * robot.n,
            GAINS.format('friction_velocity'): v_eps})
        gains = {key: np.array(values[GAINS.format(key)], dtype=float)
                 for key in ('kp', 'kd', 'friction_velocity')}
        path, goal = (np.array(values[f'constraints.{JOINTS}.{key}'], dtype=float)
                      for key in ('trajectory', 'goal'))
        n = robot.n
        self._unloaded = robot
        robot = self.payload.start_up(robot).attach(robot)
        self.default_tolerances = Tolerances(
            np.column_stack([path, np.zeros(n)]),
            np.column_stack([goal, np.full(n, self.stopped_velocity)]), self.goal_time)
        law = ComputedTorque(robot, gains['kp'], gains['kd'], p.friction_compensation,
                             gains['friction_velocity'], p.friction_feedback, p.friction_scale)
        index = {name: i for i, name in enumerate(robot.joint_names)}
        order = list(p.joints) or arm_joints(robot, p.gripper) or robot.joint_names
        self.law = law
        self.gains.attach(robot.joint_names, GainRamp({'kp': law.kp, 'kd': law.kd}))
        law.kp, law.kd = self.gains.ramp.values['kp'], self.gains.ramp.values['kd']
        self.states = JointStateReader(robot.joint_names)
        self._order = np.array([index.get(name, -1) for name in order], dtype=int)
        self._status_msg = TrajectoryControllerState(joint_names=robot.joint_names)
        self._effort_msg = Float64MultiArray()
        self.trajectory = None
        self.active = False
        self.get_logger().info(
            f'computed torque on {robot.n} joints: kp {gains["kp"].tolist()}, kd '
            f'{gains["kd"].tolist()}, friction compensation '
            f'{"on" if p.friction_compensation else "off"} (friction_velocity '
            f'{np.round(gains["friction_velocity"], 4).tolist()}, friction_feedback '
            f'{p.friction_feedback:g}, friction_scale {p.friction_scale:g})')

    def _set_payload(self, payload, transition_time):
        """~/set_payload: computed torque on the model with the new payload, at once."""
        self.law.robot = payload.attach(self._unloaded)

    def _scale_to_torque_limits(self, request, response):
        """Return the trajectory retimed by the smallest feasible uniform time scaling."""
        msg = request.trajectory
        try:
            if self.law is None or self.trajectory is None:
                raise TrajectoryError('no state', 'no robot model or joint state yet')
            robot = self.law.robot
            joints = robot.joints
            checked = check_trajectory(robot.joint_names, joints.lower, joints.upper,
                                       msg.joint_names, points_of(msg), self.max_points,
                                       self.max_duration, self.allow_partial)
            now = self.now()
            trajectory = Trajectory.from_checked(checked, now, now, self.trajectory.sample(now))
            k = time_scaling(robot, trajectory, now)
        except TrajectoryError as exc:
            self.rejections.add(TrajectoryError(exc.reason, f'scale_to_torque_limits: '
                                                            f'{exc.detail}'))
            response.success, response.message = False, f'{exc.reason}: {exc.detail}'
            return response
        out = JointTrajectory(header=msg.header, joint_names=list(msg.joint_names))
        for point in msg.points:
            scaled = JointTrajectoryPoint(
                positions=list(point.positions),
                velocities=[v / k for v in point.velocities],
                accelerations=[a / k ** 2 for a in point.accelerations],
                effort=list(point.effort))
            set_duration(scaled.time_from_start, k * seconds(point.time_from_start))
            out.points.append(scaled)
        response.success, response.scale, response.trajectory = True, k, out
        response.message = (f'retimed {k:.4g} times slower' if k > 1.0 else
                            'within the effort limits as it is')
        return response

    def _diagnose_controller(self, report):
        """/diagnostics ``trajectory_controller: controller``: model and what it does."""
        if self.law is None:
            report.summary(STALE, 'no robot model yet')
            return
        mode = ('no joint state yet' if self.latest_state is None
                else f'following a trajectory ({self.source})' if self.active
                else 'holding')
        report.add('joints', self.law.robot.n)
        report.add('mode', mode)
        report.add('goal active', self.goal is not None)
        report.add('trajectories accepted', self.accepted)
        report.summary(OK, mode)

    def _diagnose_inputs(self, report):
        """/diagnostics ``trajectory_controller: inputs``: rejection counters, handovers."""
        report.counter('trajectories rejected', self.rejections)
        report.counter('joint states rejected', self.state_rejections)
        report.add('joint-state publisher handovers', self.gate.handovers)

    # --- time ------------------------------------------------------------------------
    def now(self) -> float:
        """
        Return the controller's time [s]: its own clock, never a joint state's stamp.

        :attr:`clock` is the node's ROS clock (the simulated time of ``/clock`` under
        ``use_sim_time``, as joint_trajectory_controller's controller manager); a
        process that composes the controller with its simulation may hand it the
        simulation's clock instead (denoc_sim_arm).
        """
        return self.clock.now().nanoseconds * 1e-9

    def _time_jumped(self, why: str):
        """
        End the running goal (aborted, INVALID_GOAL, ``why``) and start over.

        The reference is dropped: the next joint state is held where it is, as the
        first one is, whatever the old trajectory said (a reset simulation is not where
        it was).
        """
        following = self.active or (self.goal is not None and not self.goal.done)
        self._preempt(f'aborted: {why}')
        self.trajectory = None
        self.active = False
        self.latest_time = None
        self.gate.restart()
        self.time_jumps += 1
        then = ('the trajectory is dropped and the arm held where the next joint state '
                'finds it' if following else 'holding where the next joint state finds it')
        self.get_logger().warning(f'{why}; {then}')

    def _check_clock(self, t: float) -> bool:
        """Detect a jump of the clock before a state at ``t``; False: time has not started."""
        last = self.latest_time
        if last is None:
            # use_sim_time and no /clock yet: the time has not started
            return t != 0.0 or self.clock.clock_type != ClockType.ROS_TIME
        if t < last:
            self._time_jumped(f'the clock jumped back by {last - t:.3f} s (from {last:.3f} to '
                              f'{t:.3f} s: the simulation was reset or stopped?)')
        elif t - last > self.state_timeout and self.active:
            self._time_jumped(f'no joint state for {t - last:.3f} s, more than '
                              f'joint_state_timeout {self.state_timeout:g} s (the clock '
                              'jumped forward, or the arm stopped publishing)')
        return True

    def _check_arm(self, t: float, q):
        """
        Detect an arm that jumped (reset under a wall clock) since the previous state.

        The time the arm had to move is the longer of the controller's clock and the
        stamps' advance since the previous state (the gate's ``last_stamp`` less its
        ``previous_stamp``: one publisher's, :mod:`.state_gate`):
        states that waited in the queue while the controller was busy come one after
        the other at one reading of ``/clock``, while the arm moved between them.  The
        stamp only bounds the motion; it is never the controller's time.  After a jump
        of the clock or a new publisher followed, only the clock's advance counts
        until the next state (the previous stamp is of another time or publisher).
        """
        if not self.active or self.latest_time is None:
            return
        moved = np.abs(q - self.latest_state[0])
        dt = t - self.latest_time
        previous = self.gate.previous_stamp     # None after a jump or a handover
        if previous is not None:
            dt = max(dt, self.gate.last_stamp - previous)
        bound = STATE_JUMP_SPEEDS * self.law.robot.joints.velocity * dt + STATE_JUMP_MARGIN
        if np.any(moved > bound):
            j = int(np.argmax(moved - bound))
            self._time_jumped(f'the arm jumped: {self.law.robot.joint_names[j]} moved '
                              f'{moved[j]:.3f} in {dt:.3f} s, faster than '
                              'its velocity limit allows (the simulation was reset?)')

    def _state_publishers(self):
        """Return the GIDs of the joint-state topic's publishers (for the gate)."""
        return [info.endpoint_gid
                for info in self.get_publishers_info_by_topic(self.state_sub.topic_name)]

    def _watch_state(self):
        """Abort a running goal whose joint states stopped for joint_state_timeout."""
        if self.active and self.latest_time is not None:
            t = self.now()
            if t - self.latest_time > self.state_timeout:
                self._time_jumped(f'no joint state for {t - self.latest_time:.3f} s, more '
                                  f'than joint_state_timeout {self.state_timeout:g} s')

    @property
    def finished(self) -> bool:
        """Return True when no trajectory is being followed or the current one ended."""
        return (not self.active or self.latest_time is None
                or self.latest_time >= self.trajectory.end_time)

    # --- inputs ----------------------------------------------------------------------
    def _on_trajectory(self, msg):
        self.follow(msg, 'topic')

    def follow(self, msg, source='topic', goal_handle=None):
        """
        Check ``msg`` (JointTrajectory) and follow it.

        Return True (accepted), False (rejected) or None (waiting for the first joint
        state).  With ``goal_handle`` (an action goal), return the ActiveGoal instead
        of True; a rejected goal is aborted here with its error code.
        """
        try:
            if self.law is None:
                raise TrajectoryError('no model', 'no robot model yet')
            tolerances = None
            if goal_handle is not None:
                if goal_handle.request.multi_dof_trajectory.points:
                    raise TrajectoryError('multi-dof', 'multi_dof_trajectory is not supported')
                tolerances = self.default_tolerances.from_goal(goal_handle.request,
                                                               self.law.robot.joint_names)
            joints = self.law.robot.joints
            checked = check_trajectory(self.law.robot.joint_names, joints.lower, joints.upper,
                                       msg.joint_names, points_of(msg), self.max_points,
                                       self.max_duration, self.allow_partial)
            if self.trajectory is None:
                return self._wait_for_state(msg, source, goal_handle)
            now = self.now()
            start = seconds(msg.header.stamp) or now
            if start + checked.times[-1] < now:
                raise TrajectoryError(OLD_HEADER, f'the trajectory ended '
                                                  f'{now - start - checked.times[-1]:.3f} s '
                                                  'ago (header.stamp + the last '
                                                  'time_from_start is before now)')
            reference = self.trajectory.sample(now)
            trajectory = Trajectory.from_checked(checked, start, now, reference)
            trajectory.check_velocity(joints.velocity, self.law.robot.joint_names)
            check_execution(trajectory, now, reference, joints.lower, joints.upper,
                            joints.velocity, self.law.robot.joint_names, self.start_tolerance)
            if self.check_effort:
                check_efforts(self.law.robot, trajectory, now)
        except TrajectoryError as exc:
            self.rejections.add(TrajectoryError(exc.reason, f'{source}: {exc.detail}'))
            if goal_handle is not None:
                return self._abort_rejected(goal_handle, exc)
            return False
        self._preempt(f'preempted by a new {"goal" if goal_handle is not None else source}')
        self.trajectory = trajectory
        self.trajectory_start = start
        self.active = True
        self.source = source
        self.accepted += 1
        self.log_accepted(f'trajectory accepted ({source}): {len(msg.points)} points for '
                          f'{list(msg.joint_names)}, ends in {trajectory.end_time - now:.3f} s')
        if goal_handle is None:
            return True
        self.goal = ActiveGoal(goal_handle, tolerances, self.action.Result,
                               start + checked.times)
        return self.goal

    def _abort_rejected(self, goal_handle, exc):
        result = self.action.Result
        code = (result.INVALID_JOINTS if exc.reason in JOINT_REASONS
                else result.OLD_HEADER_TIMESTAMP if exc.reason == OLD_HEADER
                else result.INVALID_GOAL)
        goal = ActiveGoal(goal_handle, None, result, [])
        goal.finish('abort', code, f'{exc.reason}: {exc.detail}')
        return goal

    def _preempt(self, why: str):
        """Abort the running goal (INVALID_GOAL, as joint_trajectory_controller does)."""
        if self.goal is not None and not self.goal.done:
            self.goal.finish('abort', self.action.Result.INVALID_GOAL, why)
        self.goal = None

    def _wait_for_state(self, msg, source, goal_handle):
        """Keep ``msg`` until the first joint state (a later one replaces it)."""
        if self.pending is not None:
            self._drop_pending(f'replaced by a newer {source} trajectory before the first '
                               'joint state')
        goal = None
        if goal_handle is not None:
            goal = ActiveGoal(goal_handle, None, self.action.Result, [])
        self.pending = (msg, source, goal, time.monotonic() + self.state_timeout)
        self.get_logger().info(f'trajectory ({source}) received before the first joint '
                               f'state: waiting up to {self.state_timeout:g} s for one')
        return goal

    def _drop_pending(self, why):
        msg, source, goal, _ = self.pending
        self.pending = None
        self.rejections.add(TrajectoryError('no state', f'{source}: {why}'))
        if goal is not None:
            goal.finish('abort', self.action.Result.INVALID_GOAL, why)

    def _expire_pending(self):
        if self.pending is not None and time.monotonic() > self.pending[3]:
            self._drop_pending(f'no joint state within joint_state_timeout '
                               f'{self.state_timeout:g} s')

    def _start_pending(self):
        msg, source, waiting, _ = self.pending
        self.pending = None
        result = self.follow(msg, source, waiting.handle if waiting is not None else None)
        if waiting is not None:
            # the execute callback awaits the waiting goal's future: pass the outcome on
            result.future.add_done_callback(
                lambda future: waiting.future.done() or waiting.future.set_result(
                    future.result()))

    # --- the action ------------------------------------------------------------------
    async def _execute(self, goal_handle):
        """Execute a FollowJointTrajectory goal; return its result when it ends."""
        self.executing += 1
        try:
            if self.shutting_down:
                goal = ActiveGoal(goal_handle, None, self.action.Result, [])
                goal.finish('abort', self.action.Result.INVALID_GOAL, self.shutting_down)
            else:
                goal = self.follow(goal_handle.request.trajectory, 'action', goal_handle)
            return await goal.future
        finally:
            self.executing -= 1

    def end_goals(self, why: str) -> int:
        """
        End every goal not finished: aborted, INVALID_GOAL, ``why``; return how many.

        Called at shutdown (:meth:`.node_main.RosSession.end_goals`): every accepted
        goal gets a final result, and one that comes later is aborted at once.
        """
        self.shutting_down = why
        if self.action is None:
            return 0
        ended = 0
        if self.goal is not None and not self.goal.done:
            self.goal.finish('abort', self.action.Result.INVALID_GOAL, why)
            ended += 1
        if self.pending is not None and self.pending[2] is not None:
            self.pending[2].finish('abort', self.action.Result.INVALID_GOAL, why)
            self.pending = None
            ended += 1
        if ended:
            self.get_logger().info(f'{why}: {ended} goal(s) aborted')
        return ended + self.executing

    def _query_state(self, request, response):
        response.name = list(self.law.robot.joint_names) if self.law is not None else []
        t = seconds(request.time)
        if not self.active or self.trajectory is None:
            response.success = False
            response.message = 'no trajectory is being followed'
        elif not self.trajectory.times[0] <= t <= self.trajectory.end_time:
            response.success = False
            response.message = (f'time {t:.3f} s is outside the current trajectory '
                                f'[{self.trajectory.times[0]:.3f}, '
                                f'{self.trajectory.end_time:.3f}] s')
        else:
            q, qd, qdd = self.trajectory.sample(t)
            response.success = True
            response.message = 'reference of the current trajectory'
            response.position, response.velocity, response.acceleration = (
                q.tolist(), qd.tolist(), qdd.tolist())
        return response

    def _supervise_goal(self, stamp, t, reference, q, qd):
        """Feedback, cancel and the tolerances of the running goal, at one state."""
        goal = self.goal
        if goal is None or goal.done:
            return
        if goal.handle.is_cancel_requested:
            self._hold(t, q)
            goal.finish('canceled', self.action.Result.SUCCESSFUL, 'canceled: holding')
            return
        q_d, qd_d, qdd_d = reference
        feedback = self.action.Feedback(joint_names=self.law.robot.joint_names)
        feedback.header.stamp = stamp
        feedback.desired = JointTrajectoryPoint(
            positions=q_d.tolist(), velocities=qd_d.tolist(), accelerations=qdd_d.tolist())
        feedback.actual = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist())
        feedback.error = JointTrajectoryPoint(positions=(q_d - q).tolist(),
                                              velocities=(qd_d - qd).tolist())
        feedback.index = int(np.searchsorted(goal.point_times, t, side='right'))
        goal.handle.publish_feedback(feedback)
        error = np.column_stack([q_d - q, qd_d - qd])
        tolerances = goal.tolerances
        end = self.trajectory.end_time
        names = self.law.robot.joint_names
        if t < end or goal.first_sample:
            bad = Tolerances.violations(tolerances.path, error)
            if np.any(bad):
                self._hold(t, q)
                goal.finish('abort', self.action.Result.PATH_TOLERANCE_VIOLATED,
                            'path tolerance violated: ' + self._describe(bad, error, names))
                self.get_logger().warning(f'goal aborted: path tolerance violated '
                                          f'({self._describe(bad, error, names)}); holding')
                return
        goal.first_sample = False
        if t < end:
            return
        bad = Tolerances.violations(tolerances.goal, error)
        if not np.any(bad):
            goal.finish('succeed', self.action.Result.SUCCESSFUL, 'goal reached')
        elif tolerances.goal_time > 0.0 and t - end > tolerances.goal_time:
            self._hold(t, q)
            text = (f'goal tolerance violated {t - end:.3f} s after the last point '
                    f'(goal_time_tolerance {tolerances.goal_time:g} s): '
                    + self._describe(bad, error, names))
            goal.finish('abort', self.action.Result.GOAL_TOLERANCE_VIOLATED, text)
            self.get_logger().warning(f'goal aborted: {text}; holding')

    @staticmethod
    def _describe(bad, error, names):
        quantity = ('position', 'velocity')
        return ', '.join(f'{names[i]} {quantity[c]} error {error[i, c]:.3g}'
                         for i, c in np.argwhere(bad)[:4])

    def _hold(self, t, q):
        """Hold the measured position from ``t`` on (after an abort or a cancel)."""
        self.trajectory = Trajectory.hold(t, q)
        self.trajectory_start = t
        self.active = False

    # --- the control loop ------------------------------------------------------------
    def _on_joint_state_info(self, msg, info):
        self.on_joint_state(msg, info if info is not None else {})

    def on_joint_state(self, msg, info=None):
        """
        Take one joint state of the arm: one effort command, at the controller's time.

        ``info`` is the subscription's message info ({} where the executor gives none);
        None when the process hands over its own simulation's states (denoc_sim_arm).
        """
        if self.states is None:
            return
        state = read_joint_state(self.states, msg, self.state_rejections)
        if state is None:
            return
        q, qd = state
        t = self.now()
        if not self._check_clock(t) or not self.gate.admit(msg, t, info):
            return
        self._check_arm(t, q)
        self.latest_time = t
        self.latest_state = state
        if self.trajectory is None:
            self.trajectory = Trajectory.hold(t, q)
            self.trajectory_start = t
            if self.pending is not None:
                self._start_pending()
        reference = self.trajectory.sample(t)
        self.gains.ramp.at(t)   # gains set at runtime move in over the ramp
        tau = self.law(q, qd, *reference)
        effort = self._effort_msg
        effort.data = [float(tau[i]) if i >= 0 else 0.0 for i in self._order]
        self.effort_pub.publish(effort)
        if self.goal is not None:
            self._supervise_goal(msg.header.stamp, t, reference, q, qd)
        self._publish_state(msg.header.stamp, t, reference, q, qd, tau)

    def _publish_state(self, stamp, t, reference, q, qd, tau):
        q_d, qd_d, qdd_d = reference
        desired = JointTrajectoryPoint(
            positions=q_d.tolist(), velocities=qd_d.tolist(), accelerations=qdd_d.tolist())
        set_duration(desired.time_from_start, t - self.trajectory_start)
        actual = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist())
        error = JointTrajectoryPoint(positions=(q_d - q).tolist(),
                                     velocities=(qd_d - qd).tolist())
        status = self._status_msg
        status.header.stamp = stamp
        status.desired, status.actual, status.error = desired, actual, error
        status.effort = tau.tolist()
        status.trajectory_active = not self.finished
        status.trajectories_accepted = self.accepted
        status.trajectories_rejected = self.rejections.total
        self.status_pub.publish(status)
        if self.action is None:
            self.state_pub.publish(status)
            return
        state = self._control_state_type(joint_names=status.joint_names, reference=desired,
                                         feedback=actual, error=error,
                                         output=JointTrajectoryPoint(effort=status.effort),
                                         speed_scaling_factor=1.0)
        state.header.stamp = stamp
        self.state_pub.publish(state)


def main(args=None):
    """Run the trajectory controller until shutdown."""
    return run_node(TrajectoryController, 'trajectory_controller', args=args)


if __name__ == '__main__':
    sys.exit(main())
