"""
dynamics_node: the DeNOC dynamics of a robot as ROS 2 topics and services.

Subscribes
  ``joint_states`` (sensor_msgs/JointState, sensor-data QoS with a history of 100:
  0.1 s of states at 1 kHz, :data:`~.joint_io.STATE_QOS`), taken as the serialized
  sample and read by :mod:`.joint_state_cdr` (rclpy's message conversion was half of
  the node's time per state; a sample that cannot be read is rejected as
  ``malformed``): mapped by joint name;
  names that are not chain joints are ignored.  A message with a chain joint
  missing or named twice, a NaN/Inf, a joint speed above ``max_velocity``, or
  position/velocity arrays whose lengths differ from the names is rejected (counted,
  throttled warning); so is a state whose dynamics overflow to NaN/Inf with the
  latest effort command: nothing non-finite is ever published.  Only the arm's own
  states are used (:mod:`.state_gate`): while the topic has a second publisher
  (another arm on the domain without a namespace), states stamped before the previous
  one (a bag replay) or ahead of the node's clock are rejected, counted and logged.
  ``effort_commands`` (std_msgs/Float64MultiArray): joint efforts in the order of the
  ``joints`` parameter (default: chain order); a command older than
  ``command_timeout`` counts as zero torque.
  ``robot_description`` (std_msgs/String, transient_local): only when neither the
  ``robot_description`` nor the ``urdf_path`` parameter is set.

Publishes (each topic while it has a subscriber: an output nobody reads costs nothing;
the subscriber counts are kept from the publishers' matched events, :mod:`.listened`;
the joint-space outputs are written as serialized bytes, :mod:`.joint_state_cdr`)
  ``~/joint_accelerations`` (denoc_dynamics_interfaces/JointAccelerations): for every
  accepted joint state, qdd = FD(q, qd, latest command) by Saha's O(n) sweeps
  (parameter ``fd_method``), stamped like the state.
  ``~/inertia_matrix`` (denoc_dynamics_interfaces/InertiaMatrix): every
  ``inertia_every_n`` accepted states.
  ``~/gravity_torques`` and ``~/bias_forces`` (sensor_msgs/JointState, chain joint
  names, the values in the ``effort`` field; position/velocity left empty): if the
  ``publish_gravity_torques`` / ``publish_bias_forces`` parameters are true.
  ``~/task_space`` (denoc_dynamics_interfaces/TaskSpace): pose, Jacobian, J qd, J-dot
  qd and task-space inertia of the link ``task_space_frame`` (empty: off) for every
  accepted state; the inertia is left empty where J M^-1 J^T is singular.

  ``~/external_torques``, ``~/external_wrench``, ``~/contact``: the momentum observer's
  estimate of what the world does to the robot, if ``estimate_external_torques`` is
  true (:mod:`.external_torques`).

Services
  ``~/get_inertia_matrix`` (GetInertiaMatrix), ``~/forward_dynamics``
  (ForwardDynamics), ``~/inverse_dynamics`` (InverseDynamics), ``~/get_task_space``
  (GetTaskSpace: a frame's task space at a state, or at the latest).  A request that
  cannot be served (the same checks as the topic's, or a result that is not finite)
  gets ``success = false`` and ``reason: detail`` in ``message``.
  ``~/set_payload`` (SetPayload), with ``~/payload`` latched: the model's payload,
  switched at once (:mod:`.payload_service`; parameters ``payload.*`` at start-up).

The rejection counters are attributes (:attr:`DynamicsNode.state_rejections`,
:attr:`DynamicsNode.command_rejections`, :attr:`DynamicsNode.request_rejections`)
and are logged every ``diagnostics_period`` seconds when they changed.
"""

from functools import partial
import sys
import time
from typing import NamedTuple

