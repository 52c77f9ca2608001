"""
O(N) mass-matrix inversion of a planar point-mass chain by Fixman's theorem.

K. Lee and G. S. Chirikjian, "A New Perspective on O(n) Mass-Matrix Inversion for
Serial Revolute Manipulators", IEEE ICRA 2005 (001 below).  N point masses m_i at the
joint ends x_i (x_0 fixed at the origin), link lengths L_i, joint angles theta_i
(001 Fig. 1, eq. 14).  With the lengths released, q = [theta_1..theta_N, L_1..L_N]
are free coordinates of the points: G = (dx/dq)^T diag(m) (dx/dq) (001 eq. 4) and
H = G^-1 = J diag(1/m) J^T, J = dq/dx (001 eqs. 3, 5).  theta_i depends on three
consecutive points and L_i on two, so the blocks of H are banded (001 eq. 24):
H^aa = H^{theta theta} (bandwidths 2, 2), H^ab = H^{theta L} (2, 1), H^bb = H^{LL}
(1, 1); (G^aa)^-1 = H^aa - H^ab (H^bb)^-1 H^ba (001 eqs. 12, 25) is applied in O(N)
(001 eq. 13).  dtheta_i/dx comes from the absolute angle phi_i of d_i = x_i - x_{i-1}
and theta_i = phi_i - phi_{i-1}; unlike 001 eq. (21) it is regular for aligned links.

The kernels are per-link loops compiled by numba (with ``NUMBA_DISABLE_JIT=1`` the same
lines run in CPython), indices 0-based (point k is x_{k+1} of the paper).  Functions
take one state (arrays of length N; L and m may be scalars); the dynamics functions
also a batch (..., N): a parallel loop over the one-state kernel.
"""

import math
from typing import NamedTuple

import numba
import numpy as np

from .batch import PARALLEL_LOCK

__all__ = [
    'BandedMatrix', 'HBlocks', 'positions', 'link_vectors', 'constraint_jacobian',
    'cartesian_jacobian', 'mass_matrix', 'unconstrained_mass_matrix', 'h_blocks',
    'inverse_mass_matrix', 'apply_inverse_mass_matrix', 'bias_force', 'forward_dynamics',
    'log_det_identity', 'log_det_mass_matrix',
]

_jit = numba.njit(cache=True, nogil=True)
_pjit = numba.njit(cache=True, parallel=True)

# Rows of a state's work array W: H^aa, H^ab, H^bb in banded storage (H_ij in row
# upper + i - j, column j), the diagonal of U_h and the multipliers of L_h
# (H^bb = L_h U_h), the vectors d (then e) and b of 001 eq. 13, the point forces f, 1/m.
AA, AB, BB, UH, LH, E, B, F, W_M = 0, 5, 9, 12, 13, 14, 15, 16, 18
_ROWS = 19


# --------------------------------------------------------------------------- kernels

@_jit
def _jacobian(theta, L, J):
    """
    Rows of J = dq/dx as 2-vectors (001 eqs. 14, 18; eq. 21 in regular form).

    J[i, s] = dtheta_i/dx_{i-s} (s < 3), J[i, 3] = dL_i/dx_i = e_i = (cos, sin) phi_i,
    J[i, 4] = dL_i/dx_{i-1} = -e_i.  With g_i = dphi_i/dx_i = (-e_iy, e_ix) / L_i:
    dtheta_i/dx_i = g_i, dtheta_i/dx_{i-1} = -g_i - g_{i-1}, dtheta_i/dx_{i-2} = g_{i-1}.
    """
    phi, gx, gy = 0.0, 0.0, 0.0
    for i in range(theta.shape[0]):
        phi += theta[i]
        ex, ey = math.cos(phi), math.sin(phi)
        J[i, 2, 0], J[i, 2, 1] = gx, gy
        gx, gy = -ey / L[i], ex / L[i]
        J[i, 0, 0], J[i, 0, 1] = gx, gy
        J[i, 1, 0], J[i, 1, 1] = -gx - J[i, 2, 0], -gy - J[i, 2, 1]
        J[i, 3, 0], J[i, 3, 1], J[i, 4, 0], J[i, 4, 1] = ex, ey, -ex, -ey


