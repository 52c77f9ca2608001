# Copyright 2025 denoc_dynamics developers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Cross-check of the DeNOC core against Pinocchio on the example-robot-data arms.

Every serial arm shipped by the ``example-robot-data`` package is loaded twice from the
same URDF: by :func:`denoc_dynamics.load_urdf` and by Pinocchio. At 20 seeded random
states per arm we compare the joint-space inertia matrix (``crba``), inverse dynamics
(``rnea``), forward dynamics (``aba``, both of our methods), the bias and gravity
forces, the UDU^T factors and the inverse inertia matrix, to a relative error of 1e-9.

How the Pinocchio reference is made to describe the same chain:

* Pinocchio parses the whole URDF with a fixed base (``buildModelFromXML``); fixed
  joints become frames and their links' inertias are merged, as in our core.
* Every movable joint that is not on our base-to-tip chain (side branches such as
  grippers, heads and the other arm, links below the tip, and joints above a base link
  that is not the root) is removed with ``buildReducedModel``, which keeps it rigidly at
  its zero position, or at the position given in ``locked_positions``. This is what
  ``side_branches="lock"`` must reproduce.
* For ``side_branches="drop"`` the dropped links are instead deleted from the URDF text
  (with ``xml.etree``) before Pinocchio parses it, so their mass is gone.
* Joints are matched by name (``model.getJointId``), never by position. Pinocchio's
  continuous joints use (cos, sin) configuration coordinates; we convert.
