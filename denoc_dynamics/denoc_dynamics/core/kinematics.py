"""
DeNOC kinematic quantities at a configuration q (paper 000, eqs. 1-15).

For each joint/body i, in the base frame at the current q:

* e_i, the unit joint axis, and O_i, the joint origin;
* C_i, the mass centre of body i, and d_i = C_i - O_i (000 eq. 9);
* c_{i,i-1} = C_{i-1} - C_i and the twist-propagation matrix
  B_{i,i-1} = [[1, 0], [c_{i,i-1} x, 1]] (000 eq. 11);
* p_i = [e_i; e_i x d_i] (revolute) or [0; e_i] (prismatic) (000 eq. 12);
* the extended mass M_i = diag(I_i, m_i 1) at the mass centre (000 eq. 15).

Saha refers the twist of body i, t_i = [w_i; v_i], to its own mass centre, so that
t_i = B_{i,i-1} t_{i-1} + p_i qd_i (000 eq. 10).  The choice of point is free: the
same algebra holds with every twist referred to one common point, and paper 003
uses the base origin.  Moving body i's reference point from C_i to the base origin O
maps p_i -> B_{O,i} p_i and M_i -> B_{i,O}^T M_i B_{i,O}, and makes every
B_{i,j} = 1 because the origin is the same point for all bodies.  The recursions of
the algorithm modules then become running sums over the links, which numpy
evaluates at once for all links; only the articulated-body sweep and the two solve
sweeps of forward dynamics stay sequential.  :class:`Kinematics` carries both forms:
the mass-centre form for reading against paper 000 (``p_C``, ``M_C``, ``B``), and the
origin form (``p``, ``M``) that the algorithms use.

All arrays carry the batch axes of q in front: q of shape (..., n) gives e of shape
(..., n, 3), p of shape (..., n, 6) and M of shape (..., n, 6, 6).
"""

from functools import cached_property

import numpy as np

from .spatial import cross, matvec, skew


class JointMotionBasis:
    """
    Constants that make each body's spatial transform cheap to evaluate.

    Joint k moves body k relative to body k-1 by A_k(q_k) = X_tree,k J_k(q_k).  A
    twist in body-k coordinates maps to body k-1 by the 6x6 transform
    Ad(A) = [[R, 0], [o x R, R]].  With Rodrigues' formula J = 1 + sin q K
    + (1 - cos q) K^2 (K = [a x]) for a revolute joint, and J = translation by a q
    for a prismatic one, Ad(A_k) = T0 + sin q T1 + (1 - cos q) T2 + q T3, so all
    joints are evaluated at once as one product of the coefficient rows
    [1, sin q, 1 - cos q, q] with the stacked T0..T3 (``T_stack``, (n, 4, 36)).
    """

    def __init__(self, chain):
        """Precompute T0..T3 (stacked), the joint axes s_k and the body inertias."""
        n = chain.n
        K = skew(chain.axis)
        zero = np.zeros((n, 3, 3))
        X = _adjoint(chain.X_tree[:, :3, :3], chain.X_tree[:, :3, 3])
        KK = _blocks(K, zero, zero, K)
        revolute = (~chain.prismatic)[:, None, None]
        T1 = np.where(revolute, X @ KK, 0.0)
        T2 = np.where(revolute, X @ KK @ KK, 0.0)
        T3 = np.where(revolute, 0.0, X @ _blocks(zero, zero, K, zero))
        self.any_prismatic = bool(chain.prismatic.any())
        terms = (X, T1, T2) + ((T3,) if self.any_prismatic else ())
        self.T_stack = np.stack(terms, axis=1).reshape(n, len(terms), 36)
        # joint motion in body coordinates: [a; 0] (revolute) or [0; a] (prismatic)
        self.s = np.where(chain.prismatic[:, None],
                          np.concatenate((0 * chain.axis, chain.axis), -1),
                          np.concatenate((chain.axis, 0 * chain.axis), -1))
        # extended mass of each body about its frame origin, in body coordinates
        self.M_body = spatial_inertia(chain.mass, chain.com, chain.inertia)
        # Ad^-T = [[R, o x R], [0, R]] is Ad with its angular and linear halves
        # swapped: these index the 36 entries of Ad for Ad^-T and for Ad^-1.
        swap = np.r_[3:6, 0:3]
        entries = np.arange(36).reshape(6, 6)[np.ix_(swap, swap)]
        self.inverse_transpose_entries = entries.ravel()
        self.inverse_entries = entries.T.ravel()


def _blocks(A, B, C, D):
    """Return the stack of 6x6 matrices [[A, B], [C, D]] from 3x3 blocks."""
    return np.concatenate((np.concatenate((A, B), -1), np.concatenate((C, D), -1)), -2)


def _adjoint(R, o):
    """Return Ad = [[R, 0], [o x R, R]], the twist transform of the pose (R, o)."""
    return _blocks(R, np.zeros_like(R), skew(o) @ R, R)


def body_transforms(basis: JointMotionBasis, q: np.ndarray) -> np.ndarray:
    """
    Return Ad(T_i), T_i = A_1 ... A_i, for all bodies: shape (..., n, 6, 6).

    Ad(T_i) maps a twist in body-i coordinates at the body origin to base
    coordinates at the base origin.  The running product is a parallel prefix
    (Hillis-Steele): ceil(log2 n) batched matrix products instead of n sequential
    ones.
    """
    rows = np.empty(q.shape + (1, basis.T_stack.shape[-2]))       # [1, sin q, 1 - cos q, q]
    rows[..., 0, 0] = 1.0
    np.sin(q, out=rows[..., 0, 1])
    np.subtract(1.0, np.cos(q), out=rows[..., 0, 2])
    if basis.any_prismatic:
        rows[..., 0, 3] = q
    T = (rows @ basis.T_stack).reshape(q.shape + (6, 6))
    n = q.shape[-1]
    step = 1
    while step < n:
        T[..., step:, :, :] = T[..., :-step, :, :] @ T[..., step:, :, :]
        step *= 2
    return T


