"""
The Pinocchio oracle of the core's tests: the same robot loaded by both, at random states.

``ChainPair`` (a serial arm cut from a URDF: Pinocchio's reduced model), ``TreePair``
(a whole tree: Pinocchio's mimic model, and its full model projected on the mimic
joints), ``get_pair``, ``get_tree`` (cached), ``Case`` and ``CASES`` (every chain and
tree, with its references).  How each reference is made to describe the same robot is
in test_pinocchio.py's docstring; the tests that compare against it live in
test_pinocchio.py, test_frames.py, test_frame_jacobian.py and test_task_space_inertia.py.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple
import warnings
import xml.etree.ElementTree as ET
import zlib

from denoc_dynamics import load_urdf
from helpers import BUNDLED, pin, REFUSED
from helpers import ROBOTS_DIR, symmetric, urdf_mimics, urdf_path, URDFS
import numpy as np
import pytest

N_STATES = 20
N_TREE_STATES = 3
STANDARD_GRAVITY = (0.0, 0.0, -9.81)


# --------------------------------------------------------------------------- the arms
@dataclass(frozen=True)
class Arm:
    """One base-to-tip chain of one example-robot-data URDF, as the core must see it."""

    name: str
    urdf: str  # relative to example-robot-data's robots/ directory
    joints: Tuple[str, ...]  # the chain's movable joints, from base to tip
    base_link: Optional[str] = None  # None: the URDF root
    tip_link: Optional[str] = None  # None: the single leaf
    side_branches: str = 'lock'
    locked_positions: Dict[str, float] = field(default_factory=dict)
    drop_links: Tuple[str, ...] = ()  # links (and their subtrees) that "drop" discards
    gravity: Tuple[float, float, float] = STANDARD_GRAVITY  # in the URDF root frame
    edit: Optional[Callable[[ET.Element], None]] = None  # URDF edit applied on both sides


def rotate_inertial_frames(robot: ET.Element) -> None:
    """Give every link's inertial frame an arbitrary, distinct orientation (rpy)."""
    for k, inertial in enumerate(robot.iter('inertial')):
        origin = inertial.find('origin')
        if origin is None:
            origin = ET.SubElement(inertial, 'origin', xyz='0 0 0')
        origin.set('rpy', f'{0.3 + 0.1 * k} {-0.7 + 0.2 * k} {1.1 - 0.3 * k}')


UR_JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
             'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint')
PANDA_JOINTS = tuple(f'panda_joint{i}' for i in range(1, 8))
BAXTER_LEFT_JOINTS = ('left_s0', 'left_s1', 'left_e0', 'left_e1', 'left_w0', 'left_w1',
                      'left_w2')
TIAGO_ARM_JOINTS = ('torso_lift_joint',) + tuple(f'arm_{i}_joint' for i in range(1, 8))

