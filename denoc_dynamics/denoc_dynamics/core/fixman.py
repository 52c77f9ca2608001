"""
O(N) mass-matrix inversion of a planar point-mass chain by Fixman's theorem.

Implements K. Lee and G. S. Chirikjian, "A New Perspective on O(n) Mass-Matrix
Inversion for Serial Revolute Manipulators" (paper 001, IEEE ICRA 2005).

The chain: N point masses m_i at the joint ends x_i (x_0 fixed at the origin),
link lengths L_i and relative joint angles theta_i (001 Fig. 1, eq. 14).  If the
lengths are released as extra coordinates, q = [theta_1..theta_N, L_1..L_N]
describes every point mass freely; the unconstrained mass matrix in q is
G = (dx/dq)^T diag(m) (dx/dq) (001 eq. 4) and its inverse
H = G^-1 = J diag(1/m) J^T, J = dq/dx (001 eqs. 3, 5).  Each theta_i depends on
three consecutive points and each L_i on two, so every block of H is banded
(001 eq. 24).  The arm's mass matrix is the block G^aa = G^{theta theta}; by block
elimination (G^aa)^-1 = H^aa - H^ab (H^bb)^-1 H^ba (001 eqs. 12, 25), and applying
it to a vector takes banded products and one banded SPD solve: O(N).

Ordering of q: the two groups are kept separate, as in the paper, rows of J are
[theta_1..theta_N, L_1..L_N] and its columns are [x_1, y_1, x_2, y_2, ...].
Within each group the natural order keeps the blocks banded: H^aa has lower and
upper bandwidth (2, 2), H^ab (2, 1), H^ba (1, 2) and H^bb (1, 1).

The derivatives of the angles come from phi_i = atan2(d_i,y, d_i,x), the absolute
angle of d_i = x_i - x_{i-1}: dphi_i/dd_i = (-d_i,y, d_i,x) / L_i^2 and
theta_i = phi_i - phi_{i-1}.  Unlike 001 eq. (21), which divides by sin(theta_i),
this is regular when links are aligned (theta_i = 0 or pi).

Indices in code are 0-based: point k of the arrays is x_{k+1} of the paper.
Every function takes one state (1-D arrays of length N); L and m may also be
scalars, broadcast to all links.  The dynamics functions (``mass_matrix``,
``inverse_mass_matrix``, ``apply_inverse_mass_matrix``, ``bias_force``,
``forward_dynamics``) also take a batch of states, shape (..., N), mapped over the
one-state code.
"""

import functools
from typing import NamedTuple

import numpy as np
from scipy.linalg import cholesky_banded, solveh_banded

__all__ = [
    'BandedMatrix', 'HBlocks', 'absolute_angles', 'positions', 'link_vectors',
    'constraint_jacobian', 'cartesian_jacobian', 'mass_matrix',
    'unconstrained_mass_matrix', 'h_blocks', 'inverse_mass_matrix',
    'apply_inverse_mass_matrix', 'bias_force', 'forward_dynamics',
    'log_det_identity', 'log_det_mass_matrix',
]


# --------------------------------------------------------------------------- utilities

def _chain(theta, L, m=None):
    """Validate one chain state, broadcasting scalar L and m to the links."""
    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 1 or theta.size == 0:
        raise ValueError('theta must be a non-empty 1-D array, got shape %s'
                         % (theta.shape,))
    n = theta.size
    L = np.broadcast_to(np.asarray(L, dtype=float), (n,))
    if not np.all(L > 0.0):
        raise ValueError('link lengths L must be positive')
    if m is None:
        return theta, L
    m = np.broadcast_to(np.asarray(m, dtype=float), (n,))
    if not np.all(m > 0.0):
        raise ValueError('point masses m must be positive')
    return theta, L, m


def _perp(v):
    """Rotate planar vectors by +90 degrees: (x, y) -> (-y, x)."""
    return np.stack([-v[..., 1], v[..., 0]], axis=-1)


