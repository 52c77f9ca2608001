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
  The first command ends hold mode.  If ``joints`` leaves chain joints out (an arm's
  joints, without its gripper's finger), JointState commands drive those, beside the
  effort commands (the gripper controller's); otherwise either takes over from the
  other.  ``effort_mode``: ``raw`` (default), the command
  is the joint torque; ``gravity_compensated``, it is the torque on top of the arm's
  own gravity g(q), which the drives add (evaluated once a publish period), as
  torque-controlled arms do: a zero command (or none, once timed out) holds the arm,
  apart from drift against friction.  Effort-mode joints of JointState commands alike.
  A joint's drive never pushes it faster than its URDF velocity limit.
  ``robot_joint_commands`` (sensor_msgs/JointState, reliable, depth 1; the
  ``joint_commands_topic`` parameter): the commands of topic_based_ros2_control's
  JointStateTopicSystem and Isaac-style bridges, joints by name, per joint a position
  (with an optional velocity) for a position servo, a velocity for a velocity servo,
  or an effort (:mod:`.joint_commands`, :mod:`denoc_dynamics.servo`).  The servos run
  at the physics rate with the gains ``servo.<joint>.kp`` [N m/rad] and
  ``servo.<joint>.kd`` [N m s/rad] (defaults from ``servo_frequency`` and
  ``servo_damping_ratio`` on the joint's effective inertia; settable at runtime with
  ``ros2 param set``, ramped in, refused if negative or unstable) plus the model's gravity
  and bias forces, evaluated once a publish period and held; the effort is limited to
  the URDF's.  The command is held until the next (``joint_command_timeout`` > 0:
  then the joints hold their position); joints a command leaves out keep theirs.  A
  bad command (unknown or repeated joints, NaN, wrong array lengths, a position
  outside the limits) is rejected, counted and logged; nothing moves.  A JointState
  command takes over from effort commands and the other way round, on the joints the
  ``joints`` parameter covers (all, by default).
  ``robot_description`` (std_msgs/String, transient_local): only when neither the
  ``robot_description`` nor the ``urdf_path`` parameter is set.
  With ``lockstep`` true, a controller that answers every joint state with one command
  (either topic) is in the simulator's loop, as a controller manager inside the step
  of gz_ros2_control or mujoco_ros2_control: the next publish period is simulated only
  once the command for the last one came (or ``lockstep_timeout`` seconds of wall time
  passed), so under load the control is never a period late and the real-time factor
  drops instead (:class:`~denoc_dynamics.runner.SimulationRunner`).

Publishes
  ``joint_states`` (sensor_msgs/JointState) at ``publish_rate``: position, velocity and
  effort: what a joint torque sensor on the link side reads (Franka's tau_J), the
  drives' torque (the clamped command, plus g(q) when gravity-compensated, cut at
  the velocity limits) plus the joint's
  friction, damping and limit stop, zero in hold mode; so that the links move by
  I qdd + C qd + g = effort + tau_ext, and an observer of external torques
  (dynamics_node) sees the pushes, not the friction.  Always finite: a non-finite
  state stops the simulation.
  Stamped with the simulated time when ``publish_clock`` is true, else with the node's
  clock.
  ``robot_joint_states`` (sensor_msgs/JointState, best effort; the
  ``joint_states_topic`` parameter, empty: none): the same, for JointStateTopicSystem.
  ``/clock`` (rosgraph_msgs/Clock) at ``publish_rate`` if ``publish_clock`` is true.
  ``/tf`` and ``/tf_static`` (tf2_msgs/TFMessage) if ``publish_tf`` is true: every link,
  as robot_state_publisher (:mod:`.tf_broadcaster`; names prefixed by ``frame_prefix``).

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

Wrenches on links, a virtual wall and simulated F/T sensors: :mod:`.sim_contact`.

If the state becomes non-finite the integration stops, an error is logged and nothing
more is published until ``~/reset``.
"""

import sys

import numpy as np
from rclpy.clock import Clock as RclClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import QoSProfile
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from std_srvs.srv import Trigger

from .diagnostics import Diagnostics
from .diagnostics import ERROR
from .diagnostics import OK
from .diagnostics import STALE
from .diagnostics import WARN
from .drive_parameters import declare_drive_parameters
from .joint_io import EffortCommandReader
from .joint_io import Rejected
from .joint_io import Rejections
from .joint_io import REQUEST_QOS
from .launch_support import arm_joints
from .node_main import run_node
from .parameters import SIM_NODE
from .payload_service import PayloadService
from .robot_model import RobotModelSource
from .ros_time import set_duration
from .ros_time import SimulatedClock
from .runtime_gains import RuntimeGains
from .sim_contact import SimContact
from .simulation_services import attach_simulation_services
from .tf_broadcaster import make_tf_broadcaster
from ..drives import CommandOutOfRange
from ..runner import SimulationRunner
from ..sim_settings import leading_pose
from ..sim_settings import PhysicsParameters
from ..simulation import Simulation

#: The PhysicsParameters among the entries of SIM_NODE.
PHYSICS_NAMES = [name for name in PhysicsParameters.__dataclass_fields__
                 if name in SIM_NODE.entries]


class SimNode(Node):
    """
    The simulated arm; add it to an executor and spin.

    The physics starts with the robot model (a timer, created then).  ``duration``
    [s of simulated time], if set before spinning, stops the simulation there
    (:attr:`finished` becomes true).
    """

    sim = runner = None             # with the robot model
    commands = joint_commands = None
    duration = None
    _js_msg = _unloaded = None        # the joint state message; the model without payload
    _transition = None                # (from, to, start [s of simulated time], duration)
    step_generation = 0               # bumped by every reset and state change: ends stepping

    def __init__(self, node_name='sim_node', **kwargs):
        """Declare the parameters (SIM_NODE) and load the model (or wait for it)."""
        super().__init__(node_name, **kwargs)
        self.params = params = SIM_NODE.declare(self)
        self.physics = PhysicsParameters(**{name: params[name] for name in PHYSICS_NAMES})
        self.servo_gains = RuntimeGains(self, SIM_NODE, 'servo', ('kp', 'kd'))
        log = self.get_logger()
        self.command_rejections = Rejections(log, 'effort command')
        self.joint_command_rejections = Rejections(log, 'joint command')
        self.listeners = []  # called with each published Snapshot
        self.state_listeners = []  # called with each published JointState, after it
        self.time = SimulatedClock(self, params.publish_clock)
        self.sim_clock = self.time.clock   # for nodes composed in this process
        self._steady = RclClock(clock_type=ClockType.STEADY_TIME)
        self._tick_waiters = []   # futures completed by the next physics tick
        self.js_pub = self.create_publisher(JointState, 'joint_states', 10)
        self.robot_js_pub = (self.create_publisher(JointState, params.joint_states_topic,
                                                   qos_profile_sensor_data)
                             if params.joint_states_topic else None)
        self.payload = PayloadService(self, lambda: self._unloaded, self._set_payload)
        self.contact = SimContact(self)   # link wrenches, virtual wall, F/T sensors
        self.tf = (make_tf_broadcaster(self, params.frame_prefix) if params.publish_tf
                   else None)
        self.model = RobotModelSource(self, self._set_model)
        self.command_sub = self.create_subscription(
            Float64MultiArray, 'effort_commands', self._on_command, 10)
        self.joint_command_sub = self.create_subscription(
            JointState, params.joint_commands_topic, self._on_joint_command,
            QoSProfile(depth=1))
        self.create_service(Trigger, '~/reset', self._reset, qos_profile=REQUEST_QOS)
        self.create_service(SetBool, '~/pause', self._pause, qos_profile=REQUEST_QOS)
        if params.status_period > 0.0:
            self.create_timer(params.status_period, self._log_status)
        self.simulation_services = attach_simulation_services(self)
        self.diagnostics = Diagnostics(self, self._robot_name)
        self.diagnostics.add('simulation', self._diagnose_simulation)
        self.diagnostics.add('inputs', self._diagnose_inputs)

    @property
    def initial_positions(self):
        """Return the ``initial_positions`` parameter (a leading part of a pose, or empty)."""
        return self.params.initial_positions

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        params = self.params
        joints = params.joints or arm_joints(robot, params.gripper)   # ValueError: refused
        self._unloaded, self._transition = robot, None
        # the simulated robot has its own constants, which a payload changes in place
        robot = self.payload.start_up(robot).attach(robot.with_payload(
            robot.chain.link_names[-1], 0.0, np.zeros(3), np.zeros((3, 3))))
        sim = Simulation(robot, self.physics,
                         initial_positions=leading_pose(robot, params.initial_positions),
                         start_mode=params.start_mode)
        commands = EffortCommandReader(robot.joint_names, joints)
        joint_commands = declare_drive_parameters(self, self.servo_gains, sim,
                                                  robot.joint_names)
        self.contact.set_model(sim)
        for warning in sim.model.stability_warnings():
            self.get_logger().warning(f'integrator stability: {warning}')
        self.get_logger().info(f'simulation: {sim.model.describe()}')
        if self.tf is not None:
            self.tf.set_robot(robot)
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
                sim, params.publish_rate, params.real_time_factor, self._publish,
                on_failure=self._on_failure,
                lockstep_timeout=params.lockstep_timeout if params.lockstep else None)
            # The physics clock: wall time, never /clock (which this node publishes).
            # Two ticks a chunk: on pace every other one has nothing due; behind, the
            # runner catches up one chunk a tick, at twice the pace, with the commands
            # received between two chunks applied (it never runs a burst).
            self.create_timer(self.runner.period / 2.0, self._tick, clock=self._steady)
        else:
            self.runner.set_simulation(sim)

    # --- payload -------------------------------------------------------------------
    def _set_payload(self, payload, transition_time):
        """~/set_payload: from the current payload to ``payload`` over the transition time."""
        start = self.payload.current
        if self._transition is not None:   # a transition under way: from where it is
            start = self._transition[1]
        self._transition = (start, payload, self.sim.t, transition_time)
        self._advance_payload()

    def _advance_payload(self):
        """Set the simulated payload along the transition (linear in mass and inertia)."""
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
        ramp = self.servo_gains.ramp
        if ramp is not None and ramp.ramping:
            if ramp.at(self.sim.t):
                self.sim.drives.set_servo_gains(ramp.values['kp'], ramp.values['kd'])
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
        self.time.set_time(snapshot.t)
        if self.time.publisher is not None:
            set_duration(msg.header.stamp, snapshot.t)
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
        if self.tf is not None:
            self.tf.publish(msg.header.stamp, snapshot.q)
        if self.robot_js_pub is not None:
            self.robot_js_pub.publish(msg)
        self.contact.publish(snapshot, msg.header.stamp)
        for listener in self.listeners:
            listener(snapshot)
        for listener in self.state_listeners:
            listener(msg)

    def _on_failure(self, message):
        self.get_logger().error(f'simulation stopped: {message}; call ~/reset')

    # --- inputs ----------------------------------------------------------------------
    def _on_command(self, msg):
        self._take(msg, self.commands, self.command_rejections, 'length',
                   lambda tau: self.sim.set_command(tau, self.commands.covered))

    def _on_joint_command(self, msg):
        self._take(msg, self.joint_commands, self.joint_command_rejections, 'invalid',
                   lambda command: self.sim.set_joint_command(*command))

    def _take(self, msg, reader, rejections, invalid, apply):
        """Read a command with ``reader`` and ``apply`` it; count what is rejected, and why."""
        if reader is None:
            rejections.add(Rejected('no model', 'no robot model yet'))
            return
        try:
            apply(reader.read(msg))
        except Rejected as exc:
            rejections.add(exc)
            return
        except CommandOutOfRange as exc:
            rejections.add(Rejected('out of range', str(exc)))
            return
        except ValueError as exc:  # the model changed under this command
            rejections.add(Rejected(invalid, str(exc)))
            return
        self.runner.command_arrived()

    def _reset(self, request, response):
        if self.sim is None:
            response.success = False
            response.message = 'no robot model yet'
            return response
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
        self.sim.set_paused(request.data)
        self.step_generation += 1
        response.success = True
        response.message = 'paused' if request.data else 'resumed'
        return response

    # --- status ----------------------------------------------------------------------
    def status(self):
        """Return (sim time, windowed real-time factor, mode, q) or None without a model."""
        sim = self.sim
        if sim is None:
            return None
        mode = 'failed' if sim.failure else 'paused' if sim.paused else sim.mode
        return sim.t, self.runner.meter.rtf, mode, sim.q

    def summary(self) -> str:
        """Return the simulated time and the overall real-time factor, in words."""
        if self.sim is None:
            return 'no robot model'
        return (f'simulated {self.sim.t:.3f} s, overall real-time factor '
                f'{self.runner.meter.overall:.2f}')

    def _log_status(self):
        status = self.status()
        if status is None:
            return
        t, rtf, mode, _ = status
        if mode == 'failed':
            self.get_logger().error(f'simulation stopped at {t:.3f} s: {self.sim.failure}; '
                                    'call ~/reset', throttle_duration_sec=30.0)
            return
        rate = self.params.real_time_factor
        target = 'as fast as possible' if rate == 0.0 else f'target {rate:g}'
        rtf_text = 'n/a' if np.isnan(rtf) else f'{rtf:.2f}'
        self.get_logger().info(
            f'sim time {t:.2f} s, real-time factor {rtf_text} ({target}), mode {mode}, '
            f'effort commands rejected: {self.command_rejections}, joint commands '
            f'rejected: {self.joint_command_rejections}')

    def _robot_name(self):
        sim = self.sim
        return getattr(getattr(sim.robot, 'chain', None), 'name', '') if sim else ''

    def _diagnose_simulation(self, report):
        """
        /diagnostics ``sim_node: simulation``: model, rates, real-time factor, mode.

        ERROR once the simulation diverged (until ~/reset); WARN while the windowed
        real-time factor is below 90 % of a set target.
        """
        status = self.status()
        if status is None:
            report.summary(STALE, 'no robot model yet')
            return
        t, rtf, mode, _ = status
        sim = self.sim
        report.add('joints', sim.n)
        report.add('integrator', sim.params.integrator)
        report.add('fd_method', sim.params.fd_method)
        report.add('physics_rate [Hz]', sim.params.physics_rate)
        report.add('publish_rate [Hz]', float(self.params.publish_rate))
        report.add('real-time factor', rtf)
        report.add('real-time factor target', float(self.params.real_time_factor))
        report.add('simulated time [s]', t)
        report.add('mode', mode)
        report.add('effort_mode', sim.params.effort_mode)
        if self.params.lockstep:
            report.add('lockstep: periods simulated without their command',
                       self.runner.lockstep_misses)
        report.summary(OK, f'{mode}, real-time factor {rtf:.2f}')
        if mode == 'failed':
            report.summary(ERROR, f'diverged: {sim.failure}; call ~/reset')
        elif (self.params.real_time_factor > 0.0 and mode != 'paused'
              and rtf < 0.9 * self.params.real_time_factor):
            report.summary(WARN, f'real-time factor below its target '
                                 f'{self.params.real_time_factor:g}')

    def _diagnose_inputs(self, report):
        """/diagnostics ``sim_node: inputs``: the rejection counters (WARN when one rose)."""
        report.counter('effort commands rejected', self.command_rejections)
        report.counter('joint commands rejected', self.joint_command_rejections)


def main(args=None):
    """Run the sim node until shutdown."""
    return run_node(SimNode, 'sim_node', args=args)


if __name__ == '__main__':
    sys.exit(main())
