"""URDF -> chain: merging, side branches, defaults, and a clear error for each bad input."""

from pathlib import Path
import warnings

from denoc_dynamics import load_urdf, load_urdf_xml
from denoc_dynamics.core import gim, udu, urdf_xml
from denoc_dynamics.core.urdf import build_chain, merge_inertias, URDFWarning
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import (hand_robot, INERTIA, joint, link, planar_urdf,
                                         random_inertia, robot)
import numpy as np
import pytest

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


def test_branched_urdf_without_tip_link_is_the_whole_tree():
    """It was refused ("tip_link is ambiguous"); now a tree (test_urdf_tree.py)."""
    tree = build_chain(hand_robot())
    assert tree.tip_link is None and tree.joint_names == ['j1', 'j2', 'fl', 'fr']
    assert tree.coordinate_names == ['j1', 'j2', 'fl']


def test_side_branches_lock_and_drop():
    locked = load_urdf(hand_robot(), tip_link='hand')
    dropped = load_urdf(hand_robot(), tip_link='hand', side_branches='drop')
    opened = load_urdf(hand_robot(), tip_link='hand', locked_positions={'fl': 0.04})
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
     "joint 'j1' mimics joint 'j0', which is not defined"),
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


def _limit(attributes):
    return robot(link('a'), joint('j1', 'base', 'a').replace(
        '<limit lower="-1" upper="1" effort="10" velocity="1"/>', f'<limit {attributes}/>'))


