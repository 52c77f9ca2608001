"""
Every algorithm against an independent one on kinematic trees with mimic joints.

The random trees of :func:`urdf_factory.random_tree_urdf` (fixed links merged,
prismatic and revolute joints on random axes, mimic joints of earlier joints, mimics of
mimics among them) and the bundled arm with its gripper, no Pinocchio:

* GIM = the columns of ID (gravity off, qd = 0, qdd = e_k);
* FD(ID(qdd)) = qdd by both methods;
* U D U^T = GIM with U unit upper triangular, d > 0, and on trees without mimic joints
  U_ik = 0 unless i is an ancestor of k (and GIM_ik = 0 unless one of i, k is);
* the analytical inverse times the GIM = 1;
* the composite-body H, b (003) = GIM and ID(q, qd, 0);
* the constrained system: the same URDF with its ``<mimic>`` tags removed is a tree of
  independent joints, and with q_bodies = G q + b read from the URDF text
  M_r = G^T M G, tau = G^T ID(G q + b, G qd, G qdd);
* batched calls = looped single calls;
* a mimic joint whose link has no mass loads (its leader moves mass, the constrained
  system is regular), and a leader that moves no mass, with its followers, is refused
  by name.
"""

import io
import re

from denoc_dynamics import load_urdf, Robot
from denoc_dynamics.core.robot import FD_METHODS
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from test_urdf_pinocchio import _urdf_mimics
from urdf_factory import mimic_gripper_urdf, random_tree_urdf

#: (seed, movable joints) of the random trees; each seed's tree has mimic joints.
TREES = [(seed, n) for seed, n in enumerate((3, 6, 9, 12, 17, 24))]
BUNDLED = 'denoc_arm7_gripper'


def _xml(case):
    if case == BUNDLED:
        with open(bundled_urdf(BUNDLED)) as f:
            return f.read()
    seed, n = case
    return random_tree_urdf(np.random.default_rng(seed), n, mimic=0.3)


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def _state(robot, rng, batch=()):
    return [rng.uniform(-1.5, 1.5, batch + (robot.n,)) for _ in range(3)]


_ROBOTS = {}


@pytest.fixture(params=TREES + [BUNDLED], ids=str)
def case(request):
    if request.param not in _ROBOTS:
        xml = _xml(request.param)
        rng = np.random.default_rng(99)
        _ROBOTS[request.param] = (xml, load_urdf(xml, gravity=rng.normal(size=3) * 5))
    return _ROBOTS[request.param]


@pytest.fixture
def robot(case):
    return case[1]


def test_the_trees_are_trees_with_mimic_joints():
    branched = mimics = 0
    for case in TREES + [BUNDLED]:
        robot = load_urdf(_xml(case))
        parent = robot.chain.parent
        branched += len(set(parent.tolist())) < len(parent)
        mimics += bool(robot.mimic_joints)
        assert robot.n + len(robot.mimic_joints) == robot.n_bodies
    assert branched == len(TREES) + 1 and mimics == len(TREES) + 1


def test_gim_is_columns_of_inverse_dynamics(robot):
    rng = np.random.default_rng(1)
    q, _, _ = _state(robot, rng)
    zero = np.zeros(robot.n)
    no_gravity = Robot(robot.chain, gravity=(0.0, 0.0, 0.0))
    columns = np.stack([no_gravity.inverse_dynamics(q, zero, np.eye(robot.n)[k])
                        for k in range(robot.n)], axis=-1)
    assert _rel(robot.inertia_matrix(q), columns) < 1e-13


@pytest.mark.parametrize('method', FD_METHODS)
def test_forward_dynamics_inverts_inverse_dynamics(robot, method):
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, qdd = _state(robot, rng)
        tau = robot.inverse_dynamics(q, qd, qdd)
        I = robot.inertia_matrix(q)
        tol = max(1e-12, 10 * np.linalg.cond(I) * np.finfo(float).eps)
        assert _rel(robot.forward_dynamics(q, qd, tau, method=method), qdd) < tol


def _ancestors(parent):
    A = np.eye(len(parent), dtype=bool)
    for k, p in enumerate(parent):
        if p >= 0:
            A[:, k] |= A[:, p]
    return A


def test_udu_reproduces_gim_with_the_tree_sparsity(robot):
    rng = np.random.default_rng(3)
    q, _, _ = _state(robot, rng)
    U, d = robot.udu(q)
    assert np.all(np.tril(U, -1) == 0.0) and np.all(np.diagonal(U) == 1.0)
    assert np.all(d > 0)
    I = robot.inertia_matrix(q)
    assert _rel(U @ np.diag(d) @ U.T, I) < 1e-13


def test_udu_sparsity_on_trees_without_mimic_joints(case):
    """Remove the mimic tags: U_ik = 0 unless i is an ancestor of k, exactly."""
    robot = load_urdf(re.sub(r'<mimic[^>]*/>', '', case[0]))
    assert not robot.mimic_joints
    A = _ancestors(robot.chain.parent)
    assert not (A | A.T).all(), 'a branched tree has joints on different branches'
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, _, _ = _state(robot, rng)
        U, d = robot.udu(q)
        assert np.all(U[~A] == 0.0)
        I = robot.inertia_matrix(q)
        assert np.all(I[~(A | A.T)] == 0.0)
        assert _rel(U @ np.diag(d) @ U.T, I) < 1e-13
        assert np.abs(robot.inverse_inertia_matrix(q) @ I - np.eye(robot.n)).max() < 1e-10