ARMS = [
    # Universal Robots: URDF root "world"; leaves "base", "ee_link" and "tool0" (all
    # massless), so the tip must be named. The *_joint_limited files only differ in
    # limits; ur5_gripper.urdf (no gripper in it) is an older kinematic parametrisation
    # with rpy joint origins. ur3.urdf is an empty <robot/> and is not tested.
    Arm('ur3', 'ur_description/urdf/ur3_robot.urdf', UR_JOINTS, tip_link='tool0'),
    Arm('ur3-joint-limited', 'ur_description/urdf/ur3_joint_limited_robot.urdf', UR_JOINTS,
        tip_link='tool0'),
    Arm('ur3-gripper-variant', 'ur_description/urdf/ur3_gripper.urdf', UR_JOINTS,
        tip_link='tool0'),
    Arm('ur5', 'ur_description/urdf/ur5_robot.urdf', UR_JOINTS, tip_link='tool0'),
    Arm('ur5-joint-limited', 'ur_description/urdf/ur5_joint_limited_robot.urdf', UR_JOINTS,
        tip_link='tool0'),
    Arm('ur5-gripper-variant', 'ur_description/urdf/ur5_gripper.urdf', UR_JOINTS,
        tip_link='tool0'),
    Arm('ur10', 'ur_description/urdf/ur10_robot.urdf', UR_JOINTS, tip_link='tool0'),
    Arm('ur10-joint-limited', 'ur_description/urdf/ur10_joint_limited_robot.urdf',
        UR_JOINTS, tip_link='tool0'),
    # The shipped URDFs barely exercise inertial rpy (only Baxter's gripper base, whose
    # inertia is ~1e-8), so rotate every inertial frame of the UR5, and tilt gravity.
    Arm('ur5-inertial-rpy-tilted-gravity', 'ur_description/urdf/ur5_robot.urdf', UR_JOINTS,
        tip_link='tool0', gravity=(1.5, -2.0, -9.0), edit=rotate_inertial_frames),
    # xArm7: single leaf link_eef, so base and tip are the defaults.
    Arm('xarm7', 'xarm_description/urdf/xarm7.urdf', tuple(f'joint{i}' for i in range(1, 8))),
    # Kinova Jaco2 (j2s6s200): joints 1, 4, 6 continuous; the finger joints are fixed.
    Arm('kinova-j2s6s200', 'kinova_description/robots/kinova.urdf',
        tuple(f'j2s6s200_joint_{i}' for i in range(1, 7)), tip_link='j2s6s200_end_effector'),
    # Panda: prismatic fingers (finger_joint2 mimics finger_joint1) off panda_hand.
    Arm('panda-fingers-locked', 'panda_description/urdf/panda.urdf', PANDA_JOINTS,
        tip_link='panda_hand_tcp'),
    Arm('panda-fingers-locked-open', 'panda_description/urdf/panda.urdf', PANDA_JOINTS,
        tip_link='panda_hand_tcp',
        locked_positions={'panda_finger_joint1': 0.04, 'panda_finger_joint2': 0.04}),
    Arm('panda-fingers-dropped', 'panda_description/urdf/panda.urdf', PANDA_JOINTS,
        tip_link='panda_hand_tcp', side_branches='drop',
        drop_links=('panda_leftfinger', 'panda_rightfinger')),
    # Baxter: a tree (head, two arms, grippers, sensors). The left arm from the URDF root
    # through the fixed torso and arm mount, to the gripper; the fixed chain below the
    # wrist carries an inertial rpy (left_gripper_base_link).
    Arm('baxter-left-arm', 'baxter_description/urdf/baxter.urdf', BAXTER_LEFT_JOINTS,
        base_link='base', tip_link='left_gripper'),
    # Same arm from a base link below left_s0/left_s1 whose frame is tilted by 90 degrees:
    # exercises gravity given in the base-link frame.
    Arm('baxter-left-forearm-tilted-base', 'baxter_description/urdf/baxter.urdf',
        BAXTER_LEFT_JOINTS[2:], base_link='left_lower_shoulder', tip_link='left_gripper'),
    # Talos left arm: URDF root arm_left_1_link; the gripper joint (and mimic tags on
    # fixed joints) hang below the tip.
    Arm('talos-left-arm', 'talos_data/robots/talos_left_arm.urdf',
        tuple(f'arm_left_{i}_joint' for i in range(2, 8)), tip_link='gripper_left_base_link'),
    # Unitree Z1: the single leaf is the gripper's moving jaw, so jointGripper is on it.
    Arm('z1', 'z1_description/urdf/z1.urdf',
        tuple(f'joint{i}' for i in range(1, 7)) + ('jointGripper',)),
    # SO-ARM100 (single leaf: the jaw) and SO-101 (jaw locked, tip at the gripper frame;
    # its joints are listed tip-first in the file).
    Arm('so100', 'so_arm_description/urdf/so100.urdf',
        ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll',
         'gripper')),
    Arm('so101', 'so_arm_description/urdf/so101.urdf',
        ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll'),
        tip_link='gripper_frame_link'),
    # TIAGo: mobile base held fixed; prismatic torso lift then the 7-DoF arm. Its two
    # 1e-6 kg antenna links, fixed to the base, have slightly indefinite inertia tensors;
    # they never move, so the core does not read them and the files load as shipped.
    Arm('tiago-arm-no-hand', 'tiago_description/robots/tiago_no_hand.urdf',
        TIAGO_ARM_JOINTS, tip_link='wrist_ft_tool_link'),
    Arm('tiago-arm-hand-locked', 'tiago_description/robots/tiago.urdf', TIAGO_ARM_JOINTS,
        tip_link='hand_palm_link'),
    # PR2 left arm: prismatic torso carrying the head, laser and right arm (locked),
    # continuous forearm and wrist roll joints.
    Arm('pr2-left-arm', 'pr2_description/urdf/pr2.urdf',
        ('torso_lift_joint', 'l_shoulder_pan_joint', 'l_shoulder_lift_joint',
         'l_upper_arm_roll_joint', 'l_elbow_flex_joint', 'l_forearm_roll_joint',
         'l_wrist_flex_joint', 'l_wrist_roll_joint'),
        tip_link='l_gripper_palm_link'),
    # Small arms.
    Arm('finger-edu', 'finger_edu_description/robots/finger_edu.urdf',
        ('finger_base_to_upper_joint', 'finger_upper_to_middle_joint',
         'finger_middle_to_lower_joint')),
    Arm('asr-twodof', 'asr_twodof_description/urdf/TwoDofs.urdf', ('J1', 'J2')),
    Arm('double-pendulum', 'double_pendulum_description/urdf/double_pendulum.urdf',
        ('joint1', 'joint2')),
    Arm('double-pendulum-continuous',
        'double_pendulum_description/urdf/double_pendulum_continuous.urdf',
        ('joint1', 'joint2')),
    Arm('double-pendulum-simple',
        'double_pendulum_description/urdf/double_pendulum_simple.urdf', ('joint1', 'joint2')),
]
ARMS_BY_NAME = {arm.name: arm for arm in ARMS}


