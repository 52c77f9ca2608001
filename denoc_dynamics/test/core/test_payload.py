"""
Payloads in the core: Robot.with_payload and Robot.identify_payload.

* with_payload(link, m, c, I) against the same URDF with the payload written in as a
  link on a fixed joint (read and merged by the URDF reader): M, ID and FD to
  round-off, on a link of a moving body, on a merged fixed link (the flange), on a
  gripper finger of a tree with mimic joints, and on the base (nothing changes).
* identify_payload recovers a payload from exact efforts of a random trajectory, and
  refuses data that cannot determine it, with the reason.
* Bad input: unknown link, negative or NaN mass, non-physical inertias.
"""

import json
import re

from denoc_dynamics import load_urdf
from denoc_dynamics.core.payload import parameter_map
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest

MASS, COM = 2.5, np.array([0.03, -0.02, 0.08])
#: A payload tensor given, as a URDF gives it, in a frame turned by this rpy.
RPY, MOMENTS = (0.3, -0.2, 0.5), (0.011, 0.017, 0.009)


def rpy_matrix(r, p, y):
    """Return Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def payload_inertia():
    """Return the payload's tensor in the link frame."""
    R = rpy_matrix(*RPY)
    return R @ np.diag(MOMENTS) @ R.T


def urdf_with_fixed_payload(name, link):
    """Return the bundled URDF ``name`` with the payload as a link fixed to ``link``."""
    xml = open(bundled_urdf(name)).read()
    ixx, iyy, izz = MOMENTS
    extra = f"""
  <joint name="payload_joint" type="fixed">
    <parent link="{link}"/><child link="payload"/>
    <origin xyz="{COM[0]} {COM[1]} {COM[2]}" rpy="0 0 0"/>
  </joint>
  <link name="payload">
    <inertial>
      <origin xyz="0 0 0" rpy="{RPY[0]} {RPY[1]} {RPY[2]}"/>
      <mass value="{MASS}"/>
      <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
</robot>"""
    return re.sub(r'</robot>\s*$', extra, xml)


@pytest.mark.parametrize('name, link', [('denoc_arm7', 'link4'), ('denoc_arm7', 'flange'),
                                        ('denoc_arm7', 'base_link'),
                                        ('denoc_arm7_gripper', None)])
def test_with_payload_equals_the_urdf_with_a_fixed_link(name, link):
    """M, ID and FD of with_payload equal those of the URDF with the payload in it."""
    robot = load_urdf(bundled_urdf(name))
    if link is None:             # a finger: a mimic joint's body
        finger = next(iter(robot.mimic_joints))
        link = robot.chain.link_names[robot.body_joint_names.index(finger)]
    loaded = robot.with_payload(link, MASS, COM, payload_inertia())
    expected = load_urdf(urdf_with_fixed_payload(name, link))
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, qd, qdd, tau = rng.normal(size=(4, robot.n))
        for what, ours, theirs in (
                ('M', loaded.inertia_matrix(q), expected.inertia_matrix(q)),
                ('ID', loaded.inverse_dynamics(q, qd, qdd),
                 expected.inverse_dynamics(q, qd, qdd)),
                ('FD', loaded.forward_dynamics(q, qd, tau),
                 expected.forward_dynamics(q, qd, tau))):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=what)
    if link != 'base_link':      # and the robot without it is untouched
        q = rng.normal(size=robot.n)
        assert not np.allclose(loaded.inertia_matrix(q), robot.inertia_matrix(q))
        np.testing.assert_array_equal(robot.inertia_matrix(q),
                                      load_urdf(bundled_urdf(name)).inertia_matrix(q))


def test_payloads_add_and_batches_run():
    """Two payloads on one link add up; a loaded robot runs batches on its own workspace."""
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    I = payload_inertia()
    twice = robot.with_payload('flange', MASS, COM, I).with_payload('flange', MASS, COM, I)
    once = robot.with_payload('flange', 2 * MASS, COM, 2 * I)
    Q = np.random.default_rng(2).normal(size=(6, robot.n))
    np.testing.assert_allclose(twice.inertia_matrix(Q), once.inertia_matrix(Q), rtol=1e-13)
    assert np.array_equal(once.gravity_torques(Q)[3], once.gravity_torques(Q[3]))