@_jit
def _band_gram(J, sa, pa, sb, pb, w, C):
    """
    C_ij = sum_l w_l (da_i/dx_l) . (db_j/dx_l), w_l = 1/m_l, banded (001 eqs. 5, 23).

    da_i/dx_{i-s} = J[i, sa + s] (s < pa) and db_j/dx_{j-t} = J[j, sb + t] (t < pb): the
    sum runs over the points l that rows i and j share, so -(pb - 1) <= i - j <= pa - 1.
    """
    n, upper = J.shape[0], pb - 1
    C[:, :] = 0.0
    for i in range(n):
        for j in range(max(0, i - pa + 1), min(n, i + pb)):
            acc = 0.0
            for l in range(max(0, i - pa + 1, j - pb + 1), min(i, j) + 1):
                acc += w[l] * (J[i, sa + i - l, 0] * J[j, sb + j - l, 0]
                               + J[i, sa + i - l, 1] * J[j, sb + j - l, 1])
            C[upper + i - j, j] = acc


@_jit
def _h_blocks(m, J, W):
    """H^aa, H^ab, H^bb (001 eqs. 23-24) and H^bb = L_h U_h (001 after eq. 13)."""
    for l in range(W.shape[1]):
        W[W_M, l] = 1.0 / m[l]
    _band_gram(J, 0, 3, 0, 3, W[W_M], W[AA:AB])
    _band_gram(J, 0, 3, 3, 2, W[W_M], W[AB:BB])
    _band_gram(J, 3, 2, 3, 2, W[W_M], W[BB:UH])
    W[UH, 0] = W[BB + 1, 0]
    for i in range(1, W.shape[1]):
        W[LH, i] = W[BB + 2, i - 1] / W[UH, i - 1]           # l_i = H_i,i-1 / u_i-1
        W[UH, i] = W[BB + 1, i] - W[LH, i] * W[BB, i]        # u_i = H_ii - l_i H_i-1,i


@_jit
def _band_mv(C, lower, v, alpha, out, transpose):
    """Add alpha C v (alpha C^T v with ``transpose``) to out; C banded, ``lower`` below."""
    upper = C.shape[0] - 1 - lower
    below, above = (upper, lower) if transpose else (lower, upper)
    for i in range(out.shape[0]):
        acc = 0.0
        for j in range(max(0, i - below), min(v.shape[0], i + above + 1)):
            acc += (C[upper + j - i, i] if transpose else C[upper + i - j, j]) * v[j]
        out[i] += alpha * acc


@_jit
def _eq13(W, b, qdd):
    """Set qdd = c - f: c = H^aa b, d = H^ba b, L_h z = d, U_h e = z, f = H^ab e (001 eq. 13)."""
    n = W.shape[1]
    qdd[:] = 0.0
    W[E, :] = 0.0
    _band_mv(W[AA:AB], 2, b, 1.0, qdd, False)
    _band_mv(W[AB:BB], 2, b, 1.0, W[E], True)
    for i in range(1, n):
        W[E, i] -= W[LH, i] * W[E, i - 1]
    W[E, n - 1] /= W[UH, n - 1]
    for i in range(n - 2, -1, -1):
        W[E, i] = (W[E, i] - W[BB, i + 1] * W[E, i + 1]) / W[UH, i]
    _band_mv(W[AB:BB], 2, W[E], -1.0, qdd, False)


@_jit
def _bias(theta, theta_dot, L, m, g, out, J, W):
    """
    C + g (the b of 001 eq. 9 at tau = 0, negated, plus gravity); fills J on the way.

    Forward: phidot_i = phidot_{i-1} + thetadot_i, the point accelerations at
    theta_ddot = 0, a_i = a_{i-1} - phidot_i^2 d_i, and f_i = m_i (a_i - g).  Backward:
    F_i = F_{i+1} + f_i and the moment about x_{i-1}, n_i = n_{i+1} + d_i x F_i.
    """
    _jacobian(theta, L, J)
    phidot, ax, ay = 0.0, 0.0, 0.0
    for i in range(theta.shape[0]):
        phidot += theta_dot[i]
        ax -= phidot * phidot * L[i] * J[i, 3, 0]
        ay -= phidot * phidot * L[i] * J[i, 3, 1]
        W[F, i], W[F + 1, i] = m[i] * (ax - g[0]), m[i] * (ay - g[1])
    Fx, Fy, n_i = 0.0, 0.0, 0.0
    for i in range(theta.shape[0] - 1, -1, -1):
        Fx, Fy = Fx + W[F, i], Fy + W[F + 1, i]
        n_i += L[i] * (J[i, 3, 0] * Fy - J[i, 3, 1] * Fx)
        out[i] = n_i


