"""
The task-space inertia Lambda = (J I^-1 J^T)^-1 from Saha's I = U D U^T, in O(n k).

J (k x n) is k rows of a frame's ``'local_world_aligned'`` Jacobian
(:mod:`.frame_jacobian`), I the GIM.  The derivation, equation by equation:

1. I = U D U^T (000 eqs. 32-35; 002 eq. 11): D = diag(m^_1 .. m^_n) and psi_k from
   the articulated-body sweep (:func:`.udu.articulated_bodies`, O(n)).  Hence
   I^-1 = U^-T D^-1 U^-1 (000 eq. 36) and

       Lambda^-1 = J I^-1 J^T = (U^-1 J^T)^T D^-1 (U^-1 J^T) = X^T D^-1 X,
       X = U^-1 J^T  (n x k).                                                    (1)

2. Column j of J^T is the generalized force of a unit wrench f_j at the frame's
   origin o_f (force e_j for a linear row, moment e_j for an angular one): by the
   DeNOC, J^T f = N^T w (000 eqs. 14, 17), whose entry k is p_k^T F_k for k in the
   frame's support, F_k = B_{f,k}^T f_j the wrench moved from o_f to O_k, and 0 off
   it.  Call it phi.                                                             (2)

3. x_j = U^-1 phi is what the backward sweep of the O(n) forward dynamics computes
   (002 eqs. 14-16, U tau^ = phi):

       tau^_k = phi_k - p_k^T eta'_k,   eta_k = psi_k tau^_k + eta'_k,
       eta'_lambda(k) += B_{k,lambda(k)}^T eta_k.                                (3)

   Off the support phi is zero, and so are tau^ and eta there: a body off the
   support has nothing but zeros beyond it.  Along the support each body has one
   child with eta != 0, so eta'_lambda(k) = B^T eta_k.  With z_k = F_k - eta'_k and
   F_lambda(k) = B_{k,lambda(k)}^T F_k, (3) becomes

       tau^_k = p_k^T z_k,
       z_lambda(k) = B_{k,lambda(k)}^T F_k - B_{k,lambda(k)}^T (psi_k tau^_k + eta'_k)
                   = B_{k,lambda(k)}^T (z_k - psi_k tau^_k),                     (4)

   starting from z_b = B_{f,b}^T f_j, the wrench at O_b.  So X_kj = tau^_k: walk z
   from the frame to the base, reading p_k^T z and removing psi_k times it at each
   body, the walk of 000 eq. 38 (y <- Psi_k^T B^T y) started from a wrench.  It is
   O(depth) per row, O(n k) at most.

4. Lambda^-1 = sum over the support k of x_k x_k^T / m^_k, x_k = row k of X: O(n k^2).
   Then Lambda by a Cholesky factorization of the k x k matrix.  Total O(n) for the
   sweep plus O(n k^2); forming I^-1 first costs O(n^2) and J I^-1 J^T O(n^2 k).

5. Mimic joints.  With q_bodies = G q + b the coordinates' GIM is G^T I G and their
   Jacobian J G.  With C (c x n_bodies) the rows e_m^T - a_m e_l^T of the mimic
   joints (C G = 0, rank G = n_bodies - c),

       G (G^T I G)^-1 G^T = I^-1 - I^-1 C^T (C I^-1 C^T)^-1 C I^-1,

   so Lambda^-1 = X^T D^-1 X - P S^-1 P^T with Y = U^-1 C^T, S = Y^T D^-1 Y and
   P = X^T D^-1 Y.  Column i of Y is column m of U^-1 minus a_m times column l,
   each one walk (000 eq. 38, :func:`.mimic.constraint_columns`).  Still O(n (k + c)).

6. The dynamically consistent inverse J-bar = I^-1 J^T Lambda (Khatib's; the
   coordinates' G (G^T I G)^-1 G^T J^T Lambda with mimic joints): I^-1 J^T column
   by column by the full O(n) solve of the forward dynamics (002 eqs. 14-19,
   :func:`.forward_dynamics.solve`) with phi of (2), and I^-1 C^T the same way; then
   (I^-1 J^T - I^-1 C^T S^-1 P^T) Lambda, read at the coordinates' bodies.

Near a singularity of J, Lambda^-1 loses rank: a Cholesky pivot d_j at most
``SINGULAR_RTOL`` times its diagonal entry (the part of row j of J independent of
the rows before it, in the metric I^-1, is below 1e-5 of the row) makes the kernels
return j + 1, and the API raises an error naming the frame, unless a ``damping``
epsilon > 0 is given: Lambda = (J I^-1 J^T + epsilon 1)^-1, the damped inverse.
"""

