"""URDF -> chain: merging, side branches, defaults, and a clear error for each bad input."""

from denoc_dynamics import load_urdf
from denoc_dynamics.core.urdf import merge_inertias
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from urdf_factory import planar_urdf, random_inertia

INERTIA = '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'


def link(name, mass=1.0, xyz='0 0 0', rpy='0 0 0', inertia=INERTIA):
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<mass value="{mass}"/>{inertia}</inertial></link>')


def joint(name, parent, child, kind='revolute', xyz='0 0 0.1', axis='0 1 0', extra=''):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
            f'<limit lower="-1" upper="1" effort="10" velocity="1"/>{extra}</joint>')


def robot(*parts):
    return '<robot name="t"><link name="base"/>' + ''.join(parts) + '</robot>'


TWO_LINK = robot(link('a'), joint('j1', 'base', 'a'), link('b', xyz='0 0 0.2'),
                 joint('j2', 'a', 'b', xyz='0.3 0 0'))


# --- what the chain contains ----------------------------------------------------------
def test_path_string_and_file_give_the_same_chain(tmp_path):
    path = tmp_path / 'two.urdf'
    path.write_text(TWO_LINK)
    a, b = load_urdf(TWO_LINK), load_urdf(str(path))
    assert a.joint_names == b.joint_names == ['j1', 'j2']
    q = np.array([0.3, -0.4])
    np.testing.assert_array_equal(a.inertia_matrix(q), b.inertia_matrix(q))


def test_fixed_joint_is_merged_with_parallel_axis_theorem():
    welded = robot(link('a'), joint('j1', 'base', 'a'), link('w', mass=2.0, xyz='0 0.1 0'),
                   joint('weld', 'a', 'w', kind='fixed', xyz='0.2 0 0'),
                   link('b', xyz='0 0 0.2'), joint('j2', 'w', 'b', xyz='0.3 0 0'))
    r = load_urdf(welded)
    assert r.joint_names == ['j1', 'j2']
    assert r.chain.merged_links[0] == ['a', 'w']
    assert r.chain.mass[0] == pytest.approx(3.0)
    np.testing.assert_allclose(r.chain.com[0], [0.4 / 3, 0.2 / 3, 0.0])
    # the next joint is placed through the weld: 0.2 + 0.3 along x
    np.testing.assert_allclose(r.chain.X_tree[1][:3, 3], [0.5, 0, 0])
    expected = merge_inertias([(1.0, np.zeros(3), 0.01 * np.eye(3)),
                               (2.0, np.array([0.2, 0.1, 0.0]), 0.01 * np.eye(3))])
    np.testing.assert_allclose(r.chain.inertia[0], expected[2])
    # parallel axis by hand about z: 0.02 + 1*(|c1|^2) + 2*(|c2|^2) in xy
    c = np.array([0.4 / 3, 0.2 / 3])
    izz = 0.01 + 0.01 + 1.0 * c @ c + 2.0 * (np.array([0.2, 0.1]) - c) @ (np.array([0.2, 0.1]) - c)
    assert r.chain.inertia[0][2, 2] == pytest.approx(izz)


def test_inertial_rpy_rotates_tensor_not_offset():
    inertia = '<inertia ixx="0.3" iyy="0.2" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
    xml = robot(link('a', xyz='0.1 0 0', rpy='0 0 1.5707963267948966', inertia=inertia),
                joint('j1', 'base', 'a', axis='0 0 1'))
    r = load_urdf(xml)
    np.testing.assert_allclose(r.chain.com[0], [0.1, 0, 0])
    np.testing.assert_allclose(np.diag(r.chain.inertia[0]), [0.2, 0.3, 0.1], atol=1e-15)


def test_missing_origin_and_inertial():
    xml = ('<robot name="t"><link name="base"/><link name="a"><inertial><mass value="1"/>'
           + INERTIA + '</inertial></link><link name="ghost"/>'
           '<joint name="j1" type="continuous"><parent link="base"/><child link="a"/>'
           '<axis xyz="0 0 1"/></joint>'
           '<joint name="g" type="fixed"><parent link="a"/><child link="ghost"/></joint>'
           '</robot>')
    r = load_urdf(xml)
    assert r.chain.mass[0] == 1.0
    np.testing.assert_allclose(r.chain.X_tree[0], np.eye(4))
    assert r.chain.continuous[0] and np.isinf(r.chain.lower[0]) and np.isinf(r.chain.upper[0])