@_jit
def _apply(theta, v, L, m, out, J, W):
    """(G^aa)^-1 v of one state, column by column of v (N, k) (001 eq. 13)."""
    _jacobian(theta, L, J)
    _h_blocks(m, J, W)
    for c in range(v.shape[1]):
        _eq13(W, v[:, c], out[:, c])


@_jit
def _forward_dynamics(theta, theta_dot, tau, L, m, g, qdd, J, W):
    """theta_ddot = (G^aa)^-1 b, b = tau - C - g (001 eqs. 9, 13), one state."""
    _bias(theta, theta_dot, L, m, g, W[B], J, W)
    for i in range(theta.shape[0]):
        W[B, i] = tau[i] - W[B, i]
    _h_blocks(m, J, W)
    _eq13(W, W[B], qdd)


@_jit
def _mass_matrix(theta, L, m, G, J, W):
    """
    G^aa_jk = sum_{l >= max(j,k)} m_l (x_l - x_{j-1}) . (x_l - x_{k-1}) in O(N^2).

    001 eq. (4) with dx_l/dtheta_j = perp(x_l - x_{j-1}), summed over the composite
    masses l >= k about x_{k-1}: M_k = sum m_l, c_k = sum m_l (x_l - x_{k-1}),
    I_k = sum m_l |x_l - x_{k-1}|^2, and G^aa_jk = I_k + (x_{k-1} - x_{j-1}) . c_k.
    """
    _jacobian(theta, L, J)
    M, cx, cy, I_k = 0.0, 0.0, 0.0, 0.0
    for k in range(theta.shape[0] - 1, -1, -1):
        dx, dy = L[k] * J[k, 3, 0], L[k] * J[k, 3, 1]
        I_k += 2.0 * (dx * cx + dy * cy) + (M + m[k]) * L[k] * L[k]
        M += m[k]
        cx, cy = cx + M * dx, cy + M * dy
        G[k, k], rx, ry = I_k, 0.0, 0.0
        for j in range(k - 1, -1, -1):
            rx, ry = rx + L[j] * J[j, 3, 0], ry + L[j] * J[j, 3, 1]
            G[j, k] = G[k, j] = I_k + rx * cx + ry * cy


@_jit
def _log_dets(theta, L, m, J, W):
    """
    (log det G, log det H^bb) (001 eq. 8) in O(N).

    det G = prod m_i^2 L_i^2 (dx/dq is triangular up to planar rotations, determinant
    prod L_i); det H^bb = det U_h, the product of its diagonal.
    """
    _jacobian(theta, L, J)
    _h_blocks(m, J, W)
    log_det_g, log_det_hbb = 0.0, 0.0
    for i in range(theta.shape[0]):
        log_det_g += 2.0 * math.log(m[i] * L[i])
        log_det_hbb += math.log(W[UH, i])
    return log_det_g, log_det_hbb


@_pjit
def _mass_matrix_batch(theta, L, m, G, J, W):
    for s in numba.prange(theta.shape[0]):
        _mass_matrix(theta[s], L, m, G[s], J[s], W[s])


@_pjit
def _apply_batch(theta, v, L, m, out, J, W):
    for s in numba.prange(theta.shape[0]):
        _apply(theta[s], v[s], L, m, out[s], J[s], W[s])


@_pjit
def _bias_batch(theta, theta_dot, L, m, g, out, J, W):
    for s in numba.prange(theta.shape[0]):
        _bias(theta[s], theta_dot[s], L, m, g, out[s], J[s], W[s])


