"""
URDF to kinematic tree: the model that every DeNOC algorithm reads.

The URDF is read by :mod:`.urdf_xml` (a safe, validating reader; meshes are never
loaded).  Its movable joints (revolute, continuous, prismatic) become the bodies
k = 0..n-1 of a fixed-base kinematic tree, each with the index ``parent[k] < k`` of
the body it hangs from (-1: the base), as Pinocchio and KDL read a URDF (the tree
form of the DeNOC recursions: Shah, Saha and Dutt, "Dynamics of Tree-Type Robotic
Systems", 2013):

* with no ``tip_link``, every movable joint below ``base_link`` (the root by
  default) is a body, numbered depth first with the children of each link taken in
  the order of their joints' names: the order of urdfdom's tree, hence of KDL's and
  Pinocchio's joints.  A URDF with a single leaf gives a serial chain to that leaf;
* with ``tip_link``, only the movable joints on the path from ``base_link`` to
  ``tip_link`` are bodies (a serial chain, ``parent[k] = k - 1``); side branches
  (links off the path, fingers and tool flanges below the tip included) are either
  locked rigidly at given joint positions (``"lock"``, default; zero unless told
  otherwise) or discarded with their mass (``"drop"``, as KDL's tree-to-chain does);
* links joined by fixed joints are merged into their moving parent: masses add,
  mass centres combine, inertias move by the parallel-axis theorem.  Fixed leaves
  (``tool0``, sensor frames) are merged like any other;
* the base link and whatever is fixed to it never move and do not enter the
  dynamics of a fixed base;
* a ``<mimic joint multiplier offset>`` joint is still a body, but not a
  coordinate: q_k = multiplier * q_leader + offset.  A mimic of a mimic is resolved
  to the first joint that mimics nothing (multipliers and offsets composed).

Body k has its frame at the child frame of movable joint k.  Every kept link is a
frame (``frame_names``): the body it belongs to and its fixed pose in that body's
frame, or the base's and its pose in the base frame.  :func:`build_chain`
runs in phases, each O(n) (up to sorting the children of each link by name): the link
tree, the kept joints, the pose of every link in its body frame, the bodies'
inertias, the joint frames, the mimic relations.
"""

from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Dict, List, Optional, Sequence, Tuple
import warnings

import numpy as np

from . import urdf_xml
from .urdf_xml import Description, Joint

MOVABLE = ('revolute', 'continuous', 'prismatic')
UNSUPPORTED = ('floating', 'planar')

#: Principal moments of a body may break the triangle inequality (I_1 + I_2 >= I_3)
#: by this many machine epsilons of half their sum without a word: rounding, the
#: tolerance of gz-math's ``MassMatrix3::ValidMoments`` (and Drake's).  Up to
#: TRIANGLE_WARN of the largest moment, a warning: an excess that small is what
#: printing the moments to 3-4 digits makes.  Beyond it no rigid body has such
#: moments: ValueError.  The check is on the moving bodies, which is what the
#: dynamics reads.  A link whose own tensor breaks the inequality (PR2's
#: ``sensor_mount_link``, "needs verification with CAD") but is merged into a body
#: that keeps it gets a warning: urdfdom, KDL and Pinocchio accept such links, and
#: the algorithms need only a positive semidefinite tensor.
TRIANGLE_ROUNDING_EPS = 10.0
TRIANGLE_WARN = 1e-3

#: A link's principal moments may dip below zero by this much (times the largest
#: entry of its tensor, when above 1) as rounding: a point mass written as
#: ``ixx="-5.42101e-20"`` (iCub's ``r_hip_2``) is zero.  Twice it is then also the
#: least excess over the triangle inequality that rounding can make.
PSD_TOLERANCE = 1e-12


#: What ``side_branches`` may say of the links off the base-tip path.
SIDE_BRANCHES = ('lock', 'drop')


class URDFWarning(UserWarning):
    """A URDF value that ROS tools accept and that is read as given, with a caveat."""