# --------------------------------------------------------------------------- chain helpers

def drop_subtrees(robot: ET.Element, links) -> None:
    """Remove ``links``, every link below them and the joints into them from a URDF."""
    children = {}
    for joint in robot.findall('joint'):
        children.setdefault(joint.find('parent').get('link'), []).append(joint)
    doomed, stack = set(), list(links)
    while stack:
        link = stack.pop()
        doomed.add(link)
        stack += [j.find('child').get('link') for j in children.get(link, ())]
    for joint in robot.findall('joint'):
        if joint.find('child').get('link') in doomed:
            robot.remove(joint)
    for link in robot.findall('link'):
        if link.get('name') in doomed:
            robot.remove(link)


def position_bounds(robot: ET.Element, names) -> Tuple[np.ndarray, np.ndarray]:
    """
    Return sampling bounds per joint: URDF limits, or [-pi, pi] where there are none.

    Continuous joints, and joints whose limits are missing or empty (the double
    pendulums declare lower = upper = 0), are sampled in [-pi, pi].
    """
    joints = {joint.get('name'): joint for joint in robot.findall('joint')}
    lower, upper = np.full(len(names), -np.pi), np.full(len(names), np.pi)
    for i, name in enumerate(names):
        limit = joints[name].find('limit')
        if joints[name].get('type') == 'continuous' or limit is None:
            continue
        lo, hi = float(limit.get('lower', 0.0)), float(limit.get('upper', 0.0))
        if hi > lo:
            lower[i], upper[i] = lo, hi
    return lower, upper


def random_states(rng, lower, upper, shape=(N_STATES,)):
    """Draw (q, qd, qdd, tau) with q uniform in [lower, upper] and the rest Gaussian."""
    n = len(lower)
    q = rng.uniform(lower, upper, size=shape + (n,))
    qd = rng.normal(0.0, 1.0, size=shape + (n,))
    qdd = rng.normal(0.0, 1.0, size=shape + (n,))
    tau = rng.normal(0.0, 10.0, size=shape + (n,))
    return q, qd, qdd, tau


