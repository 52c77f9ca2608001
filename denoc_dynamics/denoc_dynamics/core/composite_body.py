"""
Composite bodies about one fixed point: H and the bias vector b (paper 003).

An independent way to form the equations of motion H qdd + b = tau, written with
3-vectors and every point measured from one point fixed in space, as in paper 003.
It shares no recursion with the DeNOC modules (only the body poses of
:mod:`.kinematics`) and serves as their cross-check.  Paper 003 measures from the
base-frame origin; any fixed point will do, and here it is the point where the first
joint origin O_1 is now, so that a robot mounted far from the base origin does not
carry that distance through the sums.  Below, "the origin" is that point, and O_j,
C_j are measured from it.

Composite body j is body j and every body beyond it (003 eqs. 2-3): mass m~_j, first
moment s_j = sum m_k C_k, and inertia tensor J_j about the origin (Huygens-Steiner,
003 eq. 3).  Moving joint j alone at unit rate gives it the momentum (003 eqs. 4-9)

    revolute j:   L_j = u_j x (s_j - m~_j O_j),   h_j = J_j u_j + s_j x (O_j x u_j)
    prismatic j:  L_j = m~_j u_j,                 h_j = s_j x u_j

and H_mj (m = j or an ancestor of j; else 0) is its component along joint m, taken
about O_m (003 eqs. 10-12): u_m . (h_j - O_m x L_j) for a revolute joint m, u_m . L_j
for a prismatic one.

The bias vector is b = D(qd) + g(q) (003 eq. 31).  D is Newton-Euler on the composite
bodies with qdd = 0: accelerations by the moving-frame rule
a_p = a_o + alpha x r + w x (w x r) + 2 w x v_rel (003 eq. 38), each body's inertia
force and its moment about the origin summed over the composite body, projected on
joint j as above.  The gravity term is the weight m~_j g of composite body j at its
mass centre s_j / m~_j (003, "gravity term").
"""

import numpy as np

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import cross, dot, matvec, njit, njit_inline


@njit
def composite_body(reals, ints, q, qd, workspace, H, b):
    """H (n, n) and b (n,) at (q, qd) by composite bodies about one point (paper 003)."""
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    lam, prismatic, m, g = model.lam, model.prismatic, model.m, model.g
    kinematics(model, data, q)
    r, u, M, d = data.r, data.e, data.M, data.d
    O = np.empty((n, 3))                      # measured from the origin (O_1 now), summed
    for i in range(n):                        # from the short r_i: no large numbers
        for a in range(3):
            O[i, a] = O[lam[i], a] + r[i, a] if lam[i] >= 0 else r[i, a] - r[0, a]
    I_C = mass_centre_inertias(M, d, m)
    m_c, s, J = _composite_moments(lam, m, O + d, I_C)
    F, N = _inertia_forces(lam, prismatic, qd, u, O, d, m, I_C)
    L, h, y = np.empty(3), np.empty(3), np.empty(3)
    H[:] = 0.0
    for j in range(n):
        if prismatic[j]:                                            # 003 eqs. 4-9
            for a in range(3):
                L[a] = m_c[j] * u[j, a]
            cross(s[j], u[j], h)
        else:
            for a in range(3):
                y[a] = s[j, a] - m_c[j] * O[j, a]
            cross(u[j], y, L)
            cross(O[j], u[j], y)
            cross(s[j], y, h)
            for a in range(3):
                h[a] += dot(J[j, a], u[j])
        h0, h1, h2, L0, L1, L2 = h[0], h[1], h[2], L[0], L[1], L[2]
        k = j
        while k >= 0:                                               # 003 eqs. 10-12
            H[k, j] = H[j, k] = _along(prismatic[k], u, O, k, h0, h1, h2, L0, L1, L2)
            k = lam[k]
        for a in range(3):                                          # the weight m~_j g
            L[a] = -m_c[j] * g[a]
        cross(g, s[j], h)                                           # s_j x (-g)
        b[j] = (_along(prismatic[j], u, O, j, N[j, 0], N[j, 1], N[j, 2], F[j, 0], F[j, 1],
                       F[j, 2])                                     # 003 eq. 31
                + _along(prismatic[j], u, O, j, h[0], h[1], h[2], L[0], L[1], L[2]))


@njit
def mass_centre_inertias(M, d, m):
    """Return I_C,i = I_O,i - m_i (|d_i|^2 1 - d_i d_i^T): M_i's inertia moved to C_i."""
    I_C = np.empty((m.shape[0], 3, 3))
    for i in range(m.shape[0]):
        _steiner(M[i], -m[i], d[i], I_C[i])
    return I_C


