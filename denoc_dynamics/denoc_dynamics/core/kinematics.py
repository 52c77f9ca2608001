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

import numpy as np

from .spatial import cross, skew


class JointMotionBasis:
    """
    Constants that make each body's local transform cheap to evaluate.

    Joint k moves body k relative to body k-1 by A_k(q_k) = X_tree,k J_k(q_k).
    With Rodrigues' formula J = 1 + sin q K + (1 - cos q) K^2 for a revolute joint
    (K the 4x4 embedding of [a x]) and J = 1 + q E for a prismatic joint (E the
    translation along a), A_k = T0 + sin q T1 + (1 - cos q) T2 + q T3, evaluated for
    all joints in four array operations.
    """

    def __init__(self, chain):
        """Precompute T0..T3 from the chain's joint transforms and axes."""
        n = chain.n
        K = np.zeros((n, 4, 4))
        K[:, :3, :3] = skew(chain.axis)
        E = np.zeros((n, 4, 4))
        E[:, :3, 3] = chain.axis
        revolute = (~chain.prismatic)[:, None, None]
        self.T0 = chain.X_tree.copy()
        self.T1 = np.where(revolute, chain.X_tree @ K, 0.0)
        self.T2 = np.where(revolute, chain.X_tree @ K @ K, 0.0)
        self.T3 = np.where(revolute, 0.0, chain.X_tree @ E)
        self.any_prismatic = bool(chain.prismatic.any())


def body_transforms(basis: JointMotionBasis, q: np.ndarray) -> np.ndarray:
    """
    Return the base-frame poses T_i = A_1 ... A_i of all bodies, shape (..., n, 4, 4).

    The running product is a parallel prefix (Hillis-Steele): ceil(log2 n) batched
    matrix products instead of n sequential ones.
    """
    s, c = np.sin(q)[..., None, None], np.cos(q)[..., None, None]
    T = basis.T0 + s * basis.T1 + (1.0 - c) * basis.T2
    if basis.any_prismatic:
        T = T + q[..., None, None] * basis.T3
    n = q.shape[-1]
    step = 1
    while step < n:
        T[..., step:, :, :] = T[..., :-step, :, :] @ T[..., step:, :, :]
        step *= 2
    return T


class Kinematics:
    """
    The DeNOC quantities of a chain at q (000 eqs. 1-15), batched over q's leading axes.

    Attributes in the base frame: ``R`` (..., n, 3, 3) body orientations, ``O``
    (..., n, 3) joint origins, ``e`` joint axes, ``C`` mass centres, ``d = C - O``,
    ``I`` inertias about C, ``m`` (n,) masses, ``prismatic`` (n,) flags; and, referred
    to the base origin, ``p`` (..., n, 6) and ``M`` (..., n, 6, 6).
    """

    def __init__(self, chain, basis: JointMotionBasis, q: np.ndarray):
        """Evaluate the forward kinematics and the DeNOC quantities at q."""
        T = body_transforms(basis, q)
        self.q = q
        self.prismatic = chain.prismatic
        self.m = chain.mass
        self.R = T[..., :3, :3]
        self.O = T[..., :3, 3]
        self.e = np.einsum('...ij,...j->...i', self.R, chain.axis)
        self.C = self.O + np.einsum('...ij,...j->...i', self.R, chain.com)
        self.d = self.C - self.O
        self.I = self.R @ chain.inertia @ np.swapaxes(self.R, -1, -2)
        # p_i referred to the base origin: [e_i; O_i x e_i] or [0; e_i].
        moment = np.where(self.prismatic[:, None], self.e, cross(self.O, self.e))
        direction = np.where(self.prismatic[:, None], 0.0, self.e)
        self.p = np.concatenate((direction, moment), axis=-1)
        self.M = spatial_inertia(self.m, self.C, self.I)

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
    Return the extended mass of bodies referred to the base origin.

    With mass m, mass centre c and inertia I_c about it, M = B_{C,O}^T diag(I_c, m 1)
    B_{C,O} = [[I_c - m [c x]^2, m [c x]], [-m [c x], m 1]].
    """
    cx = skew(c)
    mcx = m[..., None, None] * cx
    M = np.empty(c.shape[:-1] + (6, 6))
    M[..., :3, :3] = I_c - mcx @ cx
    M[..., :3, 3:] = mcx
    M[..., 3:, :3] = -mcx
    M[..., 3:, 3:] = m[..., None, None] * np.eye(3)
    return M
