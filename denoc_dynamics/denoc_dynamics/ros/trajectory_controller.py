"""
trajectory_controller: make an effort-controlled arm (or the sim) follow trajectories.

The topic interface of ros2_control's joint_trajectory_controller, with computed
torque through the DeNOC core as the control law (:mod:`denoc_dynamics.trajectory`,
:mod:`denoc_dynamics.computed_torque`).

Subscribes
  ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory): joints mapped by name (a
  subset holds the others); linear, cubic or quintic interpolation as the points give
  positions, velocities, accelerations; ``header.stamp`` zero starts now.  A new
  trajectory replaces the current one, starting from the current reference.  The
  controller's time is that of the joint states' stamps (see :meth:`now`).  A bad
  one (unknown or duplicate joints, non-increasing times, NaN, positions outside the
  limits, wrong array lengths) is rejected, counted and logged; nothing moves.
  ``joint_states`` (sensor_msgs/JointState, sensor-data QoS): every accepted state
  gives one effort command, computed at its stamp.

Publishes
  ``effort_commands`` (std_msgs/Float64MultiArray), in the order of the ``joints``
  parameter (default: chain order): tau = M(q) (qdd_d + K_d e' + K_p e) + b(q, qd),
  plus the URDF joint friction at the desired velocity if ``friction_compensation``,
  clamped to the URDF effort limits.  With no trajectory it holds the first position it measured.
  ``~/controller_state`` (denoc_dynamics_interfaces/TrajectoryControllerState): the
  reference, the measured state, the error and the efforts, for every command.

Gains are per joint: ``gains.<joint>.kp`` [1/s^2], ``gains.<joint>.kd`` [1/s] and
``gains.<joint>.friction_velocity`` [rad/s], declared when the model is loaded, with
the defaults ``kp``, ``kd`` and ``friction_velocity``.  The robot model comes from the
``robot_description`` parameter, ``urdf_path`` or the ``robot_description`` topic, as
for the other nodes.
"""

import sys

from denoc_dynamics_interfaces.msg import TrajectoryControllerState
import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

from .joint_io import JointStateReader
from .joint_io import read_joint_state
from .joint_io import Rejections
from .node_main import run_node
from .parameters import declare
from .robot_model import RobotModelSource
from ..computed_torque import ComputedTorque
from ..trajectory import check_trajectory
from ..trajectory import Trajectory
from ..trajectory import TrajectoryError
from ..trajectory import TrajectoryPoint


