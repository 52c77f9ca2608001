"""
sim_node: a simulated arm, the DeNOC forward dynamics integrated in time.

A thin ROS 2 wrapper around :mod:`denoc_dynamics.simulation`.  The executor owns time
and shutdown: a timer on the steady (wall) clock calls
:meth:`SimulationRunner.tick <denoc_dynamics.simulation.SimulationRunner.tick>`, which
steps the chunks of one publish period (``physics_rate`` / ``publish_rate`` steps) that
are due at ``real_time_factor`` and publishes after each; the other callbacks
(commands, services, status) run between two ticks in the same thread, so nothing
needs a second Python thread competing with the physics for the GIL.  The node's
``main`` is :func:`~denoc_dynamics.ros.node_main.run_node`: SIGINT or SIGTERM end the
spin, then the node is destroyed (exit code 0).

Subscribes
  ``effort_commands`` (std_msgs/Float64MultiArray): joint efforts in the order of the
  ``joints`` parameter (default: chain order), validated like the dynamics node does;
  clamped to the URDF effort limits; a clamped effort that would take its joint from
  rest past the divergence speed (1000 rad/s or m/s) in one step is rejected (in
  practice, only a joint without an effort limit gets there).  Older than
  ``command_timeout`` seconds of simulated time, a command counts as zero torque.
  The first command ends hold mode.
  A joint's drive never pushes it faster than its URDF velocity limit.
  ``robot_joint_commands`` (sensor_msgs/JointState, reliable, depth 1; the
  ``joint_commands_topic`` parameter): the commands of topic_based_ros2_control's
  JointStateTopicSystem and Isaac-style bridges, joints by name, per joint a position
  (with an optional velocity) for a position servo, a velocity for a velocity servo,
  or an effort (:mod:`.joint_commands`, :mod:`denoc_dynamics.servo`).  The servos run
  at the physics rate with the gains ``servo.<joint>.kp`` [N m/rad] and
  ``servo.<joint>.kd`` [N m s/rad] (defaults from ``servo_frequency`` and
  ``servo_damping_ratio`` on the joint's effective inertia) plus the model's gravity
  and bias forces, evaluated once a publish period and held; the effort is limited to
  the URDF's.  The command is held until the next (``joint_command_timeout`` > 0:
  then the joints hold their position); joints a command leaves out keep theirs.  A
  bad command (unknown or repeated joints, NaN, wrong array lengths, a position
  outside the limits) is rejected, counted and logged; nothing moves.  A JointState
  command takes over from effort commands and the other way round.
  ``robot_description`` (std_msgs/String, transient_local): only when neither the
  ``robot_description`` nor the ``urdf_path`` parameter is set.

Publishes
  ``joint_states`` (sensor_msgs/JointState) at ``publish_rate``: position, velocity and
  effort (the torque the drives applied: the clamped command, cut at the velocity
  limits, zero in hold mode).  Always finite: a non-finite state stops the simulation.
  Stamped with the simulated time when ``publish_clock`` is true, else with the node's
  clock.
  ``robot_joint_states`` (sensor_msgs/JointState, best effort; the
  ``joint_states_topic`` parameter, empty: none): the same, for JointStateTopicSystem.
  ``/clock`` (rosgraph_msgs/Clock) at ``publish_rate`` if ``publish_clock`` is true.

Services
  ``~/reset`` (std_srvs/Trigger): back to the initial state in hold mode; the message
  reports a previous non-finite failure.  ``~/pause`` (std_srvs/SetBool): true pauses
  (time and state frozen), false resumes.  Where the ``simulation_interfaces``
  package is installed, also the ROS 2 standard simulator services and action
  (:mod:`.simulation_services`).
  ``~/set_payload`` (denoc_dynamics_interfaces/SetPayload), with ``~/payload`` latched:
  the simulated arm's payload changes linearly in mass and inertia over the request's
  transition time (simulated seconds), as UR's set_payload does
  (:mod:`.payload_service`; parameters ``payload.*`` at start-up).

If the state becomes non-finite the integration stops, an error is logged and nothing
more is published until ``~/reset``.
"""

import sys
import threading

import numpy as np
from rclpy.clock import Clock as RclClock
from rclpy.clock import ClockType
from rclpy.clock import ROSClock as RosTimeClock
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import QoSProfile
from rclpy.task import Future
from rclpy.time_source import TimeSource
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from std_srvs.srv import Trigger

