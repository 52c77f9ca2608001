"""
DeNOC kinematic quantities at a configuration q (paper 000, eqs. 1-15).

For each joint/body i, in the base frame at the current q:

* e_i, the unit joint axis, and O_i, the joint origin (the origin of body frame i);
* C_i, the mass centre of body i, and d_i = C_i - O_i (000 eq. 9);
* c_{i,i-1} = C_{i-1} - C_i and the twist-propagation matrix
  B_{i,i-1} = [[1, 0], [c_{i,i-1} x, 1]] (000 eq. 11);
* p_i = [e_i; e_i x d_i] (revolute) or [0; e_i] (prismatic) (000 eq. 12);
* the extended mass M_i = diag(I_i, m_i 1) at the mass centre (000 eq. 15).

Saha refers the twist of body i, t_i = [w_i; v_i], to its own mass centre, so that
t_i = B_{i,i-1} t_{i-1} + p_i qd_i (000 eq. 10).  The choice of a point on each body
is free, and the algorithms here refer body i's quantities to its joint origin O_i
(in base-frame components): then p_i = [e_i; 0] or [0; e_i], M_i is the body's
extended mass about O_i, and B_{i,i-1} = [[1, 0], [-r_i x, 1]] with the short
vector r_i = O_i - O_{i-1} from the joint before, read off the joint's own transform.
Every number is thus of the size of the body and its neighbours, wherever the chain
sits: referring everything to the base origin instead (paper 003; all B_ij = 1)
cancels digits as m |O_i|^2 against m (body size)^2 far from the base.

The recursions stay vectorized over the links: B_{i,i-1} only shifts the point, and
shifts compose by adding the r's, so a forward recursion y_i = B_{i,i-1} y_{i-1} + x_i
(the product of N_l of 000 eq. 13) is two running sums, the angular one and then the
linear one with the w x r_i terms (:func:`.spatial.shifted_cumsum`); the backward
recursion with B^T likewise (:func:`.spatial.shifted_reverse_cumsum`).  Only the
articulated-body sweep and the two solve sweeps of forward dynamics stay sequential,
and they apply B_{i,i-1} (``B_prev``) step by step.  :class:`Kinematics` also keeps
Saha's mass-centre form (``p_C``, ``M_C``, ``B``) for reading against paper 000.

All arrays carry the batch axes of q in front: q of shape (..., n) gives e of shape
(..., n, 3), p of shape (..., n, 6) and M of shape (..., n, 6, 6).
"""

from functools import cached_property

import numpy as np

from .spatial import cross, cumsum, matvec, reverse_cumsum, skew


class JointMotionBasis:
    """
    Constants that make each joint's transform cheap to evaluate.

    Joint k moves body k relative to body k-1 by A_k(q_k) = X_tree,k J_k(q_k), with
    rotation R_tree J_R(q) and origin o_k = o_tree + R_tree a q (prismatic), in the
    coordinates of body k-1.  With Rodrigues' formula J_R = 1 + sin q K + (1 - cos q)
    K^2 (K = [a x]) for a revolute joint, the rotations of all joints are one product
    of the coefficient rows [1, sin q, 1 - cos q] with the stacked terms (``T_stack``,
    (n, 3, 9)).  Every vector that is constant in the frame of body i is then rotated
    to the base frame by one product with R_i: the rows of ``V`` (n, 5, 3) are the
    joint motion [a; 0] or [0; a] (two rows), the origin o_{i+1} of the next joint,
    the first moment of body i plus that of the composite mass m~_{i+1} lumped at
    o_{i+1} (the term of h~'s running sum in :mod:`.gim`, 000 eq. 21), and half the
    lumped mass's moment m~_{i+1} o_{i+1} / 2; ``V_q`` holds their rates with q_{i+1}
    (nonzero for a prismatic joint i+1 only).
    """

    def __init__(self, chain):
        """Precompute the stacked terms, the body-frame vectors and the body inertias."""
        n = chain.n
        K = skew(chain.axis)
        R_tree = chain.X_tree[:, :3, :3]
        revolute = (~chain.prismatic)[:, None, None]
        terms = (R_tree, np.where(revolute, R_tree @ K, 0.0),
                 np.where(revolute, R_tree @ K @ K, 0.0))
        self.T_stack = np.stack([T.reshape(n, 9) for T in terms], axis=1)
        self.any_prismatic = bool(chain.prismatic.any())
        # masses of the composite bodies i..n (000 eq. 21)
        self.m_tilde = reverse_cumsum(chain.mass, axis=-1)
        # o_k at q_k = 0 and its rate with q_k, in the coordinates of body k-1
        o_tree = chain.X_tree[:, :3, 3]
        slide = np.where(chain.prismatic[:, None], matvec(R_tree, chain.axis), 0.0)
        self.o_1, self.slide_1 = o_tree[0], slide[0]

        def rows(a_ang, a_lin, o_next, h):
            m_next = np.append(self.m_tilde[1:], 0.0)[:, None]
            return np.stack((a_ang, a_lin, o_next, h + m_next * o_next,
                             0.5 * m_next * o_next), axis=1)

        def next_joint(x):
            return np.concatenate((x[1:], np.zeros((1, 3))))

        prismatic = chain.prismatic[:, None]
        self.V = rows(np.where(prismatic, 0.0, chain.axis), np.where(prismatic, chain.axis, 0.0),
                      next_joint(o_tree), chain.mass[:, None] * chain.com)
        zero = np.zeros((n, 3))
        self.V_q = rows(zero, zero, next_joint(slide), zero)
        # extended mass of each body about its frame origin, in body coordinates
        self.M_body = spatial_inertia(chain.mass, chain.com, chain.inertia)