def test_parameter_map_moves_the_payload_into_the_body():
    """The body's parameters grow by L phi: phi the payload's about its link frame."""
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    k, T = robot.chain.link_frame('flange')
    assert k == robot.n - 1 and not np.allclose(T, np.eye(4))
    c_x = np.array([[0, -COM[2], COM[1]], [COM[2], 0, -COM[0]], [-COM[1], COM[0], 0]])
    I_O = payload_inertia() + MASS * c_x.T @ c_x
    phi = np.concatenate(([MASS], MASS * COM, I_O[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]))
    loaded = robot.with_payload('flange', MASS, COM, payload_inertia())
    np.testing.assert_allclose(loaded.parameters() - robot.parameters(),
                               np.concatenate((np.zeros(10 * k), parameter_map(T) @ phi)),
                               atol=1e-14)


@pytest.mark.parametrize('link, mass, com, inertia, match', [
    ('nowhere', 1.0, COM, np.eye(3) * 1e-3, "unknown link 'nowhere'"),
    ('flange', -1.0, COM, np.eye(3) * 1e-3, 'mass must be finite and >= 0'),
    ('flange', np.nan, COM, np.eye(3) * 1e-3, 'mass must be finite and >= 0'),
    ('flange', 1.0, [0.0, np.inf, 0.0], np.eye(3) * 1e-3, 'center of mass must be 3 finite'),
    ('flange', 1.0, [0.0, 0.0], np.eye(3) * 1e-3, 'center of mass must be 3 finite'),
    ('flange', 1.0, COM, np.diag([1e-3, 1e-3, -1e-3]), 'not positive'),
    ('flange', 1.0, COM, np.diag([1e-3, 1e-3, 5e-3]), 'triangle inequality'),
    ('flange', 1.0, COM, [[1e-3, 1e-4, 0], [0, 1e-3, 0], [0, 0, 1e-3]], 'not symmetric'),
    ('flange', 1.0, COM, np.eye(2), r'finite \(3, 3\) tensor'),
])
def test_with_payload_bad_input(link, mass, com, inertia, match):
    """Each bad payload raises ValueError naming what is wrong; the robot is unchanged."""
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    before = robot.parameters()
    with pytest.raises(ValueError, match=match):
        robot.with_payload(link, mass, com, inertia)
    np.testing.assert_array_equal(robot.parameters(), before)


def test_dropped_link_is_named():
    """A link dropped with its side branch is refused as such."""
    robot = load_urdf(bundled_urdf('denoc_arm7_gripper'), tip_link='link7',
                      side_branches='drop')
    dropped = robot.chain.dropped_links[0]
    with pytest.raises(ValueError, match='dropped with its side branch'):
        robot.with_payload(dropped, 1.0, COM, np.eye(3) * 1e-3)


def test_identify_payload_recovers_it_from_exact_efforts():
    """Efforts of the loaded robot on random states give back mass, com and inertia."""
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    loaded = robot.with_payload('flange', MASS, COM, payload_inertia())
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 200, robot.n))
    estimate = robot.identify_payload('flange', q, qd, qdd, loaded.inverse_dynamics(q, qd, qdd))
    mass, com, inertia = estimate
    assert abs(mass - MASS) < 1e-9 and np.abs(com - COM).max() < 1e-9
    np.testing.assert_allclose(inertia, payload_inertia(), atol=1e-9)
    assert 1.0 <= estimate.condition < 1e3 and estimate.residual_rms < 1e-9
    assert estimate.samples == 200