* Gravity: Pinocchio's world frame is the URDF root link, ours is the chain's base
  link. All arms but one use the URDF root as base link, so the two frames coincide
  (Baxter's left arm, too, starts at the root and runs through the fixed torso). For
  the exception (``baxter-left-forearm-tilted-base``) the world gravity is rotated into
  the base-link frame with the base link's orientation from Pinocchio's forward
  kinematics at the locked configuration, and passed to ``load_urdf``. One arm also
  uses a tilted, non-standard gravity vector.

The URDFs are located in the installed ``example-robot-data`` data directory. Recent
wheels (6.x) ship no ``example_robot_data`` Python module, so its ``getModelPath`` is
used only when present; otherwise the data directory is searched the way that module
did (``<sys.path entry>/../../../share/example-robot-data/robots``) and in the ROS
``AMENT_PREFIX_PATH``. The whole module is skipped when Pinocchio or the data is absent.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple
import xml.etree.ElementTree as ET
import zlib

from denoc_dynamics import load_urdf
from denoc_dynamics.core.robot import FD_METHODS
from denoc_dynamics.resources import example_robot_data_dir
import numpy as np
import pytest

try:
    import pinocchio as pin
except ImportError as exc:  # skip the tests, not the module: see _oracles_installed
    pin = None
    PIN_MISSING = f'pinocchio cannot be imported: {exc}'

TOL = 1e-9
# Relative errors are taken against max(||reference||, FLOOR): the smallest arms have
# ||M|| ~ 5e-3 and the planar two-link arm has exactly zero gravity torques.
FLOOR = 1e-3
N_STATES = 20
STANDARD_GRAVITY = (0.0, 0.0, -9.81)


# --------------------------------------------------------------------------- data location

ROBOTS_DIR = example_robot_data_dir()


@pytest.fixture(autouse=True)
def _oracles_installed():
    """
    Skip each test (never the module) without Pinocchio or example-robot-data.

    launch_testing's pytest plugin imports every test module while it collects: a
    module-level skip would end the collection of the whole directory.
    """
    if pin is None:
        pytest.skip(PIN_MISSING)
    if ROBOTS_DIR is None:
        pytest.skip('example-robot-data is not installed')


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


# --------------------------------------------------------------------------- helpers

def relative_error(actual, expected) -> float:
    """Return ||actual - expected|| / max(||expected||, FLOOR) (Frobenius norm)."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f'shape {actual.shape} != {expected.shape}'
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), FLOOR))


def assert_close(actual, expected, what: str, tol: float = TOL) -> None:
    """Assert that ``actual`` matches ``expected`` to relative error ``tol``."""
    err = relative_error(actual, expected)
    assert err <= tol, f'{what}: relative error {err:.3e} > {tol:.0e}'


def symmetrize_upper(matrix: np.ndarray) -> np.ndarray:
    """Return the symmetric matrix whose upper triangle is that of ``matrix``."""
    upper = np.triu(matrix)
    return upper + np.triu(matrix, 1).T


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

class Pair:
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
        return self.ours_m(symmetrize_upper(pin.crba(self.model, self.data, self.pin_q(q))))

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
        return self.ours_m(symmetrize_upper(minv))


_PAIRS: Dict[str, Pair] = {}


def get_pair(name: str) -> Pair:
    """Return the (cached) pair of one arm."""
    if name not in _PAIRS:
        _PAIRS[name] = Pair(ARMS_BY_NAME[name])
    return _PAIRS[name]


@pytest.fixture(params=[arm.name for arm in ARMS])
def loaded(request) -> Pair:
    """Yield each arm's pair, whatever its joints."""
    return get_pair(request.param)


@pytest.fixture
def pair(loaded) -> Pair:
    """Yield each arm's pair, once its joints are known to match Pinocchio's by name."""
    if not loaded.same_joints:
        pytest.fail(f"joints {loaded.names} differ from Pinocchio's "
                    f'{list(loaded.model.names)[1:]}')
    return loaded


# --------------------------------------------------------------------------- the tests

def test_chain_joints(loaded):
    """The chain's coordinates are the expected joints, in path order, as in Pinocchio."""
    assert loaded.names == list(loaded.arm.joints)
    assert loaded.robot.n == len(loaded.arm.joints)
    assert set(list(loaded.model.names)[1:]) == set(loaded.names)
    assert loaded.model.nv == loaded.robot.n


def test_inertia_matrix(pair):
    """M(q) equals Pinocchio's CRBA."""
    for k, (q, _, _, _) in enumerate(pair.states):
        assert_close(pair.robot.inertia_matrix(q), pair.inertia_matrix(q), f'M, state {k}')


def test_inverse_dynamics(pair):
    """Inverse dynamics equals Pinocchio's RNEA."""
    for k, (q, qd, qdd, _) in enumerate(pair.states):
        assert_close(pair.robot.inverse_dynamics(q, qd, qdd),
                     pair.inverse_dynamics(q, qd, qdd), f'ID, state {k}')


def test_bias_forces(pair):
    """Bias forces equal Pinocchio's nonLinearEffects."""
    for k, (q, qd, _, _) in enumerate(pair.states):
        assert_close(pair.robot.bias_forces(q, qd), pair.bias_forces(q, qd),
                     f'bias forces, state {k}')


def test_gravity_torques(pair):
    """Gravity torques equal Pinocchio's computeGeneralizedGravity."""
    for k, (q, _, _, _) in enumerate(pair.states):
        assert_close(pair.robot.gravity_torques(q), pair.gravity_torques(q),
                     f'gravity torques, state {k}')


@pytest.mark.parametrize('method', FD_METHODS)
def test_forward_dynamics(pair, method):
    """Forward dynamics, by each method, equals Pinocchio's ABA."""
    for k, (q, qd, _, tau) in enumerate(pair.states):
        assert_close(pair.robot.forward_dynamics(q, qd, tau, method=method),
                     pair.forward_dynamics(q, qd, tau), f'FD ({method}), state {k}')


def test_udu(pair):
    """U diag(d) U^T equals Pinocchio's M, with U unit upper triangular."""
    for k, (q, _, _, _) in enumerate(pair.states):
        U, d = pair.robot.udu(q)
        U, d = np.asarray(U), np.asarray(d)
        assert np.array_equal(np.tril(U, -1), np.zeros_like(U)), f'U not upper, state {k}'
        assert np.array_equal(np.diag(U), np.ones(pair.robot.n)), f'diag(U) != 1, state {k}'
        assert_close(U @ np.diag(d) @ U.T, pair.inertia_matrix(q), f'U D U^T, state {k}')


def test_inverse_inertia_matrix(pair):
    """M(q)^-1 equals Pinocchio's computeMinverse."""
    for k, (q, _, _, _) in enumerate(pair.states):
        assert_close(pair.robot.inverse_inertia_matrix(q), pair.inverse_inertia_matrix(q),
                     f'M^-1, state {k}')


def test_batched_calls_equal_looped_calls():
    """Calls on a (4, 5, n) batch of states equal single calls, state by state."""
    pair = get_pair('panda-fingers-locked')
    robot, n = pair.robot, pair.robot.n
    q, qd, qdd, tau = random_states(np.random.default_rng(7), pair.lower, pair.upper,
                                    shape=(4, 5))
    batched = {
        'inertia_matrix': robot.inertia_matrix(q),
        'inverse_dynamics': robot.inverse_dynamics(q, qd, qdd),
        'bias_forces': robot.bias_forces(q, qd),
        'gravity_torques': robot.gravity_torques(q),
        'forward_dynamics denoc': robot.forward_dynamics(q, qd, tau, method='denoc'),
        'forward_dynamics cholesky': robot.forward_dynamics(q, qd, tau, method='cholesky'),
        'udu U': robot.udu(q)[0],
        'udu d': robot.udu(q)[1],
        'inverse_inertia_matrix': robot.inverse_inertia_matrix(q),
    }
    for name, value in batched.items():
        expected_shape = (4, 5, n, n) if name.endswith(('matrix', 'U')) else (4, 5, n)
        assert np.shape(value) == expected_shape, f'{name}: shape {np.shape(value)}'
    for i, j in np.ndindex(4, 5):
        single = {
            'inertia_matrix': robot.inertia_matrix(q[i, j]),
            'inverse_dynamics': robot.inverse_dynamics(q[i, j], qd[i, j], qdd[i, j]),
            'bias_forces': robot.bias_forces(q[i, j], qd[i, j]),
            'gravity_torques': robot.gravity_torques(q[i, j]),
            'forward_dynamics denoc': robot.forward_dynamics(q[i, j], qd[i, j], tau[i, j],
                                                             method='denoc'),
            'forward_dynamics cholesky': robot.forward_dynamics(q[i, j], qd[i, j],
                                                                tau[i, j],
                                                                method='cholesky'),
            'udu U': robot.udu(q[i, j])[0],
            'udu d': robot.udu(q[i, j])[1],
            'inverse_inertia_matrix': robot.inverse_inertia_matrix(q[i, j]),
        }
        for name, value in single.items():
            assert_close(np.asarray(batched[name])[i, j], value,
                         f'{name}, batch index {(i, j)}', tol=1e-12)