@dataclass
class Chain:
    """
    A fixed-base kinematic tree of n rigid bodies, read from a URDF.

    Arrays are indexed by body k = 0..n-1 (the papers' 1..n), one body per movable
    joint, numbered so that ``parent[k] < k``.  A serial chain has ``parent`` =
    [-1, 0, 1, ..., n-2] and a ``tip_link``; a tree loaded whole has ``tip_link``
    None.  Mimic joints are bodies whose position follows another body's:
    q[k] = mimic_multiplier[k] * q[mimic_leader[k]] + mimic_offset[k]; the leader is
    never itself a mimic joint.  :attr:`coordinates` are the bodies that are not.
    """

    name: str
    base_link: str
    tip_link: Optional[str]         # None: the whole tree below base_link
    joint_names: List[str]
    link_names: List[str]
    prismatic: np.ndarray           # (n,) bool
    X_tree: np.ndarray              # (n, 4, 4): body parent[k] frame -> joint k frame at q_k = 0
    axis: np.ndarray                # (n, 3): unit joint axis in the joint (= body) frame
    mass: np.ndarray                # (n,)
    com: np.ndarray                 # (n, 3): mass centre in the body frame
    inertia: np.ndarray             # (n, 3, 3): inertia about the mass centre, body frame
    lower: np.ndarray               # (n,) position limits (-inf / +inf when absent)
    upper: np.ndarray
    effort: np.ndarray              # (n,) effort limits (inf when absent)
    velocity: np.ndarray            # (n,) velocity limits (inf when absent)
    damping: np.ndarray             # (n,) viscous damping from <dynamics>
    friction: np.ndarray            # (n,) Coulomb friction from <dynamics>
    continuous: np.ndarray          # (n,) bool
    merged_links: List[List[str]] = field(default_factory=list)
    static_links: List[str] = field(default_factory=list)
    dropped_links: List[str] = field(default_factory=list)
    locked_joints: Dict[str, float] = field(default_factory=dict)
    root_mass_ignored: float = 0.0
    # the tree and the mimic relations; None: a serial chain without mimic joints
    parent: Optional[np.ndarray] = None             # (n,) int64: parent body, -1 the base
    mimic_leader: Optional[np.ndarray] = None       # (n,) int64: leader body, -1 if none
    mimic_multiplier: Optional[np.ndarray] = None   # (n,) float: 1.0 if not a mimic joint
    mimic_offset: Optional[np.ndarray] = None       # (n,) float: 0.0 if not a mimic joint
    # every kept link's frame: the body it is part of (-1: the base) and its pose in
    # that body's frame; None: the bodies' own links and the base link only
    frame_names: Optional[List[str]] = None
    frame_body: Optional[np.ndarray] = None         # (F,) int64
    frame_pose: Optional[np.ndarray] = None         # (F, 4, 4)
    frame_parent: Optional[np.ndarray] = None       # (F,) int64: the URDF parent link's
    frame_joint: Optional[List[str]] = None         # frame (-1: none) and joint ('')
    description: Optional[Description] = None       # the parsed URDF it was read from

    def __post_init__(self):
        """Fill in the serial chain and 'no mimic joints' for the fields not given."""
        n = len(self.joint_names)
        if self.parent is None:
            self.parent = np.arange(n, dtype=np.int64) - 1
        if self.mimic_leader is None:
            self.mimic_leader = np.full(n, -1, dtype=np.int64)
        if self.mimic_multiplier is None:
            self.mimic_multiplier = np.ones(n)
        if self.mimic_offset is None:
            self.mimic_offset = np.zeros(n)
        if self.frame_names is None:
            self.frame_names = [self.base_link] + list(self.link_names)
            self.frame_body = np.arange(-1, n, dtype=np.int64)
            self.frame_pose = np.broadcast_to(np.eye(4), (n + 1, 4, 4)).copy()
            self.frame_parent = np.concatenate(([-1], self.parent + 1)).astype(np.int64)
            self.frame_joint = [''] + list(self.joint_names)

    @cached_property
    def frame_index(self) -> Dict[str, int]:
        """Return each frame's index in ``frame_names``, by its link's name."""
        return {name: f for f, name in enumerate(self.frame_names)}

    def link_frame(self, link: str) -> Tuple[int, np.ndarray]:
        """
        Return (body k, pose (4, 4) in body k's frame) of the frame of any kept link.

        k is -1 for the base link and the links fixed to it (the pose then in the base
        frame).  ValueError for a link the chain does not keep: unknown, above the base
        link, or dropped with its side branch.
        """
        f = self.frame_index.get(link) if isinstance(link, str) else None
        if f is None:
            if link in self.dropped_links:
                reason = ': it was dropped with its side branch (side_branches="drop")'
            else:
                names = self.frame_names
                reason = (f'; the links of robot {self.name!r} are '
                          + ', '.join(repr(x) for x in names[:40])
                          + (', ...' if len(names) > 40 else ''))
            raise ValueError(f'unknown link {link!r}{reason}')
        return int(self.frame_body[f]), self.frame_pose[f]

    @property
    def n(self) -> int:
        """Return the number of bodies (movable joints, mimic joints included)."""
        return len(self.joint_names)

    @property
    def coordinates(self) -> np.ndarray:
        """Return the indices of the bodies that are not mimic joints: the coordinates."""
        return np.flatnonzero(self.mimic_leader < 0)

    @property
    def coordinate_names(self) -> List[str]:
        """Return the names of the joints that are coordinates, in body order."""
        return [self.joint_names[k] for k in self.coordinates]

    @property
    def is_serial(self) -> bool:
        """Return True when every body hangs from the one before it (a serial chain)."""
        return bool(np.array_equal(self.parent, np.arange(self.n) - 1))


