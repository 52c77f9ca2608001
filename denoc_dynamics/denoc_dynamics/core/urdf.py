"""
URDF to serial chain: the model that every DeNOC algorithm reads.

The URDF is parsed with yourdfpy (meshes are never loaded).  The movable joints on
the path from ``base_link`` to ``tip_link`` become the coordinates q_1..q_n in path
order (``docs/algorithms.md``, "URDF conventions").  Everything else is folded into
the n moving bodies:

* links joined by fixed joints are merged into their moving parent: masses add,
  mass centres combine, inertias move by the parallel-axis theorem;
* side branches (links off the base-tip path, fingers and tool flanges below the
  tip included) are either locked rigidly at given joint positions (``"lock"``,
  default; zero unless told otherwise) or discarded with their mass (``"drop"``,
  as KDL's tree-to-chain does);
* the base link and whatever is fixed to it never move and do not enter the
  dynamics of a fixed-base chain.

Body k (k = 1..n) has its frame at the child frame of movable joint k.  The result,
:class:`Chain`, is plain numpy data: per joint the fixed transform from the previous
body frame to the joint frame (``X_tree``), the unit axis, the joint type; per body
the mass, the mass centre and the inertia about the mass centre, all in the body
frame.
"""

from dataclasses import dataclass, field
import io
from typing import Dict, List, Optional, Sequence, Tuple
import xml.etree.ElementTree as ElementTree

import numpy as np

MOVABLE = ('revolute', 'continuous', 'prismatic')
UNSUPPORTED_ON_PATH = ('floating', 'planar')


@dataclass
class Chain:
    """
    A fixed-base serial chain of n rigid bodies, read from a URDF.

    Arrays are indexed by joint/body k = 0..n-1 (the papers' 1..n).
    """

    name: str
    base_link: str
    tip_link: str
    joint_names: List[str]
    link_names: List[str]
    prismatic: np.ndarray           # (n,) bool
    X_tree: np.ndarray              # (n, 4, 4): body k-1 frame -> joint k frame at q_k = 0
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

    @property
    def n(self) -> int:
        """Return the number of coordinates (movable joints on the path)."""
        return len(self.joint_names)


def axis_motion(axis: np.ndarray, prismatic: bool, q: float) -> np.ndarray:
    """Return the 4x4 motion of a joint about/along its unit ``axis`` by ``q``."""
    T = np.eye(4)
    if prismatic:
        T[:3, 3] = axis * q
    else:
        K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]],
                      [-axis[1], axis[0], 0.0]])
        T[:3, :3] = np.eye(3) + np.sin(q) * K + (1.0 - np.cos(q)) * (K @ K)
    return T


def _parse(source) -> 'object':
    """Parse a path or an XML string with yourdfpy; malformed input is a ValueError."""
    import yourdfpy

    if isinstance(source, bytes):
        source = source.decode()
    text = str(source)
    if text.lstrip().startswith('<'):
        data = text.encode()
    else:
        try:
            with open(text, 'rb') as stream:
                data = stream.read()
        except OSError as exc:
            raise ValueError(f'cannot read URDF file {text!r}: {exc}') from exc
    try:
        ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(f'malformed URDF XML: {exc}') from exc
    try:
        urdf = yourdfpy.URDF.load(io.BytesIO(data), load_meshes=False,
                                  build_scene_graph=False,
                                  build_collision_scene_graph=False,
                                  load_collision_meshes=False)
    except Exception as exc:  # yourdfpy raises assorted types on bad content
        raise ValueError(f'cannot parse URDF: {exc}') from exc
    if urdf.robot is None or not urdf.robot.links:
        raise ValueError('URDF has no <link> elements')
    return urdf.robot


def _origin(T) -> np.ndarray:
    return np.eye(4) if T is None else np.asarray(T, dtype=float)


def _link_inertia(link) -> Tuple[float, np.ndarray, np.ndarray]:
    """
    Return (mass, mass centre, inertia about it) of a URDF link in its own frame.

    The inertial <origin xyz> places the mass centre; its rpy rotates the tensor
    (I_link = R I R^T) but not the offset.  No <inertial> means massless.
    """
    inertial = link.inertial
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    mass = float(inertial.mass if inertial.mass is not None else 0.0)
    I_c = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, float)
    T = _origin(inertial.origin)
    if not (np.isfinite(mass) and np.all(np.isfinite(I_c)) and np.all(np.isfinite(T))):
        raise ValueError(f'link {link.name!r}: non-finite inertial values')
    if mass < 0.0:
        raise ValueError(f'link {link.name!r}: negative mass {mass}')
    I_c = 0.5 * (I_c + I_c.T)
    scale = max(1.0, float(np.abs(I_c).max()))
    if np.linalg.eigvalsh(I_c).min() < -1e-12 * scale:
        raise ValueError(f'link {link.name!r}: inertia tensor is not positive '
                         f'(semi)definite, eigenvalues {np.linalg.eigvalsh(I_c)}')
    R = T[:3, :3]
    return mass, T[:3, 3].copy(), R @ I_c @ R.T