@_pjit
def _forward_dynamics_batch(theta, theta_dot, tau, L, m, g, qdd, J, W):
    for s in numba.prange(theta.shape[0]):
        _forward_dynamics(theta[s], theta_dot[s], tau[s], L, m, g, qdd[s], J[s], W[s])


# --------------------------------------------------------------------------- Python side

def _chain(theta, L, m=None, batch=False, theta_dot=None):
    """Validate one state (with ``batch`` states (..., N)); copy to C-ordered floats."""
    theta = np.array(theta, dtype=float, order='C')
    if theta.ndim == 0 or theta.shape[-1] == 0 or (theta.ndim > 1 and not batch):
        raise ValueError('theta must be a non-empty 1-D array, got shape %s'
                         % (theta.shape,))
    L, m = (None if a is None else _state(theta.shape[-1:], a) for a in (L, m))
    if not (L > 0.0).all():
        raise ValueError('link lengths L must be positive')
    if m is not None and not (m > 0.0).all():
        raise ValueError('point masses m must be positive')
    if theta_dot is None:
        return (theta, L) if m is None else (theta, L, m)
    if theta.ndim == 1 and np.shape(theta_dot) != theta.shape:
        raise ValueError('theta_dot must have the shape of theta')
    return theta, _state(theta.shape, theta_dot), L, m


def _state(shape, value):
    """Return ``value`` broadcast to ``shape``, a C-ordered writable copy (one signature)."""
    return np.array(np.broadcast_to(np.asarray(value, dtype=float), shape), order='C')


def _work(batch, n):
    """Return the work arrays J (..., N, 5, 2) and W (..., _ROWS, N) of a batch shape."""
    return np.empty(batch + (n, 5, 2)), np.empty(batch + (_ROWS, n))


def _run(kernel, batch_kernel, states, shared, out):
    """Run the one-state kernel, or its parallel loop over the states' leading axes."""
    batch = states[0].shape[:-1]
    work = _work(batch, states[0].shape[-1])
    if not batch:
        kernel(*states, *shared, out, *work)
        return out
    flat = [a.reshape((math.prod(batch),) + a.shape[len(batch):])
            for a in (*states, out, *work)]
    with PARALLEL_LOCK:                 # numba's workqueue layer: one parallel loop at a time
        batch_kernel(*flat[:len(states)], *shared, *flat[len(states):])
    return out


class BandedMatrix(NamedTuple):
    """A matrix in scipy.linalg banded storage, ab[upper + i - j, j] = A[i, j] (shape)."""

    ab: np.ndarray
    lower: int
    upper: int
    shape: tuple

    def diagonal(self, k):
        """Return diagonal k (k > 0 above the main diagonal) as a 1-D array."""
        return self.ab[self.upper - k, self._columns(k)]

    def toarray(self):
        """Return the dense matrix (for tests and small N only)."""
        dense = np.zeros(self.shape)
        for k in range(-self.lower, self.upper + 1):
            j = self._columns(k)
            dense[j - k, j] = self.ab[self.upper - k, j]
        return dense

    def _columns(self, k):
        """Return the columns j of diagonal k: A[j - k, j] lies inside the matrix."""
        return np.arange(max(0, k), min(self.shape[1], self.shape[0] + k))


class HBlocks(NamedTuple):
    """The banded blocks of H = G^-1 (001 eqs. 6-7, 22-24); H^{L theta} = ab^T."""

    aa: BandedMatrix
    ab: BandedMatrix
    bb: BandedMatrix


# --------------------------------------------------------------------------- public API

def positions(theta, L):
    """Return the point-mass positions x_1..x_N, shape (N, 2) (001 eq. 14)."""
    theta, L = _chain(theta, L)
    J = _work((), theta.size)[0]
    _jacobian(theta, L, J)
    return np.cumsum(L[:, None] * J[:, 3], axis=0)


def link_vectors(x):
    """Return d_i = x_i - x_{i-1} (x_0 = 0) for positions x of shape (N, 2)."""
    return np.diff(np.asarray(x, dtype=float), axis=0, prepend=np.zeros((1, 2)))