def axis_motion(axis: np.ndarray, prismatic: bool, q: float) -> np.ndarray:
    """Return the 4x4 motion of a joint about/along its unit ``axis`` by ``q``."""
    T = np.eye(4)
    if prismatic:
        T[:3, 3] = axis * q
    else:
        T[:3, :3] = urdf_xml.rotation(axis, q)
    return T


def merge_inertias(parts: Sequence[Tuple[float, np.ndarray, np.ndarray]]):
    """Combine (mass, mass centre, inertia about it) triples by the parallel-axis theorem."""
    mass = sum(m for m, _, _ in parts)
    if mass > 0.0:
        com = sum(m * c for m, c, _ in parts) / mass
    else:
        com = np.zeros(3)
    inertia = np.zeros((3, 3))
    for m, c, I_c in parts:
        r = c - com
        inertia += I_c + m * (r @ r * np.eye(3) - np.outer(r, r))
    return mass, com, inertia


def build_chain(source, base_link: Optional[str] = None, tip_link: Optional[str] = None,
                side_branches: str = 'lock',
                locked_positions: Optional[Dict[str, float]] = None) -> Chain:
    """
    Read a URDF (path or XML, see :func:`.urdf_xml.parse`) into a :class:`Chain`.

    With no ``tip_link``: the whole tree below ``base_link`` (a chain if it has one
    leaf).  With one: the chain from ``base_link`` to it, side branches locked or
    dropped.  Raises ValueError, naming the joint or link, for malformed or unsafe XML,
    invalid values (see :mod:`.urdf_xml`), unknown links, loops, floating or planar
    joints among the bodies, and mimic joints whose leader is missing, fixed, not
    among the bodies, or that mimic each other in a cycle.
    """
    return chain_from_description(urdf_xml.parse(source), base_link, tip_link,
                                  side_branches, locked_positions)


def build_chain_xml(xml, base_link: Optional[str] = None, tip_link: Optional[str] = None,
                    side_branches: str = 'lock',
                    locked_positions: Optional[Dict[str, float]] = None) -> Chain:
    """Read URDF XML (str or bytes; never a file path) into a :class:`Chain`."""
    return chain_from_description(urdf_xml.parse_xml(xml), base_link, tip_link,
                                  side_branches, locked_positions)