from .joint_commands import INTERFACES
from .joint_commands import JointCommandReader
from .joint_io import declare_command_parameters
from .joint_io import EffortCommandReader
from .joint_io import Rejected
from .joint_io import Rejections
from .joint_io import REQUEST_QOS
from .node_main import run_node
from .parameters import declare
from .parameters import value as parameter_value
from .payload_service import PayloadService
from .robot_model import RobotModelSource
from .simulation_services import attach_simulation_services
from ..servo import unstable_gains
from ..simulation import CommandOutOfRange
from ..simulation import FD_METHODS
from ..simulation import INTEGRATORS
from ..simulation import leading_pose
from ..simulation import PhysicsParameters
from ..simulation import Simulation
from ..simulation import SimulationRunner
from ..simulation import START_MODES


def _time_msg(msg, seconds):
    nanoseconds = int(round(seconds * 1e9))
    msg.sec, msg.nanosec = divmod(nanoseconds, 1_000_000_000)


class SimNode(Node):
    """
    The simulated arm; add it to an executor and spin.

    The physics starts with the robot model (a timer, created then).  ``duration``
    [s of simulated time], if set before spinning, stops the simulation there
    (:attr:`finished` becomes true).
    """

    def __init__(self, node_name='sim_node', **kwargs):
        """Declare the parameters and load the model (or subscribe to wait for it)."""
        super().__init__(node_name, **kwargs)
        self.joints_param, command_timeout = declare_command_parameters(self)
        rd = True  # every parameter is read once, at start-up or model load
        self.physics = PhysicsParameters(
            physics_rate=declare(
                self, 'physics_rate', Parameter.Type.DOUBLE, 1000.0,
                'integration steps per simulated second [Hz]', rd, min_value=1.0),
            integrator=declare(
                self, 'integrator', Parameter.Type.STRING, 'rk4',
                "'rk4' (Runge-Kutta 4), 'ab4' (Adams-Bashforth 4, started by RK4) or "
                "'semi_implicit_euler'", rd, additional_constraints=str(INTEGRATORS)),
            friction_velocity=declare(
                self, 'friction_velocity', Parameter.Type.DOUBLE, 0.05,
                'smallest regularization velocity v_eps of the Coulomb friction '
                'friction * tanh(qd / v_eps) [rad/s, m/s]; raised per joint where the '
                'integrator needs it', rd),
            limit_stop_frequency=declare(
                self, 'limit_stop_frequency', Parameter.Type.DOUBLE, 50.0,
                'natural frequency [Hz] of the position-limit stops: stiffness I w^2 and '
                'damping 2 zeta I w beyond a limit, I the joint effective inertia; lowered '
                'where the integrator needs it', rd),
            limit_stop_damping_ratio=declare(
                self, 'limit_stop_damping_ratio', Parameter.Type.DOUBLE, 1.0,
                'damping ratio zeta of the position-limit stops', rd, min_value=0.0),
            command_timeout=command_timeout,
            fd_method=declare(
                self, 'fd_method', Parameter.Type.STRING, 'denoc',
                "forward dynamics solver: 'denoc' (Saha's O(n) sweeps) or 'cholesky'", rd,
                additional_constraints=str(FD_METHODS)),
            servo_frequency=declare(
                self, 'servo_frequency', Parameter.Type.DOUBLE, 25.0,
                'natural frequency [Hz] of the default position-servo gains on each '
                "joint's smallest effective inertia (servo.<joint>.kp/kd override them)", rd,
                min_value=1e-3),
            servo_damping_ratio=declare(
                self, 'servo_damping_ratio', Parameter.Type.DOUBLE, 1.0,
                'damping ratio of the default position-servo gains', rd, min_value=1e-3),
            joint_command_timeout=declare(
                self, 'joint_command_timeout', Parameter.Type.DOUBLE, 0.0,
                'a JointState command older than this [s of simulated time] turns into a '
                'position hold where the joints are; <= 0: held until the next one', rd))
        try:
            self.physics.check()
        except ValueError as exc:
            raise RuntimeError(str(exc)) from exc
        self.publish_rate = declare(
            self, 'publish_rate', Parameter.Type.DOUBLE, 100.0,
            'joint_states (and /clock) publishing rate [Hz of simulated time]', rd,
            min_value=1e-3)
        self.real_time_factor = declare(
            self, 'real_time_factor', Parameter.Type.DOUBLE, 1.0,
            'simulated seconds per wall second; 0: as fast as possible', rd, min_value=0.0)
        self.publish_clock = declare(
            self, 'publish_clock', Parameter.Type.BOOL, False,
            'publish the simulated time on /clock (and stamp joint_states with it)', rd)
        self.start_mode = declare(
            self, 'start_mode', Parameter.Type.STRING, 'hold',
            "'hold': frozen at initial_positions until the first effort command; "
            "'paused': paused until ~/pause false; 'running': integrate from the start", rd,
            additional_constraints=str(START_MODES))
        self.initial_positions = declare(
            self, 'initial_positions', Parameter.Type.DOUBLE_ARRAY, [],
            'initial joint positions in the order of the coordinates; fewer (a pose of '
            'the arm, used with its gripper): the rest start at 0 or their nearest limit', rd)
        joint_commands_topic = declare(
            self, 'joint_commands_topic', Parameter.Type.STRING, 'robot_joint_commands',
            'JointState commands (topic_based_ros2_control JointStateTopicSystem)', rd)
        joint_states_topic = declare(
            self, 'joint_states_topic', Parameter.Type.STRING, 'robot_joint_states',
            'joint states also published here, best effort (JointStateTopicSystem); '
            'empty: not published', rd)
        status_period = declare(
            self, 'status_period', Parameter.Type.DOUBLE, 5.0,
            'log the real-time factor every this many seconds; 0: never', rd, min_value=0.0)
        if self.start_mode not in START_MODES:
            raise RuntimeError(f'start_mode must be one of {START_MODES}, '
                               f'got {self.start_mode!r}')

        self.lock = threading.Lock()
        self.sim = None
        self.runner = None
        self.commands = None
        self.duration = None
        self.command_rejections = Rejections(self.get_logger(), 'effort command')
        self.joint_command_rejections = Rejections(self.get_logger(), 'joint command')
        self.joint_commands = None
        self.listeners = []  # called with each published Snapshot
        self.state_listeners = []  # called with each published JointState, after it
        # The simulated time as a ROS clock, for nodes composed in this process
        # (denoc_sim_arm's controller): set as /clock is, without the trip through DDS.
        self.sim_clock = RosTimeClock()
        self._time_source = TimeSource()
        self._time_source.attach_clock(self.sim_clock)
        self._time_source.ros_time_is_active = True
        self._js_msg = None
        self._steady = RclClock(clock_type=ClockType.STEADY_TIME)

        self.js_pub = self.create_publisher(JointState, 'joint_states', 10)
        self.clock_pub = (self.create_publisher(Clock, '/clock', 10)
                          if self.publish_clock else None)
        self._clock_msg = Clock()
        self._unloaded = None     # the model without payload
        self._transition = None   # (from, to, start [s of simulated time], duration)
        self.payload = PayloadService(self, lambda: self._unloaded, self._set_payload)
        self.model = RobotModelSource(self, self._set_model)
        self.command_sub = self.create_subscription(
            Float64MultiArray, 'effort_commands', self._on_command, 10)
        self.robot_js_pub = (self.create_publisher(JointState, joint_states_topic,
                                                   qos_profile_sensor_data)
                             if joint_states_topic else None)
        self.joint_command_sub = self.create_subscription(
            JointState, joint_commands_topic, self._on_joint_command, QoSProfile(depth=1))
        self._tick_waiters = []   # futures completed by the next physics tick
        self.step_generation = 0  # bumped by every reset and state change: ends stepping
        self.create_service(Trigger, '~/reset', self._reset, qos_profile=REQUEST_QOS)
        self.create_service(SetBool, '~/pause', self._pause, qos_profile=REQUEST_QOS)
        if status_period > 0.0:
            self.create_timer(status_period, self._log_status)
        self.simulation_services = attach_simulation_services(self)

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        self._unloaded, self._transition = robot, None
        # the simulated robot has its own constants, which a payload changes in place
        robot = self.payload.start_up(robot).attach(robot.with_payload(
            robot.chain.link_names[-1], 0.0, np.zeros(3), np.zeros((3, 3))))
        sim = Simulation(robot, self.physics,
                         initial_positions=leading_pose(robot, self.initial_positions),
                         start_mode=self.start_mode)
        commands = EffortCommandReader(robot.joint_names, self.joints_param)
        joint_commands = self._joint_command_setup(robot, sim)
        for warning in sim.stability_warnings():
            self.get_logger().warning(f'integrator stability: {warning}')
        self.get_logger().info(f'simulation: {sim.describe()}')
        with self.lock:
            self.sim = sim
            self.commands = commands
            self.joint_commands = joint_commands
            # joint_states carries the mimic joints too, after the coordinates, as
            # joint_state_publisher does (Robot.body_positions and body_rates)
            mimic = robot.mimic_joints
            self._mimic = np.flatnonzero(robot.mimic_map.leader >= 0)   # in mimic's order
            self._js_msg = JointState(name=robot.joint_names + list(mimic))
            if self.runner is None:
                self.runner = SimulationRunner(
                    sim, self.publish_rate, self.real_time_factor, self._publish, self.lock,
                    on_failure=self._on_failure)
                # The physics clock: wall time, never /clock (which this node publishes).
                # Two ticks a chunk: on pace every other one has nothing due; behind, the
                # runner catches up one chunk a tick, at twice the pace, with the
                # commands received between two chunks applied (it never runs a burst).
                self.create_timer(self.runner.period / 2.0, self._tick, clock=self._steady)
            else:
                self.runner.set_simulation(sim)

    def _joint_command_setup(self, robot, sim):
        """Declare the per-joint servo and interface parameters; set the gains on ``sim``."""
        interfaces, gains = {}, {'kp': sim.kp.copy(), 'kd': sim.kd.copy()}
        for i, joint in enumerate(robot.joint_names):
            for key, unit in (('kp', 'N m/rad'), ('kd', 'N m s/rad')):
                name = f'servo.{joint}.{key}'
                if self.has_parameter(name):
                    gains[key][i] = self.get_parameter(name).value
                else:
                    gains[key][i] = declare(
                        self, name, Parameter.Type.DOUBLE, float(gains[key][i]),
                        f'{key} [{unit}] of the position and velocity servos of {joint}',
                        True, min_value=0.0)
            name = f'command_interfaces.{joint}'
            if not self.has_parameter(name):
                declare(self, name, Parameter.Type.STRING_ARRAY, [],
                        f"command interfaces of {joint} in JointStateTopicSystem's compact "
                        'layout (its <ros2_control> block): position, velocity, effort; '
                        'empty: arrays with one entry per name only', True,
                        additional_constraints=str(INTERFACES))
            value = parameter_value(self, name, [])
            if value:
                interfaces[joint] = list(value)
        try:
            sim.set_servo_gains(gains['kp'], gains['kd'])
            reader = JointCommandReader(robot.joint_names, interfaces)
        except ValueError as exc:
            raise RuntimeError(str(exc)) from exc
        for i in unstable_gains(sim.inertia, sim.h, sim.kp, sim.kd):
            self.get_logger().warning(
                f'servo gains of {robot.joint_names[i]} (kp {sim.kp[i]:g}, kd {sim.kd[i]:g}) '
                f'are unstable at {sim.params.physics_rate:g} Hz on its smallest effective '
                f'inertia {sim.inertia[i]:.3g}')
        return reader

    # --- payload -------------------------------------------------------------------
    def _set_payload(self, payload, transition_time):
        """~/set_payload: from the current payload to ``payload`` over the transition time."""
        with self.lock:
            start = self.payload.current
            if self._transition is not None:   # a transition under way: from where it is
                start = self._transition[1]
            self._transition = (start, payload, self.sim.t, transition_time)
        self._advance_payload()

    def _advance_payload(self):
        """Set the simulated payload along the transition (linear in mass and inertia)."""
        with self.lock:
            old, new, t0, duration = self._transition
            s = 1.0 if duration <= 0.0 else min(1.0, max(0.0, (self.sim.t - t0) / duration))
            loaded = new.scaled(s).attach(old.scaled(1.0 - s).attach(self._unloaded))
            robot = self.sim.robot
            robot.model.reals[:] = loaded.model.reals    # read by the compiled physics
            robot.chain = loaded.chain
            if s >= 1.0:
                self._transition = None

    # --- physics -------------------------------------------------------------------
    def _tick(self):
        if self._transition is not None:
            self._advance_payload()
        self.runner.tick(self.duration)
        waiters, self._tick_waiters = self._tick_waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)

    def next_tick(self):
        """Return a future that the next tick of the physics timer completes."""
        future = Future()
        self._tick_waiters.append(future)
        return future

    def step_paused(self, steps):
        """
        Take exactly ``steps`` physics steps while paused and publish; return the count.

        Fewer only if the simulation fails; ValueError if it is not paused.
        """
        with self.lock:
            done = self.sim.step_paused(steps)
        snapshot = self.runner.snapshot()
        if snapshot is not None:
            self._publish(snapshot)
        return done

    @property
    def finished(self) -> bool:
        """Return True once the simulated time has reached :attr:`duration`."""
        return self.runner is not None and self.runner.finished(self.duration)

    @property
    def failure(self):
        """Return why the simulation stopped (a non-finite state), else None."""
        return self.sim.failure if self.sim is not None else None

    def _publish(self, snapshot):
        msg = self._js_msg
        _time_msg(self._clock_msg.clock, snapshot.t)
        self._time_source.clock_callback(self._clock_msg)
        if self.clock_pub is not None:
            _time_msg(msg.header.stamp, snapshot.t)
            self.clock_pub.publish(self._clock_msg)
        else:
            msg.header.stamp = self.get_clock().now().to_msg()
        mimics, robot = self._mimic, self.sim.robot
        if len(mimics):
            msg.position = np.concatenate(
                (snapshot.q, robot.body_positions(snapshot.q)[mimics])).tolist()
            msg.velocity = np.concatenate(
                (snapshot.qd, robot.body_rates(snapshot.qd)[mimics])).tolist()
            msg.effort = np.concatenate((snapshot.effort, np.zeros(len(mimics)))).tolist()
        else:
            msg.position = snapshot.q.tolist()
            msg.velocity = snapshot.qd.tolist()
            msg.effort = snapshot.effort.tolist()
        self.js_pub.publish(msg)
        if self.robot_js_pub is not None:
            self.robot_js_pub.publish(msg)
        for listener in self.listeners:
            listener(snapshot)
        for listener in self.state_listeners:
            listener(msg)

    def _on_failure(self, message):
        self.get_logger().error(f'simulation stopped: {message}; call ~/reset')

    # --- inputs ----------------------------------------------------------------------
    def _on_command(self, msg):
        if self.commands is None:
            self.command_rejections.add(Rejected('no model', 'no robot model yet'))
            return
        try:
            tau = self.commands.read(msg)
        except Rejected as exc:
            self.command_rejections.add(exc)
            return
        with self.lock:
            try:
                self.sim.set_command(tau)
            except CommandOutOfRange as exc:
                self.command_rejections.add(Rejected('out of range', str(exc)))
            except ValueError as exc:  # the model changed under this command
                self.command_rejections.add(Rejected('length', str(exc)))

    def _on_joint_command(self, msg):
        if self.joint_commands is None:
            self.joint_command_rejections.add(Rejected('no model', 'no robot model yet'))
            return
        try:
            command = self.joint_commands.read(msg)
        except Rejected as exc:
            self.joint_command_rejections.add(exc)
            return
        with self.lock:
            try:
                self.sim.set_joint_command(*command)
            except CommandOutOfRange as exc:
                self.joint_command_rejections.add(Rejected('out of range', str(exc)))
            except ValueError as exc:  # the model changed under this command
                self.joint_command_rejections.add(Rejected('invalid', str(exc)))

    def _reset(self, request, response):
        if self.sim is None:
            response.success = False
            response.message = 'no robot model yet'
            return response
        with self.lock:
            response.message = self.sim.reset()
            self.runner.set_simulation(self.sim)
            self.step_generation += 1
        response.success = True
        self.get_logger().info(response.message)
        return response

    def _pause(self, request, response):
        if self.sim is None:
            response.success = False
            response.message = 'no robot model yet'
            return response
        with self.lock:
            self.sim.set_paused(request.data)
            self.step_generation += 1
        response.success = True
        response.message = 'paused' if request.data else 'resumed'
        return response

    # --- status ----------------------------------------------------------------------
    def status(self):
        """Return (sim time, windowed real-time factor, mode, q) or None without a model."""
        with self.lock:
            sim = self.sim
            if sim is None:
                return None
            mode = 'failed' if sim.failure else 'paused' if sim.paused else sim.mode
            return sim.t, self.runner.meter.rtf, mode, sim.q

    def _log_status(self):
        status = self.status()
        if status is None:
            return
        t, rtf, mode, _ = status
        if mode == 'failed':
            self.get_logger().error(f'simulation stopped at {t:.3f} s: {self.sim.failure}; '
                                    'call ~/reset', throttle_duration_sec=30.0)
            return
        target = ('as fast as possible' if self.real_time_factor == 0.0
                  else f'target {self.real_time_factor:g}')
        rtf_text = 'n/a' if np.isnan(rtf) else f'{rtf:.2f}'
        self.get_logger().info(
            f'sim time {t:.2f} s, real-time factor {rtf_text} ({target}), mode {mode}, '
            f'effort commands rejected: {self.command_rejections}, joint commands '
            f'rejected: {self.joint_command_rejections}')


def main(args=None):
    """Run the sim node until shutdown."""
    return run_node(SimNode, 'sim_node', args=args)


if __name__ == '__main__':
    sys.exit(main())
