"""
Every algorithm against an independent one, on random chains and trees and the bundled arms.

No Pinocchio. The cases are random serial chains (:func:`random_chain_urdf`), the
bundled arm, random trees with mimic joints (:func:`random_tree_urdf`: fixed links
merged, prismatic and revolute joints on random axes, mimic joints of earlier joints,
mimics of mimics among them) and the bundled arm with its gripper. On all of them:

* GIM = the columns of ID (gravity off, qd = 0, qdd = e_k);
* FD(ID(qdd)) = qdd by both FD methods;
* U D U^T = GIM with U unit upper triangular and d > 0;
* the analytical inverse times the GIM = 1, and it is symmetric;
* the composite-body H and b (003) = the GIM and ID(q, qd, 0);
* batched calls = looped single calls.

One tolerance rule (helpers.py): an identity holds to 1e-13 relative (largest entry),
a result through a solve with the GIM to 1e-12 or 10 cond(GIM) eps, whichever is
larger; the inverse is symmetric to 1e-14.

On the chains also: the origin-referred GIM = Saha's literal N^T M N with mass-centre
twists (000 eqs. 13-19), batch blocks and broadcasting, external wrenches as virtual
work, and the power balance. On the trees: the sparsity of U on trees without mimic
joints; the constrained system (the same URDF with its ``<mimic>`` tags removed is a
tree of independent joints, and with q_bodies = G q + b read from the URDF text
M_r = G^T M G, tau = G^T ID(G q + b, G qd, G qdd)); the O(n) FD of a tree with mimic
joints (one O(n) solve corrected by C M^-1 C^T along the paths) against the constrained
G^T M G qdd = tau - G^T h by Cholesky; a mimic joint whose link has no mass loads (its
leader moves mass), and a leader that moves no mass, with its followers, is refused
by name.
"""

import io
import re

from denoc_dynamics import load_urdf, Robot
from denoc_dynamics.core.robot import FD_METHODS
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import mimic_gripper_urdf, random_chain_urdf, random_tree_urdf
from helpers import IDENTITY, relative_error, solve_tolerance, SYMMETRY, urdf_mimics
import numpy as np
import pytest

#: (seed, movable joints) of the random chains.
CHAINS = [('chain', seed, n) for seed, n in enumerate((1, 2, 3, 5, 7, 7, 10, 16))]
#: (seed, movable joints) of the random trees; each seed's tree has mimic joints.
TREES = [('tree', seed, n) for seed, n in enumerate((3, 6, 9, 12, 17, 24))]
ARM, GRIPPER = 'denoc_arm7', 'denoc_arm7_gripper'


class Case:
    """One robot of the cross-checks: its URDF text, the robot, its range of states."""

    def __init__(self, case):
        """Build the chain, tree or bundled robot ``case``."""
        if case in (ARM, GRIPPER):
            with open(bundled_urdf(case)) as f:
                self.xml = f.read()
        else:
            kind, seed, n = case
            rng = np.random.default_rng(seed)
            self.xml = random_chain_urdf(rng, n) if kind == 'chain' else \
                random_tree_urdf(rng, n, mimic=0.3)
        if case == ARM:
            gravity = (0.0, 0.0, -9.81)
        elif case in CHAINS:
            gravity = rng.normal(size=3) * 5
        else:
            gravity = np.random.default_rng(99).normal(size=3) * 5
        self.robot = load_urdf(self.xml, gravity=gravity)
        self.span = 2.0 if case == ARM or case in CHAINS else 1.5

    def state(self, rng, batch=()):
        """Return q, qd, qdd drawn uniformly in [-span, span]."""
        return [rng.uniform(-self.span, self.span, batch + (self.robot.n,)) for _ in range(3)]


_CASES = {}


def _case(param):
    if param not in _CASES:
        _CASES[param] = Case(param)
    return _CASES[param]


def _chain_state(robot, rng, batch=()):
    return [rng.uniform(-2.0, 2.0, batch + (robot.n,)) for _ in range(3)]


def _rel(a, b):
    return relative_error(a, b, largest=True)


@pytest.fixture(params=CHAINS + [ARM] + TREES + [GRIPPER], ids=str)
def case(request):
    return _case(request.param)


@pytest.fixture
def robot(case):
    return case.robot


@pytest.fixture(params=CHAINS + [ARM], ids=str)
def chain(request):
    return _case(request.param).robot


@pytest.fixture(params=TREES + [GRIPPER], ids=str)
def tree(request):
    return _case(request.param)