def chain_from_description(robot: Description, base_link: Optional[str] = None,
                           tip_link: Optional[str] = None, side_branches: str = 'lock',
                           locked_positions: Optional[Dict[str, float]] = None) -> Chain:
    """Fold a parsed URDF into the tree below ``base_link``, or the chain to ``tip_link``."""
    if side_branches not in SIDE_BRANCHES:
        raise ValueError(f"side_branches must be 'lock' or 'drop', not {side_branches!r}")
    tree = _Tree(robot)
    base_link, tip_link = tree.ends(base_link, tip_link)
    joints, movable = tree.kept_joints(base_link, tip_link)
    body_of, pose = _kept_poses(base_link, joints)
    dropped, locked = [], {}
    if tip_link is not None:
        dropped, locked = _side_branches(tree, body_of, pose, side_branches,
                                         dict(locked_positions or {}))
    elif locked_positions:
        raise ValueError(f'locked_positions names joints {sorted(locked_positions)}, but '
                         'the whole tree is loaded (no tip_link): nothing is locked')
    mass, com, inertia, merged, root_mass = _bodies(robot, body_of, pose, len(movable))
    mimic = _mimic_relations(robot, movable, base_link, tip_link)
    lower, upper, effort, velocity = np.array([_limits(joint) for joint in movable]).T.copy()
    return Chain(
        name=robot.name, base_link=base_link, tip_link=tip_link,
        joint_names=[joint.name for joint in movable],
        link_names=[joint.child for joint in movable],
        prismatic=np.array([joint.kind == 'prismatic' for joint in movable]),
        X_tree=np.array([pose[joint.parent] @ joint.origin for joint in movable]),
        axis=np.array([joint.axis for joint in movable]),
        mass=mass, com=com, inertia=inertia,
        lower=lower, upper=upper, effort=effort, velocity=velocity,
        damping=np.array([joint.damping for joint in movable]),
        friction=np.array([joint.friction for joint in movable]),
        continuous=np.array([joint.kind == 'continuous' for joint in movable]),
        merged_links=merged[1:], static_links=merged[0], dropped_links=sorted(dropped),
        locked_joints=locked, root_mass_ignored=root_mass,
        parent=np.array([body_of[joint.parent] - 1 for joint in movable], dtype=np.int64),
        mimic_leader=mimic[0], mimic_multiplier=mimic[1], mimic_offset=mimic[2],
        frame_names=list(body_of),
        frame_body=np.array([body_of[name] - 1 for name in body_of], dtype=np.int64),
        frame_pose=np.array([pose[name] for name in body_of]),
        description=robot, **_frame_tree(tree, list(body_of), base_link))


def _frame_tree(tree, names: List[str], base_link: str):
    """Return each frame's URDF parent frame (-1 for the base link) and joint name."""
    index = {name: f for f, name in enumerate(names)}
    joints = [tree.parent_joint[name] if name != base_link else None for name in names]
    return {'frame_parent': np.array([index[j.parent] if j else -1 for j in joints],
                                     dtype=np.int64),
            'frame_joint': [j.name if j else '' for j in joints]}


