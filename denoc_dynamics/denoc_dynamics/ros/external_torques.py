"""
dynamics_node's estimate of what the world does to the robot: external torques and contact.

With ``estimate_external_torques`` true, every accepted joint state's positions,
velocities and efforts (the measured link-side joint torques, as Franka's tau_J and
sim_node's joint_states give them) feed the momentum observer of
:mod:`..core.momentum_observer` (De Luca and Mattone, ICRA 2005; Haddadin, De Luca and
Albu-Schaeffer, IEEE T-RO 2017), gain ``external_torque_gain`` K [1/s]: the estimate
follows the external torques through a first-order lag of time constant 1/K.  The
joint states' header stamps give the time steps.  ``external_torque_hold`` says how
the efforts moved between two joint states: ``zero_order`` (the default) when the
drives hold each command until the next state, as sim_node's do with the trajectory
controller's effort commands (one per joint state), ``first_order`` when they are
samples of a torque that changes continuously (drives commanded much faster than
the joint states come); the module :mod:`..core.momentum_observer` derives both.

Friction and damping do not read as contact as long as ``effort`` is the torque that
reaches the links (a joint torque sensor's; sim_node publishes exactly that): the
observer's model I qdd + C qd + g = tau + tau_ext then has no friction term to miss.
A robot whose ``effort`` is the motor's torque must compensate its friction first.

Publishes (for every accepted state, each topic while it has a subscriber)
  ``~/external_torques`` (sensor_msgs/JointState, chain joint names): the estimate r,
  in ``effort`` (written as serialized bytes, :mod:`.joint_state_cdr`).
  ``~/external_wrench`` (geometry_msgs/WrenchStamped): the wrench at the origin of
  ``external_wrench_frame`` (default: the chain's last link), in the base frame's axes
  (``header.frame_id`` the base link), that explains r: tau_ext = J^T F, J the frame's
  6 x n Jacobian [v; w] (``Robot.frame_jacobian``, base axes).  F solves it in the
  least-squares sense, damped near singularities (Nakamura and Hanafusa, 1986;
  Maciejewski and Klein, 1988):
  F = (J J^T + lambda^2 1)^-1 J r with lambda^2 = (1 - (s_min / eps)^2) lambda_max^2
  when the smallest singular value s_min of J is below eps
  (``external_wrench_singular_value``), else 0.
  ``~/contact`` (std_msgs/Bool): true while some |r_i| exceeds its threshold
  (``contact_threshold``: one value for all joints or one per joint [N m or N]).
"""

import math

from geometry_msgs.msg import WrenchStamped
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from .joint_io import Rejected
from .joint_state_cdr import JointValuesCdrWriter
from .listened import ListenedPublisher
from .parameters import OBSERVER
from ..core.momentum_observer import MomentumObserver

#: lambda_max of the damped least squares, relative to the largest singular value of J.
DAMPING_MAX = 0.1
#: Eigenvalues of J J^T + lambda^2 1 below this fraction of the largest are left out.
RCOND = 1e-12


def wrench_from_torques(J, tau, eps):
    """
    Return F with J^T F = tau in the damped least-squares sense (module doc).

    One symmetric eigen-decomposition J J^T = V diag(s^2) V^T gives both the singular
    values s of J and the solve: F = V diag(1 / (s^2 + lambda^2)) V^T J tau, where a
    direction with s^2 + lambda^2 at round-off of the largest is left out (the
    minimum-norm least squares of a rank-deficient J).
    """
    s2, V = np.linalg.eigh(J @ J.T)                  # ascending s^2
    s2 = np.maximum(s2, 0.0)
    s_min, s_max = math.sqrt(s2[0]), math.sqrt(s2[-1])
    damping = 0.0
    if s_min < eps:
        damping = (1.0 - (s_min / eps) ** 2) * (DAMPING_MAX * s_max) ** 2
    d = s2 + damping
    kept = d > RCOND * max(d[-1], np.finfo(float).tiny)
    b = V.T @ (J @ tau)
    return V @ np.divide(b, d, out=np.zeros_like(b), where=kept)