def merge_inertias(parts: Sequence[Tuple[float, np.ndarray, np.ndarray]]):
    """
    Combine (mass, mass centre, inertia about it) triples in one frame.

    Masses add, the mass centre is the mass-weighted mean, and each inertia is
    moved to the common mass centre by the parallel-axis theorem.
    """
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
    Read a URDF (path or XML string) into a :class:`Chain`.

    Raises ValueError, naming the joint or link, for malformed XML, unknown links,
    mimic/floating/planar joints on the path, negative masses and inertia tensors
    that are not positive semidefinite.
    """
    if side_branches not in ('lock', 'drop'):
        raise ValueError(f"side_branches must be 'lock' or 'drop', not {side_branches!r}")
    locked_positions = dict(locked_positions or {})
    robot = _parse(source)
    links = {link.name: link for link in robot.links}
    joints = {joint.name: joint for joint in robot.joints}
    parent_joint = {}
    children = {name: [] for name in links}
    for joint in robot.joints:
        for role, name in (('parent', joint.parent), ('child', joint.child)):
            if name not in links:
                raise ValueError(f'joint {joint.name!r}: {role} link {name!r} is not defined')
        if joint.child in parent_joint:
            raise ValueError(f'link {joint.child!r} has two parent joints: '
                             f'{parent_joint[joint.child].name!r} and {joint.name!r}')
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise ValueError(f'URDF must have exactly one root link, found {roots}')
    root = roots[0]

    if base_link is None:
        base_link = root
    if base_link not in links:
        raise ValueError(f'unknown base_link {base_link!r}; links are {sorted(links)}')
    subtree = _descendants(base_link, children)
    if tip_link is None:
        leaves = [name for name in subtree if not children[name]]
        if len(leaves) != 1:
            raise ValueError(f'tip_link is ambiguous below {base_link!r}: candidate tips '
                             f'are {sorted(leaves)}; pass tip_link=')
        tip_link = leaves[0]
    if tip_link not in links:
        raise ValueError(f'unknown tip_link {tip_link!r}; links are {sorted(links)}')
    if tip_link not in subtree:
        raise ValueError(f'tip_link {tip_link!r} is not below base_link {base_link!r}')

    path_joints = []
    name = tip_link
    while name != base_link:
        joint = parent_joint[name]
        path_joints.append(joint)
        name = joint.parent
    path_joints.reverse()
    for joint in path_joints:
        if joint.type in UNSUPPORTED_ON_PATH:
            raise ValueError(f'joint {joint.name!r} on the chain is {joint.type}; only '
                             f'revolute, continuous, prismatic and fixed are supported')
        if joint.type not in MOVABLE + ('fixed',):
            raise ValueError(f'joint {joint.name!r} has unknown type {joint.type!r}')
        if joint.mimic is not None and joint.type in MOVABLE:
            raise ValueError(f'joint {joint.name!r} on the chain is a mimic joint '
                             f'(of {joint.mimic.joint!r}); mimic joints are not supported')

    # Body index of every link on the path: 0 is the base, k the k-th moving body.
    body_of = {base_link: 0}
    body = 0
    movable = []
    for joint in path_joints:
        if joint.type in MOVABLE:
            body += 1
            movable.append(joint)
        body_of[joint.child] = body
    n = len(movable)
    if n == 0:
        raise ValueError(f'no movable joint between {base_link!r} and {tip_link!r}')

    # Pose of every path link in its body frame (fixed transforms only).
    pose = {base_link: np.eye(4)}
    for joint in path_joints:
        if joint.type in MOVABLE:
            pose[joint.child] = np.eye(4)
        else:
            pose[joint.child] = pose[joint.parent] @ _origin(joint.origin)

    # Side branches: attach to the body of the path link they hang from.
    on_path = set(body_of)
    dropped, locked = [], {}
    for name in list(body_of):
        stack = [j for j in children[name] if j.child not in on_path]
        while stack:
            joint = stack.pop()
            if side_branches == 'drop':
                dropped.extend(_descendants(joint.child, children))
                continue
            value = _locked_value(joint, joints, locked_positions, on_path)
            if joint.type in MOVABLE:
                locked[joint.name] = value
            motion = (axis_motion(_unit_axis(joint), joint.type == 'prismatic', value)
                      if joint.type in MOVABLE else np.eye(4))
            pose[joint.child] = pose[joint.parent] @ _origin(joint.origin) @ motion
            body_of[joint.child] = body_of[joint.parent]
            stack.extend(children[joint.child])
    unknown = set(locked_positions) - set(locked)
    if unknown:
        raise ValueError(f'locked_positions names joints that are not locked side-branch '
                         f'joints: {sorted(unknown)}')

    parts = [[] for _ in range(n + 1)]
    merged = [[] for _ in range(n + 1)]
    root_mass = 0.0
    for name, k in body_of.items():
        if k == 0:      # static: never moves, never read (only its mass is reported)
            inertial = links[name].inertial
            root_mass += float(getattr(inertial, 'mass', None) or 0.0)
            merged[0].append(name)
            continue
        mass, com, I_c = _link_inertia(links[name])
        R, p = pose[name][:3, :3], pose[name][:3, 3]
        parts[k].append((mass, R @ com + p, R @ I_c @ R.T))
        merged[k].append(name)

    X_tree = np.empty((n, 4, 4))
    axis = np.empty((n, 3))
    k = 0
    T = np.eye(4)
    for joint in path_joints:
        T = T @ _origin(joint.origin)
        if joint.type in MOVABLE:
            X_tree[k] = T
            axis[k] = _unit_axis(joint)
            T = np.eye(4)
            k += 1

    bodies = [merge_inertias(parts[k + 1]) for k in range(n)]
    limits = np.array([_limits(joint) for joint in movable]).reshape(n, 4)
    dyn = np.array([[float(getattr(joint.dynamics, attr, None) or 0.0)
                     for attr in ('damping', 'friction')] if joint.dynamics else [0.0, 0.0]
                    for joint in movable]).reshape(n, 2)
    return Chain(
        name=robot.name or '',
        base_link=base_link, tip_link=tip_link,
        joint_names=[joint.name for joint in movable],
        link_names=[joint.child for joint in movable],
        prismatic=np.array([joint.type == 'prismatic' for joint in movable]),
        X_tree=X_tree, axis=axis,
        mass=np.array([b[0] for b in bodies]),
        com=np.array([b[1] for b in bodies]).reshape(n, 3),
        inertia=np.array([b[2] for b in bodies]).reshape(n, 3, 3),
        lower=limits[:, 0], upper=limits[:, 1], effort=limits[:, 2], velocity=limits[:, 3],
        damping=dyn[:, 0], friction=dyn[:, 1],
        continuous=np.array([joint.type == 'continuous' for joint in movable]),
        merged_links=merged[1:], static_links=merged[0], dropped_links=sorted(dropped),
        locked_joints=locked, root_mass_ignored=root_mass)


def _descendants(name: str, children) -> List[str]:
    out, stack = [], [name]
    while stack:
        link = stack.pop()
        out.append(link)
        stack.extend(joint.child for joint in children[link])
    return out


def _unit_axis(joint) -> np.ndarray:
    axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis, float)
    norm = np.linalg.norm(axis)
    if not np.isfinite(norm) or norm < 1e-9:
        raise ValueError(f'joint {joint.name!r}: axis {axis} is not a nonzero vector')
    return axis / norm


def _locked_value(joint, joints, locked_positions, on_path) -> float:
    if joint.name in locked_positions:
        return float(locked_positions[joint.name])
    if joint.type in MOVABLE and joint.mimic is not None:
        source = joint.mimic.joint
        if source in joints and joints[source].child in on_path:
            raise ValueError(f'side-branch joint {joint.name!r} mimics chain joint '
                             f'{source!r}; it cannot be locked rigidly')
        base = float(locked_positions.get(source, 0.0))
        return (joint.mimic.multiplier or 1.0) * base + (joint.mimic.offset or 0.0)
    return 0.0


def _limits(joint) -> Tuple[float, float, float, float]:
    limit = joint.limit
    lower, upper, effort, velocity = -np.inf, np.inf, np.inf, np.inf
    if limit is not None:
        if joint.type != 'continuous' and limit.lower is not None and limit.upper is not None \
                and limit.upper > limit.lower:
            lower, upper = float(limit.lower), float(limit.upper)
        if limit.effort is not None and limit.effort > 0:
            effort = float(limit.effort)
        if limit.velocity is not None and limit.velocity > 0:
            velocity = float(limit.velocity)
    return lower, upper, effort, velocity
