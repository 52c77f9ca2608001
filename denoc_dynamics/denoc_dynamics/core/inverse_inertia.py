"""
The analytical inverse of the GIM, I^-1 = U^-T D^-1 U^-1 (paper 000, eqs. 36-41).

D^-1 = diag(1 / m^_i).  U^-1 is written down from the articulated-body vectors
without any numerical inversion (000 eqs. 38-41):

    (U^-1)_ik = -p_i^T B_{j,i}^T Psi_j^T ... Psi_m^T B_{k,m}^T psi_k

for i an ancestor of k, along the path k -> m -> ... -> j -> i towards the base, with
Psi_j^T = 1 - psi_j p_j^T (000, after eq. 35) acting as y -> y - psi_j (p_j^T y).
Column k is the walk of y from psi_k down to the base: at each ancestor i,
(U^-1)_ik = -p_i^T y, then y <- y + psi_i (U^-1)_ik.  Entries off the path are zero.
"""

import numpy as np

from .spatial import njit
from .udu import unit_triangle


@njit
def inverse_inertia_matrix(reals, ints, q, workspace, I_inv):
    """I_inv (n, n) = I^-1 at q, analytically (000 eqs. 36-41)."""
    n = q.shape[0]
    U_inv = np.empty((n, n))                    # one n x n scratch, outside the loops
    m_hat = unit_triangle(reals, ints, q, workspace, U_inv, True)    # 000 eq. 38
    for a in range(n):                                              # 000 eq. 36
        for b in range(a + 1):
            acc = 0.0
            for k in range(b + 1):                                  # U^-1 is upper triangular
                acc += U_inv[k, a] * U_inv[k, b] / m_hat[k]
            I_inv[a, b] = I_inv[b, a] = acc
