"""
/tf and /tf_static of the simulated arm, as robot_state_publisher publishes them.

One transform per URDF joint, from its parent link's frame to its child link's, the
frame names those of the URDF with ``frame_prefix`` in front (robot_state_publisher's
parameter, for namespaced robots): the movable joints on ``/tf`` at every published
joint state while /tf has a subscriber, stamped like it; the fixed joints (and
side-branch joints locked by a ``tip_link``) once on ``/tf_static`` (transient
local, depth 1, as tf2's static broadcaster).  Mimic joints follow their leaders.
The transforms are the model's (:mod:`denoc_dynamics.core.frames`): composed from
the base, they give every link's ``Robot.frame_placement``.

tf2_msgs is not on PyPI: without it :func:`make_tf_broadcaster` says so in one log line
and returns None.
"""

import importlib

from geometry_msgs.msg import TransformStamped
import numpy as np
from rclpy.qos import DurabilityPolicy
from rclpy.qos import QoSProfile

from .viewer_model import quaternions


def make_tf_broadcaster(node, frame_prefix: str):
    """Return a :class:`TfBroadcaster` on ``node``, or None (logged) without tf2_msgs."""
    try:
        tf_message = importlib.import_module('tf2_msgs.msg').TFMessage
    except ImportError as exc:
        node.get_logger().info(f'tf2_msgs is not installed ({exc}): no /tf from this node '
                               '(use_rsp:=true starts robot_state_publisher)')
        return None
    return TfBroadcaster(node, tf_message, frame_prefix)


def _motions(axis, prismatic, q):
    """Return the (m, 4, 4) joint motions about/along the unit ``axis`` (m, 3) by q (m,)."""
    T = np.zeros((len(q), 4, 4))
    T[:, 3, 3] = 1.0
    c, s = np.cos(np.where(prismatic, 0.0, q)), np.sin(np.where(prismatic, 0.0, q))
    K = np.zeros((len(q), 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = axis[:, 2], -axis[:, 1], axis[:, 0]
    T[:, :3, :3] = np.eye(3) + s[:, None, None] * K + (1.0 - c)[:, None, None] * (K @ K)
    T[:, :3, 3] = np.where(prismatic[:, None], axis * q[:, None], 0.0)
    return T


class TfBroadcaster:
    """The /tf and /tf_static publishers of one robot (see the module docstring)."""

    def __init__(self, node, tf_message, frame_prefix: str):
        """Create the publishers on ``node``; :meth:`set_robot` then :meth:`publish`."""
        self.node, self.tf_message, self.prefix = node, tf_message, frame_prefix
        self.tf_pub = node.create_publisher(tf_message, '/tf', QoSProfile(depth=100))
        self.static_pub = node.create_publisher(
            tf_message, '/tf_static',
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.robot = None

    def set_robot(self, robot):
        """Take the joint tree of ``robot``; publish its fixed transforms on /tf_static."""
        chain = robot.chain
        names, body, pose, parent = (chain.frame_names, chain.frame_body, chain.frame_pose,
                                     chain.frame_parent)
        moving = [f for f in range(len(names)) if parent[f] >= 0 and body[f] >= 0
                  and body[f] != body[parent[f]]]
        fixed = [f for f in range(len(names)) if parent[f] >= 0 and f not in set(moving)]
        self.robot = robot
        # a moving frame f is body k's own link: T_{p->f} = pose_p^-1 X_tree,k motion(q_k)
        self.bodies = np.array([body[f] for f in moving], dtype=np.int64)
        self.lead = np.array([np.linalg.inv(pose[parent[f]]) @ chain.X_tree[body[f]]
                              for f in moving]).reshape(-1, 4, 4)
        self.tf_msg = self.tf_message(transforms=[
            self._transform(names[parent[f]], names[f]) for f in moving])
        static = self.tf_message(transforms=[
            self._transform(names[parent[f]], names[f]) for f in fixed])
        self._fill(static.transforms, np.array(
            [np.linalg.inv(pose[parent[f]]) @ pose[f] for f in fixed]).reshape(-1, 4, 4))
        stamp = self.node.get_clock().now().to_msg()
        for transform in static.transforms:
            transform.header.stamp = stamp
        self.static_pub.publish(static)

    def _transform(self, parent: str, child: str) -> TransformStamped:
        msg = TransformStamped()
        msg.header.frame_id = self.prefix + parent
        msg.child_frame_id = self.prefix + child
        return msg

    @staticmethod
    def _fill(transforms, T):
        """Write the (m, 4, 4) poses T into the m TransformStamped ``transforms``."""
        wxyz = quaternions(T[:, :3, :3]) if len(T) else np.zeros((0, 4))
        for msg, t, q in zip(transforms, T[:, :3, 3].tolist(), wxyz.tolist()):
            msg.transform.translation.x, msg.transform.translation.y = t[0], t[1]
            msg.transform.translation.z = t[2]
            r = msg.transform.rotation
            r.w, r.x, r.y, r.z = q

    def publish(self, stamp, q):
        """
        Publish the movable joints' transforms at coordinates q on /tf, stamped.

        Nothing is computed while /tf has no subscriber (a tf2 listener, RViz, a bag).
        """
        if self.robot is None or not len(self.bodies) \
                or not self.tf_pub.get_subscription_count():
            return
        chain = self.robot.chain
        k = self.bodies
        q_bodies = self.robot.body_positions(q)
        T = self.lead @ _motions(chain.axis[k], chain.prismatic[k].astype(bool), q_bodies[k])
        transforms = self.tf_msg.transforms
        self._fill(transforms, T)
        for msg in transforms:
            msg.header.stamp = stamp
        self.tf_pub.publish(self.tf_msg)