def test_the_trees_are_trees_with_mimic_joints():
    branched = mimics = 0
    for param in TREES + [GRIPPER]:
        robot = load_urdf(_case(param).xml)
        parent = robot.chain.parent
        branched += len(set(parent.tolist())) < len(parent)
        mimics += bool(robot.mimic_joints)
        assert robot.n + len(robot.mimic_joints) == robot.n_bodies
    assert branched == len(TREES) + 1 and mimics == len(TREES) + 1


def test_gim_is_columns_of_inverse_dynamics(case):
    robot = case.robot
    rng = np.random.default_rng(1)
    q, _, _ = case.state(rng)
    zero = np.zeros(robot.n)
    no_gravity = Robot(robot.chain, gravity=(0.0, 0.0, 0.0))
    columns = np.stack([no_gravity.inverse_dynamics(q, zero, np.eye(robot.n)[k])
                        for k in range(robot.n)], axis=-1)
    assert _rel(robot.inertia_matrix(q), columns) < IDENTITY


@pytest.mark.parametrize('method', FD_METHODS)
def test_forward_dynamics_inverts_inverse_dynamics(case, method):
    robot = case.robot
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, qdd = case.state(rng)
        tau = robot.inverse_dynamics(q, qd, qdd)
        tol = solve_tolerance(robot.inertia_matrix(q))
        assert _rel(robot.forward_dynamics(q, qd, tau, method=method), qdd) < tol


def test_udu_reproduces_gim(case):
    robot = case.robot
    rng = np.random.default_rng(3)
    q, _, _ = case.state(rng)
    U, d = robot.udu(q)
    assert np.all(np.tril(U, -1) == 0.0) and np.all(np.diagonal(U) == 1.0)
    assert np.all(d > 0)
    I = robot.inertia_matrix(q)
    assert _rel(U @ np.diag(d) @ U.T, I) < IDENTITY


def test_analytical_inverse(case):
    robot = case.robot
    rng = np.random.default_rng(4)
    q, _, _ = case.state(rng)
    I_inv = robot.inverse_inertia_matrix(q)
    I = robot.inertia_matrix(q)
    assert np.abs(I_inv @ I - np.eye(robot.n)).max() < solve_tolerance(I)
    assert _rel(I_inv, I_inv.T) < SYMMETRY


def test_composite_body_method_agrees(case):
    robot = case.robot
    rng = np.random.default_rng(5)
    q, qd, _ = case.state(rng)
    H, b = robot.composite_body(q, qd)
    assert _rel(H, robot.inertia_matrix(q)) < IDENTITY
    assert _rel(b, robot.bias_forces(q, qd)) < IDENTITY


def test_batched_equals_looped(case):
    robot = case.robot
    rng = np.random.default_rng(7)
    q, qd, qdd = case.state(rng, batch=(3, 4))
    tau = robot.inverse_dynamics(q, qd, qdd)
    checks = {
        'inertia_matrix': (robot.inertia_matrix(q), lambda i: robot.inertia_matrix(q[i])),
        'inverse_dynamics': (tau, lambda i: robot.inverse_dynamics(q[i], qd[i], qdd[i])),
        'fd_denoc': (robot.forward_dynamics(q, qd, tau, 'denoc'),
                     lambda i: robot.forward_dynamics(q[i], qd[i], tau[i], 'denoc')),
        'fd_cholesky': (robot.forward_dynamics(q, qd, tau, 'cholesky'),
                        lambda i: robot.forward_dynamics(q[i], qd[i], tau[i], 'cholesky')),
        'eom_I': (robot.equations_of_motion(q, qd)[0],
                  lambda i: robot.equations_of_motion(q[i], qd[i])[0]),
        'eom_b': (robot.equations_of_motion(q, qd)[1],
                  lambda i: robot.equations_of_motion(q[i], qd[i])[1]),
        'udu_U': (robot.udu(q)[0], lambda i: robot.udu(q[i])[0]),
        'udu_d': (robot.udu(q)[1], lambda i: robot.udu(q[i])[1]),
        'inverse': (robot.inverse_inertia_matrix(q),
                    lambda i: robot.inverse_inertia_matrix(q[i])),
        'composite_H': (robot.composite_body(q, qd)[0],
                        lambda i: robot.composite_body(q[i], qd[i])[0]),
        'composite_b': (robot.composite_body(q, qd)[1],
                        lambda i: robot.composite_body(q[i], qd[i])[1]),
    }
    for name, (batched, single) in checks.items():
        looped = np.array([[single((a, b)) for b in range(4)] for a in range(3)])
        assert batched.shape == looped.shape, name
        assert _rel(batched, looped) < IDENTITY, name