import numba
from numba import types
import numpy as np

from .forward_dynamics import cholesky, cholesky_solve, solve
from .frames import bad_state, CHECKED, frame_arrays, INTS, MATRIX, MODEL, not_finite
from .frames import open_frame, STATES
from .kinematics import kinematics
from .mimic import constraint_columns, constraint_metric
from .model import data_arrays, hold, model_arrays, unowned
from .spatial import dot, move_wrench, moved_wrench, njit, njit_inline, p_dot
from .udu import articulated_bodies

#: A Cholesky pivot of J I^-1 J^T at most this fraction of its diagonal entry: singular.
SINGULAR_RTOL = 1e-10


@njit_inline
def _sweeps(reals, ints, frame_ints, frame_reals, q, workspace):
    """
    Kinematics and articulated bodies of every body at coordinates q (000 eq. 35).

    Return (model, data, frame), the views of :func:`.model.model_arrays`,
    :func:`.model.data_arrays` and :func:`.frames.frame_arrays`.
    """
    n = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    frame = frame_arrays(frame_ints, frame_reals, n)
    q_body = data.phi
    for i in range(n):
        q_body[i] = frame.a[i] * q[frame.column[i]] + frame.b[i]
    kinematics(model, data, q_body)
    articulated_bodies(model, data)
    return model, data, frame


@njit_inline
def _frame_origin(frame, R, O):
    """Return o_f = O_b + R_b s_f,b, the origin of a frame on body b."""
    b, s = frame.support[frame.support.shape[0] - 1], frame.offset
    return (O[b, 0] + R[b, 0, 0] * s[9] + R[b, 0, 1] * s[10] + R[b, 0, 2] * s[11],
            O[b, 1] + R[b, 1, 0] * s[9] + R[b, 1, 1] * s[10] + R[b, 1, 2] * s[11],
            O[b, 2] + R[b, 2, 0] * s[9] + R[b, 2, 1] * s[10] + R[b, 2, 2] * s[11])


@njit_inline
def _unit_wrench(row, o, O_b, z):
    """
    Write the unit wrench of Jacobian row ``row`` at o, moved to O_b, into z: B_{f,b}^T f.

    [n; f]: a force e_row for the linear rows 0-2, a moment e_(row-3) for 3-5.
    """
    for a in range(6):
        z[a] = 0.0
    if row < 3:
        z[3 + row] = 1.0
        s0, s1, s2 = o[0] - O_b[0], o[1] - O_b[1], o[2] - O_b[2]      # n = s x f
        z[0], z[1], z[2] = s1 * z[5] - s2 * z[4], s2 * z[3] - s0 * z[5], s0 * z[4] - s1 * z[3]
    else:
        z[row - 3] = 1.0


