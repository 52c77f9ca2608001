"""
URDF -> kinematic tree: the parent array, mimic joints.

The trees are read with :func:`build_chain` and checked as data: the order of the
bodies, ``parent``, the joint frames through a forward kinematics written here from
the URDF text alone (``xml.etree`` and scipy's rotations, not the core's reader), the
merged inertias, and the mimic relations.  The dynamics of trees are the new core's;
Pinocchio's model of the example-robot-data robots is compared in
urdf/test_urdf_pinocchio.py.
"""

import math
import xml.etree.ElementTree as ET

from denoc_dynamics import load_urdf, load_urdf_xml
from denoc_dynamics.core.urdf import build_chain, build_chain_xml, Chain
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import (hand_robot, joint, link, random_chain_urdf,
                                         random_tree_urdf, robot)
from helpers import body_poses, body_positions, joint_motion
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

MIMIC = '<mimic joint="{}" multiplier="{}" offset="{}"/>'


def mimic(leader, multiplier=1.0, offset=0.0):
    return MIMIC.format(leader, multiplier, offset)


# --- an independent reference: link poses from the URDF text --------------------------
def _numbers(element, key, default):
    if element is None or element.get(key) is None:
        return np.array(default, dtype=float)
    return np.array([float(v) for v in element.get(key).split()])


def _pose(origin):
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler('xyz', _numbers(origin, 'rpy', (0, 0, 0))).as_matrix()
    T[:3, 3] = _numbers(origin, 'xyz', (0, 0, 0))
    return T


def reference_link_poses(xml, positions):
    """
    Return the pose of every link in the root frame, by joint positions by name.

    Mimic joints take multiplier * (their leader's value) + offset, recursively.
    """
    root = ET.fromstring(xml)
    joints = {j.get('name'): j for j in root.iter('joint')}

    def value(name):
        element = joints[name].find('mimic')
        if element is None:
            return positions.get(name, 0.0)
        return (float(element.get('multiplier', 1.0)) * value(element.get('joint'))
                + float(element.get('offset', 0.0)))

    by_child = {j.find('child').get('link'): j for j in joints.values()}
    poses = {}

    def pose(link_name):
        if link_name not in poses:
            j = by_child.get(link_name)
            if j is None:
                poses[link_name] = np.eye(4)
            else:
                T = pose(j.find('parent').get('link')) @ _pose(j.find('origin'))
                if j.get('type') != 'fixed':
                    axis = _numbers(j.find('axis'), 'xyz', (1, 0, 0))
                    T = T @ joint_motion(axis / np.linalg.norm(axis),
                                         j.get('type') == 'prismatic', value(j.get('name')))
                poses[link_name] = T
        return poses[link_name]

    for name in by_child:
        pose(name)
    return poses


