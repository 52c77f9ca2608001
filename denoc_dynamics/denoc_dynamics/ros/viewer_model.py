"""
The robot arm_viewer draws: a kinematic tree, its forward kinematics and its geometry.

Everything here costs O(n) in the number of links, for any tree (a serial chain, a
gripper with two fingers, a humanoid): :class:`KinematicTree` orders the links from
the root, each after its parent, and :meth:`KinematicTree.poses` composes one joint
transform per link.  No scene graph is built (trimesh's grows about as n^3.8 with the
links of a chain).

:func:`read_description` turns URDF text into a :class:`ViewerModel`.  The text passes
the core's hardened parser first (:func:`denoc_dynamics.core.urdf_xml.parse_xml`: no
DTD, no entities, never a file path), and a description with more than ``max_dof``
joints or ``max_dof + 1`` links is refused before anything is built from it.  yourdfpy
then reads the visuals and materials, with no scene graph and no mesh: the mesh files
are opened by the viewer itself, under the rules of :mod:`.mesh_files`.

Joint motion follows the URDF: revolute and continuous joints rotate about their
axis, prismatic ones translate along it, a ``<mimic>`` joint follows its joint
(``multiplier * q + offset``); fixed, floating and planar joints are drawn at their
origin.
"""

import io
import math
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..core.urdf_xml import parse_xml

#: Joint types the view moves, and the kind codes of :class:`KinematicTree`.
FIXED, ROTATE, TRANSLATE = 0, 1, 2
KINDS = {'revolute': ROTATE, 'continuous': ROTATE, 'prismatic': TRANSLATE}


def check_size(text, max_dof: int):
    """
    Raise ValueError if the URDF ``text`` has more than ``max_dof`` joints.

    A cheap count of ``<link`` first, so that a huge description is refused without
    being parsed (a tree has one link more than joints); then the parsed count.
    Return the parsed description (:func:`parse_xml`).
    """
    links = text.count(b'<link' if isinstance(text, bytes) else '<link')
    if links > max_dof + 1:
        raise ValueError(f'the description has {links} links, more than max_dof + 1 = '
                         f'{max_dof + 1}: refused (the max_dof parameter)')
    description = parse_xml(text)
    if len(description.joints) > max_dof:
        raise ValueError(f'the description has {len(description.joints)} joints, more '
                         f'than max_dof = {max_dof}: refused (the max_dof parameter)')
    return description