def _cross(a, b):
    """Planar cross product a_x b_y - a_y b_x (the z component)."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


class BandedMatrix(NamedTuple):
    """
    A matrix in scipy.linalg banded storage: ab[upper + i - j, j] = A[i, j].

    ``lower`` and ``upper`` are the numbers of sub- and super-diagonals, ``shape``
    the (rows, cols) of the full matrix.  Storage is (lower + upper + 1) x cols.
    """

    ab: np.ndarray
    lower: int
    upper: int
    shape: tuple

    def diagonal(self, k):
        """Return diagonal k (k > 0 above the main diagonal) as a 1-D array."""
        rows, cols = self.shape
        i = np.arange(max(0, -k), min(rows, cols - k))
        return self.ab[self.upper - k, i + k]

    def matvec(self, v):
        """Return A v in O((lower + upper + 1) N) operations (v may be 2-D)."""
        v = np.asarray(v, dtype=float)
        rows, cols = self.shape
        out = np.zeros((rows,) + v.shape[1:])
        for k in range(-self.lower, self.upper + 1):
            i = np.arange(max(0, -k), min(rows, cols - k))
            a = self.ab[self.upper - k, i + k]
            out[i] += a.reshape(a.shape + (1,) * (v.ndim - 1)) * v[i + k]
        return out

    def rmatvec(self, v):
        """Return A^T v in O((lower + upper + 1) N) operations (v may be 2-D)."""
        v = np.asarray(v, dtype=float)
        rows, cols = self.shape
        out = np.zeros((cols,) + v.shape[1:])
        for k in range(-self.lower, self.upper + 1):
            i = np.arange(max(0, -k), min(rows, cols - k))
            a = self.ab[self.upper - k, i + k]
            out[i + k] += a.reshape(a.shape + (1,) * (v.ndim - 1)) * v[i]
        return out

    def upper_form(self):
        """Return the upper-triangle storage used by solveh_banded (symmetric A)."""
        return self.ab[:self.upper + 1]

    def toarray(self):
        """Return the dense matrix (for tests and small N only)."""
        rows, cols = self.shape
        dense = np.zeros(self.shape)
        for k in range(-self.lower, self.upper + 1):
            i = np.arange(max(0, -k), min(rows, cols - k))
            dense[i, i + k] = self.ab[self.upper - k, i + k]
        return dense


class HBlocks(NamedTuple):
    """
    The blocks of H = G^-1 (001 eqs. 6-7, 22-24), banded.

    ``aa`` = H^{theta theta}, ``ab`` = H^{theta L}, ``bb`` = H^{L L}; H^{L theta} is
    ab transposed (use ``ab.rmatvec``).
    """

    aa: BandedMatrix
    ab: BandedMatrix
    bb: BandedMatrix


def _batched(*state_args):
    """Map a one-state function over the leading axes of its state arguments."""
    def wrap(f):
        names = f.__code__.co_varnames[:f.__code__.co_argcount]

        @functools.wraps(f)
        def mapped(*args, **kwargs):
            bound = dict(zip(names, args), **kwargs)
            theta = np.asarray(bound['theta'], dtype=float)
            if theta.ndim <= 1:
                return f(**bound)
            batch = theta.shape[:-1]
            for name in state_args:
                bound[name] = np.broadcast_to(np.asarray(bound[name], dtype=float),
                                              theta.shape)
            results = [f(**{k: v[index] if k in state_args else v for k, v in bound.items()})
                       for index in np.ndindex(batch)]
            return np.stack(results).reshape(batch + results[0].shape)
        return mapped
    return wrap


# --------------------------------------------------------------------------- kinematics

def absolute_angles(theta):
    """Return phi_i = theta_1 + ... + theta_i, the angle of link i to the base x axis."""
    return np.cumsum(np.asarray(theta, dtype=float))


def positions(theta, L):
    """
    Return the point-mass positions x_1..x_N, shape (N, 2) (001 eq. 14).

    x_i = x_{i-1} + L_i (cos phi_i, sin phi_i), x_0 = 0, phi_i the absolute angle.
    """
    theta, L = _chain(theta, L)
    phi = np.cumsum(theta)
    d = L[:, None] * np.stack([np.cos(phi), np.sin(phi)], axis=-1)
    return np.cumsum(d, axis=0)


def link_vectors(x):
    """Return d_i = x_i - x_{i-1} (x_0 = 0) for positions x of shape (N, 2)."""
    x = np.asarray(x, dtype=float)
    return np.diff(x, axis=0, prepend=np.zeros((1, 2)))


def _local_jacobian(x):
    """
    Nonzero 1x2 blocks of J = dq/dx, by row.

    Returns (Ja, Jb): Ja[i, s] = d theta_i / d x_{i-s} for s = 0, 1, 2 and
    Jb[i, s] = d L_i / d x_{i-s} for s = 0, 1 (0-based point index; entries that
    would refer to the fixed base point x_0 or before are zero).  Built from
    dphi_i/dd_i = (-d_y, d_x) / L_i^2 and dL_i/dd_i = d_i^T / L_i (001 eq. 18);
    no division by sin(theta_i) (cf. 001 eq. 21).
    """
    d = link_vectors(x)
    n = d.shape[0]
    L2 = np.einsum('ij,ij->i', d, d)
    if not np.all(L2 > 0.0):
        raise ValueError('coincident consecutive points: a link has zero length')
    gphi = _perp(d) / L2[:, None]             # d phi_i / d x_i = -d phi_i / d x_{i-1}
    u = d / np.sqrt(L2)[:, None]              # d L_i / d x_i = -d L_i / d x_{i-1}
    gprev = np.vstack([np.zeros((1, 2)), gphi[:-1]])   # d phi_{i-1} / d x_{i-1}
    Ja = np.zeros((n, 3, 2))
    Ja[:, 0] = gphi
    Ja[:, 1] = -gphi - gprev
    Ja[:, 2] = gprev
    Jb = np.zeros((n, 2, 2))
    Jb[:, 0] = u
    Jb[:, 1] = -u
    for s in range(1, 3):                     # x_0 is fixed: drop its columns
        Ja[:s, s] = 0.0
    Jb[:1, 1] = 0.0
    return Ja, Jb


def constraint_jacobian(x):
    """
    Return J = dq/dx, dense (2N, 2N), for positions x of shape (N, 2).

    Rows: [theta_1..theta_N, L_1..L_N]; columns: [x_1, y_1, ..., x_N, y_N].  The
    inverse of dx/dq (001 sec. II); regular for aligned links.  Dense, for tests.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    Ja, Jb = _local_jacobian(x)
    J = np.zeros((2 * n, 2 * n))
    for i in range(n):
        for s in range(3):
            if i - s >= 0:
                J[i, 2 * (i - s):2 * (i - s) + 2] = Ja[i, s]
        for s in range(2):
            if i - s >= 0:
                J[n + i, 2 * (i - s):2 * (i - s) + 2] = Jb[i, s]
    return J