@njit_inline
def _walk_wrench(lam, r, p, prismatic, psi, b, z, X, j):
    """
    Column j of X = U^-1 J^T: walk the wrench z from body b to the base (eq. 4).

    X[k, j] = tau^_k = p_k^T z_k, z <- B_{k,lambda(k)}^T (z - psi_k tau^_k).  The
    arrays indexed by body (no row view: numba reference-counts each, at each body).
    """
    k = b
    while k >= 0:
        c = 3 if prismatic[k] else 0                                # p_k = [e_k; 0] or [0; e_k]
        X[k, j] = p[k, c] * z[c] + p[k, c + 1] * z[c + 1] + p[k, c + 2] * z[c + 2]  # eq. 14
        for a in range(6):
            z[a] -= psi[k, a] * X[k, j]                             # 002 eq. 15
        if lam[k] >= 0:                                             # 002 eq. 16: B^T z
            z[0], z[1], z[2], z[3], z[4], z[5] = moved_wrench(r[k, 0], r[k, 1], r[k, 2], z[0],
                                                              z[1], z[2], z[3], z[4], z[5])
        k = lam[k]


@njit_inline
def _inverse_metric(support, X, m_hat, k, A):
    """Write A = X^T D^-1 X (k x k) over the support (eq. 1; off it X is zero)."""
    for a in range(k):
        for c in range(a + 1):
            acc = 0.0
            for j in range(support.shape[0]):
                i = support[j]
                acc += X[i, a] * X[i, c] / m_hat[i]
            A[a, c] = A[c, a] = acc


@njit
def _lambda_inverse(model, data, frame, rows, damping, A, Y, P, S):
    """
    Write Lambda^-1 (+ damping) into A (k x k); X = U^-1 J^T is left in data's y.

    With mimic joints (c = Y.shape[1] > 0) also Y = U^-1 C^T, S = Y^T D^-1 Y (its
    Cholesky factor) and P = X^T D^-1 Y.
    """
    lam, prismatic = model.lam, model.prismatic
    R, r, p, O, psi, m_hat, X = data.R, data.r, data.p, data.O, data.psi, data.m_hat, data.y
    n, k, c, support = lam.shape[0], rows.shape[0], Y.shape[1], frame.support
    b = support[support.shape[0] - 1]
    o = _frame_origin(frame, R, O)
    z = np.empty(6)
    for i in range(n):
        for a in range(6):
            X[i, a] = 0.0
    for j in range(k):
        _unit_wrench(rows[j], o, O[b], z)
        _walk_wrench(lam, r, p, prismatic, psi, b, z, X, j)
    _inverse_metric(support, X, m_hat, k, A)
    if c:
        constraint_columns(lam, r, p, psi, frame.leader, frame.a, Y)   # :mod:`.mimic` (3)
        constraint_metric(Y, m_hat, S)
        for a in range(c):
            for j in range(k):
                P[j, a] = 0.0
                for i in range(n):
                    P[j, a] += X[i, j] * Y[i, a] / m_hat[i]
        cholesky(S)
        w = np.empty(c)
        for j in range(k):                                  # A -= P S^-1 P^T
            cholesky_solve(S, P[j], w)
            for e in range(j + 1):
                A[j, e] -= dot(P[e], w)
                A[e, j] = A[j, e]
    for j in range(k):
        A[j, j] += damping


@njit_inline
def _invert(A, Lambda):
    """
    Write Lambda = A^-1 for symmetric positive definite A by Cholesky; 0, or j + 1.

    j + 1 for the first pivot at most SINGULAR_RTOL times its diagonal entry (then
    Lambda is not written).
    """
    k = A.shape[0]
    diagonal = np.empty(k)
    for j in range(k):
        diagonal[j] = A[j, j]
    cholesky(A)
    for j in range(k):
        if not A[j, j] * A[j, j] > SINGULAR_RTOL * diagonal[j]:     # NaN too
            return j + 1
    unit = np.empty(k)
    column = np.empty(k)
    for j in range(k):
        unit[:] = 0.0
        unit[j] = 1.0
        cholesky_solve(A, unit, column)
        for i in range(j, k):
            Lambda[i, j] = column[i]
    for j in range(k):
        for i in range(j):
            Lambda[i, j] = Lambda[j, i]
    return 0