def test_default_axis_is_x():
    xml = robot(link('a', xyz='0 0 0.1'),
                '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    np.testing.assert_allclose(load_urdf(xml).chain.axis[0], [1, 0, 0])


def test_prismatic_joint_is_a_coordinate():
    xml = robot(link('a'), joint('slide', 'base', 'a', kind='prismatic', axis='0 0 1'))
    r = load_urdf(xml)
    assert r.chain.prismatic[0]
    # a vertical slider holds its weight: tau = m g
    assert r.gravity_torques([0.2])[0] == pytest.approx(9.81)
    assert r.inertia_matrix([0.2])[0, 0] == pytest.approx(1.0)


def test_root_inertia_is_ignored_and_reported():
    heavy = robot(link('a'), joint('j1', 'base', 'a')).replace(
        '<link name="base"/>', link('base', mass=50.0))
    r, light = load_urdf(heavy), load_urdf(robot(link('a'), joint('j1', 'base', 'a')))
    q = np.array([0.7])
    np.testing.assert_array_equal(r.inertia_matrix(q), light.inertia_matrix(q))
    assert r.chain.root_mass_ignored == 50.0
    assert 'ignored' in r.summary() and '50.0000 kg' in r.summary()


def _hand_robot():
    """Return a 2-joint arm whose tip link 'hand' carries two prismatic fingers."""
    return robot(
        link('a'), joint('j1', 'base', 'a', axis='0 0 1'),
        link('hand', xyz='0.05 0 0'), joint('j2', 'a', 'hand', xyz='0.3 0 0'),
        link('left', mass=0.5, xyz='0 0.02 0'),
        joint('fl', 'hand', 'left', kind='prismatic', xyz='0.1 0 0', axis='0 1 0'),
        link('right', mass=0.5, xyz='0 -0.02 0'),
        joint('fr', 'hand', 'right', kind='prismatic', xyz='0.1 0 0', axis='0 -1 0',
              extra='<mimic joint="fl" multiplier="1" offset="0"/>'))


def test_tip_link_must_be_named_when_ambiguous():
    with pytest.raises(ValueError, match=r"candidate tips are \['left', 'right'\]"):
        load_urdf(_hand_robot())


def test_side_branches_lock_and_drop():
    locked = load_urdf(_hand_robot(), tip_link='hand')
    dropped = load_urdf(_hand_robot(), tip_link='hand', side_branches='drop')
    opened = load_urdf(_hand_robot(), tip_link='hand', locked_positions={'fl': 0.04})
    assert locked.chain.mass[1] == pytest.approx(2.0)
    assert dropped.chain.mass[1] == pytest.approx(1.0)
    assert dropped.chain.dropped_links == ['left', 'right']
    assert locked.chain.locked_joints == {'fl': 0.0, 'fr': 0.0}
    # the mimic finger follows the locked one: both open by 0.04, symmetric about y = 0
    assert opened.chain.locked_joints == {'fl': 0.04, 'fr': 0.04}
    assert opened.chain.com[1][1] == pytest.approx(locked.chain.com[1][1])
    assert opened.chain.inertia[1][0, 0] > locked.chain.inertia[1][0, 0]
    q = np.array([0.1, 0.2])
    assert not np.allclose(locked.inertia_matrix(q), dropped.inertia_matrix(q))


def test_summary_lists_joints_and_masses():
    text = load_urdf(bundled_urdf('denoc_arm7')).summary()
    for k in range(1, 8):
        assert f'joint{k}' in text
    assert 'total moving mass' in text


def test_merge_inertias_is_mass_weighted():
    rng = np.random.default_rng(0)
    parts = [(m, rng.normal(size=3), random_inertia(rng, m)) for m in (1.0, 2.0, 0.5)]
    mass, com, inertia = merge_inertias(parts)
    assert mass == pytest.approx(3.5)
    np.testing.assert_allclose(com, sum(m * c for m, c, _ in parts) / 3.5)
    # about the origin, inertias simply add: check via the parallel-axis shift

    def about_origin(m, c, I):
        return I + m * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(about_origin(mass, com, inertia),
                               sum(about_origin(*p) for p in parts), atol=1e-12)


# --- bad URDFs: one test per error ------------------------------------------------------
@pytest.mark.parametrize('xml, match', [
    ('<robot name="t"><link name="a"', 'malformed URDF XML'),
    ('not xml at all and not a file', 'cannot read URDF file'),
    (robot(link('a'), joint('j1', 'base', 'a', extra='<mimic joint="j0"/>')),
     "joint 'j1' on the chain is a mimic joint"),
    (robot(link('a'), '<joint name="free" type="floating"><parent link="base"/>'
                      '<child link="a"/></joint>'), "joint 'free' on the chain is floating"),
    (robot(link('a'), '<joint name="flat" type="planar"><parent link="base"/>'
                      '<child link="a"/><axis xyz="0 0 1"/></joint>'),
     "joint 'flat' on the chain is planar"),
    (robot(link('a', mass=-1.0), joint('j1', 'base', 'a')), "link 'a': negative mass"),
    (robot(link('a', inertia='<inertia ixx="1" iyy="1" izz="-1" ixy="0" ixz="0" iyz="0"/>'),
           joint('j1', 'base', 'a')), "link 'a': <inertia> tensor is not positive"),
    (robot(link('a', inertia='<inertia ixx="1" iyy="1" izz="1" ixy="2" ixz="0" iyz="0"/>'),
           joint('j1', 'base', 'a')), "link 'a': <inertia> tensor is not positive"),
    (robot(link('a'), joint('j1', 'base', 'nowhere')), "joint 'j1': child link 'nowhere'"),
    (robot(link('a', mass=0.0, inertia=''), joint('j1', 'base', 'a')),
     "joint 'j1' moves no mass"),
    # a revolute joint whose axis passes through a point mass moves nothing
    (robot(link('a', mass=1.0, inertia='<inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" '
                                       'iyz="0"/>'), joint('j1', 'base', 'a', axis='0 0 1')),
     "joint 'j1' moves no mass"),
    (robot(link('a'), joint('j1', 'base', 'a', axis='0 0 0')), "joint 'j1': <axis xyz>"),
    (robot(link('a'), '<joint name="w" type="fixed"><parent link="base"/><child link="a"/>'
                      '</joint>'), 'no movable joint'),
])
def test_bad_urdf_raises_value_error_naming_it(xml, match):
    with pytest.raises(ValueError, match=match):
        load_urdf(xml)


def test_unknown_base_or_tip_link():
    with pytest.raises(ValueError, match="unknown base_link 'nope'"):
        load_urdf(TWO_LINK, base_link='nope')
    with pytest.raises(ValueError, match="unknown tip_link 'nope'"):
        load_urdf(TWO_LINK, tip_link='nope')
    with pytest.raises(ValueError, match="tip_link 'a' is not below base_link 'b'"):
        load_urdf(TWO_LINK, base_link='b', tip_link='a')


def test_bad_options():
    with pytest.raises(ValueError, match='side_branches'):
        load_urdf(TWO_LINK, side_branches='prune')
    with pytest.raises(ValueError, match='gravity'):
        load_urdf(TWO_LINK, gravity=(0, 0))
    with pytest.raises(ValueError, match=r"locked_positions names .*\['j9'\]"):
        load_urdf(TWO_LINK, locked_positions={'j9': 0.1})


def test_mimic_side_branch_of_chain_joint_cannot_be_locked():
    xml = robot(link('a'), joint('j1', 'base', 'a'), link('b', xyz='0 0 0.1'),
                joint('j2', 'a', 'b'), link('c'),
                joint('m', 'a', 'c', extra='<mimic joint="j2"/>'))
    with pytest.raises(ValueError, match="'m' mimics chain joint 'j2'"):
        load_urdf(xml, tip_link='b')
    assert load_urdf(xml, tip_link='b', side_branches='drop').n == 2


@pytest.mark.parametrize('bad, match', [
    (np.zeros(2), r'shape \(\.\.\., 3\)'),
    (np.zeros((4, 2)), r'shape \(\.\.\., 3\)'),
    (np.array([0.0, np.nan, 0.0]), 'NaN or Inf'),
    (np.array([0.0, np.inf, 0.0]), 'NaN or Inf'),
    (0.0, 'shape'),
])
def test_bad_state_raises_value_error(bad, match):
    r = load_urdf(planar_urdf([0.3, 0.2, 0.1], [1.0, 1.0, 1.0]))
    ok = np.zeros(3)
    for call in (lambda: r.inertia_matrix(bad), lambda: r.inverse_dynamics(bad, ok, ok),
                 lambda: r.forward_dynamics(ok, bad, ok), lambda: r.udu(bad),
                 lambda: r.inverse_inertia_matrix(bad), lambda: r.bias_forces(ok, bad),
                 lambda: r.gravity_torques(bad)):
        with pytest.raises(ValueError, match=match):
            call()
    with pytest.raises(ValueError, match='method'):
        r.forward_dynamics(ok, ok, ok, method='lu')
    with pytest.raises(ValueError, match='broadcast'):
        r.inverse_dynamics(np.zeros((2, 3)), np.zeros((3, 3)), ok)
    with pytest.raises(ValueError, match='f_ext'):
        r.inverse_dynamics(ok, ok, ok, f_ext=np.zeros((3, 5)))


def test_example_robot_data_is_found_when_installed():
    """The Pinocchio cross-checks skip without it: a missed install must fail here."""
    from importlib import metadata

    from denoc_dynamics.resources import example_robot_data_dir
    try:
        metadata.version('example-robot-data')
    except metadata.PackageNotFoundError:
        pytest.skip('example-robot-data is not installed')
    robots = example_robot_data_dir()
    assert robots is not None and (robots / 'ur_description/urdf/ur5_robot.urdf').is_file()