def _finite(values, where: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError(f'{where}: non-finite value')
    return array


class KinematicTree:
    """
    The links of a URDF ordered from the root, and their poses for joint positions.

    Attributes: ``links`` (names, root first, each after its parent), ``parent``
    (index of each link's parent, -1 for the root), ``joint_names`` (the joints that
    joint_states drive, in document order), ``limits`` ({joint: (lower, upper)},
    None where absent).
    """

    def __init__(self, robot):
        """Order the links of a yourdfpy ``Robot``; ValueError names a bad link or joint."""
        names = [link.name for link in robot.links]
        known = set(names)
        if len(known) != len(names):
            raise ValueError('a link name is used twice')
        parent_joint = {}
        children: Dict[str, list] = {name: [] for name in names}
        for joint in robot.joints:
            for role, link in (('parent', joint.parent), ('child', joint.child)):
                if link not in known:
                    raise ValueError(f'joint {joint.name!r}: its {role} link {link!r} is '
                                     'not defined')
            if joint.child in parent_joint:
                raise ValueError(f'link {joint.child!r} is the child of two joints, '
                                 f'{parent_joint[joint.child].name!r} and {joint.name!r}')
            parent_joint[joint.child] = joint
            children[joint.parent].append(joint.child)
        roots = [name for name in names if name not in parent_joint]
        if len(roots) != 1:
            raise ValueError('the links form no tree: ' + (
                f'{len(roots)} links have no parent joint ({", ".join(roots[:5])})' if roots
                else 'every link has a parent joint (a cycle)'))
        order = [roots[0]]
        for name in order:  # grows while it is read: breadth first
            order.extend(children[name])
        if len(order) != len(names):
            lost = sorted(known - set(order))
            raise ValueError(f'links {", ".join(lost[:5])} are not connected to the root '
                             f'{roots[0]!r} (a cycle)')
        self.links: List[str] = order
        self.index = {name: i for i, name in enumerate(order)}
        n = len(order)
        self.parent = np.full(n, -1, dtype=int)
        self.origin = np.tile(np.eye(4), (n, 1, 1))
        self.axis = np.zeros((n, 3))
        self.kind = np.zeros(n, dtype=int)
        joints = {}
        for i, name in enumerate(order[1:], start=1):
            joint = parent_joint[name]
            where = f'joint {joint.name!r}'
            joints[joint.name] = (i, joint)
            self.parent[i] = self.index[joint.parent]
            if joint.origin is not None:
                self.origin[i] = _finite(joint.origin, where + ' <origin>')
            self.kind[i] = KINDS.get(joint.type, FIXED)
            if self.kind[i] != FIXED:
                axis = _finite([1.0, 0.0, 0.0] if joint.axis is None else joint.axis,
                               where + ' <axis>')
                norm = float(np.linalg.norm(axis))
                if norm < 1e-12:
                    raise ValueError(f'{where}: zero <axis>')
                self.axis[i] = axis / norm
        self.joint_names: List[str] = []
        self.limits: Dict[str, Tuple[Optional[float], Optional[float]]] = {}
        for joint in robot.joints:
            if joint.type in KINDS and joint.mimic is None:
                self.joint_names.append(joint.name)
                self.limits[joint.name] = self._limits(joint)
        column = {name: k for k, name in enumerate(self.joint_names)}
        # q of link i's joint = scale[i] * q[source[i]] + offset[i]; source -1: zero
        self.source = np.full(n, -1, dtype=int)
        self.scale = np.ones(n)
        self.offset = np.zeros(n)
        for name, (i, joint) in joints.items():
            if self.kind[i] == FIXED:
                continue
            if joint.mimic is None:
                self.source[i] = column[name]
                continue
            scale, offset, seen = 1.0, 0.0, {name}
            while joint.mimic is not None:
                mimic = joint.mimic
                multiplier = 1.0 if mimic.multiplier is None else float(mimic.multiplier)
                shift = 0.0 if mimic.offset is None else float(mimic.offset)
                scale, offset = scale * multiplier, offset * multiplier + shift
                if mimic.joint not in joints or mimic.joint in seen:
                    raise ValueError(f'joint {name!r} mimics {mimic.joint!r}, which is '
                                     + ('not a joint' if mimic.joint not in joints
                                        else 'a joint mimicking it back (a cycle)'))
                seen.add(mimic.joint)
                joint = joints[mimic.joint][1]
            if joint.name not in column:
                raise ValueError(f'joint {name!r} mimics the fixed joint {joint.name!r}')
            self.source[i] = column[joint.name]
            self.scale[i], self.offset[i] = _finite([scale, offset], f'joint {name!r} '
                                                    '<mimic>')

    @staticmethod
    def _limits(joint):
        if joint.type == 'continuous' or joint.limit is None:
            return None, None
        bounds = []
        for value in (joint.limit.lower, joint.limit.upper):
            bounds.append(float(value) if value is not None and math.isfinite(value)
                          else None)
        return tuple(bounds)

    def __len__(self):
        """Return the number of links."""
        return len(self.links)

    def joint_positions(self, q) -> np.ndarray:
        """Return the position of each link's joint (zero for the root and fixed ones)."""
        values = np.zeros(len(self.links))
        moving = self.source >= 0
        if np.any(moving):
            values[moving] = np.asarray(q, dtype=float)[self.source[moving]]
        return np.where(moving, self.scale * values + self.offset, 0.0)

    def poses(self, q) -> np.ndarray:
        """Return the (n, 4, 4) poses of the links in the root frame at ``q``."""
        theta = self.joint_positions(q)
        motion = np.tile(np.eye(4), (len(self.links), 1, 1))
        rotate = self.kind == ROTATE
        if np.any(rotate):
            motion[rotate, :3, :3] = rotations(self.axis[rotate], theta[rotate])
        translate = self.kind == TRANSLATE
        motion[translate, :3, 3] = self.axis[translate] * theta[translate, None]
        local = self.origin @ motion
        world = np.empty_like(local)
        world[0] = local[0]
        parent = self.parent
        for i in range(1, len(local)):  # parents come first
            world[i] = world[parent[i]] @ local[i]
        return world


def rotations(axes: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Return the (m, 3, 3) rotations by ``angles`` about the unit ``axes`` (Rodrigues)."""
    x, y, z = axes.T
    c, s = np.cos(angles), np.sin(angles)
    t = 1.0 - c
    return np.stack([
        np.stack([c + x * x * t, x * y * t - z * s, x * z * t + y * s], axis=-1),
        np.stack([y * x * t + z * s, c + y * y * t, y * z * t - x * s], axis=-1),
        np.stack([z * x * t - y * s, z * y * t + x * s, c + z * z * t], axis=-1),
    ], axis=-2)


def quaternions(R: np.ndarray) -> np.ndarray:
    """Return the unit quaternions, (m, 4) as w x y z, of the (m, 3, 3) rotations ``R``."""
    m = R.reshape(-1, 3, 3)
    trace = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    candidates = np.stack([  # 4 q_k q for the largest of w, x, y, z (Shepperd)
        np.stack([1.0 + trace, m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0],
                  m[:, 1, 0] - m[:, 0, 1]], axis=-1),
        np.stack([m[:, 2, 1] - m[:, 1, 2], 1.0 + 2 * m[:, 0, 0] - trace,
                  m[:, 0, 1] + m[:, 1, 0], m[:, 0, 2] + m[:, 2, 0]], axis=-1),
        np.stack([m[:, 0, 2] - m[:, 2, 0], m[:, 0, 1] + m[:, 1, 0],
                  1.0 + 2 * m[:, 1, 1] - trace, m[:, 1, 2] + m[:, 2, 1]], axis=-1),
        np.stack([m[:, 1, 0] - m[:, 0, 1], m[:, 0, 2] + m[:, 2, 0],
                  m[:, 1, 2] + m[:, 2, 1], 1.0 + 2 * m[:, 2, 2] - trace], axis=-1),
    ], axis=1)
    diagonal = np.stack([trace, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=-1)
    q = candidates[np.arange(len(m)), np.argmax(diagonal, axis=-1)]
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q * np.where(q[:, :1] < 0.0, -1.0, 1.0)


def shorten(text, limit: int = 200) -> str:
    """Return ``text`` (a name from a description), cut to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + '...'


class ViewerModel:
    """A robot description read for the view: yourdfpy's robot, its tree and materials."""

    def __init__(self, robot, source: str):
        """Order the tree of the yourdfpy ``robot`` read from ``source``."""
        self.robot = robot
        self.name = shorten(robot.name or '', 100)
        self.source = source
        self.tree = KinematicTree(robot)
        self.materials = {m.name: m for m in robot.materials if m.name}

    @property
    def joint_names(self) -> List[str]:
        """Return the joints joint_states drive, in document order."""
        return self.tree.joint_names


def read_description(yourdfpy, text, source: str, max_dof: int) -> ViewerModel:
    """
    Return the ViewerModel of URDF ``text`` (XML), or raise ValueError.

    Refused: more than ``max_dof`` joints (:func:`check_size`), text that is not safe
    URDF XML, a URDF yourdfpy cannot read, links that form no tree.
    """
    check_size(text, max_dof)
    data = text if isinstance(text, bytes) else text.encode('utf-8', 'surrogatepass')
    try:
        urdf = yourdfpy.URDF.load(io.BytesIO(data), build_scene_graph=False,
                                  load_meshes=False)
    except Exception as exc:  # yourdfpy raises many kinds; the caller wants ValueError
        raise ValueError(f'yourdfpy cannot read the URDF: {exc}') from exc
    if not urdf.robot.links:
        raise ValueError('the URDF has no links')
    return ViewerModel(urdf.robot, source)