# --- the tree ---------------------------------------------------------------------------
def test_branched_urdf_without_tip_loads_the_whole_tree():
    chain = build_chain(hand_robot())
    assert chain.tip_link is None
    assert chain.joint_names == ['j1', 'j2', 'fl', 'fr']
    assert chain.link_names == ['a', 'hand', 'left', 'right']
    np.testing.assert_array_equal(chain.parent, [-1, 0, 1, 1])
    assert chain.parent.dtype == np.int64 and chain.mimic_leader.dtype == np.int64
    np.testing.assert_array_equal(chain.mimic_leader, [-1, -1, -1, 2])
    np.testing.assert_array_equal(chain.mimic_multiplier, [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(chain.mimic_offset, [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(chain.coordinates, [0, 1, 2])
    assert chain.coordinate_names == ['j1', 'j2', 'fl'] and chain.n == 4
    assert not chain.is_serial
    # each finger is its own body; the hand keeps only its own mass
    np.testing.assert_array_equal(chain.mass, [1.0, 1.0, 0.5, 0.5])
    np.testing.assert_array_equal(chain.prismatic, [False, False, True, True])
    np.testing.assert_allclose(chain.X_tree[3][:3, 3], [0.1, 0, 0])
    np.testing.assert_allclose(chain.axis[3], [0, -1, 0])


def test_the_same_urdf_with_a_tip_is_the_chain_it_was():
    chain = build_chain(hand_robot(), tip_link='hand')
    assert chain.tip_link == 'hand' and chain.is_serial
    np.testing.assert_array_equal(chain.parent, [-1, 0])
    np.testing.assert_array_equal(chain.mimic_leader, [-1, -1])
    assert chain.mass[1] == pytest.approx(2.0)           # the fingers locked on the hand
    assert chain.locked_joints == {'fl': 0.0, 'fr': 0.0}


def test_single_leaf_urdf_is_a_chain_to_its_leaf():
    chain = build_chain(random_chain_urdf(np.random.default_rng(1), 6))
    assert chain.tip_link is not None and chain.is_serial
    np.testing.assert_array_equal(chain.parent, np.arange(6) - 1)
    np.testing.assert_array_equal(chain.coordinates, np.arange(6))


def test_siblings_are_numbered_by_joint_name_depth_first():
    """As urdfdom's tree (a map by joint name), hence KDL and Pinocchio."""
    xml = robot(link('a'), link('b'), link('c'), link('d'), link('e'),
                joint('zz', 'base', 'a'), joint('mm', 'a', 'c'),
                joint('w', 'base', 'd', kind='fixed'), joint('aa', 'd', 'b'),
                joint('bb', 'a', 'e'))
    chain = build_chain(xml)
    # base's children by name: aa (through the fixed 'w' to d), zz; then below zz: bb, mm
    assert chain.joint_names == ['aa', 'zz', 'bb', 'mm']
    np.testing.assert_array_equal(chain.parent, [-1, -1, 1, 1])
    assert chain.static_links == ['base', 'd']
    # aa's frame is placed through the fixed joint w: 0.1 + 0.1 along z
    np.testing.assert_allclose(chain.X_tree[0][:3, 3], [0, 0, 0.2])


def test_fixed_leaves_are_merged_not_refused():
    """UR-style: tool0 (massless) and a camera (with mass) fixed below the last joint."""
    xml = robot(link('a'), joint('j1', 'base', 'a', axis='0 0 1'),
                link('b', xyz='0 0 0.2'), joint('j2', 'a', 'b'),
                '<link name="tool0"/>', joint('tool', 'b', 'tool0', kind='fixed'),
                link('camera', mass=0.5, xyz='0.1 0 0'),
                joint('cam', 'b', 'camera', kind='fixed', xyz='0 0.1 0'),
                '<link name="frame"/>', joint('base_frame', 'base', 'frame', kind='fixed'))
    chain = build_chain(xml)
    assert chain.tip_link is None and chain.joint_names == ['j1', 'j2']
    assert chain.is_serial
    assert sorted(chain.merged_links[1]) == ['b', 'camera', 'tool0']
    assert chain.static_links == ['base', 'frame']
    assert chain.mass[1] == pytest.approx(1.5)
    # the camera's mass centre: (0.1, 0.1, 0) in b's frame, b's own at (0, 0, 0.2)
    np.testing.assert_allclose(chain.com[1], (np.array([0, 0, 0.2]) + 0.5
                                              * np.array([0.1, 0.1, 0.0])) / 1.5)


@pytest.mark.parametrize('seed', range(8))
def test_random_tree_kinematics_match_the_urdf(seed):
    """Forward kinematics from X_tree and parent equals a walk over the URDF text."""
    rng = np.random.default_rng(seed)
    xml = random_tree_urdf(rng, 40)
    chain = build_chain(xml)
    assert np.all(chain.parent < np.arange(chain.n))
    for _ in range(3):
        q = body_positions(chain, rng.uniform(-1, 1, chain.coordinates.size))
        poses = reference_link_poses(xml, dict(zip(chain.joint_names, q)))
        expected = np.array([poses[name] for name in chain.link_names])
        np.testing.assert_allclose(body_poses(chain, q), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize('seed', range(4))
def test_random_tree_order_is_depth_first_by_name(seed):
    xml = random_tree_urdf(np.random.default_rng(seed), 60)
    chain = build_chain(xml)
    root = ET.fromstring(xml)
    children = {}
    for j in root.iter('joint'):
        children.setdefault(j.find('parent').get('link'), []).append(j)
    order = []

    def visit(link_name):
        for j in sorted(children.get(link_name, []), key=lambda j: j.get('name')):
            if j.get('type') != 'fixed':
                order.append(j.get('name'))
            visit(j.find('child').get('link'))

    visit('base_link')
    assert chain.joint_names == order


def test_mimic_of_a_mimic_resolves_to_the_first_leader():
    xml = robot(link('a'), link('b'), link('c'), joint('j1', 'base', 'a'),
                joint('j2', 'base', 'b', extra=mimic('j1', 2.0, 0.1)),
                joint('j3', 'base', 'c', extra=mimic('j2', 3.0, 0.2)))
    chain = build_chain(xml)
    np.testing.assert_array_equal(chain.mimic_leader, [-1, 0, 0])
    np.testing.assert_allclose(chain.mimic_multiplier, [1.0, 2.0, 6.0])
    # q3 = 3 (2 q1 + 0.1) + 0.2 = 6 q1 + 0.5
    np.testing.assert_allclose(chain.mimic_offset, [0.0, 0.1, 0.5])
    assert chain.coordinate_names == ['j1']


def test_mimic_leader_may_come_later_or_below():
    """Pinocchio needs the leader first; the parent array does not care."""
    xml = robot(link('a'), link('b'),
                joint('a_mimic', 'base', 'a', extra=mimic('z_leader', -1.5, 0.25)),
                joint('z_leader', 'a', 'b'))
    chain = build_chain(xml)
    assert chain.joint_names == ['a_mimic', 'z_leader']
    np.testing.assert_array_equal(chain.mimic_leader, [1, -1])
    np.testing.assert_array_equal(chain.mimic_multiplier, [-1.5, 1.0])
    np.testing.assert_array_equal(chain.mimic_offset, [0.25, 0.0])
    assert chain.coordinate_names == ['z_leader']


def test_a_thousand_mimics_in_a_row_resolve():
    """Each joint mimics the one before: no recursion, multipliers composed."""
    n = 1000
    parts = [link('l0'), joint('j0', 'base', 'l0')]
    for i in range(1, n):
        parts += [link(f'l{i}'), joint(f'j{i}', f'l{i - 1}', f'l{i}',
                                       extra=mimic(f'j{i - 1}', 1.0, 0.001))]
    chain = build_chain(robot(*parts))
    assert np.all(chain.mimic_leader[1:] == 0) and chain.coordinates.tolist() == [0]
    np.testing.assert_allclose(chain.mimic_offset, 0.001 * np.arange(n), rtol=1e-12)


def test_mimic_on_the_chain_with_a_tip():
    xml = robot(link('a'), joint('j1', 'base', 'a'), link('b'),
                joint('j2', 'a', 'b', extra=mimic('j1', -1.0, 0.5)))
    chain = build_chain(xml, tip_link='b')
    assert chain.tip_link == 'b'
    np.testing.assert_array_equal(chain.mimic_leader, [-1, 0])
    np.testing.assert_array_equal(chain.mimic_multiplier, [1.0, -1.0])


@pytest.mark.parametrize('xml, options, match', [
    (robot(link('a'), joint('j1', 'base', 'a', extra=mimic('j0'))), {},
     "joint 'j1' mimics joint 'j0', which is not defined"),
    (robot(link('a'), link('b'), joint('w', 'base', 'a', kind='fixed'),
           joint('m', 'base', 'b', extra=mimic('w'))), {},
     "joint 'm' mimics joint 'w', which is fixed"),
    (robot(link('a'), link('b'), link('c'), joint('j1', 'base', 'a'),
           joint('m1', 'base', 'b', extra=mimic('m2')),
           joint('m2', 'base', 'c', extra=mimic('m1'))), {},
     "mimic joints form a cycle: 'm1' -> 'm2' -> 'm1'"),
    (robot(link('a'), link('b'), joint('j1', 'base', 'a'),
           joint('m', 'base', 'b', extra=mimic('m'))), {},
     "mimic joints form a cycle: 'm' -> 'm'"),
    # the leader is above the base link: not a body
    (robot(link('a'), link('b'), link('c'), joint('j1', 'base', 'a'),
           joint('m', 'a', 'b', extra=mimic('j1')), joint('j3', 'a', 'c')),
     {'base_link': 'a'},
     "joint 'm' mimics joint 'j1', which is not below 'a'"),
    # on a chain, the leader is a locked side-branch joint
    (robot(link('a'), link('b'), link('c'), joint('j1', 'base', 'a'),
           joint('j2', 'a', 'b'), joint('m', 'b', 'c', extra=mimic('side')),
           link('s'), joint('side', 'a', 's')),
     {'tip_link': 'c'},
     "joint 'm' mimics joint 'side', which is not on the chain from 'base' to 'c'"),
    (robot(link('a'), joint('j1', 'base', 'a'), link('b'),
           '<joint name="free" type="floating"><parent link="base"/><child link="b"/>'
           '</joint>'), {}, "joint 'free' in the tree below 'base' is floating"),
    (robot(link('a'), joint('j1', 'base', 'a'), link('b'),
           '<joint name="flat" type="planar"><parent link="a"/><child link="b"/>'
           '<axis xyz="0 0 1"/></joint>', link('c'), joint('j3', 'a', 'c')), {},
     "joint 'flat' in the tree below 'base' is planar"),
    (robot(link('a'), link('b'), joint('w1', 'base', 'a', kind='fixed'),
           joint('w2', 'base', 'b', kind='fixed')), {}, "no movable joint below 'base'"),
    (hand_robot(), {'locked_positions': {'fl': 0.01}},
     r"locked_positions names joints \['fl'\], but the whole tree is loaded"),
    (hand_robot().replace('<link name="hand">', '<link name="hand_">'), {},
     "joint 'j2': child link 'hand' is not defined"),
])
def test_bad_tree_raises_value_error_naming_the_joint(xml, options, match):
    with pytest.raises(ValueError, match=match):
        build_chain(xml, **options)


def test_closed_loop_names_the_links():
    xml = robot(link('a'), link('b'), link('c'), joint('j1', 'base', 'a'),
                joint('j2', 'a', 'b'), joint('j3', 'a', 'c'), joint('loop', 'c', 'b'))
    with pytest.raises(ValueError, match="link 'b' has two parent joints: 'j2' and 'loop'"):
        build_chain(xml)


def test_side_branch_mimic_of_a_chain_joint_still_cannot_be_locked():
    with pytest.raises(ValueError, match="'fr' mimics chain joint 'fl'"):
        build_chain(hand_robot(), tip_link='left')
    assert build_chain(hand_robot(), tip_link='left', side_branches='drop').n == 3


def test_chain_made_by_hand_defaults_to_a_serial_chain_without_mimics():
    chain = build_chain(random_chain_urdf(np.random.default_rng(2), 3))
    fields = {key: value for key, value in vars(chain).items()
              if key not in ('parent', 'mimic_leader', 'mimic_multiplier', 'mimic_offset')}
    plain = Chain(**fields)
    np.testing.assert_array_equal(plain.parent, [-1, 0, 1])
    np.testing.assert_array_equal(plain.mimic_leader, [-1, -1, -1])
    np.testing.assert_array_equal(plain.mimic_multiplier, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(plain.mimic_offset, [0.0, 0.0, 0.0])


def test_xml_and_path_give_the_same_tree(tmp_path):
    xml = random_tree_urdf(np.random.default_rng(5), 20)
    path = tmp_path / 'tree.urdf'
    path.write_text(xml)
    a, b = build_chain(str(path)), build_chain_xml(xml)
    assert a.joint_names == b.joint_names
    np.testing.assert_array_equal(a.parent, b.parent)
    np.testing.assert_array_equal(a.X_tree, b.X_tree)
    np.testing.assert_array_equal(a.mimic_multiplier, b.mimic_multiplier)


def test_a_tree_of_a_thousand_bodies_loads():
    """Build is O(n) up to sorting siblings: deep and wide trees alike."""
    chain = build_chain(random_tree_urdf(np.random.default_rng(7), 1000, mimic=0.05))
    assert chain.n == 1000 and np.all(chain.parent < np.arange(1000))
    comb = [link('s0'), joint('s0', 'base', 's0')]
    for i in range(1, 500):             # a spine of 500 joints, a tooth on each
        comb += [link(f's{i}'), joint(f's{i}', f's{i - 1}', f's{i}'),
                 link(f't{i}'), joint(f't{i}', f's{i - 1}', f't{i}')]
    chain = build_chain(robot(*comb))
    assert chain.n == 999 and chain.tip_link is None
    assert chain.joint_names[:4] == ['s0', 's1', 's2', 's3']   # s.. < t.. : spine first


# --- the bundled arm with its gripper (item 5) ----------------------------------------
def test_bundled_arm_with_gripper():
    chain = build_chain(bundled_urdf('denoc_arm7_gripper'))
    arm = build_chain(bundled_urdf('denoc_arm7'))
    assert chain.name == 'denoc_arm7_gripper' and chain.tip_link is None
    assert chain.joint_names == arm.joint_names + ['left_finger_joint', 'right_finger_joint']
    np.testing.assert_array_equal(chain.parent, [-1, 0, 1, 2, 3, 4, 5, 6, 6])
    np.testing.assert_array_equal(chain.mimic_leader, [-1] * 8 + [7])
    assert chain.coordinate_names == arm.joint_names + ['left_finger_joint']
    assert chain.merged_links[6] == ['link7', 'flange', 'hand']
    assert chain.mass.sum() == pytest.approx(arm.mass.sum() + 0.67)
    # the arm's joints are those of denoc_arm7
    for key in ('X_tree', 'axis', 'lower', 'upper', 'effort', 'velocity', 'damping',
                'friction'):
        np.testing.assert_array_equal(getattr(chain, key)[:7], getattr(arm, key))
    np.testing.assert_array_equal(chain.mass[:6], arm.mass[:6])
    # fingers: prismatic, mirrored, 0 to 4 cm, closed at q = 0 (touching at y = 0)
    assert chain.prismatic[7:].all()
    np.testing.assert_array_equal(chain.axis[7:], [[0, 1, 0], [0, -1, 0]])
    np.testing.assert_array_equal(chain.lower[7:], [0.0, 0.0])
    np.testing.assert_array_equal(chain.upper[7:], [0.04, 0.04])
    poses = body_poses(chain, body_positions(chain, np.r_[np.zeros(7), 0.03]))
    left, right = (poses[k] @ np.r_[chain.com[k], 1.0] for k in (7, 8))
    # (the flange is 0.08 m off the base's z axis, the arm's wrist offset)
    np.testing.assert_allclose(left[:3], [0.08, 0.0375, right[2]], atol=1e-15)
    np.testing.assert_allclose(right[:2], [0.08, -0.0375], atol=1e-15)


# --- an empty description ---------------------------------------------
@pytest.mark.parametrize('source', ['', '   ', '\n\t', '\ufeff', b'', b'  \n',
                                    b'\xef\xbb\xbf'])
def test_empty_description_says_it_is_empty(source):
    for load in (load_urdf, load_urdf_xml):
        with pytest.raises(ValueError, match='the robot description is empty') as info:
            load(source)
        assert 'cannot read' not in str(info.value)


def test_empty_file_says_it_is_empty(tmp_path):
    path = tmp_path / 'empty.urdf'
    path.write_text('\n')
    with pytest.raises(ValueError, match=f"URDF file '{path}' is empty"):
        load_urdf(str(path))


def test_joint_axis_motion_helper_is_a_rotation():
    """The test's own kinematics: a quarter turn about z takes x to y."""
    T = joint_motion(np.array([0.0, 0.0, 1.0]), False, math.pi / 2)
    np.testing.assert_allclose(T[:3, :3] @ [1, 0, 0], [0, 1, 0], atol=1e-15)