class Kinematics:
    """
    The DeNOC quantities of a chain at q (000 eqs. 1-15), batched over q's leading axes.

    Referred to the base origin (computed at once): ``p`` (..., n, 6) and ``M``
    (..., n, 6, 6).  In the base frame (computed when first read): ``R``
    (..., n, 3, 3) body orientations, ``O`` (..., n, 3) joint origins, ``e`` joint
    axes, ``C`` mass centres, ``d = C - O``, ``I`` inertias about C.  Also ``m`` (n,)
    masses and ``prismatic`` (n,) flags.
    """

    def __init__(self, chain, basis: JointMotionBasis, q: np.ndarray):
        """Evaluate the forward kinematics and the origin-referred p_i and M_i at q."""
        self.q = q
        self.chain = chain
        self.prismatic = chain.prismatic
        self.m = chain.mass
        self.Ad = body_transforms(basis, q)
        self.p = matvec(self.Ad, basis.s)
        # M_i about the origin: Ad^-T M_body Ad^-1, with Ad^-T = [[R, o x R], [0, R]]
        # gathered from Ad's entries (contiguous copies keep the products fast)
        entries = self.Ad.reshape(q.shape + (36,))
        F = np.take(entries, basis.inverse_transpose_entries, axis=-1).reshape(self.Ad.shape)
        F_T = np.take(entries, basis.inverse_entries, axis=-1).reshape(self.Ad.shape)
        self.M = (F @ basis.M_body) @ F_T

    # --- positions and axes in the base frame ------------------------------------
    @cached_property
    def R(self) -> np.ndarray:
        """Return the body orientations R_i (..., n, 3, 3)."""
        return self.Ad[..., :3, :3]

    @cached_property
    def O(self) -> np.ndarray:
        """Return the body-frame origins O_i, the joint origins (..., n, 3)."""
        ox = self.Ad[..., 3:, :3] @ np.swapaxes(self.R, -1, -2)     # [o x] = (o x R) R^T
        return np.stack((ox[..., 2, 1], ox[..., 0, 2], ox[..., 1, 0]), axis=-1)

    @cached_property
    def e(self) -> np.ndarray:
        """Return the unit joint axes e_i (..., n, 3)."""
        return np.einsum('...ij,...j->...i', self.R, self.chain.axis)

    @cached_property
    def C(self) -> np.ndarray:
        """Return the mass centres C_i (..., n, 3)."""
        return self.O + np.einsum('...ij,...j->...i', self.R, self.chain.com)

    @cached_property
    def d(self) -> np.ndarray:
        """Return d_i = C_i - O_i (000 eq. 9)."""
        return self.C - self.O

    @cached_property
    def I(self) -> np.ndarray:
        """Return the inertias about the mass centres in the base frame, R I R^T."""
        return self.R @ self.chain.inertia @ np.swapaxes(self.R, -1, -2)

    # --- Saha's mass-centre form, for reading against paper 000 -----------------
    @property
    def p_C(self) -> np.ndarray:
        """p_i with the twist referred to C_i: [e_i; e_i x d_i] or [0; e_i] (000 eq. 12)."""
        lin = np.where(self.prismatic[:, None], self.e, cross(self.e, self.d))
        ang = np.where(self.prismatic[:, None], 0.0, self.e)
        return np.concatenate((ang, lin), axis=-1)

    @property
    def M_C(self) -> np.ndarray:
        """Return the extended mass M_i = [[I_i, 0], [0, m_i 1]] at C_i (000 eq. 15)."""
        M = np.zeros(self.I.shape[:-2] + (6, 6))
        M[..., :3, :3] = self.I
        M[..., 3:, 3:] = self.m[:, None, None] * np.eye(3)
        return M

    def B(self, i: int, j: int) -> np.ndarray:
        """
        Return the twist-propagation matrix B_ij = [[1, 0], [c_ij x, 1]] (000 eq. 11).

        c_ij = C_j - C_i; t_i = B_ij t_j for rigidly connected points (j <= i).
        """
        out = np.zeros(self.C.shape[:-2] + (6, 6))
        out[...] = np.eye(6)
        out[..., 3:, :3] = skew(self.C[..., j, :] - self.C[..., i, :])
        return out


def spatial_inertia(m: np.ndarray, c: np.ndarray, I_c: np.ndarray) -> np.ndarray:
    """
    Return the extended mass of bodies about a reference point P.

    With mass m, mass centre c (relative to P) and inertia I_c about it,
    M = B_{C,P}^T diag(I_c, m 1) B_{C,P} = [[I_c - m [c x]^2, m [c x]], [-m [c x], m 1]].
    """
    cx = skew(c)
    mcx = m[..., None, None] * cx
    M = np.empty(c.shape[:-1] + (6, 6))
    M[..., :3, :3] = I_c - mcx @ cx
    M[..., :3, 3:] = mcx
    M[..., 3:, :3] = -mcx
    M[..., 3:, 3:] = m[..., None, None] * np.eye(3)
    return M