# each message names the joint or link, the element and field
@pytest.mark.parametrize('xml, match', [
    (robot(link('a'), joint('j1', 'base', 'a'), link('b'), joint('j1', 'a', 'b')),
     r"joint 'j1' is defined twice \(second at line 1\)"),
    (robot(link('a', mass=1.0), link('a', mass=100.0), joint('j1', 'base', 'a')),
     "link 'a' is defined twice"),
    (robot(link('a'), joint('j1', 'base', 'a', extra='<dynamics damping="nan"/>')),
     "joint 'j1' <dynamics>: damping='nan' is not finite"),
    (robot(link('a'), joint('j1', 'base', 'a', extra='<dynamics damping="-50"/>')),
     "joint 'j1' <dynamics>: damping='-50' is negative"),
    (robot(link('a'), joint('j1', 'base', 'a', extra='<dynamics friction="-0.1"/>')),
     "joint 'j1' <dynamics>: friction='-0.1' is negative"),
    (robot(link('a'), joint('j1', 'base', 'a', extra='<dynamics friction="NaN"/>')),
     "joint 'j1' <dynamics>: friction='NaN' is not finite"),
    (_limit('lower="1" upper="-1" effort="1" velocity="1"'),
     "joint 'j1' <limit>: lower 1.0 > upper -1.0"),
    (_limit('lower="nan" upper="1" effort="1" velocity="1"'),
     "joint 'j1' <limit>: lower='nan' is not finite"),
    (_limit('lower="-1" upper="nan" effort="1" velocity="1"'),
     "joint 'j1' <limit>: upper='nan' is not finite"),
    (_limit('lower="-1" upper="1" effort="-5" velocity="1"'),
     "joint 'j1' <limit>: effort='-5' is negative"),
    (_limit('lower="-1" upper="1" effort="5" velocity="-1"'),
     "joint 'j1' <limit>: velocity='-1' is negative"),
    (_limit('lower="-1" upper="1" effort="nan" velocity="1"'),
     "joint 'j1' <limit>: effort='nan' is not finite"),
    (robot(link('a', inertia='<inertia ixx="1" iyy="1" izz="3" ixy="0" ixz="0" iyz="0"/>'),
           joint('j1', 'base', 'a')), "link 'a': <inertia> violates the triangle inequality"),
    (robot(link('a'), joint('j1', 'base', 'a', xyz='nan 0 0.1')),
     "joint 'j1' <origin>: xyz='nan 0 0.1' is not finite"),
    (robot(link('a'), joint('j1', 'base', 'a').replace(
        '<origin xyz="0 0 0.1"/>', '<origin rpy="0 inf 0"/>')),
     "joint 'j1' <origin>: rpy='0 inf 0' is not finite"),
    (robot(link('a', xyz='0 nan 0'), joint('j1', 'base', 'a')),
     "link 'a' <inertial><origin>: xyz='0 nan 0' is not finite"),
    (robot(link('a'), joint('j1', 'base', 'a').replace('<parent link="base"/>', '')),
     "joint 'j1': missing <parent link=\"...\"/>"),
    (robot(link('a'), joint('j1', 'base', 'a').replace('<child link="a"/>', '')),
     "joint 'j1': missing <child link=\"...\"/>"),
    (robot(link('a'), joint('j1', 'base', 'a').replace('<child link="a"/>', '<child/>')),
     "joint 'j1': <child> has no link attribute"),
    (robot(link('a'), joint('j1', 'base', 'a', axis='0 1')),
     "joint 'j1' <axis>: xyz='0 1' must be 3 numbers, got 2"),
    (robot(link('a'), joint('j1', 'base', 'a', axis='0 x 1')),
     "joint 'j1' <axis>: xyz='0 x 1' is not 3 numbers"),
    (robot(link('a', mass='heavy'), joint('j1', 'base', 'a')),
     "link 'a' <mass>: value='heavy' is not a number"),
    (robot(link('a', mass='inf'), joint('j1', 'base', 'a')),
     "link 'a' <mass>: value='inf' is not finite"),
    # found by the fuzz test: finite, but m g overflowed to inf in the dynamics
    (robot(link('a', mass='1e308'), joint('j1', 'base', 'a')),
     r"link 'a' <mass>: value='1e308' is beyond 1e\+12 in magnitude"),
    (robot(link('a'), joint('j1', 'base', 'a', xyz='0 0 1e200')),
     r"joint 'j1' <origin>: xyz='0 0 1e200' is beyond 1e\+12"),
    ('<model name="t"><link name="a"/></model>', 'the root element is <model>, not <robot>'),
    (robot(link('a'), joint('j1', 'base', 'a', kind='ball')), "joint 'j1' has unknown type"),
    (robot(link('a'), '<joint type="revolute"><parent link="base"/><child link="a"/></joint>'),
     'a <joint> at line 1 has no name'),
    (robot(link('a'), joint('j1', 'base', 'a'), link('b'), link('c'),
           joint('j2', 'b', 'c'), joint('j3', 'c', 'b')),
     r"joints form a loop: links \['b', 'c'\]"),
    (robot(link('a'), joint('j1', 'base', 'a').replace(
        '<origin xyz="0 0 0.1"/>', '<origin/><origin/>')),
     "joint 'j1': <origin> is given 2 times"),
])
def test_invalid_value_raises_value_error_naming_joint_or_link_and_field(xml, match):
    with pytest.raises(ValueError, match=match):
        load_urdf(xml)


def test_negative_damping_was_read_before():
    """The values now refused are the ones that once loaded silently."""
    ok = load_urdf(robot(link('a'), joint('j1', 'base', 'a',
                                          extra='<dynamics damping="0.5" friction="0.2"/>')))
    assert ok.chain.damping[0] == 0.5 and ok.chain.friction[0] == 0.2


def test_limits_read_and_defaults():
    r = load_urdf(_limit('lower="-2" upper="3" effort="7" velocity="0"'))
    assert (r.chain.lower[0], r.chain.upper[0], r.chain.effort[0]) == (-2.0, 3.0, 7.0)
    assert np.isinf(r.chain.velocity[0])            # 0: no limit, as before
    r = load_urdf(_limit('effort="7" velocity="1"'))  # bounds omitted: urdfdom reads 0, 0
    assert np.isinf(r.chain.lower[0]) and np.isinf(r.chain.upper[0])


