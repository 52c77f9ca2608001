"""
dynamics_node: the DeNOC dynamics of a robot as ROS 2 topics and services.

Subscribes
  ``joint_states`` (sensor_msgs/JointState, sensor-data QoS): mapped by joint name;
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

Publishes
  ``~/joint_accelerations`` (denoc_dynamics_interfaces/JointAccelerations): for every
  accepted joint state, qdd = FD(q, qd, latest command) by Saha's O(n) sweeps
  (parameter ``fd_method``), stamped like the state.
  ``~/inertia_matrix`` (denoc_dynamics_interfaces/InertiaMatrix): every
  ``inertia_every_n`` accepted states.
  ``~/gravity_torques`` and ``~/bias_forces`` (sensor_msgs/JointState, chain joint
  names, the values in the ``effort`` field; position/velocity left empty): if the
  ``publish_gravity_torques`` / ``publish_bias_forces`` parameters are true.

Services
  ``~/get_inertia_matrix`` (GetInertiaMatrix), ``~/forward_dynamics``
  (ForwardDynamics), ``~/inverse_dynamics`` (InverseDynamics).  A request that
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

from denoc_dynamics_interfaces.msg import InertiaMatrix
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.srv import ForwardDynamics
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
from denoc_dynamics_interfaces.srv import InverseDynamics
import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .joint_io import declare_command_parameters
from .joint_io import EffortCommandReader
from .joint_io import JointStateReader
from .joint_io import read_joint_state
from .joint_io import Rejected
from .joint_io import Rejections
from .node_main import run_node
from .parameters import declare
from .payload_service import PayloadService
from .robot_model import RobotModelSource
from .state_gate import StateGate
from .. import NonFiniteResult
from ..core.robot import FD_METHODS
from ..names import name_list
from ..simulation import PhysicsParameters


def _flat(matrix) -> list:
    return np.asarray(matrix, dtype=float).ravel().tolist()


def _rejected(exc) -> Rejected:
    """Return the Rejected (counter reason and detail) for an exception of a callback."""
    if isinstance(exc, Rejected):
        return exc
    reason = 'non-finite result' if isinstance(exc, NonFiniteResult) else 'dynamics failed'
    return Rejected(reason, str(exc) or type(exc).__name__)


class DynamicsNode(Node):
    """Forward/inverse dynamics and the inertia matrix of the robot, over ROS 2."""

    def __init__(self, node_name='dynamics_node', **kwargs):
        """Declare the parameters, load the model (or wait for it) and set up the I/O."""
        super().__init__(node_name, **kwargs)
        self.joints_param, self.command_timeout = declare_command_parameters(self)
        self.inertia_every_n = declare(
            self, 'inertia_every_n', Parameter.Type.INTEGER, 10,
            'publish ~/inertia_matrix every this many accepted joint states; 0: never',
            read_only=True, min_value=0)
        self.publish_gravity = declare(
            self, 'publish_gravity_torques', Parameter.Type.BOOL, False,
            'publish ~/gravity_torques (JointState effort field) for every accepted state',
            read_only=True)
        self.publish_bias = declare(
            self, 'publish_bias_forces', Parameter.Type.BOOL, False,
            'publish ~/bias_forces (Coriolis + centrifugal + gravity, JointState effort '
            'field) for every accepted state', read_only=True)
        self.fd_method = declare(
            self, 'fd_method', Parameter.Type.STRING, 'denoc',
            "forward dynamics solver: 'denoc' (Saha's O(n) sweeps) or 'cholesky' (the "
            'composite-body GIM and Cholesky, the O(n^3) reference)',
            read_only=True, additional_constraints=str(FD_METHODS))
        if self.fd_method not in FD_METHODS:
            raise RuntimeError(f'fd_method must be one of {FD_METHODS}, got {self.fd_method!r}')
        self.max_velocity = declare(
            self, 'max_velocity', Parameter.Type.DOUBLE,
            PhysicsParameters.divergence_velocity,
            'joint states (topic and services) with a joint speed above this [rad/s, m/s] '
            'are rejected; the default is the speed at which sim_node declares divergence',
            read_only=True, min_value=0.0)
        diagnostics_period = declare(
            self, 'diagnostics_period', Parameter.Type.DOUBLE, 10.0,
            'log the message counters every this many seconds when they changed; 0: never',
            read_only=True, min_value=0.0)

        self.robot = None
        self.states = None
        self.commands = None
        self.latest_state = None  # (stamp, q, qd) of the latest accepted joint state
        self.accepted = 0
        self.state_rejections = Rejections(self.get_logger(), 'joint state')
        self.command_rejections = Rejections(self.get_logger(), 'effort command')
        self.request_rejections = Rejections(self.get_logger(), 'service request')
        self._logged_counts = None

        self.acc_pub = self.create_publisher(JointAccelerations, '~/joint_accelerations', 10)
        self.inertia_pub = self.create_publisher(InertiaMatrix, '~/inertia_matrix', 10)
        self.gravity_pub = (self.create_publisher(JointState, '~/gravity_torques', 10)
                            if self.publish_gravity else None)
        self.bias_pub = (self.create_publisher(JointState, '~/bias_forces', 10)
                         if self.publish_bias else None)

        self._unloaded = None     # the model without payload
        self.payload = PayloadService(self, lambda: self._unloaded, self._set_payload)
        self.model = RobotModelSource(self, self._set_model)

        # the EventsExecutor this node runs on gives no message info (publisher GID):
        # the gate counts the topic's publishers instead
        self.gate = StateGate(self.state_rejections, logger=self.get_logger())
        self._last_now = None
        self.state_sub = self.create_subscription(
            JointState, 'joint_states', lambda msg: self._on_joint_state(msg, {}),
            qos_profile_sensor_data)
        self.create_timer(1.0, self._count_state_publishers)
        self.command_sub = self.create_subscription(
            Float64MultiArray, 'effort_commands', self._on_command, 10)
        for srv_type, name, compute in (
                (GetInertiaMatrix, '~/get_inertia_matrix', self._get_inertia_matrix),
                (ForwardDynamics, '~/forward_dynamics', self._forward_dynamics),
                (InverseDynamics, '~/inverse_dynamics', self._inverse_dynamics)):
            self.create_service(srv_type, name, partial(self._serve, compute))
        if diagnostics_period > 0.0:
            self.create_timer(diagnostics_period, self._log_counters)

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        commands = EffortCommandReader(robot.joint_names, self.joints_param,
                                       self.command_timeout)
        if commands.ignored:
            self.get_logger().warning(
                f'joints parameter entries {commands.ignored} are not chain joints; their '
                'effort commands are dropped')
        self._unloaded = robot
        self.robot = self.payload.start_up(robot).attach(robot)
        self.states = JointStateReader(robot.joint_names, self.max_velocity)
        self.commands = commands
        self.latest_state = None
        self.acc_msg = JointAccelerations(joint_names=robot.joint_names)
        self.inertia_msg = InertiaMatrix(joint_names=robot.joint_names)

    def _set_payload(self, payload, transition_time):
        """~/set_payload: the model with the new payload, at once."""
        self.robot = payload.attach(self._unloaded)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # --- topics ----------------------------------------------------------------------
    def _on_command(self, msg):
        if self.commands is None:
            self.command_rejections.add(Rejected('no model', 'no robot model yet'))
            return
        try:
            self.commands.accept(msg, self._now())
        except Rejected as exc:
            self.command_rejections.add(exc)

    def _count_state_publishers(self):
        if self.state_sub is not None:
            self.gate.check_graph(self.count_publishers(self.state_sub.topic_name))

    def _on_joint_state(self, msg, info=None):
        """Take one joint state (``info``: as :meth:`.state_gate.StateGate.admit`)."""
        state = read_joint_state(self.states, msg, self.state_rejections)
        if state is None:
            return
        now = self._now()
        if self._last_now is not None and now < self._last_now:
            self.gate.restart()    # the clock jumped back: a reset simulation
        self._last_now = now
        if not self.gate.admit(msg, now, info):
            return
        q, qd = state
        robot = self.robot
        tau = self.commands.current(self._now())
        inertia_due = (self.inertia_every_n > 0
                       and (self.accepted + 1) % self.inertia_every_n == 0)
        try:  # every output first: a non-finite one rejects the state, nothing is sent
            qdd = robot.forward_dynamics(q, qd, tau, method=self.fd_method)
            inertia = robot.inertia_matrix(q) if inertia_due else None
            gravity = robot.gravity_torques(q) if self.gravity_pub is not None else None
            bias = robot.bias_forces(q, qd) if self.bias_pub is not None else None
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
        acc = self.acc_msg
        acc.header.stamp = stamp
        acc.acceleration = qdd.tolist()
        self.acc_pub.publish(acc)
        if inertia is not None:
            self.inertia_msg.header.stamp = stamp
            self.inertia_msg.data = _flat(inertia)
            self.inertia_pub.publish(self.inertia_msg)
        if gravity is not None:
            self.gravity_pub.publish(self._efforts(stamp, gravity))
        if bias is not None:
            self.bias_pub.publish(self._efforts(stamp, bias))

    def _efforts(self, stamp, values):
        msg = JointState(name=self.robot.joint_names, effort=values.tolist())
        msg.header.stamp = stamp
        return msg

    def _log_counters(self):
        counts = (self.accepted, self.state_rejections.total, self.command_rejections.total,
                  self.request_rejections.total)
        if counts != self._logged_counts:
            self._logged_counts = counts
            self.get_logger().info(
                f'joint states accepted: {self.accepted}, rejected: {self.state_rejections}; '
                f'effort commands rejected: {self.command_rejections}; '
                f'service requests failed: {self.request_rejections}')

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

    def _request_state(self, state, need_velocity, need_effort):
        """Return (robot, reader, q, qd, tau) for a service request; Rejected if unusable."""
        robot = self.robot
        if robot is None:
            raise Rejected('no model', 'no robot model yet (waiting for robot_description)')
        return (robot, self.states) + self.states.read_request(state, need_velocity,
                                                               need_effort)

    def _get_inertia_matrix(self, request, response):
        state = request.state
        if len(state.name) == 0 and len(state.position) == 0:
            if self.latest_state is None:
                raise Rejected('no state', 'empty request state and no joint state '
                                           'received yet')
            robot = self.robot
            stamp, q, _ = self.latest_state
            source = 'the latest joint state'
        else:
            robot, _, q, _, _ = self._request_state(state, False, False)
            stamp = state.header.stamp
            source = 'the requested state'
        response.inertia.header.stamp = stamp
        response.inertia.joint_names = robot.joint_names
        response.inertia.data = _flat(robot.inertia_matrix(q))
        if request.include_decomposition:
            u, d = robot.udu(q)
            response.u = _flat(u)
            response.d = _flat(d)
        if request.include_inverse:
            response.inverse = _flat(robot.inverse_inertia_matrix(q))
        return f'inertia matrix at {source}'

    def _forward_dynamics(self, request, response):
        state = request.state
        robot, reader, q, qd, tau = self._request_state(state, True, True)
        qdd = robot.forward_dynamics(q, qd, tau, method=self.fd_method)
        index = {name: i for i, name in enumerate(robot.joint_names)}
        names = [name for name in state.name if name in index]
        response.accelerations.header.stamp = state.header.stamp
        response.accelerations.joint_names = names
        response.accelerations.acceleration = [float(qdd[index[name]]) for name in names]
        return self._unknown_note(reader, state.name, 'left out')

    def _inverse_dynamics(self, request, response):
        state = request.state
        robot, reader, q, qd, _ = self._request_state(state, True, False)
        names = list(state.name)
        acceleration = request.acceleration
        qdd = np.zeros(robot.n)
        if len(acceleration) != 0:
            if len(acceleration) != len(names):
                raise Rejected('length', f'{len(acceleration)} accelerations for '
                                         f'{len(names)} names')
            values = np.asarray(acceleration, dtype=float)
            if not np.all(np.isfinite(values)):
                raise Rejected('non-finite', 'acceleration contains NaN or Inf')
            qdd = values[reader.selection(names)]
        tau = robot.inverse_dynamics(q, qd, qdd)
        index = {name: i for i, name in enumerate(robot.joint_names)}
        response.effort = [float(tau[index[name]]) if name in index else 0.0
                           for name in names]
        return self._unknown_note(reader, names, 'given zero effort')

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