def cartesian_jacobian(theta, L, lengths=False):
    """
    Return dx/dtheta, dense (2N, N); with ``lengths`` dx/dq, (2N, 2N).

    d x_i / d theta_j = perp(x_i - x_{j-1}) and d x_i / d L_j = d_j / L_j for j <= i.
    """
    theta, L = _chain(theta, L)
    n = theta.size
    x = positions(theta, L)
    xprev = np.vstack([np.zeros((1, 2)), x[:-1]])
    lower = np.tril(np.ones((n, n), dtype=bool))          # [i, j]: j <= i
    Jx = _perp(x[:, None, :] - xprev[None, :, :]) * lower[..., None]   # (i, j, 2)
    Jx = Jx.transpose(0, 2, 1).reshape(2 * n, n)
    if not lengths:
        return Jx
    u = link_vectors(x) / L[:, None]
    JL = (u[None, :, :] * lower[..., None]).transpose(0, 2, 1).reshape(2 * n, n)
    return np.hstack([Jx, JL])


@_batched('theta')
def mass_matrix(theta, L, m):
    """
    Return the arm's mass matrix G^aa = J_x^T diag(m) J_x, dense (N, N).

    The textbook O(N^2) construction with J_x = dx/dtheta (001 eq. 4 restricted
    to the soft variables); the independent reference for the Fixman inverse.
    """
    theta, L, m = _chain(theta, L, m)
    Jx = cartesian_jacobian(theta, L)
    return Jx.T @ (np.repeat(m, 2)[:, None] * Jx)