@njit
def _steiner(I, m, c, out):
    """Write I + m (|c|^2 1 - c c^T) into out: Huygens-Steiner (003 eq. 3), by c."""
    cc = dot(c, c)
    for a in range(3):
        for e in range(3):
            out[a, e] = I[a, e] + m * ((cc if a == e else 0.0) - c[a] * c[e])


@njit_inline
def _along(prismatic, u, O, k, h0, h1, h2, L0, L1, L2):
    """
    Return the component along joint k (u_k, O_k) of (h about the origin, L) (003 eqs. 10-12).

    u_k . L for a prismatic joint, u_k . (h - O_k x L) for a revolute one.  The pair
    (h, L) comes as numbers and joint k by its index: the loop over the pairs of H
    then makes no row view and calls no helper (at n = 200 those took 1.2 ms of
    numba's reference counting, against 0.08 ms for the GIM).
    """
    u0, u1, u2 = u[k, 0], u[k, 1], u[k, 2]
    if prismatic:
        return u0 * L0 + u1 * L1 + u2 * L2
    x0 = O[k, 1] * L2 - O[k, 2] * L1                                 # O_k x L
    x1 = O[k, 2] * L0 - O[k, 0] * L2
    x2 = O[k, 0] * L1 - O[k, 1] * L0
    return (u0 * h0 + u1 * h1 + u2 * h2) - (u0 * x0 + u1 * x1 + u2 * x2)


@njit
def _composite_moments(lam, m, C, I_C):
    """Return m~_j, s_j and J_j of every composite body (003 eqs. 2-3)."""
    n = m.shape[0]
    m_c, s, J = m.copy(), np.empty((n, 3)), np.empty((n, 3, 3))
    for i in range(n):
        for a in range(3):
            s[i, a] = m[i] * C[i, a]
        _steiner(I_C[i], m[i], C[i], J[i])                          # about the origin
    for i in range(n - 1, -1, -1):
        k = lam[i]
        if k >= 0:
            m_c[k] += m_c[i]
            for a in range(3):
                s[k, a] += s[i, a]
                for e in range(3):
                    J[k, a, e] += J[i, a, e]
    return m_c, s, J


@njit
def _inertia_forces(lam, prismatic, qd, u, O, d, m, I_C):
    """
    Return F_j, N_j: composite body j's inertia forces and their moment at the origin.

    At qdd = 0, with the accelerations of 003 eq. 38; joint k turns at ``spin`` or
    slides at ``slide``.
    """
    n = m.shape[0]
    w, alpha, a_O = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    F, N = np.empty((n, 3)), np.empty((n, 3))
    r, x, y, a_C = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for k in range(n):
        p = lam[k]
        spin = 0.0 if prismatic[k] else qd[k]
        slide = qd[k] - spin
        if p >= 0:                    # O_k as a point of body lambda(k), then joint k
            for a in range(3):
                r[a] = O[k, a] - O[p, a]
            _point_acceleration(a_O[p], alpha[p], w[p], r, x, y, a_O[k])
            cross(w[p], u[k], x)
            for a in range(3):
                a_O[k, a] += 2.0 * slide * x[a]                     # 2 w x v_rel
                alpha[k, a] = alpha[p, a] + spin * x[a]
                w[k, a] = w[p, a] + spin * u[k, a]
        else:
            for a in range(3):
                w[k, a] = spin * u[k, a]
        _point_acceleration(a_O[k], alpha[k], w[k], d[k], x, y, a_C)
        matvec(I_C[k], w[k], y)
        cross(w[k], y, N[k])                                        # w x I w
        matvec(I_C[k], alpha[k], y)
        for a in range(3):
            F[k, a] = m[k] * a_C[a]
            x[a] = O[k, a] + d[k, a]
        cross(x, F[k], r)                                           # C_k x F_k
        for a in range(3):
            N[k, a] += y[a] + r[a]
    for k in range(n - 1, -1, -1):
        if lam[k] >= 0:
            for a in range(3):
                F[lam[k], a] += F[k, a]
                N[lam[k], a] += N[k, a]
    return F, N


@njit
def _point_acceleration(a_o, alpha, w, r, x, y, out):
    """Write a_o + alpha x r + w x (w x r) into out (003 eq. 38, v_rel = 0); x, y scratch."""
    cross(alpha, r, x)
    cross(w, r, y)
    cross(w, y, out)
    for a in range(3):
        out[a] += a_o[a] + x[a]