def test_identify_payload_refuses_data_that_cannot_determine_it():
    """At rest no inertia is excited; one sample is too few; the base link moves nothing."""
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    rng = np.random.default_rng(6)
    q = rng.normal(size=(50, robot.n))
    zero = np.zeros_like(q)
    with pytest.raises(ValueError, match='no joint effort depends on I_xx'):
        robot.identify_payload('flange', q, zero, zero, robot.gravity_torques(q))
    with pytest.raises(ValueError, match='7 equations for 10 unknowns'):
        robot.identify_payload('flange', q[:1], zero[:1], zero[:1], zero[:1])
    with pytest.raises(ValueError, match='fixed to the base'):
        robot.identify_payload('base_link', q, zero, zero, zero)
    qd = np.zeros_like(q)
    qd[:, -1] = 1.0                    # only the last joint moves, at constant speed
    with pytest.raises(ValueError, match='cannot determine the payload'):
        robot.identify_payload('flange', np.tile(q[:1], (50, 1)), qd, zero,
                               robot.inverse_dynamics(np.tile(q[:1], (50, 1)), qd, zero))
    with pytest.raises(ValueError, match='tau contains NaN'):
        robot.identify_payload('flange', q, zero, zero, np.full_like(q, np.nan))


@pytest.mark.parametrize('suffix', ['csv', 'npz'])
def test_identify_payload_command_on_a_recording(tmp_path, suffix):
    """denoc-dynamics identify-payload reads joint states (no qdd) and finds the payload."""
    from denoc_dynamics.cli import run
    from denoc_dynamics.excitation import exciting_trajectory
    from denoc_dynamics.recording import save_recording
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    loaded = robot.with_payload('flange', MASS, COM, payload_inertia())
    joints = robot.joints
    fourier = exciting_trajectory(joints.lower, joints.upper, joints.velocity, seed=4)
    t = np.arange(0.0, 10.0, 0.001)
    q, qd, qdd = fourier.sample(t)
    # the effort applied over each interval: ID at its middle (what sim_node publishes)
    mid = fourier.sample(t[1:] - 0.0005)
    tau = np.vstack([np.zeros(robot.n), loaded.inverse_dynamics(*mid)])
    path = str(tmp_path / f'recording.{suffix}')
    save_recording(path, robot.joint_names, t, q, qd, tau)
    out = json.loads(run(['identify-payload', '--link', 'flange', '--friction-velocity', '0',
                          path, '--json']))
    assert abs(out['mass'] - MASS) < 1e-3 * MASS and np.abs(np.subtract(out['com'], COM)).max() \
        < 1e-4, out
    assert 'condition number' in run(['identify-payload', '--link', 'flange',
                                      '--friction-velocity', '0', path])


def test_recording_bad_input(tmp_path):
    """A recording without a joint's columns, or with NaN, is refused naming it."""
    from denoc_dynamics.recording import load_recording
    path = tmp_path / 'bad.csv'
    path.write_text('time,position.joint1\n0,0\n')
    with pytest.raises(ValueError, match=r"missing columns \['velocity.joint1'"):
        load_recording(str(path), ['joint1'])
    path.write_text('time,position.joint1,velocity.joint1,effort.joint1\n0,0,0,0\n'
                    '0.1,nan,0,0\n0.2,0,0,0\n')
    with pytest.raises(ValueError, match='NaN or Inf'):
        load_recording(str(path), ['joint1'])


def test_exciting_trajectory_stays_within_the_limits():
    """The Fourier trajectory keeps the position limits (with margin) and velocity share."""
    from denoc_dynamics.excitation import exciting_trajectory
    joints = load_urdf(bundled_urdf('denoc_arm7')).joints
    fourier = exciting_trajectory(joints.lower, joints.upper, joints.velocity, seed=1)
    q, qd, qdd = fourier.sample(np.linspace(0.0, 10.0, 20001))
    margin = 0.1 * (joints.upper - joints.lower)
    assert np.all(q >= joints.lower + margin - 1e-3) and np.all(q <= joints.upper - margin + 1e-3)
    assert np.all(np.abs(qd) <= 0.5 * joints.velocity * 1.01) and np.abs(qdd).max() <= 3.03
    np.testing.assert_allclose(np.gradient(q, 5e-4, axis=0)[1:-1], qd[1:-1], atol=1e-5)
    with pytest.raises(ValueError, match='no room to move'):
        exciting_trajectory(joints.lower, joints.upper, centre=joints.upper)