def unconstrained_mass_matrix(theta, L, m):
    """
    Return G = (dx/dq)^T diag(m) (dx/dq), q = (theta, L), dense (2N, 2N) (001 eq. 4).

    This is the G of Fixman's theorem (001 eqs. 6, 8): the mass matrix of the free
    point masses written in the internal coordinates q, not the Cartesian
    diag(m) (x) 1_2.  The two differ by the Jacobian: det G = prod(m_i^2 L_i^2).
    """
    theta, L, m = _chain(theta, L, m)
    Jq = cartesian_jacobian(theta, L, lengths=True)
    return Jq.T @ (np.repeat(m, 2)[:, None] * Jq)


# --------------------------------------------------------------------------- banded H

def _banded_gram(A, B, w):
    """
    Return C = A diag(w) B^T in banded storage, from per-row Jacobian blocks.

    A[i, s] = d a_i / d x_{i-s} (s < pa), B[j, t] = d b_j / d x_{j-t} (t < pb),
    each a 2-vector, and w the per-point weights.  C_ij = sum_l w_l A_il . B_jl is
    nonzero only for -(pa - 1) <= j - i <= pb - 1 (001 eq. 7).
    """
    n, pa = A.shape[:2]
    pb = B.shape[1]
    lower, upper = pa - 1, pb - 1
    ab = np.zeros((lower + upper + 1, n))
    for k in range(-lower, upper + 1):          # C[i, i + k]
        i = np.arange(max(0, -k), min(n, n - k))
        acc = np.zeros(i.size)
        for s in range(pa):
            t = s + k                           # same point l = i - s = (i + k) - t
            if not 0 <= t < pb:
                continue
            ok = i - s >= 0
            ii = i[ok]
            acc[ok] += w[ii - s] * np.einsum('ij,ij->i', A[ii, s], B[ii + k, t])
        ab[upper - k, i + k] = acc
    return BandedMatrix(ab, lower, upper, (n, n))


def h_blocks(theta, L, m):
    """
    Return the banded blocks of H = G^-1 = J diag(1/m) J^T (001 eqs. 5, 7, 23-24).

    Returns ``HBlocks(aa, ab, bb)``: H^{theta theta} (bandwidths 2, 2),
    H^{theta L} (2, 1) and H^{L L} (1, 1, symmetric positive definite), built in
    O(N) from the per-point derivatives of q.
    """
    theta, L, m = _chain(theta, L, m)
    Ja, Jb = _local_jacobian(positions(theta, L))
    w = 1.0 / m
    return HBlocks(_banded_gram(Ja, Ja, w), _banded_gram(Ja, Jb, w),
                   _banded_gram(Jb, Jb, w))


@_batched('theta')
def inverse_mass_matrix(theta, L, m):
    """
    Return (G^aa)^-1 = H^aa - H^ab (H^bb)^-1 H^ba, dense (N, N) (001 eqs. 12, 25).

    Note 001 eq. (25) prints the last factor as H^{L theta} ... H^{theta L}; the
    dimensions of eq. (12) require H^{theta L} (H^{LL})^-1 H^{L theta}, used here.
    The banded solve costs O(N) per column, O(N^2) for the whole inverse.
    """
    H = h_blocks(theta, L, m)
    Hba = H.ab.toarray().T
    return H.aa.toarray() - H.ab.matvec(_solve_hbb(H.bb, Hba))


def _solve_hbb(Hbb, rhs):
    """Return (H^bb)^-1 rhs by a banded Cholesky solve (LAPACK ptsv/pbsv), O(N)."""
    if Hbb.shape[0] == 1:                     # scipy's tridiagonal path needs N >= 2
        return rhs / Hbb.ab[Hbb.upper, 0]
    return solveh_banded(Hbb.upper_form(), rhs)


@_batched('theta', 'v')
def apply_inverse_mass_matrix(theta, L, m, v):
    """
    Return (G^aa)^-1 v in O(N) (001 eq. 13); v of shape (N,) or (N, k).

    c = H^aa v, d = H^ba v, e = (H^bb)^-1 d (banded Cholesky solve), f = H^ab e,
    result c - f.
    """
    H = h_blocks(theta, L, m)
    v = np.asarray(v, dtype=float)
    if v.shape[0] != H.aa.shape[0]:
        raise ValueError('v has %d rows, the chain has %d links'
                         % (v.shape[0], H.aa.shape[0]))
    c = H.aa.matvec(v)
    d = H.ab.rmatvec(v)
    e = _solve_hbb(H.bb, d)
    return c - H.ab.matvec(e)


