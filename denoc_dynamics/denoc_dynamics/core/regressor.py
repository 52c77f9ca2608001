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
import numpy as np

from .inverse_dynamics import twist_and_rate
from .kinematics import kinematics
from .model import data_arrays, DATA_REALS, model_arrays
from .spatial import njit, njit_inline

#: Pinocchio's order of the inertia parameters, as index pairs (k, l) of I_kl.
INERTIA_PAIRS = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))


@njit
def regressor(reals, ints, A, q, qd, qdd, workspace, Y):
    """Write Y (n, 10 n) with tau = Y pi at (q, qd, qdd) (000 eqs. 10, 15, 17, 18)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    joint_torque_regressor(model, data, A, qd, qdd, Y)


@njit_inline
def joint_torque_regressor(model, data, A, qd, qdd, Y):
    """Write Y at the kinematics in ``data``: the forward pass, one backward walk per body."""
    lam, prismatic = model.lam, model.prismatic
    n = qd.shape[0]
    R, r, e, t, td = data.R, data.r, data.e, data.t, data.td
    W = np.empty((10, 6))          # W_j's columns, one per row: [n; f]
    S = np.empty((3, 3))           # S[k] = s_k, the k-th axis of the URDF link frame
    a_c = np.empty(3)
    for j in range(n):
        twist_and_rate(lam, prismatic, model.g, r, data.p, t, td, j, qd, qdd)
    for i in range(n):
        for col in range(Y.shape[1]):
            Y[i, col] = 0.0
    for j in range(n):
        w, v, a_w, a_v = t[j, :3], t[j, 3:], td[j, :3], td[j, 3:]
        for k in range(3):         # s_k = R_j A_j^T's column k = R_j (row k of A_j)
            for row in range(3):
                S[k, row] = R[j, row, 0] * A[j, k, 0] + R[j, row, 1] * A[j, k, 1] \
                    + R[j, row, 2] * A[j, k, 2]
        _cross(w, v, a_c)
        for row in range(3):
            a_c[row] += a_v[row]
        W[0, :3] = 0.0                                            # m
        W[0, 3:] = a_c
        for k in range(3):                                        # h_k
            s = S[k]
            _cross(s, a_c, W[1 + k, :3])
            _cross(a_w, s, W[1 + k, 3:])
            u0, u1, u2 = w[1] * s[2] - w[2] * s[1], w[2] * s[0] - w[0] * s[2], \
                w[0] * s[1] - w[1] * s[0]
            W[1 + k, 3] += w[1] * u2 - w[2] * u1
            W[1 + k, 4] += w[2] * u0 - w[0] * u2
            W[1 + k, 5] += w[0] * u1 - w[1] * u0
        for c in range(6):                                        # I_kl
            k, l = INERTIA_PAIRS[c]
            _inertia_column(S[k], S[l], w, a_w, k == l, W[4 + c])
        i = j                                                     # the walk to the base
        while True:
            m = 3 if prismatic[i] else 0
            for c in range(10):
                Y[i, 10 * j + c] = e[i, 0] * W[c, m] + e[i, 1] * W[c, m + 1] \
                    + e[i, 2] * W[c, m + 2]                       # p_i^T w
            if lam[i] < 0:
                break
            for c in range(4):                                    # n <- n + r_i x f
                f = W[c, 3:]
                W[c, 0] += r[i, 1] * f[2] - r[i, 2] * f[1]
                W[c, 1] += r[i, 2] * f[0] - r[i, 0] * f[2]
                W[c, 2] += r[i, 0] * f[1] - r[i, 1] * f[0]
            i = lam[i]


@njit_inline
def _cross(a, b, out):
    """Write a x b into out."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit_inline
def _inertia_column(s_k, s_l, w, a_w, diagonal, out):
    """
    Write the column of I_kl: the moment I a_w + w x (I w) for I = s_k s_l^T + s_l s_k^T.

    Halved on the diagonal (I_kk's tensor is s_k s_k^T); the force part is zero.
    """
    alpha_k = s_k[0] * a_w[0] + s_k[1] * a_w[1] + s_k[2] * a_w[2]
    alpha_l = s_l[0] * a_w[0] + s_l[1] * a_w[1] + s_l[2] * a_w[2]
    beta_k = s_k[0] * w[0] + s_k[1] * w[1] + s_k[2] * w[2]
    beta_l = s_l[0] * w[0] + s_l[1] * w[1] + s_l[2] * w[2]
    # I w = s_k beta_l + s_l beta_k
    x0 = s_k[0] * beta_l + s_l[0] * beta_k
    x1 = s_k[1] * beta_l + s_l[1] * beta_k
    x2 = s_k[2] * beta_l + s_l[2] * beta_k
    half = 0.5 if diagonal else 1.0
    out[0] = half * (s_k[0] * alpha_l + s_l[0] * alpha_k + w[1] * x2 - w[2] * x1)
    out[1] = half * (s_k[1] * alpha_l + s_l[1] * alpha_k + w[2] * x0 - w[0] * x2)
    out[2] = half * (s_k[2] * alpha_l + s_l[2] * alpha_k + w[0] * x1 - w[1] * x0)
    out[3] = out[4] = out[5] = 0.0


@numba.njit(cache=True, parallel=True, error_model='numpy')
def regressor_batch(reals, ints, A, Q, QD, QDD, OUT, blocks):
    """OUT[s] = Y at state s, in ``blocks`` blocks of states in parallel (:mod:`.batch`)."""
    S, n = Q.shape
    blocks = min(S, blocks)
    for block in numba.prange(blocks):
        data = np.empty(DATA_REALS * n)
        for s in range(block * S // blocks, (block + 1) * S // blocks):
            regressor(reals, ints, A, Q[s], QD[s], QDD[s], data, OUT[s])
