"""Tests of the Fixman-theorem O(N) inversion for the planar point-mass chain (paper 001)."""

import os
from pathlib import Path
import subprocess
import sys
import threading
import tracemalloc

from denoc_dynamics.core import fixman
import numpy as np
import pytest


# --------------------------------------------------------------------------- helpers

def _chain(rng, n, mode='random'):
    """Return a random chain state (theta, L, m); ``mode`` selects aligned links."""
    theta = rng.uniform(-np.pi, np.pi, n)
    if mode == 'straight':          # every link aligned with the previous one
        theta[:] = 0.0
    elif mode == 'folded':          # every other link folded back on its predecessor
        theta[:] = 0.0
        theta[1::2] = np.pi
    elif mode == 'mixed':           # random, with some exactly aligned or folded links
        theta[rng.random(n) < 0.3] = 0.0
        theta[rng.random(n) < 0.2] = np.pi
    L = rng.uniform(0.2, 1.5, n)
    m = rng.uniform(0.3, 3.0, n)
    return theta, L, m


CASES = [(n, mode) for n in (1, 2, 3, 7, 20, 50)
         for mode in ('random', 'straight', 'folded', 'mixed')]


def _ref_positions(theta, L):
    """Point positions by explicit cos/sin sums (works for complex theta)."""
    n = len(theta)
    x = np.zeros((n, 2), dtype=np.result_type(theta, float))
    phi = 0.0
    p = np.zeros(2, dtype=x.dtype)
    for i in range(n):
        phi = phi + theta[i]
        p = p + L[i] * np.array([np.cos(phi), np.sin(phi)])
        x[i] = p
    return x


def _ref_mass_matrix(theta, L, m):
    """M_jk = sum_{i >= max(j, k)} m_i (x_i - x_{j-1}) . (x_i - x_{k-1}); complex-safe."""
    n = len(theta)
    x = _ref_positions(theta, L)
    xp = np.vstack([np.zeros((1, 2), dtype=x.dtype), x[:-1]])
    M = np.zeros((n, n), dtype=x.dtype)
    for j in range(n):
        for k in range(n):
            for i in range(max(j, k), n):
                M[j, k] += m[i] * np.dot(x[i] - xp[j], x[i] - xp[k])
    return M


def _ref_potential(theta, L, m, gravity):
    """V = -sum m_i gravity . x_i."""
    x = _ref_positions(theta, L)
    return -np.sum(m * (x @ np.asarray(gravity)))


def _ref_bias(theta, theta_dot, L, m, gravity, h=1e-30):
    """Dense Lagrangian bias c + g: Christoffel symbols and dV/dtheta by complex step."""
    n = len(theta)
    dM = np.zeros((n, n, n))                   # dM[k] = dM / dtheta_k
    dV = np.zeros(n)
    for k in range(n):
        tk = theta.astype(complex)
        tk[k] += 1j * h
        dM[k] = _ref_mass_matrix(tk, L, m).imag / h
        dV[k] = _ref_potential(tk, L, m, gravity).imag / h
    # c_i = sum_jk (dM_ij/dq_k - 1/2 dM_jk/dq_i) qd_j qd_k
    c = (np.einsum('kij,j,k->i', dM, theta_dot, theta_dot)
         - 0.5 * np.einsum('ijk,j,k->i', dM, theta_dot, theta_dot))
    return c + dV


def _rel(a, b):
    """Max abs difference relative to the max abs of the reference b."""
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


# --------------------------------------------------------------------------- kinematics