def test_inertia_on_the_triangle_edge():
    """
    A rod (I_xx = 0, I_yy = I_zz) is exactly on the edge: loads silently.

    An edge written to 4 digits breaks the inequality by rounding: loads with a
    warning that says why.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert load_urdf(planar_urdf([0.3, 0.2], [1.0, 1.0])).n == 2
    rounded = robot(link('a', inertia='<inertia ixx="0.0833" iyy="0.0833" izz="0.1667" '
                                      'ixy="0" ixz="0" iyz="0"/>'),
                    joint('j1', 'base', 'a'))
    with pytest.warns(URDFWarning, match="link 'a': <inertia> principal moments break the "
                                         'triangle inequality by 0.0001.*rounding'):
        r = load_urdf(rounded)
    assert r.chain.inertia[0][2, 2] == 0.1667


def test_link_breaking_triangle_inequality_merged_into_a_valid_body_warns():
    """PR2's sensor_mount_link (0.001, 0.001, 0.01) rides on a body that is valid."""
    mount = '<inertia ixx="0.001" iyy="0.001" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
    xml = robot(link('a', mass=5.0), joint('j1', 'base', 'a'),
                link('mount', mass=0.05, inertia=mount),
                joint('m', 'a', 'mount', kind='fixed'))
    with pytest.warns(URDFWarning, match="link 'mount': <inertia> breaks the triangle"):
        r = load_urdf(xml)
    assert r.chain.mass[0] == pytest.approx(5.05)


def test_mimic_multiplier_zero_is_kept():
    """A mimic multiplier of 0 is 0 (it was read as 1)."""
    xml = hand_robot().replace('multiplier="1" offset="0"', 'multiplier="0" offset="0.01"')
    r = load_urdf(xml, tip_link='hand', locked_positions={'fl': 0.04})
    assert r.chain.locked_joints == {'fl': 0.04, 'fr': 0.01}


def test_fixed_joint_axis_is_not_read():
    """Read no axis for fixed joints, as urdfdom: Kinova's URDFs give them 0 0 0."""
    xml = robot(link('a'), joint('j1', 'base', 'a'), link('b'),
                joint('w', 'a', 'b', kind='fixed', axis='0 0 0'))
    assert load_urdf(xml, tip_link='b').n == 1


# --- XML or path --------------------------------------------
LATIN1 = ('<?xml version="1.0" encoding="ISO-8859-1"?>'
          + TWO_LINK.replace('name="t"', 'name="bras_\u00e9"'))


@pytest.mark.parametrize('source', [
    '\ufeff' + TWO_LINK,                       # str with a byte-order mark
    '\ufeff\n  ' + TWO_LINK,
    TWO_LINK.encode(),                         # bytes
    b'\xef\xbb\xbf' + TWO_LINK.encode(),       # bytes with a UTF-8 BOM
    '\n\t ' + TWO_LINK,
])
def test_xml_is_told_from_a_path(source):
    for load in (load_urdf, load_urdf_xml):
        assert load(source).joint_names == ['j1', 'j2']


def test_declared_encoding_str_and_bytes():
    """A str is already decoded: its declaration is ignored; bytes follow it."""
    assert load_urdf(LATIN1).chain.name == 'bras_\u00e9'
    assert load_urdf(LATIN1.encode('latin-1')).chain.name == 'bras_\u00e9'
    assert load_urdf_xml(LATIN1.encode('latin-1')).chain.name == 'bras_\u00e9'


def test_path_forms(tmp_path):
    path = tmp_path / 'two.urdf'
    path.write_bytes(b'\xef\xbb\xbf' + TWO_LINK.encode())
    assert load_urdf(path).n == load_urdf(str(path)).n == 2


@pytest.mark.parametrize('text', ['/etc/passwd', 'urdf/denoc_arm7.urdf', 'robot.urdf',
                                  '', '   ', 'file:///etc/passwd'])
def test_xml_loader_never_opens_a_path(text, monkeypatch):
    """load_urdf_xml refuses a path, a real URDF's included, without opening it."""
    def no_open(*args, **kwargs):
        raise AssertionError(f'load_urdf_xml opened {args}')
    monkeypatch.setattr(urdf_xml, 'open', no_open, raising=False)
    for source in (text, bundled_urdf('denoc_arm7')):
        with pytest.raises(ValueError, match='not URDF XML') as info:
            load_urdf_xml(source)
        assert 'root:' not in str(info.value)


