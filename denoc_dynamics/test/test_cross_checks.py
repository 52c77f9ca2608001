"""
Every algorithm against an independent one, on random chains and the bundled arm.

GIM = the columns of ID; FD(ID(qdd)) = qdd by both FD methods; U D U^T = GIM; the
analytical inverse times the GIM = 1; the composite-body H and b (003) = the GIM and
ID(q, qd, 0); the origin-referred GIM = Saha's literal N^T M N with mass-centre
twists (000 eqs. 13-19); batched calls = looped single calls.  On trees with mimic
joints, the O(n) FD (the sweeps plus one solve per mimic joint) against the
constrained G^T M G qdd = tau - G^T h by Cholesky.
"""

from denoc_dynamics import load_urdf, Robot
from denoc_dynamics.core.robot import FD_METHODS
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from urdf_factory import random_chain_urdf, random_tree_urdf

CASES = [(seed, n) for seed, n in enumerate((1, 2, 3, 5, 7, 7, 10, 16))]


def _robot(seed, n):
    rng = np.random.default_rng(seed)
    return load_urdf(random_chain_urdf(rng, n), gravity=rng.normal(size=3) * 5)


def _state(robot, rng, batch=()):
    return [rng.uniform(-2.0, 2.0, batch + (robot.n,)) for _ in range(3)]


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1.0)


@pytest.fixture(params=CASES + ['denoc_arm7'], ids=lambda c: str(c))
def robot(request):
    if request.param == 'denoc_arm7':
        return load_urdf(bundled_urdf('denoc_arm7'))
    return _robot(*request.param)


def test_gim_is_columns_of_inverse_dynamics(robot):
    rng = np.random.default_rng(1)
    q, _, _ = _state(robot, rng)
    zero = np.zeros(robot.n)
    robot_no_g = Robot(robot.chain, gravity=(0.0, 0.0, 0.0))
    columns = np.stack([robot_no_g.inverse_dynamics(q, zero, np.eye(robot.n)[k])
                        for k in range(robot.n)], axis=-1)
    assert _rel(robot.inertia_matrix(q), columns) < 1e-12


@pytest.mark.parametrize('method', FD_METHODS)
def test_forward_dynamics_inverts_inverse_dynamics(robot, method):
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, qdd = _state(robot, rng)
        tau = robot.inverse_dynamics(q, qd, qdd)
        assert _rel(robot.forward_dynamics(q, qd, tau, method=method), qdd) < 1e-10


def test_udu_reproduces_gim(robot):
    rng = np.random.default_rng(3)
    q, _, _ = _state(robot, rng)
    U, d = robot.udu(q)
    assert np.allclose(np.tril(U, -1), 0.0) and np.allclose(np.diagonal(U), 1.0)
    assert np.all(d > 0)
    I = robot.inertia_matrix(q)
    assert _rel(U @ np.diag(d) @ U.T, I) < 1e-13


def test_analytical_inverse(robot):
    rng = np.random.default_rng(4)
    q, _, _ = _state(robot, rng)
    I_inv = robot.inverse_inertia_matrix(q)
    I = robot.inertia_matrix(q)
    assert np.abs(I_inv @ I - np.eye(robot.n)).max() < 1e-10
    assert _rel(I_inv, I_inv.T) < 1e-14


def test_composite_body_method_agrees(robot):
    rng = np.random.default_rng(5)
    q, qd, _ = _state(robot, rng)
    H, b = robot.composite_body(q, qd)
    assert _rel(H, robot.inertia_matrix(q)) < 1e-13
    assert _rel(b, robot.bias_forces(q, qd)) < 1e-12


def test_origin_form_equals_sahas_mass_centre_form(robot):
    """GIM = N_d^T N_l^T M N_l N_d with B_ij, p_i and M_i at the mass centres (000 eq. 19)."""
    rng = np.random.default_rng(6)
    q, _, _ = _state(robot, rng)
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
    assert _rel(robot.inertia_matrix(q), N.T @ M @ N) < 1e-13


def test_batched_equals_looped(robot):
    rng = np.random.default_rng(7)
    q, qd, qdd = _state(robot, rng, batch=(3, 4))
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
        assert _rel(batched, looped) < 1e-13, name


@pytest.mark.parametrize('threads', [1, 2])
def test_batch_blocks_give_the_single_state_results(robot, threads):
    """A batch runs in one block per thread (a prange over the single-state kernel)."""
    import numba
    rng = np.random.default_rng(12)
    q, qd, qdd = _state(robot, rng, batch=(3, 5))
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
    """B t, B^T f, B^T X B, t x s and t x* f against the 6x6 matrices (000 eqs. 11, 17)."""
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
    out = np.eye(6)
    spatial.inertia_to_parent(r, X, out)
    np.testing.assert_allclose(out, np.eye(6) + B.T @ X @ B, rtol=1e-13, atol=1e-13)
    out = np.ones(6)
    spatial.add_motion_cross(t, s, 2.0, out)
    np.testing.assert_allclose(out, 1.0 + 2.0 * t_x @ s, rtol=1e-14, atol=1e-14)
    spatial.force_cross(t, f, out)
    np.testing.assert_allclose(out, -t_x.T @ f, rtol=1e-14, atol=1e-14)
    out = np.zeros(3)
    spatial.cross(w, v, out)
    np.testing.assert_allclose(out, np.cross(w, v), rtol=1e-15)


def test_batch_broadcasts_single_configuration(robot):
    rng = np.random.default_rng(8)
    q = rng.uniform(-1, 1, robot.n)
    qd = rng.uniform(-1, 1, (5, robot.n))
    tau = robot.bias_forces(q, qd)
    assert tau.shape == (5, robot.n)
    assert _rel(tau[2], robot.bias_forces(q, qd[2])) < 1e-14


def test_external_wrench_is_virtual_work(robot):
    """A force f at C_k changes tau by -J_k^T f; a moment n by -J_w,k^T n."""
    rng = np.random.default_rng(9)
    q, qd, qdd = _state(robot, rng)
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


def test_energy_balance_of_power(robot):
    """d/dt (T + V) = qd . tau along any motion: a check of ID's velocity terms."""
    rng = np.random.default_rng(10)
    q, qd, qdd = _state(robot, rng)
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
