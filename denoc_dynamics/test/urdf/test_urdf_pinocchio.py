"""
The kinematic trees of every example-robot-data URDF against Pinocchio's model.

Each URDF of the installed example-robot-data is read whole (no tip) by
:func:`build_chain` and by ``pin.buildModelFromUrdf(path, mimic=True)``, both with a
fixed base at the URDF root (the legged robots and humanoids included: a fixed-base
tree is what their URDF describes).  Compared, to 1e-12:

* the joint names, in order, and the parent array (``model.parents``);
* the joint frames X_tree with ``model.jointPlacements``;
* each body's mass, mass centre and inertia with ``model.inertias`` (fixed links
  merged on both sides), and the base's ignored mass with the universe's;
* the mimic joints with Pinocchio's ``JointModelMimic`` (leader, scaling, offset).
  Pinocchio refuses a mimic joint that comes before its leader in its depth-first
  order (Romeo, TALOS full); those are compared with ``mimic=False`` (the same
  joints, each independent) and their mimic relations with the URDF text;
* forward kinematics of every body from X_tree, parent and the axes at random
  positions, with ``pin.forwardKinematics``'s ``oMi``.

The few URDFs that do not load are listed with the error they must give.  The
bundled denoc_arm7_gripper is compared in the same way.
"""

from pathlib import Path
import warnings
import xml.etree.ElementTree as ET
import zlib

from denoc_dynamics.core.urdf import build_chain
from helpers import body_poses, body_positions, BUNDLED, ORACLE, pin, REFUSED, ROBOTS_DIR
from helpers import urdf_mimics, urdf_path, URDFS
import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures('oracles')
TOL = ORACLE


