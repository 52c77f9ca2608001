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
from .spatial import moved_twist, njit, njit_inline
from .udu import articulated_bodies, unit_triangle


@njit
def inverse_inertia_matrix(reals, ints, q, workspace, I_inv):
    """I_inv (n, n) = I^-1 at q in O(n^2): every e_c through the sweeps of 002 eqs. 14-19."""
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    kinematics(model, data, q)
    articulated_bodies(model, data)
    tree = np.empty((3, n), dtype=np.int64)     # last[k], the last child of k, block[k]
    count = blocks(model.lam, tree[0], tree[1], tree[2])
    F = np.empty((count + 1, 6, n))             # eta_k, then mu_k: a wrench per e_c
    F[count] = 0.0                              # mu_0 = 0, the fixed base's twist
    unit_solves(model.lam, data.p, data.psi, data.m_hat, data.r, F, tree[0], tree[2], I_inv)


@njit_inline
def blocks(lam, last, last_child, block):
    """
    Return how many (6, n) blocks of mu_k the forward sweep needs; fill last and block.

    The subtree of k is the columns k..last[k] (the bodies are numbered depth first).
    Body k writes mu_k into F[block[k]] while it reads mu_lambda(k) from its parent's
    block, which must then differ from its own (the loop over the columns is compiled
    to vector instructions when the two cannot overlap).  The blocks come in pairs: the
    parent's last child takes the other block of its parent's pair (the forward sweep
    reaches that child after the parent's other children, so that the block it writes
    over, its grandparent's, has been read by all), any other child a new pair.  A
    chain needs one pair, a tree one per leaf.
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
    count = 0
    for k in range(n):
        j = lam[k]
        if j >= 0 and last_child[j] == k:
            block[k] = block[j] ^ 1
        else:
            block[k] = count
            count += 2
    return count


@njit
def unit_solves(lam, p, psi, m_hat, r, F, last, block, I_inv):
    """
    I_inv = I^-1 from the articulated bodies in ``data`` (002 eqs. 14-19 on every e_c).

    F is (blocks + 1, 6, n): component a of column c of a wrench or twist is F[b, a, c],
    so that the loop over the columns, the same six-vector arithmetic on each, runs
    over contiguous memory and LLVM compiles it to vector instructions; its index is
    unsigned so that numba emits no wrap-around of negative indices, which would keep
    LLVM from it.  The backward sweep keeps all eta in F[0]: column c of eta_k is
    written by the one child whose subtree holds c (or by e_k for c = k), and read by
    k in place.  The forward sweep reads mu_lambda(k) from its parent's block and
    writes mu_k to its own (:func:`blocks`); the last block, zero, is the fixed base's.
    p_k is taken as the six-vector [e_k; 0] or [0; e_k] (the three products by zero
    are exact and keep the loop free of a branch).  The sweeps are written out in
    scalars over the arrays indexed by body and column, with no per-body helper and no
    row view: numba reference-counts every array that a helper takes or a view makes,
    at each body.  A compiled function of its own, not inlined into the caller: its
    machine code is then the same whatever the layout of the caller's q.
    """
    n = lam.shape[0]
    for k in range(n - 1, -1, -1):          # backward, columns k..last[k] (002 eqs. 14-17)
        p0, p1, p2, p3, p4, p5 = p[k, 0], p[k, 1], p[k, 2], p[k, 3], p[k, 4], p[k, 5]
        s0, s1, s2, s3, s4, s5 = psi[k, 0], psi[k, 1], psi[k, 2], psi[k, 3], psi[k, 4], psi[k, 5]
        r0, r1, r2 = r[k, 0], r[k, 1], r[k, 2]
        inverse = 1.0 / m_hat[k]
        I_inv[k, k] = inverse                   # column k: eta_k',k = 0, tau^_kk = 1 (e_k),
        F[0, 0, k] = s0 + r1 * s5 - r2 * s4     # eta_k,k = psi_k, B^T psi_k to lambda(k)
        F[0, 1, k] = s1 + r2 * s3 - r0 * s5
        F[0, 2, k] = s2 + r0 * s4 - r1 * s3
        F[0, 3, k], F[0, 4, k], F[0, 5, k] = s3, s4, s5
        for c in range(np.uint64(k + 1), np.uint64(last[k] + 1)):
            f0, f1, f2, f3, f4, f5 = F[0, 0, c], F[0, 1, c], F[0, 2, c], F[0, 3, c], \
                F[0, 4, c], F[0, 5, c]
            tau_hat = -(p0 * f0 + p1 * f1 + p2 * f2 + p3 * f3 + p4 * f4 + p5 * f5)  # eq. 14
            I_inv[k, c] = tau_hat * inverse                                    # eq. 17
            f0 += s0 * tau_hat                                                 # eq. 15
            f1 += s1 * tau_hat
            f2 += s2 * tau_hat
            f3 += s3 * tau_hat
            f4 += s4 * tau_hat
            f5 += s5 * tau_hat
            F[0, 0, c] = f0 + r1 * f5 - r2 * f4   # eta_lambda(k)',c = B^T eta_k,c (eq. 16)
            F[0, 1, c] = f1 + r2 * f3 - r0 * f5
            F[0, 2, c] = f2 + r0 * f4 - r1 * f3
            F[0, 3, c], F[0, 4, c], F[0, 5, c] = f3, f4, f5
        for c in range(np.uint64(last[k] + 1), np.uint64(n)):
            I_inv[k, c] = 0.0                   # eta_k,c = 0 off the subtree: tau^_kc = 0
    for k in range(n):                      # forward, columns c >= k (002 eqs. 18-19)
        p0, p1, p2, p3, p4, p5 = p[k, 0], p[k, 1], p[k, 2], p[k, 3], p[k, 4], p[k, 5]
        s0, s1, s2, s3, s4, s5 = psi[k, 0], psi[k, 1], psi[k, 2], psi[k, 3], psi[k, 4], psi[k, 5]
        r0, r1, r2 = r[k, 0], r[k, 1], r[k, 2]
        s, t = block[k], block[lam[k]] if lam[k] >= 0 else F.shape[0] - 1
        for c in range(np.uint64(k), np.uint64(n)):
            w0, w1, w2, v0, v1, v2 = moved_twist(          # mu_k' = B mu_lambda(k) (eq. 18)
                r0, r1, r2, F[t, 0, c], F[t, 1, c], F[t, 2, c], F[t, 3, c], F[t, 4, c],
                F[t, 5, c])
            x = I_inv[k, c] - (s0 * w0 + s1 * w1 + s2 * w2 + s3 * v0 + s4 * v1 + s5 * v2)
            I_inv[k, c] = x                                                    # eq. 19
            F[s, 0, c] = w0 + p0 * x                    # mu_k = mu_k' + p_k (I^-1)_kc
            F[s, 1, c] = w1 + p1 * x
            F[s, 2, c] = w2 + p2 * x
            F[s, 3, c] = v0 + p3 * x
            F[s, 4, c] = v1 + p4 * x
            F[s, 5, c] = v2 + p5 * x
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