class _Tree:
    """The link tree of a URDF: parent joint and child joints of every link."""

    def __init__(self, robot: Description):
        """Index the joints by link; check for one root and no loops."""
        self.links = robot.links
        self.joints = robot.joints
        self.parent_joint: Dict[str, Joint] = {}
        self.children: Dict[str, List[Joint]] = {name: [] for name in robot.links}
        for joint in robot.joints.values():
            for role, name in (('parent', joint.parent), ('child', joint.child)):
                if name not in robot.links:
                    raise ValueError(f'joint {joint.name!r}: {role} link {name!r} is not '
                                     'defined')
            if joint.child in self.parent_joint:
                raise ValueError(f'link {joint.child!r} has two parent joints: '
                                 f'{self.parent_joint[joint.child].name!r} and '
                                 f'{joint.name!r}')
            self.parent_joint[joint.child] = joint
            self.children[joint.parent].append(joint)
        roots = [name for name in robot.links if name not in self.parent_joint]
        if len(roots) != 1:
            raise ValueError(f'URDF must have exactly one root link, found {roots}')
        self.root = roots[0]
        # with one root and one parent per link, a link the root does not reach
        # sits on a loop of joints
        reached = set(self.descendants(self.root))
        if len(reached) != len(robot.links):
            loop = sorted(set(robot.links) - reached)
            raise ValueError(f'joints form a loop: links {loop[:10]} are not below the '
                             f'root link {self.root!r}')

    def descendants(self, name: str) -> List[str]:
        """Return ``name`` and every link below it."""
        out, stack = [], [name]
        while stack:
            link = stack.pop()
            out.append(link)
            stack.extend(joint.child for joint in self.children[link])
        return out

    def preorder(self, name: str) -> List[Joint]:
        """
        Return the joints below link ``name``, depth first, siblings by joint name.

        The order of urdfdom's tree (a map by name), in which KDL and Pinocchio count.
        """
        out = []
        stack = sorted(self.children[name], key=attrgetter('name'), reverse=True)
        while stack:
            joint = stack.pop()
            out.append(joint)
            stack.extend(sorted(self.children[joint.child], key=attrgetter('name'),
                                reverse=True))
        return out

    def ends(self, base_link: Optional[str], tip_link: Optional[str]):
        """
        Return (base_link, tip_link), checked, or the defaults.

        The root, and the single leaf below ``base_link`` or None (the whole tree).
        """
        if base_link is None:
            base_link = self.root
        if base_link not in self.links:
            raise ValueError(f'unknown base_link {base_link!r}; links are '
                             f'{sorted(self.links)}')
        subtree = self.descendants(base_link)
        if tip_link is None:
            leaves = [name for name in subtree if not self.children[name]]
            return base_link, (leaves[0] if len(leaves) == 1 else None)
        if tip_link not in self.links:
            raise ValueError(f'unknown tip_link {tip_link!r}; links are {sorted(self.links)}')
        if tip_link not in subtree:
            raise ValueError(f'tip_link {tip_link!r} is not below base_link {base_link!r}')
        return base_link, tip_link

    def path(self, base_link: str, tip_link: str) -> List[Joint]:
        """Return the joints from ``base_link`` to ``tip_link``."""
        path = []
        name = tip_link
        while name != base_link:
            joint = self.parent_joint[name]
            path.append(joint)
            name = joint.parent
        path.reverse()
        return path

    def kept_joints(self, base_link: str, tip_link: Optional[str]):
        """
        Return the joints below ``base_link`` (depth first) or on the path to ``tip_link``.

        Returns (joints, movable), the latter the bodies; ValueError, naming the joint,
        for a floating or planar joint, and when none moves.
        """
        if tip_link is None:
            joints, where = self.preorder(base_link), f'in the tree below {base_link!r}'
        else:
            joints, where = self.path(base_link, tip_link), 'on the chain'
        for joint in joints:
            if joint.kind in UNSUPPORTED:
                raise ValueError(f'joint {joint.name!r} {where} is {joint.kind}; only '
                                 'revolute, continuous, prismatic and fixed are supported')
        movable = [joint for joint in joints if joint.kind in MOVABLE]
        if not movable and tip_link is None:
            raise ValueError(f'no movable joint below {base_link!r}')
        if not movable:
            raise ValueError(f'no movable joint between {base_link!r} and {tip_link!r}')
        return joints, movable


def _kept_poses(base_link: str, joints: List[Joint]):
    """
    Return (body_of, pose): every link's body and its pose in that body's frame.

    Body 0 is the base, k the k-th moving body (its frame its joint's child frame).
    """
    body_of = {base_link: 0}
    pose = {base_link: np.eye(4)}
    body = 0
    for joint in joints:
        if joint.kind in MOVABLE:
            body += 1
            pose[joint.child] = np.eye(4)
            body_of[joint.child] = body
        else:
            pose[joint.child] = pose[joint.parent] @ joint.origin
            body_of[joint.child] = body_of[joint.parent]
    return body_of, pose


