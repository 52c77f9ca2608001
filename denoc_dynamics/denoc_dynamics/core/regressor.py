"""
The joint-torque regressor: tau = Y(q, qd, qdd) pi, linear in the inertial parameters.

The DeNOC equations of motion are tau = N^T w~ (paper 000, eqs. 16-18), and body j's
Newton-Euler wrench about its joint origin O_j,

    w*_j = M_j td_j + t_j x* (M_j t_j)                                  (000 eq. 17)

is linear in the ten numbers of M_j (000 eq. 15 moved to O_j): the mass m, the first
moment h = m c and the inertia I_O about O_j.  So the forward pass of inverse dynamics
(the twists t_j = [w; v] at O_j and their rates td_j = [a_w; a_v], 000 eq. 10 and its
rate, gravity as td_0 = [0; -g]) is run once, and then the backward pass once per
parameter block: the ten columns W_j (6 x 10) of w*_j = W_j pi_j walk to the base as
wrenches (000 eq. 18),

    Y[i, 10 j + c] = p_i^T B_{j,i}^T W_j[:, c]    for i = j and each ancestor of j,

zero elsewhere (branch-induced sparsity).  B^T only moves the moment part
(n <- n + r_i x f), so a column of m or h carries its force up unchanged and a column
of I_O, a pure moment, carries nothing but that moment.

The parameters are those of Pinocchio's ``computeJointTorqueRegressor``, per body
pi_j = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz], with c and I_O
in body j's URDF link frame (its joint's child link), whose axes are the columns
s_1, s_2, s_3 of S_j = R_j A_j^T in base components (:class:`.model.Model` turns each
body frame by A_j so that its z is the joint axis; the parameters are not turned).
Expanding M_j t_j = [I_O w + h x v; m v - h x w] and the force cross product gives
W_j's columns in base components (a_c = a_v + w x v, the acceleration of the point
O_j):

    m:        n = 0,                                   f = a_c
    h_k:      n = s_k x a_c,                           f = a_w x s_k + w x (w x s_k)
    I_kk:     n = s_k (s_k . a_w) + u_k (s_k . w)
    I_kl:     n = s_k (s_l . a_w) + s_l (s_k . a_w) + u_k (s_l . w) + u_l (s_k . w)
              (f = 0 for the inertias; u_k = w x s_k)

(the moment of the first moment uses the Jacobi identity w x (h x v) + v x (w x h) =
h x (w x v)).  One state costs the forward pass plus O(10 n depth) for the walks.
"""

import numba
from numba import types
import numpy as np

from .frames import CHECKED, MATRIX, not_finite, STATES, VECTOR
from .inverse_dynamics import twists_and_rates
from .kinematics import geometry
from .model import data_arrays, DATA_REALS, model_arrays, unowned
from .spatial import njit, njit_inline

#: Pinocchio's order of the inertia parameters, as index pairs (k, l) of I_kl.
INERTIA_PAIRS = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))