from denoc_dynamics_interfaces.msg import InertiaMatrix
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.msg import TaskSpace
from denoc_dynamics_interfaces.srv import ForwardDynamics
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
from denoc_dynamics_interfaces.srv import GetTaskSpace
from denoc_dynamics_interfaces.srv import InverseDynamics
import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .diagnostics import Diagnostics
from .diagnostics import OK
from .diagnostics import STALE
from .external_torques import ExternalTorques
from .joint_io import EffortCommandReader
from .joint_io import JointStateReader
from .joint_io import read_joint_state
from .joint_io import Rejected
from .joint_io import Rejections
from .joint_io import STATE_QOS
from .joint_state_cdr import JointStateCdrReader
from .joint_state_cdr import JointValuesCdrWriter
from .joint_state_cdr import read_joint_state_bytes
from .launch_support import arm_joints
from .listened import ListenedPublisher
from .node_main import run_node
from .parameters import DYNAMICS_NODE
from .payload_service import PayloadService
from .robot_model import RobotModelSource
from .state_gate import StateGate
from .task_space_io import task_space_message
from .. import NonFiniteResult
from .. import Robot
from ..drives import HeldCommand
from ..names import name_list


def _flat(matrix) -> list:
    return np.asarray(matrix, dtype=float).ravel().tolist()


def _listened(publisher):
    """Return ``publisher`` if it exists and its topic has a subscriber, else None."""
    if publisher is not None and publisher.get_subscription_count() > 0:
        return publisher
    return None


def _rejected(exc) -> Rejected:
    """Return the Rejected (counter reason and detail) for an exception of a callback."""
    if isinstance(exc, Rejected):
        return exc
    reason = 'non-finite result' if isinstance(exc, NonFiniteResult) else 'dynamics failed'
    return Rejected(reason, str(exc) or type(exc).__name__)


class RequestState(NamedTuple):
    """The state of a service request: chain order, and each requested name's chain row."""

    robot: Robot
    reader: JointStateReader
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    rows: np.ndarray    # chain index of each name of the request, -1: not a chain joint


class ServedState(NamedTuple):
    """The state a service answers for: the request's, or the latest joint state."""

    robot: Robot
    stamp: object        # builtin_interfaces/Time of the state
    q: np.ndarray
    qd: np.ndarray
    source: str          # 'the requested state' or 'the latest joint state', for messages