class ExternalTorques:
    """The observer's parameters, state and publishers on a dynamics node (module doc)."""

    def __init__(self, node):
        """Declare the parameters; create the publishers if the estimate is on."""
        self.node = node
        values = OBSERVER.declare(node)
        self.enabled = values.estimate_external_torques
        self.gain = values.external_torque_gain
        self.hold = values.external_torque_hold
        self.frame = values.external_wrench_frame
        self.eps = values.external_wrench_singular_value
        self.threshold_param = list(values.contact_threshold)
        self.observer = None
        self.last_stamp = None
        self.pubs = None
        if self.enabled:
            self.pubs = (ListenedPublisher(node, JointState, '~/external_torques', 10),
                         ListenedPublisher(node, WrenchStamped, '~/external_wrench', 10),
                         ListenedPublisher(node, Bool, '~/contact', 10))

    def set_model(self, robot):
        """Start a new observer on ``robot``; RuntimeError for bad parameters."""
        if not self.enabled:
            return
        try:
            thresholds = np.asarray(self.threshold_param, dtype=float)
            if thresholds.size not in (1, robot.n) or not np.all(thresholds >= 0.0):
                raise ValueError(f'contact_threshold needs 1 or {robot.n} values >= 0, got '
                                 f'{self.threshold_param}')
            frame = self.frame or robot.chain.tip_link or robot.chain.link_names[-1]
            robot.chain.link_frame(frame)
            observer = MomentumObserver(robot, self.gain, self.hold)
        except ValueError as exc:
            raise RuntimeError(f'external torques: {exc}') from exc
        self.robot, self.wrench_frame = robot, frame
        self.thresholds = np.broadcast_to(thresholds, (robot.n,))
        self.observer = observer
        self.last_stamp = None
        self.torques_out = JointValuesCdrWriter(JointState, robot.joint_names, empty_before=2)
        self.wrench_msg = WrenchStamped()
        self.wrench_msg.header.frame_id = robot.chain.base_link
        self.contact_msg = Bool()

    def update(self, stamp, q, qd, tau):
        """
        Take an accepted joint state; publish the estimate (Rejected if unusable).

        ``stamp`` is the state's (builtin_interfaces/Time), ``tau`` its efforts in chain
        order, or the Rejected of :meth:`.joint_io.JointStateReader.read` that says why
        they cannot be used (raised here).  The observer takes every state; each output
        is built and sent only while its topic has a subscriber (the Jacobian and the
        wrench's least squares too).
        """
        if self.observer is None:
            return
        if isinstance(tau, Rejected):
            raise tau
        t = stamp.sec + 1e-9 * stamp.nanosec
        dt = math.nan if self.last_stamp is None else t - self.last_stamp
        if self.last_stamp is not None and not dt > 0.0:
            raise Rejected('stamp', f'joint state stamp {t:.9f} s not after the last '
                                    f'{self.last_stamp:.9f} s')
        self.last_stamp = t
        r = self.observer.update(q, qd, tau, dt if dt > 0.0 else 0.0)
        pub_torques, pub_wrench, pub_contact = self.pubs
        if pub_torques.get_subscription_count():
            pub_torques.publish(self.torques_out.serialize(stamp, r))
        if pub_wrench.get_subscription_count():
            J = self.robot.frame_jacobian(q, self.wrench_frame)
            F = wrench_from_torques(J, r, self.eps).tolist()
            w = self.wrench_msg
            w.header.stamp = stamp
            w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = F[:3]
            w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z = F[3:]
            pub_wrench.publish(w)
        if pub_contact.get_subscription_count():
            self.contact_msg.data = bool((np.abs(r) > self.thresholds).any())
            pub_contact.publish(self.contact_msg)
