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
  ``robot_description`` (std_msgs/String, transient_local): only when neither the
  ``robot_description`` nor the ``urdf_path`` parameter is set.

Publishes
  ``joint_states`` (sensor_msgs/JointState) at ``publish_rate``: position, velocity and
  effort (the torque the drives applied: the clamped command, cut at the velocity
  limits, zero in hold mode).  Always finite: a non-finite state stops the simulation.
  Stamped with the simulated time when ``publish_clock`` is true, else with the node's
  clock.
  ``/clock`` (rosgraph_msgs/Clock) at ``publish_rate`` if ``publish_clock`` is true.

Services
  ``~/reset`` (std_srvs/Trigger): back to the initial state in hold mode; the message
  reports a previous non-finite failure.  ``~/pause`` (std_srvs/SetBool): true pauses
  (time and state frozen), false resumes.

If the state becomes non-finite the integration stops, an error is logged and nothing
more is published until ``~/reset``.
"""

import sys
import threading

import numpy as np
from rclpy.clock import Clock as RclClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from std_srvs.srv import Trigger

from .joint_io import declare_command_parameters
from .joint_io import EffortCommandReader
from .joint_io import Rejected
from .joint_io import Rejections
from .node_main import run_node
from .parameters import declare
from .robot_model import RobotModelSource
from ..simulation import CommandOutOfRange
from ..simulation import FD_METHODS
from ..simulation import INTEGRATORS
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
                additional_constraints=str(FD_METHODS)))
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
            'initial joint positions in chain order; empty: all zero', rd)
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
        self.listeners = []  # called with each published Snapshot
        self._js_msg = None
        self._steady = RclClock(clock_type=ClockType.STEADY_TIME)

        self.js_pub = self.create_publisher(JointState, 'joint_states', 10)
        self.clock_pub = (self.create_publisher(Clock, '/clock', 10)
                          if self.publish_clock else None)
        self._clock_msg = Clock()
        self.model = RobotModelSource(self, self._set_model)
        self.command_sub = self.create_subscription(
            Float64MultiArray, 'effort_commands', self._on_command, 10)
        self.create_service(Trigger, '~/reset', self._reset)
        self.create_service(SetBool, '~/pause', self._pause)
        if status_period > 0.0:
            self.create_timer(status_period, self._log_status)

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        sim = Simulation(robot, self.physics, initial_positions=self.initial_positions,
                         start_mode=self.start_mode)
        commands = EffortCommandReader(robot.joint_names, self.joints_param)
        for warning in sim.stability_warnings():
            self.get_logger().warning(f'integrator stability: {warning}')
        self.get_logger().info(f'simulation: {sim.describe()}')
        with self.lock:
            self.sim = sim
            self.commands = commands
            self._js_msg = JointState(name=robot.joint_names)
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

    # --- physics -------------------------------------------------------------------
    def _tick(self):
        self.runner.tick(self.duration)

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
        if self.clock_pub is not None:
            _time_msg(msg.header.stamp, snapshot.t)
            _time_msg(self._clock_msg.clock, snapshot.t)
            self.clock_pub.publish(self._clock_msg)
        else:
            msg.header.stamp = self.get_clock().now().to_msg()
        msg.position = snapshot.q.tolist()
        msg.velocity = snapshot.qd.tolist()
        msg.effort = snapshot.effort.tolist()
        self.js_pub.publish(msg)
        for listener in self.listeners:
            listener(snapshot)

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

    def _reset(self, request, response):
        if self.sim is None:
            response.success = False
            response.message = 'no robot model yet'
            return response
        with self.lock:
            response.message = self.sim.reset()
            self.runner.set_simulation(self.sim)
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
            f'effort commands rejected: {self.command_rejections}')


def main(args=None):
    """Run the sim node until shutdown."""
    return run_node(SimNode, 'sim_node', args=args)


if __name__ == '__main__':
    sys.exit(main())