def body_rotations(basis: JointMotionBasis, q: np.ndarray) -> np.ndarray:
    """
    Return the body orientations R_i (..., n, 3, 3) in the base frame.

    The running product R_i = R_{i-1} R_tree,i J_R,i is a parallel prefix
    (Hillis-Steele): ceil(log2 n) batched matrix products instead of n sequential ones.
    """
    rows = np.empty(q.shape + (1, 3))                  # [1, sin q, 1 - cos q]
    rows[..., 0, 0] = 1.0
    np.sin(q, out=rows[..., 0, 1])
    np.subtract(1.0, np.cos(q), out=rows[..., 0, 2])
    R = (rows @ basis.T_stack).reshape(q.shape + (3, 3))
    n = q.shape[-1]
    step = 1
    while step < n:       # a new product, then a copy: 2x faster than out= overlapping R
        R[..., step:, :, :] = R[..., :-step, :, :] @ R[..., step:, :, :]
        step *= 2
    return R


class Kinematics:
    """
    The DeNOC quantities of a chain at q (000 eqs. 1-15), batched over q's leading axes.

    Body i referred to its joint origin O_i, in base-frame components (computed at
    once): ``p`` (..., n, 6), ``M`` (..., n, 6, 6), ``r`` (..., n, 3),
    r_i = O_i - O_{i-1} (r_1 = O_1), ``r_x`` = [r_i x] (..., n, 3, 3), ``R``
    (..., n, 3, 3) body orientations, and ``h_step``, ``g_step`` (..., n, 3), the
    composite-body moments' terms of :mod:`.gim`: h_i + m~_{i+1} r_{i+1} (h_i = m_i d_i
    the first moment of body i about O_i) and m~_{i+1} r_{i+1} / 2.  Computed when
    first read: ``e`` (..., n, 3) joint axes; ``B_prev`` B_{i,i-1} (..., n, 6, 6);
    ``O`` (..., n, 3) joint origins, ``C`` mass centres, ``d = C - O``, ``I`` inertias
    about C; ``O_rel`` and ``C_rel``, the points relative to O_1.  Also ``m`` (n,)
    masses, ``m_tilde`` (n,) composite masses and ``prismatic`` (n,) flags.
    """

    def __init__(self, chain, basis: JointMotionBasis, q: np.ndarray):
        """Evaluate the forward kinematics and p_i, M_i about the joint origins at q."""
        self.q = q
        self.chain = chain
        self.prismatic = chain.prismatic
        self.m = chain.mass
        self.m_tilde = basis.m_tilde
        self.R = R = body_rotations(basis, q)
        V = basis.V
        if basis.any_prismatic:
            q_next = np.zeros(q.shape)
            q_next[..., :-1] = q[..., 1:]
            V = V + q_next[..., None, None] * basis.V_q
        U = V @ R.swapaxes(-1, -2)                    # rows: R_i times the rows of V
        self.p = U[..., :2, :].reshape(q.shape + (6,))
        self.h_step, self.g_step = U[..., 3, :], U[..., 4, :]
        self.r = np.empty(q.shape + (3,))
        self.r[..., 1:, :] = U[..., :-1, 2, :]
        self.r[..., 0, :] = basis.o_1
        if basis.any_prismatic:
            self.r[..., 0, :] += q[..., :1] * basis.slide_1
        self.r_x = skew(self.r)
        # M_i about O_i in base components: diag(R, R) M_body diag(R, R)^T
        R6 = np.zeros(q.shape + (6, 6))
        R6[..., :3, :3] = R6[..., 3:, 3:] = R
        self.M = (R6 @ basis.M_body) @ R6.swapaxes(-1, -2)

    #: The attributes of the chain, without the batch axes of q; every other one
    #: (computed at once or cached since) has them in front.
    CHAIN = ('chain', 'prismatic', 'm', 'm_tilde')

    def state(self, k: int) -> 'Kinematics':
        """
        Return the quantities of configuration k of a batch of one axis (views).

        Evaluating several configurations in one batch and then finishing each one
        alone costs fewer numpy calls than evaluating them one by one (the stages
        of a Runge-Kutta step, :mod:`denoc_dynamics.simulation`).
        """
        one = object.__new__(Kinematics)
        one.__dict__.update({name: value if name in self.CHAIN else value[k]
                             for name, value in self.__dict__.items()})
        return one

    @cached_property
    def e(self) -> np.ndarray:
        """Return the unit joint axes e_i (..., n, 3) in the base frame."""
        return matvec(self.R, self.chain.axis)

    @cached_property
    def B_prev(self) -> np.ndarray:
        """Return B_{i,i-1} = [[1, 0], [-r_i x, 1]] (..., n, 6, 6), points O_i (000 eq. 11)."""
        B = np.zeros(self.r.shape[:-1] + (6, 6))
        B[..., :, :] = np.eye(6)
        B[..., 3:, :3] = -self.r_x
        return B

    def at_O1(self, y: np.ndarray):
        """
        Return (y_O1, p_O1): wrenches y_i (..., n, 6) and the p_i moved to O_1.

        A wrench [n; f] at O_i becomes [n + (O_i - O_1) x f; f], a twist [a; l] becomes
        [a; l + (O_i - O_1) x a].  Both moves are one product: with the rows
        [n, f, a, l] of each [y_i; p_i], [(O_i - O_1) x] times [f, a] is added to
        [n, l].  The results are views of one new array; ``y`` is not changed.
        """
        S_x = cumsum(self.r_x[..., 1:, :, :], axis=-3)   # [(O_i - O_1) x], i > 1
        yp = np.concatenate((y, self.p), axis=-1)
        rows = yp[..., 1:, :].reshape(S_x.shape[:-2] + (4, 3))
        rows[..., ::3, :] += matvec(S_x[..., None, :, :], rows[..., 1:3, :])
        return yp[..., :6], yp[..., 6:]

    # --- positions and axes in the base frame ------------------------------------
    @cached_property
    def O_rel(self) -> np.ndarray:
        """Return O_i - O_1 (..., n, 3), summed from the r_i (no large numbers)."""
        r = self.r.copy()
        r[..., 0, :] = 0.0
        return cumsum(r, axis=-2)

    @cached_property
    def O(self) -> np.ndarray:
        """Return the body-frame origins O_i, the joint origins (..., n, 3)."""
        return self.r[..., :1, :] + self.O_rel

    @cached_property
    def C_rel(self) -> np.ndarray:
        """Return C_i - O_1 (..., n, 3)."""
        return self.O_rel + self.d

    @cached_property
    def C(self) -> np.ndarray:
        """Return the mass centres C_i (..., n, 3)."""
        return self.O + self.d

    @cached_property
    def d(self) -> np.ndarray:
        """Return d_i = C_i - O_i (000 eq. 9)."""
        return matvec(self.R, self.chain.com)

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
        out[..., 3:, :3] = skew(self.C_rel[..., j, :] - self.C_rel[..., i, :])
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