# --------------------------------------------------------------------------- dynamics

@_batched('theta', 'theta_dot')
def bias_force(theta, theta_dot, L, m, gravity=(0.0, -9.81)):
    """
    Return the generalized bias force C(theta, theta_dot) + g(theta) in O(N).

    Forward pass: absolute rates phidot_i and the point accelerations with
    theta_ddot = 0, a_i = -sum_{k<=i} phidot_k^2 d_k.  Each point needs the force
    f_i = m_i (a_i - gravity); the torque at joint j is the moment about x_{j-1}
    of the forces on points j..N, n_j = n_{j+1} + d_j x F_j with F_j = sum_{i>=j}
    f_i (backward pass).  This is J_x^T f, the b of 001 eq. (9) with tau = 0
    negated, extended by the gravity term the paper leaves out.
    """
    theta, L, m = _chain(theta, L, m)
    theta_dot = np.asarray(theta_dot, dtype=float)
    if theta_dot.shape != theta.shape:
        raise ValueError('theta_dot must have the shape of theta')
    gravity = np.asarray(gravity, dtype=float).reshape(2)
    x = positions(theta, L)
    d = link_vectors(x)
    phidot = np.cumsum(theta_dot)
    a = -np.cumsum(phidot[:, None] ** 2 * d, axis=0)
    f = m[:, None] * (a - gravity)
    F = np.cumsum(f[::-1], axis=0)[::-1]
    return np.cumsum(_cross(d, F)[::-1])[::-1]


@_batched('theta', 'theta_dot', 'tau')
def forward_dynamics(theta, theta_dot, L, m, tau, gravity=(0.0, -9.81)):
    """
    Return theta_ddot = (G^aa)^-1 (tau - C - g) in O(N) (001 eqs. 9, 13).

    ``gravity`` is the planar acceleration of gravity in base coordinates.
    """
    b = np.asarray(tau, dtype=float) - bias_force(theta, theta_dot, L, m, gravity)
    return apply_inverse_mass_matrix(theta, L, m, b)


# --------------------------------------------------------------------------- determinants

def log_det_identity(theta, L, m):
    """
    Return (log det G, log det H^bb, log det G^aa), each computed separately.

    Fixman's theorem (001 eq. 8) states det G * det H^bb = det G^aa, i.e. the
    first two sum to the third.  G is the unconstrained mass matrix in the
    internal coordinates q = (theta, L) (``unconstrained_mass_matrix``), H^bb the
    length block of its inverse, G^aa the arm's mass matrix.  G and G^aa are
    formed densely (slogdet), H^bb by its banded Cholesky factor.
    """
    theta, L, m = _chain(theta, L, m)
    sg, ld_g = np.linalg.slogdet(unconstrained_mass_matrix(theta, L, m))
    sa, ld_aa = np.linalg.slogdet(mass_matrix(theta, L, m))
    if sg <= 0 or sa <= 0:
        raise np.linalg.LinAlgError('mass matrix not positive definite')
    return ld_g, _log_det_hbb(theta, L, m), ld_aa


def _log_det_hbb(theta, L, m):
    """Return log det H^bb from its banded Cholesky factor, O(N)."""
    U = cholesky_banded(h_blocks(theta, L, m).bb.upper_form())
    return 2.0 * np.sum(np.log(U[-1]))


def log_det_mass_matrix(theta, L, m):
    """
    Return log det G^aa in O(N) by Fixman's theorem (001 eq. 8).

    det G = prod(m_i^2 L_i^2) in closed form (dx/dq is triangular up to planar
    rotations with determinant prod L_i), times det H^bb.
    """
    theta, L, m = _chain(theta, L, m)
    return 2.0 * np.sum(np.log(m)) + 2.0 * np.sum(np.log(L)) + _log_det_hbb(theta, L, m)