def test_load_urdf_still_opens_a_path():
    assert load_urdf(Path(bundled_urdf('denoc_arm7'))).n == 7
    with pytest.raises(ValueError, match='neither XML .* nor a file path'):
        load_urdf('<' * 0 + 'robot\n<link/>')


# --- XML safety: each hostile construct, and the parser alone ------
SECRET = 'TOP-SECRET-42'


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / 'secret.txt'
    path.write_text(SECRET)
    (tmp_path / 'evil.dtd').write_text(f'<!ENTITY leak SYSTEM "file://{path}">')
    return path


def _hostile(kind, secret_file):
    body = ('<robot name="t"><link name="base">&{e};</link><link name="a"><inertial>'
            '<mass value="1"/>' + INERTIA + '</inertial></link>' + joint('j1', 'base', 'a')
            + '</robot>')
    if kind == 'external entity':
        return (f'<!DOCTYPE robot [<!ENTITY leak SYSTEM "file://{secret_file}">]>'
                + body.format(e='leak'))
    if kind == 'parameter entity':
        return (f'<!DOCTYPE robot [<!ENTITY % ext SYSTEM "file://{secret_file.parent}/evil.dtd">'
                ' %ext;]>' + body.format(e='leak'))
    if kind == 'entity bomb':
        lol = ['<!ENTITY l0 "lollollollollollollollollollol">']
        lol += [f'<!ENTITY l{i} "' + f'&l{i - 1};' * 10 + '">' for i in range(1, 10)]
        return '<!DOCTYPE robot [' + ''.join(lol) + ']>' + body.format(e='l9')
    if kind == 'xinclude':
        return ('<robot name="x" xmlns:xi="http://www.w3.org/2001/XInclude">'
                f'<link name="base"><xi:include href="{secret_file}" parse="text"/></link>'
                '<link name="a"/><joint name="j1" type="fixed"><parent link="base"/>'
                '<child link="a"/></joint></robot>')
    raise AssertionError(kind)


@pytest.mark.parametrize('kind, match', [
    ('external entity', 'DOCTYPE'), ('parameter entity', 'DOCTYPE'),
    ('entity bomb', 'amplification'),       # libxml2's own limit, before any expansion
    ('xinclude', 'XInclude is not processed')])
def test_hostile_xml_is_refused_and_reads_nothing(kind, match, secret_file):
    import time
    start = time.perf_counter()
    for load in (load_urdf, load_urdf_xml):
        with pytest.raises(ValueError, match=match) as info:
            load(_hostile(kind, secret_file))
        assert SECRET not in str(info.value)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize('kind', ['external entity', 'parameter entity', 'entity bomb',
                                  'xinclude'])
def test_parser_options_alone_resolve_nothing(kind, secret_file):
    """Without the DOCTYPE and XInclude refusals, the parser still reads nothing."""
    from lxml import etree
    try:
        root = etree.fromstring(_hostile(kind, secret_file).encode(),
                                etree.XMLParser(**urdf_xml.PARSER_OPTIONS))
    except etree.XMLSyntaxError as exc:     # the bomb: refused while reading the DTD
        assert kind == 'entity bomb' and 'amplification' in str(exc)
        return
    text = etree.tostring(root, encoding='unicode')
    assert SECRET not in text and 'lollollol' not in text and len(text) < 2000


def test_parser_makes_no_network_access():
    import socket
    from lxml import etree
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    xml = (f'<!DOCTYPE robot [<!ENTITY net SYSTEM "http://127.0.0.1:{port}/x">'
           f'<!ENTITY % pnet SYSTEM "http://127.0.0.1:{port}/p.dtd"> %pnet;]>'
           '<robot name="t">&net;</robot>')
    try:
        etree.fromstring(xml.encode(), etree.XMLParser(**urdf_xml.PARSER_OPTIONS))
        with pytest.raises(ValueError, match='DOCTYPE'):
            load_urdf(xml)
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()


# --- the start-up check on long chains ------------------------------
def test_coaxial_joints_with_a_massless_link_between_move_no_mass():
    xml = robot(link('a', mass=0.0, inertia=''), joint('j1', 'base', 'a', axis='0 0 1'),
                link('b', xyz='0.3 0 0'), joint('j2', 'a', 'b', xyz='0 0 0', axis='0 0 1'))
    with pytest.raises(ValueError, match="joint 'j1' moves no mass"):
        load_urdf(xml)