def _side_branches(tree: _Tree, body_of, pose, side_branches: str,
                   locked_positions: Dict[str, float]):
    """
    Return (dropped, locked): the links off the chain, dropped or locked.

    Locked, they join the body they hang from in ``body_of`` and ``pose``.
    """
    on_path = set(body_of)
    dropped, locked = [], {}
    for name in list(body_of):
        stack = [j for j in tree.children[name] if j.child not in on_path]
        while stack:
            joint = stack.pop()
            if side_branches == 'drop':
                dropped.extend(tree.descendants(joint.child))
                continue
            value = _locked_value(joint, tree.joints, locked_positions, on_path)
            motion = np.eye(4)
            if joint.kind in MOVABLE:
                locked[joint.name] = value
                motion = axis_motion(joint.axis, joint.kind == 'prismatic', value)
            pose[joint.child] = pose[joint.parent] @ joint.origin @ motion
            body_of[joint.child] = body_of[joint.parent]
            stack.extend(tree.children[joint.child])
    unknown = set(locked_positions) - set(locked)
    if unknown:
        raise ValueError(f'locked_positions names joints that are not locked side-branch '
                         f'joints: {sorted(unknown)}')
    return dropped, locked


def _mimic_relations(robot: Description, movable: List[Joint], base_link: str,
                     tip_link: Optional[str]):
    """
    Return (leader, multiplier, offset) arrays of the bodies ``movable``.

    A mimic of a mimic is resolved to the first joint that mimics nothing, the
    multipliers and offsets composed: q_a = m_a q_b + o_a with q_b = m_b q_c + o_b
    gives q_a = m_a m_b q_c + (m_a o_b + o_a).  Raises ValueError, naming the joint,
    for a leader that is not a joint of the URDF, is not movable, is not a body, or
    for mimic joints that follow each other in a cycle.
    """
    n = len(movable)
    leader = np.full(n, -1, dtype=np.int64)
    multiplier, offset = np.ones(n), np.zeros(n)
    index = {joint.name: k for k, joint in enumerate(movable)}
    direct = {}
    for k, joint in enumerate(movable):
        if joint.mimic is None:
            continue
        source = joint.mimic.joint
        what = f'joint {joint.name!r} mimics joint {source!r}'
        if source not in robot.joints:
            raise ValueError(f'{what}, which is not defined')
        if source not in index:
            kind = robot.joints[source].kind
            if kind not in MOVABLE:
                raise ValueError(f'{what}, which is {kind}: a mimic joint must follow a '
                                 'revolute, continuous or prismatic joint')
            where = (f'below {base_link!r}' if tip_link is None else
                     f'on the chain from {base_link!r} to {tip_link!r}')
            raise ValueError(f'{what}, which is not {where}')
        direct[k] = (index[source], joint.mimic.multiplier, joint.mimic.offset)
    for k in direct:
        path, j = {}, k             # the unresolved mimics from k, in order (a dict: O(1) in)
        while j in direct and leader[j] < 0:
            if j in path:
                cycle = list(path)[list(path).index(j):] + [j]
                raise ValueError('mimic joints form a cycle: '
                                 + ' -> '.join(repr(movable[i].name) for i in cycle))
            path[j] = None
            j = direct[j][0]
        root, a, b = (leader[j], multiplier[j], offset[j]) if j in direct else (j, 1.0, 0.0)
        for i in reversed(list(path)):
            _, m, o = direct[i]
            a, b = m * a, m * b + o
            leader[i], multiplier[i], offset[i] = root, a, b
    return leader, multiplier, offset