def constraint_jacobian(x):
    """
    Return J = dq/dx, dense (2N, 2N), at the positions x (N, 2), for tests.

    Rows [theta_1..theta_N, L_1..L_N], columns [x_1, y_1, ..., x_N, y_N]: the inverse
    of dx/dq (001 sec. II), taken at the internal coordinates q(x) of the points.
    """
    d = link_vectors(x)
    n, L = d.shape[0], np.hypot(d[:, 0], d[:, 1])
    if not np.all(L > 0.0):
        raise ValueError('coincident consecutive points: a link has zero length')
    rows = _work((), n)[0]
    _jacobian(np.diff(np.arctan2(d[:, 1], d[:, 0]), prepend=0.0), L, rows)
    J = np.zeros((2 * n, 2 * n))
    for i in range(n):
        for s in range(min(3, i + 1)):                 # dtheta_i/dx_{i-s}
            J[i, 2 * (i - s):2 * (i - s) + 2] = rows[i, s]
        for s in range(min(2, i + 1)):                 # dL_i/dx_{i-s}
            J[n + i, 2 * (i - s):2 * (i - s) + 2] = rows[i, 3 + s]
    return J


def cartesian_jacobian(theta, L, lengths=False):
    """
    Return dx/dtheta, dense (2N, N); with ``lengths`` dx/dq, (2N, 2N).

    d x_i / d theta_j = perp(x_i - x_{j-1}) and d x_i / d L_j = d_j / L_j for j <= i.
    """
    theta, L = _chain(theta, L)
    n, x = theta.size, positions(theta, L)
    r = x[:, None, :] - np.vstack([np.zeros((1, 2)), x[:-1]])[None]    # x_i - x_{j-1}
    below = np.tri(n)[:, None, :]                                       # [i, ., j]: j <= i
    Jx = (np.stack([-r[..., 1], r[..., 0]], axis=1) * below).reshape(2 * n, n)
    if not lengths:
        return Jx
    return np.hstack([Jx, ((link_vectors(x) / L[:, None]).T * below).reshape(2 * n, n)])


def mass_matrix(theta, L, m):
    """Return the arm's mass matrix G^aa (001 eq. 4), dense (N, N), in O(N^2)."""
    theta, L, m = _chain(theta, L, m, batch=True)
    out = np.empty(theta.shape + theta.shape[-1:])
    return _run(_mass_matrix, _mass_matrix_batch, (theta,), (L, m), out)


def unconstrained_mass_matrix(theta, L, m):
    """
    Return G = (dx/dq)^T diag(m) (dx/dq), q = (theta, L), dense (2N, 2N) (001 eq. 4).

    The G of Fixman's theorem (001 eqs. 6, 8): the free point masses in the internal
    coordinates q, not the Cartesian diag(m) (x) 1_2; det G = prod(m_i^2 L_i^2).
    """
    theta, L, m = _chain(theta, L, m)
    Jq = cartesian_jacobian(theta, L, lengths=True)
    return Jq.T @ (np.repeat(m, 2)[:, None] * Jq)


def h_blocks(theta, L, m):
    """
    Return ``HBlocks(aa, ab, bb)`` of H = G^-1 = J diag(1/m) J^T (001 eqs. 5, 7, 23-24).

    H^{theta theta} (bandwidths 2, 2), H^{theta L} (2, 1) and H^{L L} (1, 1, symmetric
    positive definite), built in O(N) from the per-point derivatives of q.
    """
    theta, L, m = _chain(theta, L, m)
    n = theta.size
    J, W = _work((), n)
    _jacobian(theta, L, J)
    _h_blocks(m, J, W)
    return HBlocks(*(BandedMatrix(W[a:b], lower, b - a - 1 - lower, (n, n))
                     for a, b, lower in ((AA, AB, 2), (AB, BB, 2), (BB, UH, 1))))


