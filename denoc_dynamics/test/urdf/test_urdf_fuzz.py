"""
Fuzzing the URDF reader: mutated valid URDFs load as a sound robot or raise ValueError.

Hypothesis mutates valid URDFs (a random chain with fixed joints, side branches and
mimic fingers, the bundled arm, a planar chain of up to 1 MB): attribute values
replaced by hostile ones (NaN, Inf, huge, negative, empty, wrong length, text),
elements deleted, duplicated or moved, tags and names changed, bytes inserted,
deleted or truncated.  For every input, ``load_urdf`` either raises ValueError, or
returns a robot whose inertia matrix is finite and symmetric positive definite and
whose dynamics are finite; nothing else is raised, and no load takes 2 s.  The runs
are derandomized (the same examples every time) with explicit example counts.
"""

from pathlib import Path
import time
import warnings

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import planar_urdf, random_chain_urdf
from hypothesis import given, HealthCheck, settings, strategies as st
from lxml import etree
import numpy as np

HAND = ('<link name="hand"><inertial><mass value="0.6"/><inertia ixx="1e-3" iyy="1e-3" '
        'izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="wrist" type="fixed"><parent link="{tip}"/><child link="hand"/>'
        '<origin xyz="0 0 0.05" rpy="0.1 0.2 0.3"/></joint>'
        '<link name="finger"><inertial><origin xyz="0 0.01 0"/><mass value="0.1"/>'
        '<inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="f1" type="prismatic"><parent link="hand"/><child link="finger"/>'
        '<axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="10" velocity="0.1"/>'
        '<dynamics damping="0.1" friction="0.01"/></joint>'
        '<link name="finger2"><inertial><mass value="0.1"/><inertia ixx="1e-5" iyy="1e-5" '
        'izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="f2" type="prismatic"><parent link="hand"/><child link="finger2"/>'
        '<axis xyz="0 -1 0"/><mimic joint="f1" multiplier="1" offset="0"/>'
        '<limit lower="0" upper="0.04" effort="10" velocity="0.1"/></joint>')


def _with_hand(xml, tip):
    return xml.replace('</robot>', HAND.format(tip=tip) + '</robot>')


BASES = [
    _with_hand(random_chain_urdf(np.random.default_rng(3), 4), 'link4'),
    Path(bundled_urdf('denoc_arm7')).read_text(),
    planar_urdf([0.3, 0.2, 0.1], [1.0, 2.0, 0.5]),
]
OPTIONS = [{}, {'tip_link': 'hand'}, {'tip_link': 'hand', 'side_branches': 'drop'}]
HOSTILE = ['nan', 'NaN', 'inf', '-inf', '-1', '0', '-0', '1e308', '-1e308', '1e-320', '',
           ' ', 'abc', '1 2', '1 2 3 4', '0 0 0', 'nan 0 0', '1e400 0 0', '0x10', '1_0',
           '\u00e9', '<', '&amp;', 'base_link', 'link1', 'joint1', 'fixed', 'floating',
           'planar', 'continuous', 'prismatic', '3' * 400]


def _mutate_tree(xml, data):
    root = etree.fromstring(xml.encode())
    elements = list(root.iter())
    for _ in range(data.draw(st.integers(1, 4), label='mutations')):
        element = data.draw(st.sampled_from(elements), label='element')
        op = data.draw(st.sampled_from(['value', 'value', 'value', 'drop_attribute', 'delete',
                                        'duplicate', 'move', 'retag']), label='op')
        if op in ('value', 'drop_attribute') and element.attrib:
            key = data.draw(st.sampled_from(sorted(element.attrib)), label='attribute')
            if op == 'value':
                element.set(key, data.draw(st.sampled_from(HOSTILE), label='value'))
            else:
                del element.attrib[key]
        elif op == 'delete' and element.getparent() is not None:
            element.getparent().remove(element)
        elif op == 'duplicate' and element.getparent() is not None:
            element.getparent().append(etree.fromstring(etree.tostring(element)))
        elif op == 'move' and element.getparent() is not None:
            target = data.draw(st.sampled_from(elements), label='target')
            if element not in target.iterancestors() and target is not element:
                target.append(element)
        elif op == 'retag':
            element.tag = data.draw(st.sampled_from(
                ['link', 'joint', 'robot', 'inertial', 'origin', 'axis', 'limit', 'x']),
                label='tag')
    return etree.tostring(root, encoding='unicode')


def _mutate_text(xml, data):
    for _ in range(data.draw(st.integers(1, 3), label='edits')):
        at = data.draw(st.integers(0, len(xml)), label='at')
        op = data.draw(st.sampled_from(['insert', 'delete', 'truncate']), label='text op')
        if op == 'insert':
            xml = xml[:at] + data.draw(st.text(max_size=8), label='text') + xml[at:]
        elif op == 'delete':
            xml = xml[:at] + xml[at + data.draw(st.integers(1, 20), label='n'):]
        else:
            xml = xml[:at]
    return xml


def check_load(source, **options):
    """Assert that ``source`` loads as a sound robot or raises ValueError; return which."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            robot = load_urdf(source, **options)
    except ValueError:
        robot = None
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f'load took {elapsed:.2f} s on {len(source)} characters'
    if robot is None:
        return 'refused'
    n = robot.n
    q = np.linspace(-0.5, 0.5, n)
    assert np.all(np.isfinite(robot.gravity_torques(q)))
    if n <= 200:
        M = robot.inertia_matrix(q)
        assert np.all(np.isfinite(M)) and np.array_equal(M, M.T)
        np.linalg.cholesky(M)           # raises LinAlgError unless positive definite
        qdd = robot.forward_dynamics(q, np.ones(n), np.ones(n))
        assert np.all(np.isfinite(qdd))
    else:                               # SPD <=> every pivot m^_k of UDU^T is > 0
        m_hat = robot.articulated_inertias(q)
        assert np.all(np.isfinite(m_hat)) and np.all(m_hat > 0)
    return 'loaded'


FUZZ = settings(max_examples=2500, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.data())
def test_mutated_urdf_loads_soundly_or_raises_value_error(data):
    base = data.draw(st.sampled_from(range(len(BASES))), label='base')
    xml = BASES[base]
    if data.draw(st.booleans(), label='structural'):
        xml = _mutate_tree(xml, data)
    else:
        xml = _mutate_text(xml, data)
    options = data.draw(st.sampled_from(OPTIONS), label='options') if base == 0 else {}
    as_bytes = data.draw(st.booleans(), label='bytes')
    check_load(xml.encode('utf-8', 'surrogatepass') if as_bytes else xml, **options)


@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_mutated_1mb_urdf_loads_soundly_or_raises_value_error(data):
    n = 2400                                    # about 1 MB of URDF
    xml = planar_urdf([0.2] * n, [1.0] * n)
    assert 0.9e6 < len(xml) < 1.1e6
    xml = _mutate_tree(xml, data)
    check_load(xml)


def test_fuzzing_reaches_both_outcomes():
    """The mutations are neither all harmless nor all fatal (the fuzz test can fail)."""
    outcomes = {check_load(BASES[0], tip_link='hand'),
                check_load(BASES[0].replace('mass value="', 'mass value="-'))}
    assert outcomes == {'loaded', 'refused'}
