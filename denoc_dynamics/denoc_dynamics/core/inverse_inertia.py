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
from .spatial import njit, njit_inline
from .udu import articulated_bodies, unit_triangle


@njit
def inverse_inertia_matrix(reals, ints, q, workspace, I_inv):
    """I_inv (n, n) = I^-1 at q in O(n^2): every e_c through the sweeps of 002 eqs. 14-19."""
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    kinematics(model, data, q)
    articulated_bodies(model, data)
    tree = np.empty((3, n), dtype=np.int64)     # last[k], the last child of k, slot[k]
    slots = blocks(model.lam, tree[0], tree[1], tree[2])
    F = np.empty((slots, n, 6))                 # eta_k, then mu_k: a wrench per e_c
    unit_solves(model.lam, model.prismatic, data.p, data.psi, data.m_hat, data.r, F, tree[0],
                tree[2], I_inv)


@njit_inline
def blocks(lam, last, last_child, slot):
    """
    Return how many (n, 6) blocks of eta_k / mu_k the sweeps need; fill last and slot.

    The subtree of k is the columns k..last[k] (the bodies are numbered depth first).
    Body k keeps its block in F[slot[k]], which it shares with its parent when it is
    the parent's last child: the backward sweep reaches that child first and the
    forward sweep last, so that the parent's block is free when the child's is written
    over it.  A chain needs one block, a tree one per leaf.
    """
    n = lam.shape[0]
    for k in range(n):
        last[k] = k
        last_child[k] = -1
    for k in range(n - 1, -1, -1):
        j = lam[k]
        if j >= 0:
            last[j] = max(last[j], last[k])
            last_child[j] = max(last_child[j], k)
    slots = 0
    for k in range(n):
        j = lam[k]
        if j >= 0 and last_child[j] == k:
            slot[k] = slot[j]
        else:
            slot[k] = slots
            slots += 1
    return slots


@njit
def unit_solves(lam, prismatic, p, psi, m_hat, r, F, last, slot, I_inv):
    """
    I_inv = I^-1 from the articulated bodies in ``data`` (002 eqs. 14-19 on every e_c).

    Column c of eta_k is written once, by the child whose subtree holds c (or by e_k
    for c = k), so the backward sweep writes the parent's block and never adds to it.
    Both sweeps are written out in scalars over the arrays indexed by body and column,
    with no per-body helper and no row view: numba reference-counts every array that
    a helper takes or a view makes, at each body.  A compiled function of its own, not
    inlined into the caller: its machine code is then the same whatever the layout of
    the caller's q (inlined into the entry that takes q of any layout, LLVM made these
    loops 1.5x slower at n = 200).
    """
    n = lam.shape[0]
    for k in range(n - 1, -1, -1):          # backward, columns k..last[k] (002 eqs. 14-17)
        c0 = 3 if prismatic[k] else 0                   # p_k = [e_k; 0] or [0; e_k]
        e0, e1, e2 = p[k, c0], p[k, c0 + 1], p[k, c0 + 2]
        s0, s1, s2, s3, s4, s5 = psi[k, 0], psi[k, 1], psi[k, 2], psi[k, 3], psi[k, 4], psi[k, 5]
        inverse = 1.0 / m_hat[k]
        j, s, t = lam[k], slot[k], slot[max(lam[k], 0)]
        r0, r1, r2 = r[k, 0], r[k, 1], r[k, 2]
        for c in range(k, last[k] + 1):
            if c == k:                                  # eta_k',k = 0: tau^ = 1 (e_k)
                tau_hat = 1.0
                f0 = f1 = f2 = f3 = f4 = f5 = 0.0
            else:
                f0, f1, f2, f3, f4, f5 = F[s, c, 0], F[s, c, 1], F[s, c, 2], \
                    F[s, c, 3], F[s, c, 4], F[s, c, 5]
                if c0 == 0:                                                    # 002 eq. 14
                    tau_hat = -(e0 * f0 + e1 * f1 + e2 * f2)
                else:
                    tau_hat = -(e0 * f3 + e1 * f4 + e2 * f5)
            I_inv[k, c] = tau_hat * inverse                                    # eq. 17
            f0 += s0 * tau_hat                                                 # eq. 15
            f1 += s1 * tau_hat
            f2 += s2 * tau_hat
            f3 += s3 * tau_hat
            f4 += s4 * tau_hat
            f5 += s5 * tau_hat
            if j >= 0:                          # eta_lambda(k)',c = B^T eta_k,c (eq. 16)
                F[t, c, 0] = f0 + r1 * f5 - r2 * f4
                F[t, c, 1] = f1 + r2 * f3 - r0 * f5
                F[t, c, 2] = f2 + r0 * f4 - r1 * f3
                F[t, c, 3], F[t, c, 4], F[t, c, 5] = f3, f4, f5
    for k in range(n):                      # forward, columns c >= k (002 eqs. 18-19)
        c0 = 3 if prismatic[k] else 0
        e0, e1, e2 = p[k, c0], p[k, c0 + 1], p[k, c0 + 2]
        s0, s1, s2, s3, s4, s5 = psi[k, 0], psi[k, 1], psi[k, 2], psi[k, 3], psi[k, 4], psi[k, 5]
        j, s, t = lam[k], slot[k], slot[max(lam[k], 0)]
        r0, r1, r2 = r[k, 0], r[k, 1], r[k, 2]
        for c in range(k, n):
            x = I_inv[k, c] if c <= last[k] else 0.0   # tau^_kc / m^_k, 0 off the subtree
            if j >= 0:                                # mu_k' = B mu_lambda(k) (eq. 18)
                w0, w1, w2 = F[t, c, 0], F[t, c, 1], F[t, c, 2]
                v0 = F[t, c, 3] + w1 * r2 - w2 * r1
                v1 = F[t, c, 4] + w2 * r0 - w0 * r2
                v2 = F[t, c, 5] + w0 * r1 - w1 * r0
                x -= s0 * w0 + s1 * w1 + s2 * w2 + s3 * v0 + s4 * v1 + s5 * v2
            else:
                w0 = w1 = w2 = v0 = v1 = v2 = 0.0
            I_inv[k, c] = x                                                    # eq. 19
            if c0 == 0:                               # mu_k = mu_k' + p_k (I^-1)_kc
                w0 += e0 * x
                w1 += e1 * x
                w2 += e2 * x
            else:
                v0 += e0 * x
                v1 += e1 * x
                v2 += e2 * x
            F[s, c, 0], F[s, c, 1], F[s, c, 2] = w0, w1, w2
            F[s, c, 3], F[s, c, 4], F[s, c, 5] = v0, v1, v2
    for k in range(n):
        for c in range(k):
            I_inv[k, c] = I_inv[c, k]


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