def test_axis_through_a_point_mass_far_from_the_base_moves_no_mass():
    """Rounding does not hide a zero: a generic axis, 100 m out, through the mass."""
    axis = np.array([0.36, -0.48, 0.8])
    point = ' '.join(repr(float(v)) for v in 0.7 * axis)
    zero = '<inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/>'
    xml = robot(link('a', xyz=point, inertia=zero),
                joint('j1', 'base', 'a', xyz='100 37 -12', axis=' '.join(map(str, axis))))
    with pytest.raises(ValueError, match="joint 'j1' moves no mass"):
        load_urdf(xml)


def test_start_up_check_forms_no_inertia_matrix(monkeypatch):
    """The check is O(n): neither the GIM nor the full U of UDU^T is built."""
    def forbidden(*args):
        raise AssertionError('O(n^2) call in the start-up check')
    monkeypatch.setattr(gim, 'inertia_matrix', forbidden)
    monkeypatch.setattr(udu, 'udu', forbidden)
    import denoc_dynamics.core.robot as robot_module
    monkeypatch.setattr(robot_module, 'inertia_matrix', forbidden)
    monkeypatch.setattr(robot_module, 'call_state', forbidden)     # the GIM, UDU^T, I^-1
    assert load_urdf(bundled_urdf('denoc_arm7')).n == 7


def test_long_planar_chain_of_rods_loads():
    """20,000 links of 1 kg, 0.2 m: was refused, 'joint j1 moves no mass' (m^_1/I_11 ~ 1e-12)."""
    n = 20000
    r = load_urdf(planar_urdf([0.2] * n, [1.0] * n))
    assert r.n == n
    # the articulated inertia of a long free chain is that of a short one
    short = load_urdf(planar_urdf([0.2] * 200, [1.0] * 200))
    m_long = r.articulated_inertias(np.zeros(n))
    m_short = short.articulated_inertias(np.zeros(200))
    assert m_long[0] == pytest.approx(m_short[0], rel=1e-6)
    assert m_long[-1] == pytest.approx(1.0 * 0.2 ** 2 / 3)     # the last rod about its end


def test_50000_dof_chain_loads_in_linear_memory(tmp_path):
    """
    It failed with MemoryError: the check built the 18.6 GiB GIM.

    Loaded in a fresh process, whose peak resident memory is measured (about 0.55 GB
    on the reference machine, mostly the 21 MB URDF's XML tree).
    """
    import subprocess
    import sys
    code = (
        'import resource, sys\n'
        'from denoc_dynamics.sample_urdfs import planar_urdf\n'
        'from denoc_dynamics import load_urdf\n'
        'n = 50000\n'
        'assert load_urdf(planar_urdf([0.2] * n, [1.0] * n)).n == n\n'
        'print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n')
    # cwd elsewhere: `python -c` puts the cwd first on sys.path, and the package directory,
    # where pytest runs, holds the source tree (whose kernels would compile here: GBs)
    run = subprocess.run([sys.executable, '-c', code], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    peak = int(run.stdout.split()[-1])
    assert peak < 1.5e9     # bytes; O(n^2) would need 8 n^2 = 20 GB for the GIM alone


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


def test_a_massless_tip_link_is_named():
    """
    The joint nearest the tips that moves no mass, and its link, are named.

    It was reported as "joint 'joint1' moves no mass: ... m^_1 = nan is rounding noise
    against the nan": the first of the joints that inherit the tip's zero.
    """
    lengths, masses = [0.3, 0.3, 0.3], [1.0, 1.0, 1.0]
    xml = planar_urdf(lengths, masses)
    tip = xml.rindex('<inertial>')
    xml = xml[:tip] + xml[xml.index('</inertial>', tip) + len('</inertial>'):]
    with pytest.raises(ValueError) as error:
        load_urdf(xml)
    message = str(error.value)
    assert "joint 'joint3' moves no mass: link 'link3'" in message, message
    assert 'nan' not in message, message
