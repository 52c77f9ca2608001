"""
The inverse of the GIM: in O(n^2) from the articulated bodies, and analytically.

I^-1 column by column is the O(n) solve of :mod:`.forward_dynamics` (002 eqs. 14-19)
with the right-hand side e_c, the unit effort at joint c.  All n columns go through
the sweeps together, each body carrying a 6 x n block of wrenches (eta) or twists
(mu), one column per right-hand side:

    backward k = n..1, columns c in the subtree of k (eta_k's other columns are 0):
        tau^_kc = delta_kc - p_k^T eta_k',c,     eta_k,c = psi_k tau^_kc + eta_k',c,
        eta_lambda(k)',c += B_{k,lambda(k)}^T eta_k,c                         (002 eqs. 14-16)
    forward k = 1..n, columns c >= k (the upper triangle, I^-1 is symmetric):
        mu_k',c = B_{k,lambda(k)} mu_lambda(k),c,
        (I^-1)_kc = tau^_kc / m^_k - psi_k^T mu_k',c,  mu_k,c = p_k (I^-1)_kc + mu_k',c
                                                                               (002 eqs. 17-19)

The backward sweep visits each column once per ancestor, the forward sweep once per
row above it: n^2 / 2 column steps each on a chain, fewer on a tree.  It is the
recursion of Carpentier's computeMinverse (Pinocchio) in Saha's symbols: tau^ / m^ is
D^-1 U^-1 (000 eqs. 36-38), the forward sweep applies U^-T.

The analytical form of paper 000 writes U^-1 down from the same articulated-body
vectors, without any numerical inversion (000 eqs. 38-41):

    (U^-1)_ik = -p_i^T B_{j,i}^T Psi_j^T ... Psi_m^T B_{k,m}^T psi_k

for i an ancestor of k, along the path k -> m -> ... -> j -> i towards the base, with
Psi_j^T = 1 - psi_j p_j^T (000, after eq. 35) acting as y -> y - psi_j (p_j^T y).
Column k is the walk of y from psi_k down to the base: at each ancestor i,
(U^-1)_ik = -p_i^T y, then y <- y + psi_i (U^-1)_ik.  Entries off the path are zero.
I^-1 = U^-T D^-1 U^-1 (000 eq. 36) is then a triple product, O(n^3):
:func:`analytical_inverse_inertia_matrix` keeps it as the reference.
"""

import numpy as np

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import njit
from .udu import articulated_bodies, unit_triangle


@njit
def inverse_inertia_matrix(reals, ints, q, workspace, I_inv):
    """I_inv (n, n) = I^-1 at q in O(n^2): every e_c through the sweeps of 002 eqs. 14-19."""
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    kinematics(model, data, q)
    articulated_bodies(model, data)
    F = np.empty((n, 6, n))                     # eta_k, then mu_k: a column per e_c
    last = np.empty(n, dtype=np.int64)          # subtree of k: columns k..last[k]
    unit_solves(model, data, F, last, I_inv)


@njit
def unit_solves(model, data, F, last, I_inv):
    """I_inv = I^-1 from the articulated bodies in ``data`` (002 eqs. 14-19 on every e_c)."""
    lam, prismatic = model.lam, model.prismatic
    p, psi, m_hat, r = data.p, data.psi, data.m_hat, data.r
    n = lam.shape[0]
    for k in range(n):
        last[k] = k
    for k in range(n - 1, -1, -1):
        if lam[k] >= 0:
            last[lam[k]] = max(last[lam[k]], last[k])
    for k in range(n):
        for a in range(6):
            for c in range(k, last[k] + 1):
                F[k, a, c] = 0.0
    for k in range(n - 1, -1, -1):
        _backward(lam[k], prismatic[k], p[k], psi[k], m_hat[k], r[k], F, k, last[k], I_inv[k])
    for k in range(n):
        _forward(lam[k], prismatic[k], p[k], psi[k], r[k], F, k, I_inv[k])
    for k in range(n):
        for c in range(k):
            I_inv[k, c] = I_inv[c, k]