@njit
def regressor(reals, ints, A, q, qd, qdd, workspace, Y):
    """Write Y (n, 10 n) with tau = Y pi at (q, qd, qdd) (000 eqs. 10, 15, 17, 18)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    geometry(model, data, q)                 # no M_i: the parameters are its numbers
    joint_torque_regressor(model, data, A, qd, qdd, Y)


@njit_inline
def joint_torque_regressor(model, data, A, qd, qdd, Y):
    """
    Write Y at the kinematics in ``data``: the forward pass, one backward walk per body.

    Written with numbers and indices, no view made in the loops: numba reference-counts
    each array view made in a loop, or given to a helper inlined in it, at every pass.
    """
    lam, prismatic, g = model.lam, model.prismatic, model.g
    n = qd.shape[0]
    R, r, e, p, t, td = data.R, data.r, data.e, data.p, data.t, data.td
    W = np.empty((10, 6))          # W_j's columns, one per row: [n; f]
    S = np.empty((3, 3))           # S[k] = s_k, the k-th axis of the URDF link frame
    twists_and_rates(lam, prismatic, g, r, p, t, td, range(n), qd, qdd)
    for i in range(n):
        for col in range(Y.shape[1]):
            Y[i, col] = 0.0
    for j in range(n):
        w0, w1, w2, v0, v1, v2 = t[j, 0], t[j, 1], t[j, 2], t[j, 3], t[j, 4], t[j, 5]
        b0, b1, b2 = td[j, 0], td[j, 1], td[j, 2]                  # a_w
        for k in range(3):         # s_k = R_j A_j^T's column k = R_j (row k of A_j)
            for row in range(3):
                S[k, row] = R[j, row, 0] * A[j, k, 0] + R[j, row, 1] * A[j, k, 1] \
                    + R[j, row, 2] * A[j, k, 2]
        c0 = (w1 * v2 - w2 * v1) + td[j, 3]                        # a_c = w x v + a_v
        c1 = (w2 * v0 - w0 * v2) + td[j, 4]
        c2 = (w0 * v1 - w1 * v0) + td[j, 5]
        W[0, 0], W[0, 1], W[0, 2], W[0, 3], W[0, 4], W[0, 5] = 0.0, 0.0, 0.0, c0, c1, c2  # m
        for k in range(3):                                        # h_k
            s0, s1, s2 = S[k, 0], S[k, 1], S[k, 2]
            u0, u1, u2 = w1 * s2 - w2 * s1, w2 * s0 - w0 * s2, w0 * s1 - w1 * s0
            W[1 + k, 0] = s1 * c2 - s2 * c1                       # s_k x a_c
            W[1 + k, 1] = s2 * c0 - s0 * c2
            W[1 + k, 2] = s0 * c1 - s1 * c0
            W[1 + k, 3] = (b1 * s2 - b2 * s1) + (w1 * u2 - w2 * u1)  # a_w x s_k + w x u_k
            W[1 + k, 4] = (b2 * s0 - b0 * s2) + (w2 * u0 - w0 * u2)
            W[1 + k, 5] = (b0 * s1 - b1 * s0) + (w0 * u1 - w1 * u0)
        for c in range(6):                                        # I_kl
            k, l = INERTIA_PAIRS[c]
            # the moment I a_w + w x (I w) of I = s_k s_l^T + s_l s_k^T, halved for k = l
            alpha_k = S[k, 0] * b0 + S[k, 1] * b1 + S[k, 2] * b2
            alpha_l = S[l, 0] * b0 + S[l, 1] * b1 + S[l, 2] * b2
            beta_k = S[k, 0] * w0 + S[k, 1] * w1 + S[k, 2] * w2
            beta_l = S[l, 0] * w0 + S[l, 1] * w1 + S[l, 2] * w2
            x0 = S[k, 0] * beta_l + S[l, 0] * beta_k                 # I w
            x1 = S[k, 1] * beta_l + S[l, 1] * beta_k
            x2 = S[k, 2] * beta_l + S[l, 2] * beta_k
            half = 0.5 if k == l else 1.0
            W[4 + c, 0] = half * (S[k, 0] * alpha_l + S[l, 0] * alpha_k + w1 * x2 - w2 * x1)
            W[4 + c, 1] = half * (S[k, 1] * alpha_l + S[l, 1] * alpha_k + w2 * x0 - w0 * x2)
            W[4 + c, 2] = half * (S[k, 2] * alpha_l + S[l, 2] * alpha_k + w0 * x1 - w1 * x0)
            W[4 + c, 3] = W[4 + c, 4] = W[4 + c, 5] = 0.0
        i = j                                                     # the walk to the base
        while True:
            m = 3 if prismatic[i] else 0
            for c in range(10):
                Y[i, 10 * j + c] = e[i, 0] * W[c, m] + e[i, 1] * W[c, m + 1] \
                    + e[i, 2] * W[c, m + 2]                       # p_i^T w
            if lam[i] < 0:
                break
            for c in range(4):                                    # n <- n + r_i x f
                W[c, 0] += r[i, 1] * W[c, 5] - r[i, 2] * W[c, 4]
                W[c, 1] += r[i, 2] * W[c, 3] - r[i, 0] * W[c, 5]
                W[c, 2] += r[i, 0] * W[c, 4] - r[i, 1] * W[c, 3]
            i = lam[i]


@numba.njit([types.int64(VECTOR, types.int64[:, ::1], types.float64[:, :, ::1], state, state,
                         state, VECTOR, MATRIX) for state in STATES], **CHECKED)
def regressor_checked(reals, ints, A, q, qd, qdd, workspace, Y):
    """
    Run :func:`regressor` on one state as the API passes it; 0, or why not.

    As :func:`.frames.frame_placement_checked`: 1 if a state or Y is not of the bodies'
    length, 2 if a state is not finite, 3 if Y is not.
    """
    n = ints.shape[1]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or Y.shape[0] != n or \
            Y.shape[1] != 10 * n:
        return 1
    if not_finite(q) or not_finite(qd) or not_finite(qdd):
        return 2
    reals, ints, A, workspace = unowned((reals, ints, A, workspace))
    regressor(reals, ints, A, q, qd, qdd, workspace, Y)
    return 3 if not_finite(Y) else 0


@numba.njit(cache=True, parallel=True, error_model='numpy')
def regressor_batch(reals, ints, A, Q, QD, QDD, OUT, blocks):
    """OUT[s] = Y at state s, in ``blocks`` blocks of states in parallel (:mod:`.batch`)."""
    S, n = Q.shape
    blocks = min(S, blocks)
    reals, ints, A, Q, QD, QDD, OUT = unowned((reals, ints, A, Q, QD, QDD, OUT))
    for block in numba.prange(blocks):
        data = np.empty(DATA_REALS * n)
        for s in range(block * S // blocks, (block + 1) * S // blocks):
            regressor(reals, ints, A, Q[s], QD[s], QDD[s], data, OUT[s])