def inverse_mass_matrix(theta, L, m):
    """
    Return (G^aa)^-1 = H^aa - H^ab (H^bb)^-1 H^ba, dense (N, N) (001 eqs. 12, 25).

    001 eq. (25) prints the last factor as H^{L theta} ... H^{theta L}; the dimensions
    of eq. (12) require H^{theta L} (H^{LL})^-1 H^{L theta}.  Eq. (13) applied to the
    columns of the identity: O(N^2).
    """
    theta, L, m = _chain(theta, L, m, batch=True)
    eye = _state(theta.shape + theta.shape[-1:], np.eye(theta.shape[-1]))
    return _run(_apply, _apply_batch, (theta, eye), (L, m), np.empty(eye.shape))


def apply_inverse_mass_matrix(theta, L, m, v):
    """
    Return (G^aa)^-1 v in O(N) (001 eq. 13); v of shape (N,) or (N, k).

    c = H^aa v, d = H^ba v, e = (H^bb)^-1 d (H^bb = L_h U_h), f = H^ab e, result c - f.
    A batch of states (..., N) takes v of shape (..., N).
    """
    theta, L, m = _chain(theta, L, m, batch=True)
    v = np.asarray(v, dtype=float)
    if theta.ndim > 1:
        v = _state(theta.shape, v)[..., None]
    elif v.ndim not in (1, 2) or v.shape[0] != theta.size:
        raise ValueError('v has %d rows, the chain has %d links'
                         % (v.shape[0] if v.ndim else 0, theta.size))
    v2 = np.array(v.reshape(theta.shape + (-1,)), order='C')
    out = _run(_apply, _apply_batch, (theta, v2), (L, m), np.empty(v2.shape))
    return out.reshape(v.shape) if theta.ndim == 1 else out[..., 0]


def bias_force(theta, theta_dot, L, m, gravity=(0.0, -9.81)):
    """
    Return the generalized bias force C(theta, theta_dot) + g(theta) in O(N).

    The moments J_x^T f of the point forces f_i = m_i (a_i - gravity) at theta_ddot = 0:
    the b of 001 eq. (9) at tau = 0, negated, with the gravity the paper leaves out.
    """
    theta, theta_dot, L, m = _chain(theta, L, m, True, theta_dot)
    return _run(_bias, _bias_batch, (theta, theta_dot), (L, m, _state((2,), gravity)),
                np.empty(theta.shape))


def forward_dynamics(theta, theta_dot, L, m, tau, gravity=(0.0, -9.81)):
    """
    Return theta_ddot = (G^aa)^-1 (tau - C - g) in O(N) (001 eqs. 9, 13).

    ``gravity`` is the planar acceleration of gravity in base coordinates.
    """
    theta, theta_dot, L, m = _chain(theta, L, m, True, theta_dot)
    return _run(_forward_dynamics, _forward_dynamics_batch,
                (theta, theta_dot, _state(theta.shape, tau)), (L, m, _state((2,), gravity)),
                np.empty(theta.shape))


def log_det_identity(theta, L, m):
    """
    Return (log det G, log det H^bb, log det G^aa), each computed separately.

    Fixman's theorem (001 eq. 8): det G * det H^bb = det G^aa, so the first two sum to
    the third.  H^bb by its O(N) factor U_h; G = Jq^T diag(m) Jq and G^aa = Jx^T diag(m)
    Jx (001 eq. 4) densely, as 2 sum log |R_ii| of the QR factors of diag(m)^1/2 J,
    which stay accurate where slogdet of the formed product loses cond(G^aa) eps.
    """
    theta, L, m = _chain(theta, L, m)
    R = [np.diag(np.linalg.qr(np.sqrt(np.repeat(m, 2))[:, None]
                              * cartesian_jacobian(theta, L, lengths), mode='r'))
         for lengths in (True, False)]
    if not all(np.all(r != 0.0) for r in R):
        raise np.linalg.LinAlgError('mass matrix not positive definite')
    ld_g, ld_aa = (2.0 * np.sum(np.log(np.abs(r))) for r in R)
    return ld_g, _log_dets(theta, L, m, *_work((), theta.size))[1], ld_aa


def log_det_mass_matrix(theta, L, m):
    """Return log det G^aa = log det G + log det H^bb in O(N) (001 eq. 8)."""
    theta, L, m = _chain(theta, L, m)
    return sum(_log_dets(theta, L, m, *_work((), theta.size)))
