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

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import njit
from .udu import articulated_bodies, walk_to_base


@njit
def inverse_inertia_matrix(reals, ints, q, workspace, I_inv):
    """I_inv (n, n) = I^-1 at q, analytically (000 eqs. 36-41)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    articulated_bodies(model, data)
    lam = model[0]
    n = lam.shape[0]
    r, p, psi, m_hat, y = data[1], data[3], data[12], data[13], data[18]
    U_inv = np.zeros((n, n))                    # one n x n scratch, outside the loops
    for k in range(n):
        U_inv[k, k] = 1.0
        walk_to_base(lam, r, p, psi, k, y[k], U_inv[:, k], True)    # 000 eq. 38
    for a in range(n):                                              # 000 eq. 36
        for b in range(a + 1):
            acc = 0.0
            for k in range(b + 1):                                  # U^-1 is upper triangular
                acc += U_inv[k, a] * U_inv[k, b] / m_hat[k]
            I_inv[a, b] = I_inv[b, a] = acc