class Pair:
    """Our tree and Pinocchio's model of one URDF."""

    def __init__(self, name):
        """Load ``name`` on both sides."""
        path = urdf_path(name)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')     # PR2's sensor_mount_link, Allegro, HyQ
            self.chain = build_chain(path)
        try:
            self.model = pin.buildModelFromUrdf(path, mimic=True)
            self.pin_mimics = True
        except (RuntimeError, ValueError):      # a mimic joint before its leader
            self.model = pin.buildModelFromUrdf(path)
            self.pin_mimics = False
        self.data = self.model.createData()
        self.path = path
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def pin_configuration(self, q):
        """Return Pinocchio's configuration for the body positions ``q`` (by name)."""
        config = pin.neutral(self.model)
        for name, value in zip(self.chain.joint_names, q):
            joint = self.model.joints[self.model.getJointId(name)]
            if joint.nq == 2:                   # continuous: (cos, sin)
                config[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
            elif joint.nq == 1:
                config[joint.idx_q] = value
        return config


@pytest.fixture(scope='module')
def pairs():
    return {}


@pytest.fixture
def pair(request, pairs):
    name = request.param
    if name not in pairs:
        pairs[name] = Pair(name)
    return pairs[name]


LOADED = [name for name in URDFS if name not in REFUSED] + [BUNDLED]


def test_every_urdf_is_tested():
    assert len(URDFS) >= 60, URDFS
    assert set(REFUSED) <= set(URDFS)
    for name in ('panda_description/urdf/panda.urdf', 'baxter_description/urdf/baxter.urdf',
                 'ur_description/urdf/ur5_robot.urdf', 'tiago_description/robots/tiago.urdf',
                 'pr2_description/urdf/pr2.urdf'):
        assert name in LOADED


@pytest.mark.parametrize('name, match', sorted(REFUSED.items()))
def test_refused_urdf_names_the_joint_or_link(name, match):
    with warnings.catch_warnings(), pytest.raises(ValueError, match=match):
        warnings.simplefilter('ignore')
        build_chain(str(ROBOTS_DIR / name))


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_joint_order_and_parents(pair):
    chain, model = pair.chain, pair.model
    assert chain.joint_names == list(model.names)[1:]
    np.testing.assert_array_equal(chain.parent, np.array(model.parents[1:]) - 1)
    root = ET.parse(pair.path).getroot()
    parents = {j.find('parent').get('link') for j in root.findall('joint')}
    leaves = [link.get('name') for link in root.findall('link')
              if link.get('name') not in parents]
    assert (chain.tip_link is None) == (len(leaves) > 1)


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_joint_placements(pair):
    for k in range(pair.chain.n):
        np.testing.assert_allclose(pair.chain.X_tree[k],
                                   pair.model.jointPlacements[k + 1].homogeneous,
                                   rtol=0, atol=TOL, err_msg=pair.chain.joint_names[k])


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_body_inertias(pair):
    chain, model = pair.chain, pair.model
    for k in range(chain.n):
        inertia = model.inertias[k + 1]
        scale = max(1.0, inertia.mass)
        assert abs(chain.mass[k] - inertia.mass) <= TOL * scale, chain.joint_names[k]
        np.testing.assert_allclose(chain.com[k], inertia.lever, rtol=0, atol=TOL)
        np.testing.assert_allclose(chain.inertia[k], inertia.inertia, rtol=0, atol=TOL)
    assert abs(chain.root_mass_ignored - model.inertias[0].mass) <= TOL * max(
        1.0, model.inertias[0].mass)


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_mimic_joints(pair):
    chain, model = pair.chain, pair.model
    expected = urdf_mimics(pair.path)
    mimics = [chain.joint_names[k] for k in np.flatnonzero(chain.mimic_leader >= 0)]
    assert sorted(mimics) == sorted(expected)
    for k in np.flatnonzero(chain.mimic_leader >= 0):
        leader, multiplier, offset = expected[chain.joint_names[k]]
        assert chain.joint_names[chain.mimic_leader[k]] == leader
        assert chain.mimic_multiplier[k] == pytest.approx(multiplier, abs=TOL)
        assert chain.mimic_offset[k] == pytest.approx(offset, abs=TOL)
    if not pair.pin_mimics:
        assert expected, 'Pinocchio refused the mimic joints of a URDF that has none'
        return
    ours = {k + 1 for k in np.flatnonzero(chain.mimic_leader >= 0)}
    assert set(model.mimicking_joints) == ours
    for mimicking, mimicked in zip(model.mimicking_joints, model.mimicked_joints):
        joint = model.joints[mimicking].extract()
        k = mimicking - 1
        assert chain.mimic_leader[k] == mimicked - 1
        assert chain.mimic_multiplier[k] == joint.scaling
        assert chain.mimic_offset[k] == joint.offset


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_forward_kinematics_of_every_body(pair):
    chain, model, data = pair.chain, pair.model, pair.data
    lower = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    coordinates = chain.coordinates
    for _ in range(5):
        q = body_positions(chain, pair.rng.uniform(lower[coordinates], upper[coordinates]))
        pin.forwardKinematics(model, data, pair.pin_configuration(q))
        poses = body_poses(chain, q)
        for k in range(chain.n):
            np.testing.assert_allclose(poses[k], data.oMi[k + 1].homogeneous, rtol=0,
                                       atol=TOL, err_msg=chain.joint_names[k])


def test_mimic_robots_are_among_them():
    """Panda, Baxter, PR2 and TIAGo Pro have mimic joints; Romeo's need our order."""
    counts = {}
    for name in ('panda_description/urdf/panda.urdf', 'baxter_description/urdf/baxter.urdf',
                 'pr2_description/urdf/pr2.urdf', 'romeo_description/urdf/romeo.urdf',
                 'tiago_pro_description/robots/tiago_pro.urdf', BUNDLED):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            chain = build_chain(urdf_path(name))
        counts[Path(name).stem] = int((chain.mimic_leader >= 0).sum())
    assert counts == {'panda': 1, 'baxter': 2, 'pr2': 10, 'romeo': 22, 'tiago_pro': 10,
                      'bundled:denoc_arm7_gripper': 1}