def test_origin_form_equals_sahas_mass_centre_form(chain):
    """GIM = N_d^T N_l^T M N_l N_d with B_ij, p_i and M_i at the mass centres (000 eq. 19)."""
    robot = chain
    rng = np.random.default_rng(6)
    q, _, _ = _chain_state(robot, rng)
    kin = robot.kinematics(q)
    n = robot.n
    N_l = np.zeros((6 * n, 6 * n))
    for i in range(n):
        for j in range(i + 1):
            N_l[6 * i:6 * i + 6, 6 * j:6 * j + 6] = kin.B(i, j)
    N_d = np.zeros((6 * n, n))
    M = np.zeros((6 * n, 6 * n))
    for i in range(n):
        N_d[6 * i:6 * i + 6, i] = kin.p_C[i]
        M[6 * i:6 * i + 6, 6 * i:6 * i + 6] = kin.M_C[i]
    N = N_l @ N_d
    assert _rel(robot.inertia_matrix(q), N.T @ M @ N) < IDENTITY


@pytest.mark.parametrize('threads', [1, 2])
def test_batch_blocks_give_the_single_state_results(chain, threads):
    """A batch runs in one block per thread (a prange over the single-state kernel)."""
    robot = chain
    import numba
    rng = np.random.default_rng(12)
    q, qd, qdd = _chain_state(robot, rng, batch=(3, 5))
    f_ext = rng.normal(size=(5, robot.n, 6))        # broadcasts over the first axis
    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        calls = (robot.inverse_dynamics(q, qd, qdd, f_ext=f_ext),
                 robot.forward_dynamics(q, qd, qdd, 'denoc', f_ext=f_ext),
                 robot.forward_dynamics(q, qd, qdd, 'cholesky', f_ext=f_ext))
    finally:
        numba.set_num_threads(previous)
    for a in range(3):
        for b in range(5):
            single = (robot.inverse_dynamics(q[a, b], qd[a, b], qdd[a, b], f_ext=f_ext[b]),
                      robot.forward_dynamics(q[a, b], qd[a, b], qdd[a, b], f_ext=f_ext[b]),
                      robot.forward_dynamics(q[a, b], qd[a, b], qdd[a, b], 'cholesky',
                                             f_ext=f_ext[b]))
            for batched, one in zip(calls, single, strict=True):
                assert np.array_equal(batched[a, b], one)


def test_spatial_helpers_are_the_matrices_of_000():
    """B t, B^T f, B^T X B (X rigid too), t x s, t x* f as 6x6 matrices (000 eqs. 11, 17)."""
    from denoc_dynamics.core import spatial
    rng = np.random.default_rng(13)
    r, w, v = rng.normal(size=(3, 3))
    t, s, f = rng.normal(size=(3, 6))
    X = rng.normal(size=(6, 6))
    X = X + X.T

    def skew(a):
        return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])

    B = np.eye(6)
    B[3:, :3] = -skew(r)
    t_x = np.zeros((6, 6))
    t_x[:3, :3] = t_x[3:, 3:] = skew(t[:3])
    t_x[3:, :3] = skew(t[3:])
    out = np.zeros(6)
    spatial.twist_to_child(r, t, out)
    np.testing.assert_allclose(out, B @ t, rtol=1e-14, atol=1e-14)
    out = f.copy()
    spatial.wrench_to_parent(r, f, out)
    np.testing.assert_allclose(out, f + B.T @ f, rtol=1e-14, atol=1e-14)
    out = f.copy()
    spatial.move_wrench(r, out)
    np.testing.assert_allclose(out, B.T @ f, rtol=1e-14, atol=1e-14)
    bodies_r, bodies_X = np.stack([r, np.zeros(3)]), np.stack([X, np.eye(6)])
    spatial.inertia_to_parent(bodies_r, bodies_X, 0, 1)      # body 0 onto its parent 1
    np.testing.assert_allclose(bodies_X[1], np.eye(6) + B.T @ X @ B, rtol=1e-13, atol=1e-13)
    m, h, A = 2.5, rng.normal(size=3), rng.normal(size=(3, 3))
    rigid = np.block([[A @ A.T + np.eye(3), skew(h)], [-skew(h), m * np.eye(3)]])
    composite = np.block([[2.0 * np.eye(3), skew(-h)], [skew(h), 3.0 * np.eye(3)]])
    bodies_X = np.stack([rigid, composite])       # a rigid body onto a rigid composite
    spatial.rigid_inertia_to_parent(bodies_r, bodies_X, 0, 1)
    np.testing.assert_allclose(bodies_X[1], composite + B.T @ rigid @ B, rtol=1e-13,
                               atol=1e-13)
    bodies_w = np.stack([f, f])
    spatial.pass_to_parent(bodies_r, bodies_w, 0, 1)
    np.testing.assert_allclose(bodies_w[1], f + B.T @ f, rtol=1e-14, atol=1e-14)
    out = np.ones(6)
    spatial.add_motion_cross(t, s, 2.0, out)
    np.testing.assert_allclose(out, 1.0 + 2.0 * t_x @ s, rtol=1e-14, atol=1e-14)
    spatial.force_cross(t, f, out)
    np.testing.assert_allclose(out, -t_x.T @ f, rtol=1e-14, atol=1e-14)
    out = np.zeros(3)
    spatial.cross(w, v, out)
    np.testing.assert_allclose(out, np.cross(w, v), rtol=1e-15)