def test_analytical_inverse(robot):
    rng = np.random.default_rng(5)
    q, _, _ = _state(robot, rng)
    I_inv = robot.inverse_inertia_matrix(q)
    I = robot.inertia_matrix(q)
    tol = max(1e-12, 10 * np.linalg.cond(I) * np.finfo(float).eps)
    assert np.abs(I_inv @ I - np.eye(robot.n)).max() < tol
    assert _rel(I_inv, I_inv.T) < 1e-13


def test_composite_body_method_agrees(robot):
    rng = np.random.default_rng(6)
    q, qd, _ = _state(robot, rng)
    H, b = robot.composite_body(q, qd)
    assert _rel(H, robot.inertia_matrix(q)) < 1e-13
    assert _rel(b, robot.bias_forces(q, qd)) < 1e-13


def test_mimic_joints_are_the_constrained_system(case):
    """M_r = G^T M G and tau = G^T ID(G q + b, ...) of the tree of independent joints."""
    xml, robot = case
    free = load_urdf(re.sub(r'<mimic[^>]*/>', '', xml), gravity=robot.gravity)
    assert free.joint_names == robot.body_joint_names
    mimics = _urdf_mimics(io.StringIO(xml))
    assert set(mimics) == set(robot.mimic_joints)
    column = {name: k for k, name in enumerate(robot.joint_names)}
    G, b = np.zeros((robot.n_bodies, robot.n)), np.zeros(robot.n_bodies)
    for k, name in enumerate(free.joint_names):
        leader, a, offset = mimics.get(name, (name, 1.0, 0.0))
        G[k, column[leader]], b[k] = a, offset
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd, qdd = _state(robot, rng)
        M = G.T @ free.inertia_matrix(G @ q + b) @ G
        assert _rel(robot.inertia_matrix(q), M) < 1e-13
        tau = G.T @ free.inverse_dynamics(G @ q + b, G @ qd, G @ qdd)
        assert _rel(robot.inverse_dynamics(q, qd, qdd), tau) < 1e-13
        np.testing.assert_allclose(robot.body_positions(q), G @ q + b, rtol=0, atol=1e-15)


def test_batched_equals_looped(robot):
    rng = np.random.default_rng(8)
    q, qd, qdd = _state(robot, rng, batch=(2, 3))
    tau = robot.inverse_dynamics(q, qd, qdd)
    batched = {
        'M': robot.inertia_matrix(q),
        'ID': tau,
        'FD denoc': robot.forward_dynamics(q, qd, tau),
        'FD cholesky': robot.forward_dynamics(q, qd, tau, method='cholesky'),
        'U': robot.udu(q)[0], 'd': robot.udu(q)[1],
        'inverse': robot.inverse_inertia_matrix(q),
        'H': robot.composite_body(q, qd)[0], 'b': robot.composite_body(q, qd)[1],
    }
    for i in np.ndindex(2, 3):
        single = {
            'M': robot.inertia_matrix(q[i]),
            'ID': robot.inverse_dynamics(q[i], qd[i], qdd[i]),
            'FD denoc': robot.forward_dynamics(q[i], qd[i], tau[i]),
            'FD cholesky': robot.forward_dynamics(q[i], qd[i], tau[i], method='cholesky'),
            'U': robot.udu(q[i])[0], 'd': robot.udu(q[i])[1],
            'inverse': robot.inverse_inertia_matrix(q[i]),
            'H': robot.composite_body(q[i], qd[i])[0], 'b': robot.composite_body(q[i], qd[i])[1],
        }
        for name, value in single.items():
            assert _rel(batched[name][i], value) < 1e-13, (name, i)


def test_massless_mimic_follower_loads():
    """Body finger_b has no mass, but its leader finger_a moves finger_a's: not singular."""
    robot = load_urdf(mimic_gripper_urdf(follower_mass=0.0))
    assert robot.joint_names == ['wrist', 'finger_a_joint']
    assert list(robot.mimic_joints) == ['finger_b_joint']
    rng = np.random.default_rng(9)
    with_mass = load_urdf(mimic_gripper_urdf(follower_mass=1e-300))
    for _ in range(3):
        q, qd, qdd = _state(robot, rng)
        assert np.all(np.linalg.eigvalsh(robot.inertia_matrix(q)) > 0)
        tau = robot.inverse_dynamics(q, qd, qdd)
        assert _rel(tau, with_mass.inverse_dynamics(q, qd, qdd)) < 1e-14
        for method in FD_METHODS:
            assert _rel(robot.forward_dynamics(q, qd, tau, method=method), qdd) < 1e-12
        U, d = robot.udu(q)
        assert np.all(d > 0) and _rel(U @ np.diag(d) @ U.T, robot.inertia_matrix(q)) < 1e-14


def test_massless_leader_and_followers_are_refused_by_the_leader_name():
    with pytest.raises(ValueError, match="joint 'finger_a_joint' moves no mass.*finger_b_joint"):
        load_urdf(mimic_gripper_urdf(leader_mass=0.0, follower_mass=0.0))
    # a massless leader whose follower has mass is fine
    robot = load_urdf(mimic_gripper_urdf(leader_mass=0.0))
    assert np.all(np.linalg.eigvalsh(robot.inertia_matrix(np.zeros(2))) > 0)