def set_joint_position(model, config: np.ndarray, name: str, value: float) -> None:
    """Write one joint's angle (or displacement) into a Pinocchio configuration."""
    joint = model.joints[model.getJointId(name)]
    if joint.nq == 2:  # continuous joint: (cos, sin)
        config[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
    else:
        config[joint.idx_q] = value


# --------------------------------------------------------------------------- the pairs

class ChainPair:
    """Our robot and the equivalent Pinocchio model of one arm, with random states."""

    def __init__(self, arm: Arm):
        """Load ``arm`` on both sides and draw its random states."""
        self.arm = arm
        path = ROBOTS_DIR / arm.urdf
        urdf = ET.parse(path).getroot()
        if arm.edit is not None:
            arm.edit(urdf)
        source = ET.tostring(urdf, encoding='unicode') if arm.edit else str(path)

        if arm.side_branches == 'drop':
            pin_urdf = ET.fromstring(ET.tostring(urdf))
            drop_subtrees(pin_urdf, arm.drop_links)
        else:
            pin_urdf = urdf
        full = pin.buildModelFromXML(ET.tostring(pin_urdf, encoding='unicode'))
        reference = pin.neutral(full)
        for name, value in arm.locked_positions.items():
            set_joint_position(full, reference, name, value)
        locked = [full.getJointId(name) for name in list(full.names)[1:]
                  if name not in arm.joints]
        self.model = pin.buildReducedModel(full, locked, reference) if locked else full
        gravity_world = np.array(arm.gravity, dtype=float)
        self.model.gravity = pin.Motion(gravity_world, np.zeros(3))
        self.data = self.model.createData()

        kwargs = {'side_branches': arm.side_branches}
        for key in ('base_link', 'tip_link'):
            if getattr(arm, key) is not None:
                kwargs[key] = getattr(arm, key)
        if arm.locked_positions:
            kwargs['locked_positions'] = dict(arm.locked_positions)
        gravity_base = gravity_world
        if arm.base_link is not None:
            full_data = full.createData()
            pin.framesForwardKinematics(full, full_data, reference)
            base = full.getFrameId(arm.base_link, pin.FrameType.BODY)
            gravity_base = full_data.oMf[base].rotation.T @ gravity_world
        if not np.array_equal(gravity_base, STANDARD_GRAVITY):
            kwargs['gravity'] = tuple(gravity_base)
        self.robot = load_urdf(source, **kwargs)

        self.names = list(self.robot.joint_names)
        pin_names = set(list(self.model.names)[1:])
        self.same_joints = pin_names == set(self.names)
        if self.same_joints:
            self.idx_v = np.array([self.model.joints[self.model.getJointId(name)].idx_v
                                   for name in self.names])
        rng = np.random.default_rng(zlib.crc32(arm.name.encode()))
        self.lower, self.upper = position_bounds(urdf, arm.joints)
        self.states = list(zip(*random_states(rng, self.lower, self.upper)))

    # Conversions between our joint order and Pinocchio's (by name).

    def pin_q(self, q: np.ndarray) -> np.ndarray:
        """Return Pinocchio's configuration vector for our joint positions ``q``."""
        config = pin.neutral(self.model)
        for name, value in zip(self.names, q):
            set_joint_position(self.model, config, name, value)
        return config

    def pin_v(self, v: np.ndarray) -> np.ndarray:
        """Return a tangent-space vector (velocity, acceleration, torque) in pin order."""
        out = np.zeros(self.model.nv)
        out[self.idx_v] = v
        return out

    def ours_v(self, v: np.ndarray) -> np.ndarray:
        """Return a Pinocchio tangent-space vector in our joint order."""
        return np.asarray(v)[self.idx_v]

    def ours_m(self, matrix: np.ndarray) -> np.ndarray:
        """Return a Pinocchio nv x nv matrix in our joint order."""
        return np.asarray(matrix)[np.ix_(self.idx_v, self.idx_v)]

    # Pinocchio references, in our joint order.

    def inertia_matrix(self, q):
        """Return Pinocchio's M(q) (crba, symmetrised from its upper triangle)."""
        return self.ours_m(symmetric(pin.crba(self.model, self.data, self.pin_q(q))))

    def inverse_dynamics(self, q, qd, qdd):
        """Return Pinocchio's RNEA torques."""
        return self.ours_v(pin.rnea(self.model, self.data, self.pin_q(q), self.pin_v(qd),
                                    self.pin_v(qdd)))

    def bias_forces(self, q, qd):
        """Return Pinocchio's nonLinearEffects (Coriolis, centrifugal and gravity)."""
        return self.ours_v(pin.nonLinearEffects(self.model, self.data, self.pin_q(q),
                                                self.pin_v(qd)))

    def gravity_torques(self, q):
        """Return Pinocchio's generalized gravity."""
        return self.ours_v(pin.computeGeneralizedGravity(self.model, self.data,
                                                         self.pin_q(q)))

    def forward_dynamics(self, q, qd, tau):
        """Return Pinocchio's ABA accelerations."""
        return self.ours_v(pin.aba(self.model, self.data, self.pin_q(q), self.pin_v(qd),
                                   self.pin_v(tau)))

    def inverse_inertia_matrix(self, q):
        """Return Pinocchio's M(q)^-1 (computeMinverse, symmetrised)."""
        minv = pin.computeMinverse(self.model, self.data, self.pin_q(q))
        return self.ours_m(symmetric(minv))

    def reference(self, q, qd, qdd, tau):
        """Return Pinocchio's quantities at one state, in our joint order."""
        return {'M': self.inertia_matrix(q), 'ID': self.inverse_dynamics(q, qd, qdd),
                'bias': self.bias_forces(q, qd), 'gravity': self.gravity_torques(q),
                'FD': self.forward_dynamics(q, qd, tau), 'M^-1': self.inverse_inertia_matrix(q)}


#: URDFs that parse but that :func:`load_urdf` refuses, with the message it must give.
#: Romeo's hands are massless, mimic joints included: the coordinate RHand moves no mass.
NOT_LOADED = {
    'romeo_description/urdf/romeo.urdf':
        r"joint '[RL]Hand' moves no mass: .* \(\w*Finger21, ",
}

SKIP_REDUCED = ('Pinocchio refuses this mimic order (or, Pinocchio 2, has no mimic joints): '
                'compared with mimic=False, projected')

LOADED = [name for name in URDFS if name not in REFUSED and name not in NOT_LOADED]
LOADED.append(BUNDLED)

#: Must be among them, whole: trees and robots with mimic joints.
REQUIRED = ('panda_description/urdf/panda.urdf', 'baxter_description/urdf/baxter.urdf',
            'ur_description/urdf/ur5_robot.urdf', 'ur_description/urdf/ur10_robot.urdf',
            'tiago_description/robots/tiago.urdf', 'pr2_description/urdf/pr2.urdf',
            'talos_data/robots/talos_full_v2.urdf',
            'anymal_b_simple_description/robots/anymal.urdf', BUNDLED)


class PinModel:
    """One Pinocchio model of a URDF, addressed by joint name."""

    def __init__(self, model, names):
        """Index ``model``'s configuration and tangent space by the joints ``names``."""
        self.model, self.data = model, model.createData()
        self.joints = [model.joints[model.getJointId(name)] for name in names]
        self.idx_v = np.array([joint.idx_v for joint in self.joints])

    def configuration(self, q):
        """Return Pinocchio's q for the joint positions ``q`` (continuous: cos, sin)."""
        config = pin.neutral(self.model)
        for joint, value in zip(self.joints, q):
            if joint.nq == 2:
                config[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
            else:
                assert joint.nq == 1, joint
                config[joint.idx_q] = value
        return config

    def tangent(self, v):
        """Return Pinocchio's tangent vector for the joint rates ``v``."""
        out = np.zeros(self.model.nv)
        out[self.idx_v] = v
        return out

    def ours(self, x):
        """Return a Pinocchio vector or matrix in the order of our joints."""
        x = np.asarray(x)
        return x[self.idx_v] if x.ndim == 1 else x[np.ix_(self.idx_v, self.idx_v)]

    def dynamics(self, q, qd, qdd, tau):
        """Return (M, ID, FD, bias, gravity) at one state, in our joint order."""
        m, d, c = self.model, self.data, self.configuration(q)
        qd, qdd, tau = self.tangent(qd), self.tangent(qdd), self.tangent(tau)
        M = symmetric(pin.crba(m, d, c))
        bias = pin.nonLinearEffects(m, d, c, qd)
        if len(getattr(m, 'mimicking_joints', ())):   # Pinocchio's aba does not take them
            qdd_fd = np.linalg.solve(M, tau - bias)
        else:
            qdd_fd = pin.aba(m, d, c, qd, tau)
        return (self.ours(M), self.ours(pin.rnea(m, d, c, qd, qdd)), self.ours(qdd_fd),
                self.ours(bias), self.ours(pin.computeGeneralizedGravity(m, d, c)))


class TreePair:
    """Our robot and Pinocchio's models of one URDF, loaded whole."""

    def __init__(self, name):
        """Load ``name`` whole on both sides."""
        self.name, self.path = name, urdf_path(name)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')    # inertias read as given (PR2, HyQ, ...)
            self.robot = load_urdf(self.path)
        robot = self.robot
        gravity = robot.gravity
        try:
            model = pin.buildModelFromUrdf(self.path, mimic=True)
        except (RuntimeError, ValueError):     # a mimic joint before its leader
            model = None
        except TypeError:                      # Pinocchio 2 has no mimic joints
            model = None if robot.mimic_joints else pin.buildModelFromUrdf(self.path)
        self.reduced = None
        if model is not None:
            model.gravity.linear[:] = gravity
            self.reduced = PinModel(model, robot.joint_names)
        model = pin.buildModelFromUrdf(self.path)
        model.gravity.linear[:] = gravity
        self.full = PinModel(model, robot.body_joint_names)
        # q_bodies = G q + b from the URDF text
        mimics = urdf_mimics(self.path)
        column = {name: k for k, name in enumerate(robot.joint_names)}
        self.G = np.zeros((robot.n_bodies, robot.n))
        self.b = np.zeros(robot.n_bodies)
        for k, name in enumerate(robot.body_joint_names):
            leader, a, b = mimics.get(name, (name, 1.0, 0.0))
            self.G[k, column[leader]], self.b[k] = a, b
        chain = robot.chain
        bounds = [np.where(np.isfinite(x), x, s * np.pi)[chain.coordinates]
                  for x, s in ((chain.lower, -1), (chain.upper, 1))]
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        n = robot.n
        self.states = [(rng.uniform(*bounds), rng.normal(size=n), rng.normal(size=n),
                        rng.normal(scale=10.0, size=n)) for _ in range(N_TREE_STATES)]

    def reference(self, model, q, qd, qdd, tau):
        """Return Pinocchio's quantities at one state: ``mimic`` or ``projected`` model."""
        if model == 'mimic':
            M, ID, FD, bias, gravity = self.reduced.dynamics(q, qd, qdd, tau)
        else:
            G, b = self.G, self.b
            M, ID, _, bias, gravity = self.full.dynamics(G @ q + b, G @ qd, G @ qdd,
                                                         np.zeros(len(b)))
            M, ID, bias, gravity = G.T @ M @ G, G.T @ ID, G.T @ bias, G.T @ gravity
            FD = np.linalg.solve(M, tau - bias)
        return {'M': M, 'ID': ID, 'bias': bias, 'gravity': gravity, 'FD': FD,
                'M^-1': np.linalg.inv(M)}


# --------------------------------------------------------------------------- the cases

_CHAINS: Dict[str, ChainPair] = {}
_TREES: Dict[str, TreePair] = {}


def get_pair(name: str) -> ChainPair:
    """Return the (cached) pair of one arm."""
    if name not in _CHAINS:
        _CHAINS[name] = ChainPair(ARMS_BY_NAME[name])
    return _CHAINS[name]


def get_tree(name: str) -> TreePair:
    """Return the (cached) pair of one whole URDF."""
    if name not in _TREES:
        _TREES[name] = TreePair(name)
    return _TREES[name]


class Case:
    """One robot and its Pinocchio references at its random states."""

    def __init__(self, kind, name):
        """Load the chain (``kind`` 'chain') or the tree (``mimic``, ``projected``)."""
        self.kind, self.name = kind, name
        if kind == 'chain':
            pair = get_pair(name)
            if not pair.same_joints:
                pytest.fail(f"joints {pair.names} differ from Pinocchio's "
                            f'{list(pair.model.names)[1:]}')
            self._reference = pair.reference
        else:
            pair = get_tree(name)
            if kind == 'mimic' and pair.reduced is None:
                assert pair.robot.mimic_joints, f'Pinocchio refused {name}, no mimic joint'
                pytest.skip(SKIP_REDUCED)
            self._reference = lambda *state: pair.reference(kind, *state)
        self.robot, self.states = pair.robot, pair.states
        self._references = {}

    def reference(self, k):
        """Return Pinocchio's quantities at state ``k`` (computed once)."""
        if k not in self._references:
            self._references[k] = self._reference(*self.states[k])
        return self._references[k]

    def each(self):
        """Yield (k, q, qd, qdd, tau, reference) over the states."""
        for k, state in enumerate(self.states):
            yield (k, *state, self.reference(k))


CASES = ([('chain', arm.name) for arm in ARMS] + [('mimic', name) for name in LOADED]
         + [('projected', name) for name in LOADED])
#: The cases built so far, by (kind, name).
CASE_CACHE: Dict[Tuple[str, str], Case] = {}