@pytest.mark.parametrize('n,mode', CASES)
def test_constraint_jacobian_inverts_dx_dq(n, mode):
    """J = dq/dx from the atan2 derivatives is the inverse of dx/dq, aligned links too."""
    rng = np.random.default_rng(100 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    x = fixman.positions(theta, L)
    assert np.allclose(x, _ref_positions(theta, L), atol=1e-13)
    J = fixman.constraint_jacobian(x)
    assert np.all(np.isfinite(J))
    Jq = fixman.cartesian_jacobian(theta, L, lengths=True)
    assert np.max(np.abs(J @ Jq - np.eye(2 * n))) < 1e-12
    assert np.max(np.abs(Jq @ J - np.eye(2 * n))) < 1e-12


def test_mass_matrix_two_link_closed_form():
    """Dense G^aa against the textbook 2-link point-mass formula."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        (t1, t2), (l1, l2), (m1, m2) = rng.uniform(-3, 3, 2), rng.uniform(.2, 2, 2), \
            rng.uniform(.1, 3, 2)
        c2 = np.cos(t2)
        ref = np.array([
            [m1 * l1**2 + m2 * (l1**2 + l2**2 + 2 * l1 * l2 * c2), m2 * (l2**2 + l1 * l2 * c2)],
            [m2 * (l2**2 + l1 * l2 * c2), m2 * l2**2]])
        M = fixman.mass_matrix([t1, t2], [l1, l2], [m1, m2])
        assert _rel(M, ref) < 1e-14


@pytest.mark.parametrize('n,mode', [c for c in CASES if c[0] <= 20])
def test_mass_matrix_matches_independent_formula(n, mode):
    """J_x^T diag(m) J_x equals the sum-over-points formula."""
    rng = np.random.default_rng(200 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    assert _rel(fixman.mass_matrix(theta, L, m), _ref_mass_matrix(theta, L, m)) < 1e-13


# --------------------------------------------------------------------------- H and inverse

@pytest.mark.parametrize('n,mode', CASES)
def test_h_blocks_equal_inverse_of_unconstrained_g(n, mode):
    """The banded blocks equal the blocks of J diag(1/m) J^T and of G^-1 (001 eqs. 3, 5)."""
    rng = np.random.default_rng(300 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    H = fixman.h_blocks(theta, L, m)
    J = fixman.constraint_jacobian(fixman.positions(theta, L))
    Hd = J @ np.diag(np.repeat(1.0 / m, 2)) @ J.T
    scale = np.max(np.abs(Hd))        # H^ab of one link is zero: compare on H's scale
    assert np.max(np.abs(H.aa.toarray() - Hd[:n, :n])) < 1e-13 * scale
    assert np.max(np.abs(H.ab.toarray() - Hd[:n, n:])) < 1e-13 * scale
    assert np.max(np.abs(H.bb.toarray() - Hd[n:, n:])) < 1e-13 * scale
    G = fixman.unconstrained_mass_matrix(theta, L, m)
    assert np.max(np.abs(G @ Hd - np.eye(2 * n))) < 1e-9
    assert _rel(G[:n, :n], fixman.mass_matrix(theta, L, m)) < 1e-14


@pytest.mark.parametrize('n,mode', CASES)
def test_inverse_mass_matrix_matches_dense_inverse(n, mode):
    """(i) H^aa - H^ab (H^bb)^-1 H^ba == inv(G^aa), aligned and folded links included."""
    rng = np.random.default_rng(400 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    M = fixman.mass_matrix(theta, L, m)
    Minv = fixman.inverse_mass_matrix(theta, L, m)
    cond = np.linalg.cond(M)
    assert np.all(np.isfinite(Minv))
    assert _rel(Minv, np.linalg.inv(M)) < 1e-14 * cond + 1e-14
    assert np.max(np.abs(M @ Minv - np.eye(n))) < 1e-14 * cond + 1e-13
    assert np.allclose(Minv, Minv.T, rtol=0, atol=1e-12 * np.max(np.abs(Minv)))


@pytest.mark.parametrize('n,mode', CASES)
def test_apply_inverse_matches_dense_solve(n, mode):
    """(ii) The O(N) product (G^aa)^-1 v equals a dense solve, for 1-D and 2-D v."""
    rng = np.random.default_rng(500 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    M = fixman.mass_matrix(theta, L, m)
    cond = np.linalg.cond(M)
    v = rng.normal(size=n)
    y = fixman.apply_inverse_mass_matrix(theta, L, m, v)
    ref = np.linalg.solve(M, v)
    assert y.shape == (n,)
    assert _rel(y, ref) < 1e-14 * cond + 1e-14
    V = rng.normal(size=(n, 3))
    Y = fixman.apply_inverse_mass_matrix(theta, L, m, V)
    assert _rel(Y, np.linalg.solve(M, V)) < 1e-14 * cond + 1e-14


def test_scalar_length_and_mass_broadcast():
    """Scalar L and m mean equal links; bad input is rejected."""
    theta = np.array([0.3, 0.0, np.pi, -1.0])
    a = fixman.inverse_mass_matrix(theta, 0.5, 2.0)
    b = fixman.inverse_mass_matrix(theta, np.full(4, 0.5), np.full(4, 2.0))
    assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        fixman.mass_matrix(theta, [0.5, 0.5, 0.0, 0.5], 1.0)
    with pytest.raises(ValueError):
        fixman.apply_inverse_mass_matrix(theta, 0.5, -1.0, np.ones(4))
    with pytest.raises(ValueError):
        fixman.apply_inverse_mass_matrix(theta, 0.5, 1.0, np.ones(3))


# --------------------------------------------------------------------------- dynamics

@pytest.mark.parametrize('n,mode', [c for c in CASES if c[0] <= 20])
def test_forward_dynamics_matches_dense_lagrangian(n, mode):
    """(iii) O(N) forward dynamics vs M qdd + c + g = tau with c, g by complex step."""
    rng = np.random.default_rng(600 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    theta_dot = rng.normal(scale=1.5, size=n)
    tau = rng.normal(scale=5.0, size=n)
    gravity = rng.normal(size=2) * 9.81 / np.sqrt(2)
    bias_ref = _ref_bias(theta, theta_dot, L, m, gravity)
    bias = fixman.bias_force(theta, theta_dot, L, m, gravity)
    assert _rel(bias, bias_ref) < 1e-12
    M = _ref_mass_matrix(theta, L, m)
    qdd_ref = np.linalg.solve(M, tau - bias_ref)
    qdd = fixman.forward_dynamics(theta, theta_dot, L, m, tau, gravity)
    assert _rel(qdd, qdd_ref) < 1e-14 * np.linalg.cond(M) + 1e-12
    # and inverse dynamics closes the loop: M qdd + bias = tau
    assert _rel(M @ qdd + bias, tau) < 1e-12 * np.linalg.cond(M)


def test_bias_force_parts():
    """
    Check the bias force's parts.

    At rest it is the gravity torque; without gravity it is quadratic in qd and
    obeys the power balance.
    """
    rng = np.random.default_rng(11)
    theta, L, m = _chain(rng, 6, 'mixed')
    qd = rng.normal(size=6)
    g0 = fixman.bias_force(theta, np.zeros(6), L, m, (0.0, -9.81))
    # gravity torque: -sum of moments of m_i g about joint j
    x = fixman.positions(theta, L)
    xp = np.vstack([np.zeros((1, 2)), x[:-1]])
    ref = np.array([-sum(m[i] * (-9.81) * (x[i, 0] - xp[j, 0]) for i in range(j, 6))
                    for j in range(6)])
    assert _rel(g0, ref) < 1e-13
    c1 = fixman.bias_force(theta, qd, L, m, (0.0, 0.0))
    c2 = fixman.bias_force(theta, 2 * qd, L, m, (0.0, 0.0))
    assert _rel(c2, 4 * c1) < 1e-13
    # power balance: qd^T c = 1/2 qd^T (dM/dt) qd, dM/dt by central differences
    h = 1e-6
    Mdot = (fixman.mass_matrix(theta + h * qd, L, m)
            - fixman.mass_matrix(theta - h * qd, L, m)) / (2 * h)
    assert abs(qd @ c1 - 0.5 * qd @ Mdot @ qd) < 1e-7 * max(1.0, abs(qd @ c1))


# --------------------------------------------------------------------------- determinants

@pytest.mark.parametrize('n,mode', CASES)
def test_fixman_determinant_identity(n, mode):
    """(iv) det G * det H^bb = det G^aa (001 eq. 8), in logs."""
    rng = np.random.default_rng(700 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    ld_g, ld_hbb, ld_aa = fixman.log_det_identity(theta, L, m)
    assert abs(ld_g + ld_hbb - ld_aa) < 1e-10 * max(1.0, abs(ld_aa))
    # det G of the internal-coordinate metric in closed form: prod m_i^2 L_i^2
    assert abs(ld_g - 2 * np.sum(np.log(m * L))) < 1e-10 * max(1.0, abs(ld_g))
    assert abs(fixman.log_det_mass_matrix(theta, L, m) - ld_aa) < 1e-10 * max(1.0, abs(ld_aa))


# --------------------------------------------------------------------------- O(N)

def test_bandwidth_independent_of_n():
    """(v) Every H block has the same band for all N, and nothing lies outside it."""
    rng = np.random.default_rng(13)
    bands = set()
    for n in (3, 10, 40, 120):
        theta, L, m = _chain(rng, n, 'mixed')
        H = fixman.h_blocks(theta, L, m)
        bands.add(tuple((b.lower, b.upper) for b in H))
        for b in H:
            assert b.ab.shape == (b.lower + b.upper + 1, n)
        J = fixman.constraint_jacobian(fixman.positions(theta, L))
        Hd = J @ np.diag(np.repeat(1.0 / m, 2)) @ J.T
        i, j = np.indices((n, n))
        for block, dense in ((H.aa, Hd[:n, :n]), (H.ab, Hd[:n, n:]), (H.bb, Hd[n:, n:])):
            outside = (j - i > block.upper) | (i - j > block.lower)
            assert np.all(dense[outside] == 0.0)
            # the band is actually used: its outermost diagonals are not all zero
            assert np.any(block.diagonal(block.upper) != 0.0)
            assert np.any(block.diagonal(-block.lower) != 0.0)
    assert bands == {((2, 2), (2, 1), (1, 1))}


def test_forward_dynamics_memory_is_linear():
    """(v) Peak memory of the O(N) path grows linearly, far below one N x N array."""
    def peak(n):
        rng = np.random.default_rng(n)
        theta, L, m = _chain(rng, n, 'mixed')
        qd, tau = rng.normal(size=n), rng.normal(size=n)
        tracemalloc.start()
        try:
            fixman.forward_dynamics(theta, qd, L, m, tau)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    p1, p2 = peak(4000), peak(16000)
    assert p2 < 8 * 16000 ** 2 / 20          # a dense N x N float array is 8 N^2 bytes
    assert p2 < 6.0 * p1                       # 4x for linear, 16x for quadratic


# --------------------------------------------------------------------------- vs DeNOC core

def _point_chain_urdf(L, m):
    """URDF of the chain as links: revolute z joints, mass m_i at x = L_i, no rotary inertia."""
    parts = ['<?xml version="1.0"?>', '<robot name="point_chain">', '<link name="base_link"/>']
    parent, offset = 'base_link', 0.0
    for i, (li, mi) in enumerate(zip(map(float, L), map(float, m)), start=1):
        parts += [
            f'<joint name="joint{i}" type="revolute">',
            f'  <parent link="{parent}"/><child link="link{i}"/>',
            f'  <origin xyz="{offset!r} 0 0" rpy="0 0 0"/><axis xyz="0 0 1"/>',
            '  <limit lower="-4" upper="4" effort="1000" velocity="100"/>',
            '</joint>',
            f'<link name="link{i}"><inertial>',
            f'  <origin xyz="{li!r} 0 0" rpy="0 0 0"/><mass value="{mi!r}"/>',
            '  <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>',
            '</inertial></link>']
        parent, offset = f'link{i}', float(li)
    parts.append('</robot>')
    return '\n'.join(parts)


@pytest.mark.parametrize('n,mode', [(1, 'random'), (3, 'mixed'), (6, 'straight'),
                                    (6, 'folded'), (12, 'random')])
def test_against_denoc_core(n, mode):
    """(vi) Same chain built as links: DeNOC GIM and forward dynamics agree."""
    from denoc_dynamics import load_urdf
    rng = np.random.default_rng(800 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    robot = load_urdf(_point_chain_urdf(L, m), gravity=(0.0, -9.81, 0.0))
    M = fixman.mass_matrix(theta, L, m)
    assert _rel(np.asarray(robot.inertia_matrix(theta)), M) < 1e-12
    qd = rng.normal(size=n)
    tau = rng.normal(scale=5.0, size=n)
    qdd_core = np.asarray(robot.forward_dynamics(theta, qd, tau))
    qdd = fixman.forward_dynamics(theta, qd, L, m, tau, gravity=(0.0, -9.81))
    assert _rel(qdd, qdd_core) < 1e-13 * np.linalg.cond(M) + 1e-11


@pytest.mark.parametrize('n,mode', [(1, 'random'), (3, 'mixed'), (6, 'folded'),
                                    (12, 'random')])
def test_against_pinocchio(n, mode):
    """The same URDF chain through Pinocchio (CRBA and ABA), when it is installed."""
    pin = pytest.importorskip('pinocchio')
    rng = np.random.default_rng(900 * n + len(mode))
    theta, L, m = _chain(rng, n, mode)
    model = pin.buildModelFromXML(_point_chain_urdf(L, m))
    model.gravity.linear = np.array([0.0, -9.81, 0.0])
    data = model.createData()
    M = fixman.mass_matrix(theta, L, m)
    Mp = pin.crba(model, data, theta)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    assert _rel(M, Mp) < 1e-12
    qd = rng.normal(size=n)
    tau = rng.normal(scale=5.0, size=n)
    qdd = fixman.forward_dynamics(theta, qd, L, m, tau, gravity=(0.0, -9.81))
    assert _rel(qdd, pin.aba(model, data, theta, qd, tau)) < 1e-13 * np.linalg.cond(M) + 1e-11


def test_batched_states_equal_looped_states():
    """The dynamics functions map a batch (..., N) over the one-state code."""
    rng = np.random.default_rng(42)
    N = 6
    L = rng.uniform(0.2, 1.0, N)
    m = rng.uniform(0.5, 2.0, N)
    theta = rng.uniform(-np.pi, np.pi, (2, 3, N))
    theta[0, 0] = 0.0                     # aligned links inside a batch too
    theta_dot = rng.normal(size=(2, 3, N))
    tau = rng.normal(size=(2, 3, N))
    qdd = fixman.forward_dynamics(theta, theta_dot, L, m, tau)
    G_inv = fixman.inverse_mass_matrix(theta, L, m)
    assert qdd.shape == (2, 3, N) and G_inv.shape == (2, 3, N, N)
    for index in np.ndindex(2, 3):
        np.testing.assert_array_equal(
            qdd[index], fixman.forward_dynamics(theta[index], theta_dot[index], L, m,
                                                tau[index]))
        np.testing.assert_array_equal(G_inv[index],
                                      fixman.inverse_mass_matrix(theta[index], L, m))


# --------------------------------------------------------------------------- numba

def _jit_subset():
    """Return results of the fixman API on a few chains, single states and batches."""
    out = {'compiled': np.array(hasattr(fixman._forward_dynamics, 'py_func'))}
    for n, mode in ((1, 'random'), (3, 'mixed'), (7, 'folded'), (20, 'random')):
        rng = np.random.default_rng(1000 + n)
        theta, L, m = _chain(rng, n, mode)
        qd, tau, V = rng.normal(size=n), rng.normal(size=n), rng.normal(size=(n, 3))
        key = f'{n}-{mode}-'
        for name, block in zip(('aa', 'ab', 'bb'), fixman.h_blocks(theta, L, m)):
            out[key + 'H' + name] = block.ab
        out[key + 'x'] = fixman.positions(theta, L)
        out[key + 'M'] = fixman.mass_matrix(theta, L, m)
        out[key + 'Minv'] = fixman.inverse_mass_matrix(theta, L, m)
        out[key + 'MinvV'] = fixman.apply_inverse_mass_matrix(theta, L, m, V)
        out[key + 'bias'] = fixman.bias_force(theta, qd, L, m, (1.0, -9.0))
        out[key + 'qdd'] = fixman.forward_dynamics(theta, qd, L, m, tau, (1.0, -9.0))
        out[key + 'logdet'] = np.array(fixman.log_det_mass_matrix(theta, L, m))
    rng = np.random.default_rng(2000)
    theta, L, m = _chain(rng, 6, 'mixed')
    theta = theta + rng.normal(size=(2, 3, 6))
    theta[0, 0] = 0.0                     # aligned links in a batch
    qd, tau = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 3, 6))
    out['batch-qdd'] = fixman.forward_dynamics(theta, qd, L, m, tau)
    out['batch-bias'] = fixman.bias_force(theta, qd, L, m)
    out['batch-M'] = fixman.mass_matrix(theta, L, m)
    out['batch-Minv'] = fixman.inverse_mass_matrix(theta, L, m)
    out['batch-MinvV'] = fixman.apply_inverse_mass_matrix(theta, L, m, tau)
    return out


def _save_jit_subset(path):
    """Write ``_jit_subset()`` to an .npz file (run in a subprocess)."""
    np.savez(path, **_jit_subset())


def test_same_results_without_jit(tmp_path):
    """With NUMBA_DISABLE_JIT=1 the same lines run in CPython and agree to round-off."""
    if os.environ.get('NUMBA_DISABLE_JIT', '0') not in ('', '0'):
        pytest.skip('this process runs without the JIT already')
    path = tmp_path / 'nojit.npz'
    code = ('import sys; sys.path.insert(0, sys.argv[1]); import test_fixman; '
            'test_fixman._save_jit_subset(sys.argv[2])')
    subprocess.run([sys.executable, '-c', code, str(Path(__file__).parent), str(path)],
                   env=dict(os.environ, NUMBA_DISABLE_JIT='1'), check=True, timeout=600,
                   cwd=tmp_path)     # not the package directory: the installed package
    compiled = _jit_subset()
    with np.load(path) as interpreted:
        assert sorted(interpreted.files) == sorted(compiled)
        assert compiled.pop('compiled') and not interpreted['compiled']
        for key, value in compiled.items():
            assert interpreted[key].shape == value.shape, key
            scale = max(1.0, np.max(np.abs(value)))
            assert np.max(np.abs(interpreted[key] - value)) <= 1e-13 * scale, key


def test_threads_call_single_states_and_batches_at_once():
    """Two threads on batches and two on single states at once get the serial results."""
    rng = np.random.default_rng(3)
    theta, L, m = _chain(rng, 8, 'mixed')
    theta = theta + rng.normal(size=(64, 8))
    qd, tau = rng.normal(size=(64, 8)), rng.normal(size=(64, 8))
    batch = fixman.forward_dynamics(theta, qd, L, m, tau)
    single = np.array([fixman.forward_dynamics(theta[i], qd[i], L, m, tau[i])
                       for i in range(64)])
    np.testing.assert_array_equal(batch, single)
    mismatches = []

    def work(one_by_one):
        for _ in range(30):
            result = (np.array([fixman.forward_dynamics(theta[i], qd[i], L, m, tau[i])
                                for i in range(64)]) if one_by_one
                      else fixman.forward_dynamics(theta, qd, L, m, tau))
            mismatches.append(not np.array_equal(result, batch))

    threads = [threading.Thread(target=work, args=(k % 2 == 0,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    assert len(mismatches) == 4 * 30 and not any(mismatches)