def _bodies(robot: Description, body_of, pose, n: int):
    """
    Return the n bodies' masses, mass centres and inertias and the links merged in.

    And the mass of the static base links, which a fixed base ignores.
    """
    parts = [[] for _ in range(n + 1)]
    merged = [[] for _ in range(n + 1)]
    root_mass = 0.0
    for name, k in body_of.items():
        inertial = robot.links[name].inertial
        merged[k].append(name)
        if inertial is None:
            continue
        if k == 0:      # static: never moves, never read (only its mass is reported)
            root_mass += inertial.mass
            continue
        moments = principal_moments(inertial.inertia)
        if moments[0] < -PSD_TOLERANCE * max(1.0, float(np.abs(inertial.inertia).max())):
            raise ValueError(f'link {name!r}: <inertia> tensor is not positive '
                             f'(semi)definite, principal moments {moments}')
        if _triangle_excess(moments):
            warnings.warn(f'link {name!r}: <inertia> breaks the triangle inequality '
                          f'(principal moments {moments}); '
                          'read as given, as urdfdom, KDL and Pinocchio do, since body '
                          f'{k} that it is merged into is checked as a whole',
                          URDFWarning, stacklevel=4)
        # the inertial <origin xyz> places the mass centre; its rpy rotates the tensor
        T = pose[name] @ inertial.origin
        R = T[:3, :3]
        parts[k].append((inertial.mass, T[:3, 3].copy(), R @ inertial.inertia @ R.T))
    mass, com, inertia = (np.array(x) for x in zip(*(merge_inertias(p) for p in parts[1:])))
    for k in range(n):
        _check_triangle(merged[k + 1], inertia[k])
    return mass, com, inertia, merged, root_mass


def principal_moments(inertia: np.ndarray) -> np.ndarray:
    """Return the principal moments of a symmetric 3x3 tensor, ascending."""
    if not (inertia[0, 1] or inertia[0, 2] or inertia[1, 2]):
        return np.sort(np.diagonal(inertia))
    return np.linalg.eigvalsh(inertia)


def _triangle_excess(moments: np.ndarray) -> float:
    """Return I_3 - I_1 - I_2 of ascending moments when rounding cannot make it, else 0."""
    excess = float(moments[2] - moments[0] - moments[1])
    rounding = max(TRIANGLE_ROUNDING_EPS * np.finfo(float).eps * 0.5 * float(moments.sum()),
                   2.0 * PSD_TOLERANCE)
    return excess if excess > rounding else 0.0


def _check_triangle(links: List[str], inertia: np.ndarray):
    """Raise for a body whose moments no rigid body has; warn once on the edge."""
    moments = principal_moments(inertia)
    excess = _triangle_excess(moments)
    if not excess:
        return
    largest = float(moments[2])
    what = f'link {links[0]!r}' if len(links) == 1 else f'the body of links {links}'
    if excess > TRIANGLE_WARN * largest:
        raise ValueError(f'{what}: <inertia> violates the triangle inequality: principal '
                         f'moments {moments} have I_1 + I_2 < I_3 by '
                         f'{excess:.3g}; no rigid body has them')
    warnings.warn(f'{what}: <inertia> principal moments break the triangle inequality by '
                  f'{excess:.3g} ({excess / largest:.2g} of the largest); read as given, as '
                  'urdfdom and Pinocchio do (an excess this small comes from rounding the '
                  'printed values)', URDFWarning, stacklevel=4)


def _locked_value(joint: Joint, joints, locked_positions, on_path) -> float:
    if joint.name in locked_positions:
        return float(locked_positions[joint.name])
    if joint.kind in MOVABLE and joint.mimic is not None:
        source = joint.mimic.joint
        if source in joints and joints[source].child in on_path:
            raise ValueError(f'side-branch joint {joint.name!r} mimics chain joint '
                             f'{source!r}; it cannot be locked rigidly')
        base = float(locked_positions.get(source, 0.0))
        return joint.mimic.multiplier * base + joint.mimic.offset
    return 0.0


def _limits(joint: Joint) -> Tuple[float, float, float, float]:
    """
    Return (lower, upper, effort, velocity); -inf/inf where the URDF sets no limit.

    A continuous joint has no position limits; lower == upper (both 0 when omitted,
    as urdfdom reads them) means none either.  Effort or velocity 0 means no limit.
    """
    limit = joint.limit
    lower, upper, effort, velocity = -np.inf, np.inf, np.inf, np.inf
    if limit is not None:
        if joint.kind != 'continuous' and limit.lower is not None \
                and limit.upper is not None and limit.upper > limit.lower:
            lower, upper = limit.lower, limit.upper
        if limit.effort > 0:
            effort = limit.effort
        if limit.velocity > 0:
            velocity = limit.velocity
    return lower, upper, effort, velocity