@njit
def _backward(parent, prismatic, p, psi, m_hat, r, F, k, last, row):
    """
    Body k of the backward sweep on columns k..last (002 eqs. 14-17): row_c = tau^_kc / m^_k.

    eta_k' (children's sum) is in F[k]; it becomes eta_k and moves to the parent.  Body
    k's lambda(k), joint type, p_k, psi_k, m^_k and r_k come as themselves, not in the
    named tuples (numba's reference counting on every array of them, per body).
    """
    c0 = 3 if prismatic else 0                          # p_k = [e_k; 0] or [0; e_k]
    e0, e1, e2 = p[c0], p[c0 + 1], p[c0 + 2]
    inverse, F_k = 1.0 / m_hat, F[k]
    for c in range(k, last + 1):
        tau_hat = -(e0 * F_k[c0, c] + e1 * F_k[c0 + 1, c] + e2 * F_k[c0 + 2, c])  # 002 eq. 14
        if c == k:
            tau_hat += 1.0                                                         # e_c
        row[c] = tau_hat * inverse                                                 # eq. 17
        for a in range(6):
            F_k[a, c] += psi[a] * tau_hat                                          # eq. 15
    for c in range(last + 1, row.shape[0]):
        row[c] = 0.0
    if parent >= 0:
        P = F[parent]
        for c in range(k, last + 1):                  # eta_lambda(k)' += B^T eta_k (eq. 16)
            f0, f1, f2 = F_k[0, c], F_k[1, c], F_k[2, c]
            f3, f4, f5 = F_k[3, c], F_k[4, c], F_k[5, c]
            P[0, c] += f0 + r[1] * f5 - r[2] * f4
            P[1, c] += f1 + r[2] * f3 - r[0] * f5
            P[2, c] += f2 + r[0] * f4 - r[1] * f3
            P[3, c] += f3
            P[4, c] += f4
            P[5, c] += f5


@njit
def _forward(parent, prismatic, p, psi, r, F, k, row):
    """Body k of the forward sweep on columns c >= k (002 eqs. 18-19): row_c = (I^-1)_kc."""
    c0 = 3 if prismatic else 0
    e0, e1, e2 = p[c0], p[c0 + 1], p[c0 + 2]
    F_k = F[k]
    for c in range(k, row.shape[0]):
        if parent >= 0:                               # mu_k' = B mu_lambda(k) (eq. 18)
            P = F[parent]
            w0, w1, w2 = P[0, c], P[1, c], P[2, c]
            v0 = P[3, c] + w1 * r[2] - w2 * r[1]
            v1 = P[4, c] + w2 * r[0] - w0 * r[2]
            v2 = P[5, c] + w0 * r[1] - w1 * r[0]
        else:
            w0 = w1 = w2 = v0 = v1 = v2 = 0.0
        x = row[c] - (psi[0] * w0 + psi[1] * w1 + psi[2] * w2
                      + psi[3] * v0 + psi[4] * v1 + psi[5] * v2)                   # eq. 19
        row[c] = x
        F_k[0, c], F_k[1, c], F_k[2, c], F_k[3, c], F_k[4, c], F_k[5, c] = w0, w1, w2, v0, v1, v2
        F_k[c0, c] += e0 * x                          # mu_k = mu_k' + p_k (I^-1)_kc
        F_k[c0 + 1, c] += e1 * x
        F_k[c0 + 2, c] += e2 * x


@njit
def analytical_inverse_inertia_matrix(reals, ints, q, workspace, I_inv):
    """I_inv (n, n) = I^-1 at q, analytically (000 eqs. 36-41), O(n^3): the reference."""
    n = q.shape[0]
    U_inv = np.empty((n, n))                    # one n x n scratch, outside the loops
    m_hat = unit_triangle(reals, ints, q, workspace, U_inv, True)    # 000 eq. 38
    for a in range(n):                                              # 000 eq. 36
        for b in range(a + 1):
            acc = 0.0
            for k in range(b + 1):                                  # U^-1 is upper triangular
                acc += U_inv[k, a] * U_inv[k, b] / m_hat[k]
            I_inv[a, b] = I_inv[b, a] = acc
