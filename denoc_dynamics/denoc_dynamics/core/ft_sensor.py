"""
Force/torque sensors at fixed joints: where they sit in the merged bodies, and their readings.

The URDF reader merges the links on both sides of a fixed joint into one body
(:mod:`.urdf`).  A sensor at fixed joint s (parent link a, child link b, both in
body k) reads the wrench that the part beyond s exerts on the part before it
(:func:`.reaction_wrench.sensor_wrenches`): the sub-body S of body k made of b and
the links fixed below it, and the bodies whose joints hang from a link of S.  The
chain's frame table (:mod:`.frames`: each kept link's body, pose in it and URDF
parent) says where every link sits: S is the frames of body k that have b's frame
among their URDF ancestors (b included), and the bodies beyond are those whose
link's URDF parent is in S.  This module sums S's mass, mass centre and inertia
(parallel axes, as :func:`.urdf.merge_inertias` does for the bodies) from the URDF's
inertials placed by the table, and lays out the constants of the compiled kernel in
body k's coordinates.
"""

from typing import List, Sequence

import numpy as np

from .reaction_wrench import SENSOR_REALS, sensor_wrenches
from .urdf import merge_inertias


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
        frame_body, frame_parent = chain.frame_body, chain.frame_parent
        for j, name in enumerate(self.joints):
            joint = description.joints.get(name)
            if joint is None or joint.kind != 'fixed':
                fixed = sorted(x.name for x in description.joints.values()
                               if x.kind == 'fixed')
                raise ValueError(f'force/torque sensor {name!r} is not a fixed joint of the '
                                 f'URDF; fixed joints are {fixed}')
            b = chain.frame_index.get(joint.child, -1)
            k = int(frame_body[b]) if b >= 0 else -1
            if k < 0:
                raise ValueError(f'force/torque sensor {name!r} is fixed to the base link '
                                 f'{chain.base_link!r} or not in the model: nothing beyond '
                                 'it moves in the dynamics')
            inside = []                                    # S: b and the links fixed below it
            for f in np.flatnonzero(frame_body == k):
                up = f
                while up >= 0 and frame_body[up] == k and up != b:
                    up = frame_parent[up]                  # up the URDF tree, within body k
                if up == b:
                    inside.append(int(f))
            parts = []
            for f in inside:
                inertial = description.links[chain.frame_names[f]].inertial
                if inertial is not None:
                    X = chain.frame_pose[f] @ inertial.origin
                    R = X[:3, :3]
                    parts.append((inertial.mass, X[:3, 3], R @ inertial.inertia @ R.T))
            for body, link in enumerate(chain.link_names):   # joints hanging from S
                self.beyond[j, body] = int(frame_parent[chain.frame_index[link]]) in inside
            T_b = chain.frame_pose[b]
            m, c, I_C = merge_inertias(parts) if parts else (0.0, np.zeros(3), np.zeros((3, 3)))
            A = robot.model.A[k]                           # URDF body frame -> model frame
            c, I_C = A.T @ c, A.T @ I_C @ A
            I_O = I_C + m * (c @ c * np.eye(3) - np.outer(c, c))    # parallel axes to O_k
            self.body[j] = k
            self.reals[j] = np.concatenate(([m], c, I_O.ravel(), A.T @ T_b[:3, 3],
                                            (A.T @ T_b[:3, :3]).ravel()))
            self.frames.append(joint.child)
            self.links.append([chain.frame_names[f] for f in inside])
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