def seconds(stamp) -> float:
    """Return a builtin_interfaces Time or Duration in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def points_of(msg):
    """Return the points of a JointTrajectory message as TrajectoryPoints."""
    return [TrajectoryPoint(seconds(p.time_from_start), p.positions, p.velocities,
                            p.accelerations) for p in msg.points]


def set_duration(msg, value: float):
    """Set a builtin_interfaces Duration (or Time) to ``value`` >= 0 seconds."""
    nanoseconds = int(round(max(value, 0.0) * 1e9))
    msg.sec, msg.nanosec = divmod(nanoseconds, 1_000_000_000)


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


class TrajectoryController(Node):
    """Computed-torque trajectory tracking; add it to an executor and spin."""

    def __init__(self, node_name='trajectory_controller', **kwargs):
        """Declare the parameters and load the model (or subscribe to wait for it)."""
        super().__init__(node_name, **kwargs)
        rd = True  # every parameter is read once, at start-up or model load
        self.joints_param = declare(
            self, 'joints', Parameter.Type.STRING_ARRAY, [],
            "joint order of the effort_commands array (must match the arm's); empty: the "
            'chain order', rd)
        self.default_kp = declare(
            self, 'kp', Parameter.Type.DOUBLE, 225.0,
            'position gain K_p [1/s^2] of every joint without gains.<joint>.kp '
            '(K_p = omega^2: natural frequency omega of the error)', rd, min_value=0.0)
        self.default_kd = declare(
            self, 'kd', Parameter.Type.DOUBLE, 30.0,
            'velocity gain K_d [1/s] of every joint without gains.<joint>.kd '
            '(K_d = 2 omega: critical damping)', rd, min_value=0.0)
        self.friction_compensation = declare(
            self, 'friction_compensation', Parameter.Type.BOOL, True,
            'add the URDF joint friction (<dynamics damping friction>) at the desired '
            'velocity as a feedforward', rd)
        self.default_friction_velocity = declare(
            self, 'friction_velocity', Parameter.Type.DOUBLE, 0.05,
            'regularization v_eps [rad/s] of the Coulomb friction friction*tanh(qd/v_eps) '
            'of every joint without gains.<joint>.friction_velocity', rd, min_value=1e-9)
        self.rejections = Rejections(self.get_logger(), 'joint trajectory')
        self.state_rejections = Rejections(self.get_logger(), 'joint state')
        self.accepted = 0
        self.law = None
        self.states = None
        self.trajectory = None        # Trajectory being followed (or held); None: no state yet
        self.trajectory_start = 0.0   # start time of the current trajectory [s]
        self.active = False           # following a received trajectory (not holding)
        self.source = None            # who sent the current trajectory ('topic', ...)
        self.latest_time = None       # stamp of the latest joint state [s]
        self.effort_pub = self.create_publisher(Float64MultiArray, 'effort_commands', 10)
        self.state_pub = self.create_publisher(
            TrajectoryControllerState, '~/controller_state', 10)
        self.model = RobotModelSource(self, self._set_model)
        self.create_subscription(JointState, 'joint_states', self._on_joint_state,
                                 qos_profile_sensor_data)
        self.create_subscription(JointTrajectory, '~/joint_trajectory', self._on_trajectory, 10)

    # --- model -----------------------------------------------------------------------
    def _set_model(self, robot, source):
        gains = {}
        for key, default, unit in (('kp', self.default_kp, '1/s^2'),
                                   ('kd', self.default_kd, '1/s'),
                                   ('friction_velocity', self.default_friction_velocity,
                                    'rad/s')):
            values = []
            for joint in robot.joint_names:
                name = f'gains.{joint}.{key}'
                if self.has_parameter(name):
                    values.append(self.get_parameter(name).value)
                else:
                    values.append(declare(self, name, Parameter.Type.DOUBLE, float(default),
                                          f'{key} [{unit}] of joint {joint}', True,
                                          min_value=1e-9 if key == 'friction_velocity'
                                          else 0.0))
            gains[key] = np.array(values, dtype=float)
        law = ComputedTorque(robot, gains['kp'], gains['kd'], self.friction_compensation,
                             gains['friction_velocity'])
        index = {name: i for i, name in enumerate(robot.joint_names)}
        order = list(self.joints_param) or robot.joint_names
        self.law = law
        self.states = JointStateReader(robot.joint_names)
        self._order = np.array([index.get(name, -1) for name in order], dtype=int)
        self._state_msg = TrajectoryControllerState(joint_names=robot.joint_names)
        self._effort_msg = Float64MultiArray()
        self.trajectory = None
        self.active = False
        self.get_logger().info(
            f'computed torque on {robot.n} joints: kp {gains["kp"].tolist()}, kd '
            f'{gains["kd"].tolist()}, friction compensation '
            f'{"on" if self.friction_compensation else "off"}')

    # --- time ------------------------------------------------------------------------
    def now(self) -> float:
        """
        Return the controller's time [s]: the stamp of the latest joint state.

        The reference is sampled at the joint states' stamps, so that the controller
        runs on the arm's clock (the simulated time of a sim that publishes /clock,
        whatever its real-time factor); before the first state, the node's clock.
        """
        if self.latest_time is not None:
            return self.latest_time
        return self.get_clock().now().nanoseconds * 1e-9

    @property
    def finished(self) -> bool:
        """Return True when no trajectory is being followed or the current one ended."""
        return (not self.active or self.latest_time is None
                or self.latest_time >= self.trajectory.end_time)

    # --- inputs ----------------------------------------------------------------------
    def _on_trajectory(self, msg):
        self.follow(msg, 'topic')

    def follow(self, msg, source='topic') -> bool:
        """Check ``msg`` (JointTrajectory) and follow it; return whether it was accepted."""
        try:
            if self.law is None:
                raise TrajectoryError('no model', 'no robot model yet')
            if self.trajectory is None:
                raise TrajectoryError('no state', 'no joint state received yet: the '
                                                  'trajectory would have nowhere to start')
            joints = self.law.robot.joints
            checked = check_trajectory(self.law.robot.joint_names, joints.lower, joints.upper,
                                       msg.joint_names, points_of(msg))
        except TrajectoryError as exc:
            self.rejections.add(exc)  # logs 'rejected joint trajectory (reason): detail'
            return False
        now = self.now()
        start = seconds(msg.header.stamp) or now
        reference = self.trajectory.sample(now)
        self.trajectory = Trajectory.from_checked(checked, start, now, reference)
        self.trajectory_start = start
        self.active = True
        self.source = source
        self.accepted += 1
        self.get_logger().info(
            f'trajectory accepted ({source}): {len(msg.points)} points for '
            f'{list(msg.joint_names)}, ends in {self.trajectory.end_time - now:.3f} s')
        return True

    def _on_joint_state(self, msg):
        state = read_joint_state(self.states, msg, self.state_rejections)
        if state is None:
            return
        q, qd = state
        t = seconds(msg.header.stamp) or self.get_clock().now().nanoseconds * 1e-9
        self.latest_time = t
        if self.trajectory is None:
            self.trajectory = Trajectory.hold(t, q)
            self.trajectory_start = t
        q_d, qd_d, qdd_d = self.trajectory.sample(t)
        tau = self.law(q, qd, q_d, qd_d, qdd_d)
        effort = self._effort_msg
        effort.data = [float(tau[i]) if i >= 0 else 0.0 for i in self._order]
        self.effort_pub.publish(effort)
        self._publish_state(msg.header.stamp, t, (q_d, qd_d, qdd_d), q, qd, tau)

    def _publish_state(self, stamp, t, reference, q, qd, tau):
        state = self._state_msg
        state.header.stamp = stamp
        q_d, qd_d, qdd_d = reference
        state.desired = JointTrajectoryPoint(
            positions=q_d.tolist(), velocities=qd_d.tolist(), accelerations=qdd_d.tolist())
        set_duration(state.desired.time_from_start, t - self.trajectory_start)
        state.actual = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist())
        state.error = JointTrajectoryPoint(positions=(q_d - q).tolist(),
                                           velocities=(qd_d - qd).tolist())
        state.effort = tau.tolist()
        state.trajectory_active = not self.finished
        state.trajectories_accepted = self.accepted
        state.trajectories_rejected = self.rejections.total
        self.state_pub.publish(state)


def main(args=None):
    """Run the trajectory controller until shutdown."""
    return run_node(TrajectoryController, 'trajectory_controller', args=args)


if __name__ == '__main__':
    sys.exit(main())
