"""
Force/torque sensors at fixed joints: where they sit in the merged bodies, and their readings.

The URDF reader merges the links on both sides of a fixed joint into one body
(:mod:`.urdf`).  A sensor at fixed joint s (parent link a, child link b, both in
body k) reads the wrench that the part beyond s exerts on the part before it
(:func:`.reaction_wrench.sensor_wrenches`): the sub-body S of body k made of b and
the links fixed below it, and the bodies whose joints hang from a link of S.  This
module finds them in the parsed URDF kept by the chain, sums S's mass, mass centre
and inertia (parallel axes, as :func:`.urdf.merge_inertias` does for the bodies),
and lays out the constants of the compiled kernel in body k's coordinates.
"""

from typing import List, Sequence

import numpy as np

from .reaction_wrench import SENSOR_REALS, sensor_wrenches
from .urdf import axis_motion, merge_inertias, MOVABLE


class ForceTorqueSensors:
    """
    Simulated force/torque sensors at fixed joints of a :class:`~.robot.Robot`.

    ``joints``: names of fixed joints of the URDF the robot was loaded from.  Each
    sensor's frame is its joint's child link (:attr:`frames`); :attr:`links` are the
    links of the sensor's own body beyond it (wrenches applied to them count in
    :meth:`read`'s ``f_sensor``).  ValueError names a joint that is not a fixed
    joint of the model, or one fixed to the base (nothing beyond it would move).
    """

    def __init__(self, robot, joints: Sequence[str]):
        """Find each sensor's body, sub-body and child bodies."""
        chain = robot.chain
        if chain.description is None:
            raise ValueError('the robot was not read from a URDF: no fixed joints known')
        description = chain.description
        self._robot = robot
        self.joints = list(joints)
        self.frames: List[str] = []
        self.links: List[List[str]] = []
        s, nb = len(self.joints), robot.n_bodies
        self.body = np.zeros(s, dtype=np.int64)
        self.beyond = np.zeros((s, nb), dtype=np.int64)
        self.reals = np.zeros((s, SENSOR_REALS))
        children = {name: [] for name in description.links}
        for joint in description.joints.values():
            children[joint.parent].append(joint)
        body_of_joint = {name: k for k, name in enumerate(chain.joint_names)}
        for j, name in enumerate(self.joints):
            joint = description.joints.get(name)
            if joint is None or joint.kind != 'fixed':
                fixed = sorted(x.name for x in description.joints.values()
                               if x.kind == 'fixed')
                raise ValueError(f'force/torque sensor {name!r} is not a fixed joint of the '
                                 f'URDF; fixed joints are {fixed}')
            k, T_b = link_placement(chain, joint.child)
            if k < 0:
                raise ValueError(f'force/torque sensor {name!r} is fixed to the base link '
                                 f'{chain.base_link!r} or not in the model: nothing beyond '
                                 'it moves in the dynamics')
            parts, links = [], []
            stack = [(joint.child, np.eye(4))]
            while stack:                                   # S: the links fixed below b
                link, T = stack.pop()
                links.append(link)
                inertial = description.links[link].inertial
                if inertial is not None:
                    X = T_b @ T @ inertial.origin
                    R = X[:3, :3]
                    parts.append((inertial.mass, X[:3, 3], R @ inertial.inertia @ R.T))
                for child in children[link]:
                    if child.name in body_of_joint:
                        self.beyond[j, body_of_joint[child.name]] = 1
                    elif child.kind in MOVABLE and child.name in chain.locked_joints:
                        motion = axis_motion(child.axis, child.kind == 'prismatic',
                                             chain.locked_joints[child.name])
                        stack.append((child.child, T @ child.origin @ motion))
                    elif child.kind == 'fixed' and child.child not in chain.dropped_links:
                        stack.append((child.child, T @ child.origin))
            m, c, I_C = merge_inertias(parts) if parts else (0.0, np.zeros(3), np.zeros((3, 3)))
            A = robot.model.A[k]                           # URDF body frame -> model frame
            c, I_C = A.T @ c, A.T @ I_C @ A
            I_O = I_C + m * (c @ c * np.eye(3) - np.outer(c, c))    # parallel axes to O_k
            self.body[j] = k
            self.reals[j] = np.concatenate(([m], c, I_O.ravel(), A.T @ T_b[:3, 3],
                                            (A.T @ T_b[:3, :3]).ravel()))
            self.frames.append(joint.child)
            self.links.append(links)
        self._workspace = robot.model.data()

    def read(self, q, qd, qdd, f_ext=None, f_sensor=None) -> np.ndarray:
        """
        Return the readings (s, 6) [torque; force] at (q, qd, qdd), each in its frame.

        ``f_ext`` (n_bodies, 6): the external wrenches as
        :meth:`~.robot.Robot.inverse_dynamics` takes them; ``f_sensor`` (s, 6): the
        part of them applied to each sensor's :attr:`links`, [moment about the
        sensor's origin; force], base frame.
        """
        robot = self._robot
        q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in robot._bodies(
            *robot._states(q=q, qd=qd, qdd=qdd)))
        if q.ndim != 1:
            raise ValueError(f'read takes one state (n,), got {q.shape}')
        f_ext = robot._wrenches(f_ext, ())
        f_sensor = (np.zeros((len(self.joints), 6)) if f_sensor is None
                    else np.ascontiguousarray(f_sensor, dtype=float))
        if f_sensor.shape != (len(self.joints), 6) or not np.all(np.isfinite(f_sensor)):
            raise ValueError(f'f_sensor must be finite with shape ({len(self.joints)}, 6)')
        out = np.empty((len(self.joints), 6))
        sensor_wrenches(robot.model.reals, robot.model.ints, q, qd, qdd, f_ext,
                        self._workspace, self.body, self.beyond, self.reals, f_sensor, out)
        return out


def link_placement(chain, link: str):
    """
    Return (body k, pose T (4x4) of ``link`` in body k's URDF frame) for any URDF link.

    Links merged into a body by fixed joints (or locked side-branch joints) are
    placed in it; k = -1 for a link that does not move (the base and what is fixed
    to it) or is not in the model (dropped, above the base).  ValueError for a name
    that is no link of the URDF.
    """
    description = chain.description
    if description is None or link not in description.links:
        raise ValueError(f'unknown link {link!r}')
    parent_joint = {joint.child: joint for joint in description.joints.values()}
    body_of_link = {name: k for k, name in enumerate(chain.link_names)}
    T = np.eye(4)
    while link not in body_of_link:
        joint = parent_joint.get(link)
        if joint is None or link in chain.static_links or link in chain.dropped_links:
            return -1, T
        motion = np.eye(4)
        if joint.kind in MOVABLE:
            if joint.name not in chain.locked_joints:
                return -1, T
            motion = axis_motion(joint.axis, joint.kind == 'prismatic',
                                 chain.locked_joints[joint.name])
        T = joint.origin @ motion @ T
        link = joint.parent
    return body_of_link[link], T