class DynamicsNode(Node):
    """Forward/inverse dynamics and the inertia matrix of the robot, over ROS 2."""

    robot = states = commands = None   # with the robot model
    latest_state = None   # (stamp, q, qd) of the latest accepted joint state
    accepted = 0
    _logged_counts = _last_now = None
    _unloaded = None      # the model without payload

    def __init__(self, node_name='dynamics_node', **kwargs):
        """Declare the parameters, load the model (or wait for it) and set up the I/O."""
        super().__init__(node_name, **kwargs)
        self.params = p = DYNAMICS_NODE.declare(self)
        log = self.get_logger()
        self.state_rejections = Rejections(log, 'joint state')
        self.command_rejections = Rejections(log, 'effort command')
        self.request_rejections = Rejections(log, 'service request')
        self.acc_pub = ListenedPublisher(self, JointAccelerations, '~/joint_accelerations', 10)
        self.inertia_pub = ListenedPublisher(self, InertiaMatrix, '~/inertia_matrix', 10)
        self.gravity_pub = (ListenedPublisher(self, JointState, '~/gravity_torques', 10)
                            if p.publish_gravity_torques else None)
        self.bias_pub = (ListenedPublisher(self, JointState, '~/bias_forces', 10)
                         if p.publish_bias_forces else None)
        self.task_space_pub = (ListenedPublisher(self, TaskSpace, '~/task_space', 10)
                               if p.task_space_frame else None)
        self._clock_handle = self.get_clock().handle   # read by _now, once per message
        self.payload = PayloadService(self, lambda: self._unloaded, self._set_payload)
        self.external = ExternalTorques(self)   # the momentum observer, if enabled
        self.model = RobotModelSource(self, self._set_model)
        # the EventsExecutor this node runs on gives no message info (publisher GID):
        # the gate counts the topic's publishers instead
        self.gate = StateGate(self.state_rejections, logger=log)
        self.cdr = JointStateCdrReader()
        self.state_sub = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state_bytes, STATE_QOS, raw=True)
        self.create_timer(1.0, self._count_state_publishers)
        self.command_sub = self.create_subscription(
            Float64MultiArray, 'effort_commands', self._on_command, 10)
        for srv_type, name, compute in (
                (GetInertiaMatrix, '~/get_inertia_matrix', self._get_inertia_matrix),
                (ForwardDynamics, '~/forward_dynamics', self._forward_dynamics),
                (InverseDynamics, '~/inverse_dynamics', self._inverse_dynamics),
                (GetTaskSpace, '~/get_task_space', self._get_task_space)):
            self.create_service(srv_type, name, partial(self._serve, compute))
        if p.diagnostics_period > 0.0:
            self.create_timer(p.diagnostics_period, self._log_counters)
        self._rate_sample = (time.monotonic(), 0)  # (wall time, accepted) of the last report
        self.diagnostics = Diagnostics(self, self._robot_name)
        self.diagnostics.add('dynamics', self._diagnose_dynamics)
        self.diagnostics.add('inputs', self._diagnose_inputs)

    # --- model -----------------------------------------------------------------------
    def _robot_name(self) -> str:
        return self.robot.chain.name if self.robot is not None else ''

    def _set_model(self, robot, source):
        joints = self.params.joints or arm_joints(robot, self.params.gripper)
        commands = EffortCommandReader(robot.joint_names, joints)
        if commands.ignored:
            self.get_logger().warning(
                f'joints parameter entries {commands.ignored} are not chain joints; their '
                'effort commands are dropped')
        self._unloaded = robot
        self.robot = self.payload.start_up(robot).attach(robot)
        self.external.set_model(self.robot)
        self.states = JointStateReader(robot.joint_names, self.params.max_velocity)
        self.commands = commands
        self.held = HeldCommand(robot.n, self.params.command_timeout)   # the latest command
        self.latest_state = None
        self.acc_out = JointValuesCdrWriter(JointAccelerations, robot.joint_names)
        self.inertia_msg = InertiaMatrix(joint_names=robot.joint_names)
        self.efforts_out = JointValuesCdrWriter(JointState, robot.joint_names, empty_before=2)
        self.task_space_on = self.task_space_pub is not None
        frame = self.params.task_space_frame
        if self.task_space_on and frame not in robot.frames:
            self.task_space_on = False
            self.get_logger().error(
                f'task_space_frame {frame!r} is not a link of the robot '
                f'(links: {", ".join(robot.frames)}): ~/task_space is not published')

    def _set_payload(self, payload, transition_time):
        """~/set_payload: the model with the new payload, at once (the observer's too)."""
        self.robot = payload.attach(self._unloaded)
        self.external.set_model(self.robot)

    def _now(self) -> float:
        """Return the node's time [s]: ROS time (``/clock``'s under use_sim_time)."""
        clock = self._clock_handle    # rclpy's Clock.now() without its Time object
        with clock:
            return clock.get_now().nanoseconds * 1e-9

    # --- topics ----------------------------------------------------------------------
    def _on_command(self, msg):
        if self.commands is None:
            self.command_rejections.add(Rejected('no model', 'no robot model yet'))
            return
        try:
            self.held.hold(self.commands.read(msg), self._now())
        except Rejected as exc:
            self.command_rejections.add(exc)

    def _count_state_publishers(self):
        if self.state_sub is not None:
            self.gate.check_graph(self.count_publishers(self.state_sub.topic_name))

    def _on_joint_state_bytes(self, data):
        """Take one serialized joint state from the topic (:mod:`.joint_state_cdr`)."""
        try:
            msg = read_joint_state_bytes(self.cdr, data)
        except (RuntimeError, ValueError) as exc:   # rclpy could not read it either
            self.state_rejections.add(Rejected('malformed', f'{len(data)}-byte sample is '
                                               f'not a sensor_msgs/JointState: {exc}'))
            return
        self._on_joint_state(msg, {})

    def _on_joint_state(self, msg, info=None):
        """
        Take one joint state (``info``: as :meth:`.state_gate.StateGate.admit`).

        Every accepted state goes through the forward dynamics (and the observer, if
        on); each other output is computed and sent only while its topic has a
        subscriber, as robot_state_publisher does: its content does not change.
        """
        observed = self.external.observer is not None
        state = read_joint_state(self.states, msg, self.state_rejections, effort=observed)
        if state is None:
            return
        now = self._now()
        if self._last_now is not None and now < self._last_now:
            self.gate.restart()    # the clock jumped back: a reset simulation
        self._last_now = now
        if not self.gate.admit(msg, now, info):
            return
        q, qd = state[0], state[1]
        robot = self.robot
        tau = self.held.current(now)
        every = self.params.inertia_every_n
        inertia_due = (every > 0 and (self.accepted + 1) % every == 0
                       and self.inertia_pub.get_subscription_count() > 0)
        gravity_pub = _listened(self.gravity_pub)
        bias_pub = _listened(self.bias_pub)
        task_space_on = self.task_space_on and _listened(self.task_space_pub) is not None
        try:  # every output first: a non-finite one rejects the state, nothing is sent
            qdd = robot.forward_dynamics(q, qd, tau, method=self.params.fd_method)
            inertia = robot.inertia_matrix(q) if inertia_due else None
            gravity = robot.gravity_torques(q) if gravity_pub is not None else None
            bias = robot.bias_forces(q, qd) if bias_pub is not None else None
            task_space = (task_space_message(TaskSpace(), robot, q, qd,
                                             self.params.task_space_frame, '', singular_ok=True)
                          if task_space_on else None)
        except (ValueError, np.linalg.LinAlgError) as exc:
            rejected = _rejected(exc)
            if isinstance(exc, NonFiniteResult):
                rejected.detail += (f' (largest |velocity| {np.abs(qd).max():.3g}, largest '
                                    f'|effort command| {np.abs(tau).max():.3g})')
            self.state_rejections.add(rejected)
            return
        stamp = msg.header.stamp
        self.accepted += 1
        self.latest_state = (stamp, q, qd)
        if self.acc_pub.get_subscription_count():
            self.acc_pub.publish(self.acc_out.serialize(stamp, qdd))
        if inertia is not None:
            self.inertia_msg.header.stamp = stamp
            self.inertia_msg.data = _flat(inertia)
            self.inertia_pub.publish(self.inertia_msg)
        if gravity is not None:
            gravity_pub.publish(self.efforts_out.serialize(stamp, gravity))
        if bias is not None:
            bias_pub.publish(self.efforts_out.serialize(stamp, bias))
        if observed:
            try:
                self.external.update(stamp, q, qd, state[2])
            except (Rejected, ValueError) as exc:
                self.state_rejections.add(_rejected(exc))
        if task_space is not None:
            task_space.header.stamp = stamp
            self.task_space_pub.publish(task_space)

    def _log_counters(self):
        counts = (self.accepted, self.state_rejections.total, self.command_rejections.total,
                  self.request_rejections.total)
        if counts != self._logged_counts:
            self._logged_counts = counts
            self.get_logger().info(
                f'joint states accepted: {self.accepted}, rejected: {self.state_rejections}; '
                f'effort commands rejected: {self.command_rejections}; '
                f'service requests failed: {self.request_rejections}')

    def _diagnose_dynamics(self, report):
        """/diagnostics ``dynamics_node: dynamics``: model, solver, joint state rate."""
        now, accepted = time.monotonic(), self.accepted
        (then, before), self._rate_sample = self._rate_sample, (now, accepted)
        if self.robot is None:
            report.summary(STALE, 'no robot model yet')
            return
        rate = (accepted - before) / (now - then) if now > then else 0.0
        report.add('joints', self.robot.n)
        report.add('fd_method', self.params.fd_method)
        report.add('joint states accepted', accepted)
        report.add('joint state rate [Hz]', rate)
        report.summary(OK, f'{rate:.1f} joint states/s')

    def _diagnose_inputs(self, report):
        """/diagnostics ``dynamics_node: inputs``: the rejection counters (WARN when one rose)."""
        report.counter('joint states rejected', self.state_rejections)
        report.add('joint-state publisher handovers', self.gate.handovers)
        report.counter('effort commands rejected', self.command_rejections)
        report.counter('service requests failed', self.request_rejections)

    # --- services --------------------------------------------------------------------
    def _serve(self, compute, request, response):
        """
        Answer a service request: ``compute(request, response)`` fills in the response.

        ``compute`` returns the message of a success.  Unusable input, a result that is
        not finite or a failed factorization answers a fresh response with
        ``success = false`` and ``reason: detail``, counted in :attr:`request_rejections`.
        """
        try:
            message = compute(request, response)
        except (ValueError, np.linalg.LinAlgError) as exc:
            rejected = _rejected(exc)
            self.request_rejections.add(rejected)
            return type(response)(success=False,
                                  message=f'{rejected.reason}: {rejected.detail}')
        response.success = True
        response.message = message
        return response

    def _request_state(self, state, need_velocity, need_effort) -> 'RequestState':
        """Return the state of a service request in chain order; Rejected if unusable."""
        robot = self.robot
        if robot is None:
            raise Rejected('no model', 'no robot model yet (waiting for robot_description)')
        q, qd, tau = self.states.read_request(state, need_velocity, need_effort)
        return RequestState(robot, self.states, q, qd, tau, self.states.rows(state.name))

    def _state_or_latest(self, state, need_velocity) -> ServedState:
        """Return the state of a request, or the latest joint state if it is empty."""
        if len(state.name) == 0 and len(state.position) == 0:
            if self.latest_state is None:
                raise Rejected('no state', 'empty request state and no joint state '
                                           'received yet')
            stamp, q, qd = self.latest_state
            return ServedState(self.robot, stamp, q, qd, 'the latest joint state')
        s = self._request_state(state, need_velocity, False)
        return ServedState(s.robot, state.header.stamp, s.q, s.qd, 'the requested state')

    def _get_inertia_matrix(self, request, response):
        s = self._state_or_latest(request.state, False)
        robot = s.robot
        response.inertia.header.stamp = s.stamp
        response.inertia.joint_names = robot.joint_names
        response.inertia.data = _flat(robot.inertia_matrix(s.q))
        if request.include_decomposition:
            u, d = robot.udu(s.q)
            response.u = _flat(u)
            response.d = _flat(d)
        if request.include_inverse:
            response.inverse = _flat(robot.inverse_inertia_matrix(s.q))
        return f'inertia matrix at {s.source}'

    def _forward_dynamics(self, request, response):
        state = request.state
        s = self._request_state(state, True, True)
        qdd = s.robot.forward_dynamics(s.q, s.qd, s.tau, method=self.params.fd_method)
        known = s.rows >= 0
        response.accelerations.header.stamp = state.header.stamp
        response.accelerations.joint_names = [n for n, k in zip(state.name, known) if k]
        response.accelerations.acceleration = qdd[s.rows[known]].tolist()
        return self._unknown_note(s.reader, state.name, 'left out')

    def _inverse_dynamics(self, request, response):
        state = request.state
        s = self._request_state(state, True, False)
        names = list(state.name)
        acceleration = request.acceleration
        qdd = np.zeros(s.robot.n)
        if len(acceleration) != 0:
            if len(acceleration) != len(names):
                raise Rejected('length', f'{len(acceleration)} accelerations for '
                                         f'{len(names)} names')
            values = np.asarray(acceleration, dtype=float)
            if not np.all(np.isfinite(values)):
                raise Rejected('non-finite', 'acceleration contains NaN or Inf')
            qdd = values[s.reader.selection(names)]
        tau = s.robot.inverse_dynamics(s.q, s.qd, qdd)
        response.effort = np.where(s.rows >= 0, tau[s.rows], 0.0).tolist()
        return self._unknown_note(s.reader, names, 'given zero effort')

    def _get_task_space(self, request, response):
        if not request.frame:
            raise Rejected('no frame', 'the request names no frame (a link of the URDF)')
        s = self._state_or_latest(request.state, True)
        try:
            task_space_message(response.task_space, s.robot, s.q, s.qd, request.frame,
                               request.reference, list(request.rows), request.damping)
        except ValueError as exc:
            if isinstance(exc, NonFiniteResult):
                raise
            raise Rejected('bad request', str(exc)) from None
        response.task_space.header.stamp = s.stamp
        return f'task space of {request.frame!r} at {s.source}'

    @staticmethod
    def _unknown_note(reader, names, what):
        unknown = reader.unknown(names)
        return (f'ok; joints not in the chain {what}: {name_list(unknown)}' if unknown
                else 'ok')


def main(args=None):
    """Run the dynamics node until shutdown."""
    return run_node(DynamicsNode, 'dynamics_node', args=args, executor='events')


if __name__ == '__main__':
    sys.exit(main())