@njit
def task_space_inertia(reals, ints, frame_ints, frame_reals, rows, q, damping, workspace,
                       Lambda):
    """
    Write Lambda (k, k) = (J I^-1 J^T + damping 1)^-1 for ``rows`` of J; 0, or j + 1.

    O(n k) by the articulated-body sweep and one walk per row (module docstring).
    """
    model, data, frame = _sweeps(reals, ints, frame_ints, frame_reals, q, workspace)
    n = ints.shape[1]
    k, c = rows.shape[0], n - q.shape[0]
    A = np.empty((k, k))
    Y, P, S = np.empty((n, c)), np.empty((k, c)), np.empty((c, c))
    _lambda_inverse(model, data, frame, rows, damping, A, Y, P, S)
    return _invert(A, Lambda)


@njit
def dynamically_consistent_inverse(reals, ints, frame_ints, frame_reals, rows, q, damping,
                                   workspace, J_bar):
    """
    Write J-bar (n, k) = I^-1 J^T Lambda of the coordinates; 0, or j + 1 (singular).

    Step 6 of the module docstring: one O(n) solve per row of J and per mimic joint.
    """
    model, data, frame = _sweeps(reals, ints, frame_ints, frame_reals, q, workspace)
    n = ints.shape[1]
    lam, prismatic = model.lam, model.prismatic
    R, r, p, O = data.R, data.r, data.p, data.O
    k, c = rows.shape[0], n - q.shape[0]
    A, Lambda = np.empty((k, k)), np.empty((k, k))
    Y, P, S = np.empty((n, c)), np.empty((k, c)), np.empty((c, c))
    _lambda_inverse(model, data, frame, rows, damping, A, Y, P, S)
    status = _invert(A, Lambda)
    if status:
        return status
    b = frame.support[frame.support.shape[0] - 1]
    o = _frame_origin(frame, R, O)
    W = np.empty((k, n))                        # rows: (I^-1 J^T)^T, then corrected
    phi, z = np.empty(n), np.empty(6)
    for j in range(k):                          # phi = J^T f_j (eq. 2), then I^-1 phi
        phi[:] = 0.0
        _unit_wrench(rows[j], o, O[b], z)
        i = b
        while i >= 0:
            phi[i] = p_dot(p[i], z, prismatic[i])
            if lam[i] >= 0:
                move_wrench(r[i], z)
            i = lam[i]
        solve(model, data, phi, W[j])
    leader = frame.leader
    if c:
        V = np.empty((c, n))                    # rows: (I^-1 C^T)^T
        m_i = 0
        for m in range(n):
            if leader[m] == m:
                continue
            phi[:] = 0.0
            phi[m], phi[leader[m]] = 1.0, -frame.a[m]
            solve(model, data, phi, V[m_i])
            m_i += 1
        w = np.empty(c)
        for j in range(k):                      # W_j -= V^T S^-1 P_j
            cholesky_solve(S, P[j], w)
            for a in range(c):
                for i in range(n):
                    W[j, i] -= V[a, i] * w[a]
    row = 0
    for i in range(n):                          # the coordinates' bodies, in order
        if leader[i] != i:
            continue
        for e in range(k):
            acc = 0.0
            for j in range(k):
                acc += W[j, i] * Lambda[j, e]
            J_bar[row, e] = acc
        row += 1
    return 0


@numba.njit([types.int64(*MODEL, INTS, state, types.float64, MATRIX) for state in STATES],
            **CHECKED)
def task_space_inertia_checked(model, frame, rows, q, damping, Lambda):
    """
    Run :func:`task_space_inertia` as :func:`.frames.frame_placement_checked` does.

    4 for a frame on the base, 10 + j where its row j is singular.
    """
    reals, ints, frame_ints, frame_reals, owned = open_frame(model, frame)
    status = bad_state(frame_ints, q, q)
    if status:
        return status
    if frame_ints[2] == 0:
        return 4
    status = hold(owned, task_space_inertia(reals, ints, frame_ints, frame_reals, rows, q,
                                            damping, unowned(owned), Lambda))
    if status:
        return 10 + status - 1
    return 3 if not_finite(Lambda) else 0