def test_batch_broadcasts_single_configuration(chain):
    robot = chain
    rng = np.random.default_rng(8)
    q = rng.uniform(-1, 1, robot.n)
    qd = rng.uniform(-1, 1, (5, robot.n))
    tau = robot.bias_forces(q, qd)
    assert tau.shape == (5, robot.n)
    assert _rel(tau[2], robot.bias_forces(q, qd[2])) < SYMMETRY


def test_external_wrench_is_virtual_work(chain):
    """A force f at C_k changes tau by -J_k^T f; a moment n by -J_w,k^T n."""
    robot = chain
    rng = np.random.default_rng(9)
    q, qd, qdd = _chain_state(robot, rng)
    k = robot.n - 1
    wrench = np.zeros((robot.n, 6))
    wrench[k] = rng.normal(size=6)
    delta = robot.inverse_dynamics(q, qd, qdd, f_ext=wrench) - robot.inverse_dynamics(q, qd, qdd)
    # Jacobians by central differences of C_k and of the orientation
    h = 1e-6
    J_v = np.zeros((3, robot.n))
    J_w = np.zeros((3, robot.n))
    R0 = robot.kinematics(q).R[k]
    for j in range(robot.n):
        dq = np.zeros(robot.n)
        dq[j] = h
        kp, km = robot.kinematics(q + dq), robot.kinematics(q - dq)
        J_v[:, j] = (kp.C[k] - km.C[k]) / (2 * h)
        dR = (kp.R[k] - km.R[k]) / (2 * h) @ R0.T
        J_w[:, j] = [dR[2, 1], dR[0, 2], dR[1, 0]]
    expected = -(J_w.T @ wrench[k, :3] + J_v.T @ wrench[k, 3:])
    assert np.abs(delta - expected).max() < 1e-6 * max(1.0, np.abs(expected).max())


def test_energy_balance_of_power(chain):
    """d/dt (T + V) = qd . tau along any motion: a check of ID's velocity terms."""
    robot = chain
    rng = np.random.default_rng(10)
    q, qd, qdd = _chain_state(robot, rng)
    tau = robot.inverse_dynamics(q, qd, qdd)
    h = 1e-5

    def energy(t):
        qt = q + qd * t + 0.5 * qdd * t * t
        vt = qd + qdd * t
        return robot.kinetic_energy(qt, vt) + robot.potential_energy(qt)

    power = (energy(h) - energy(-h)) / (2 * h)
    assert abs(power - qd @ tau) < 1e-6 * max(1.0, abs(qd @ tau))


@pytest.mark.parametrize('seed', range(6))
def test_mimic_sweeps_equal_the_constrained_gim(seed):
    """FD of a tree with mimic joints: O(n) sweeps + mimic solves = G^T M G by Cholesky."""
    rng = np.random.default_rng(100 + seed)
    robot = load_urdf(random_tree_urdf(rng, 9, mimic=0.3))
    assert robot.mimic_joints and robot._mimic is not None   # the O(n) path, not the fallback
    q, qd, tau = (rng.uniform(-2.0, 2.0, (4, robot.n)) for _ in range(3))
    f_ext = rng.normal(size=(4, robot.n_bodies, 6))
    for wrenches in (None, f_ext):
        batched = robot.forward_dynamics(q, qd, tau, f_ext=wrenches)
        reference = robot.forward_dynamics(q, qd, tau, 'cholesky', f_ext=wrenches)
        M = robot.inertia_matrix(q)
        scale = np.linalg.cond(M).max() * np.abs(reference).max()
        assert np.abs(batched - reference).max() <= 1e-13 * max(scale, 1.0)
        for s in range(4):                  # one state: the same kernel, to the bit
            one = robot.forward_dynamics(q[s], qd[s], tau[s],
                                         f_ext=None if wrenches is None else wrenches[s])
            assert np.array_equal(one, batched[s])


def _ancestors(parent):
    A = np.eye(len(parent), dtype=bool)
    for k, p in enumerate(parent):
        if p >= 0:
            A[:, k] |= A[:, p]
    return A


def test_udu_sparsity_on_trees_without_mimic_joints(tree):
    """Remove the mimic tags: U_ik = 0 unless i is an ancestor of k, exactly."""
    robot = load_urdf(re.sub(r'<mimic[^>]*/>', '', tree.xml))
    assert not robot.mimic_joints
    A = _ancestors(robot.chain.parent)
    assert not (A | A.T).all(), 'a branched tree has joints on different branches'
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rng.uniform(-1.5, 1.5, robot.n)
        U, d = robot.udu(q)
        assert np.all(U[~A] == 0.0)
        I = robot.inertia_matrix(q)
        assert np.all(I[~(A | A.T)] == 0.0)
        assert _rel(U @ np.diag(d) @ U.T, I) < IDENTITY
        assert np.abs(robot.inverse_inertia_matrix(q) @ I - np.eye(robot.n)).max() \
            < solve_tolerance(I)


def test_mimic_joints_are_the_constrained_system(tree):
    """M_r = G^T M G and tau = G^T ID(G q + b, ...) of the tree of independent joints."""
    xml, robot = tree.xml, tree.robot
    free = load_urdf(re.sub(r'<mimic[^>]*/>', '', xml), gravity=robot.gravity)
    assert free.joint_names == robot.body_joint_names
    mimics = urdf_mimics(io.StringIO(xml))
    assert set(mimics) == set(robot.mimic_joints)
    column = {name: k for k, name in enumerate(robot.joint_names)}
    G, b = np.zeros((robot.n_bodies, robot.n)), np.zeros(robot.n_bodies)
    for k, name in enumerate(free.joint_names):
        leader, a, offset = mimics.get(name, (name, 1.0, 0.0))
        G[k, column[leader]], b[k] = a, offset
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd, qdd = tree.state(rng)
        M = G.T @ free.inertia_matrix(G @ q + b) @ G
        assert _rel(robot.inertia_matrix(q), M) < IDENTITY
        tau = G.T @ free.inverse_dynamics(G @ q + b, G @ qd, G @ qdd)
        assert _rel(robot.inverse_dynamics(q, qd, qdd), tau) < IDENTITY
        np.testing.assert_allclose(robot.body_positions(q), G @ q + b, rtol=0, atol=1e-15)


def test_massless_mimic_follower_loads():
    """Body finger_b has no mass, but its leader finger_a moves finger_a's: not singular."""
    robot = load_urdf(mimic_gripper_urdf(follower_mass=0.0))
    assert robot.joint_names == ['wrist', 'finger_a_joint']
    assert list(robot.mimic_joints) == ['finger_b_joint']
    rng = np.random.default_rng(9)
    with_mass = load_urdf(mimic_gripper_urdf(follower_mass=1e-300))
    for _ in range(3):
        q, qd, qdd = (rng.uniform(-1.5, 1.5, robot.n) for _ in range(3))
        assert np.all(np.linalg.eigvalsh(robot.inertia_matrix(q)) > 0)
        tau = robot.inverse_dynamics(q, qd, qdd)
        assert _rel(tau, with_mass.inverse_dynamics(q, qd, qdd)) < SYMMETRY
        for method in FD_METHODS:
            assert _rel(robot.forward_dynamics(q, qd, tau, method=method), qdd) \
                < solve_tolerance(robot.inertia_matrix(q))
        U, d = robot.udu(q)
        assert np.all(d > 0)
        assert _rel(U @ np.diag(d) @ U.T, robot.inertia_matrix(q)) < SYMMETRY


def test_massless_leader_and_followers_are_refused_by_the_leader_name():
    with pytest.raises(ValueError, match="joint 'finger_a_joint' moves no mass.*finger_b_joint"):
        load_urdf(mimic_gripper_urdf(leader_mass=0.0, follower_mass=0.0))
    # a massless leader whose follower has mass is fine
    robot = load_urdf(mimic_gripper_urdf(leader_mass=0.0))
    assert np.all(np.linalg.eigvalsh(robot.inertia_matrix(np.zeros(2))) > 0)
