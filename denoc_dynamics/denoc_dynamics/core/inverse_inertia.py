"""
The analytical inverse of the GIM, I^-1 = U^-T D^-1 U^-1 (paper 000, eqs. 36-41).

D^-1 = diag(1 / m^_i).  U^-1 is written down from the articulated-body vectors
without any numerical inversion (000 eqs. 38-41):

    (U^-1)_ik = -p_i^T B_{i+1,i}^T Psi_{i+1}^T B_{i+2,i+1}^T ... Psi_{k-1}^T B_{k,k-1}^T psi_k,

with Psi_j^T = 1 - psi_j p_j^T (000, after eq. 35) acting as y -> y - psi_j (p_j^T y).
Column k is the walk of y from psi_k down to link i, one Psi^T per step.  The walks of all
columns advance together: at step i every column k > i moves y from O_{i+1} to O_i
(B_{i+1,i}^T; every quantity is referred to its joint origin, see :mod:`.kinematics`),
takes its entry (U^-1)_ik = -p_i^T y and then y <- y + psi_i (U^-1)_ik: n sequential
steps of O(n) array work.
"""

import numpy as np

from .udu import articulated_bodies


def unit_upper_inverse(p: np.ndarray, psi: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Return U^-1 (..., n, n) from p_i, psi_i and B_{i,i-1} (000 eqs. 38-41)."""
    B_T = B.swapaxes(-1, -2)
    n = p.shape[-2]
    batch = p.shape[:-2]
    U_inv = np.zeros(batch + (n, n))
    U_inv[..., np.arange(n), np.arange(n)] = 1.0
    Y = np.zeros(batch + (6, n))                   # column k holds y for U^-1 column k
    Y[..., :, n - 1] = psi[..., n - 1, :]
    for i in range(n - 2, -1, -1):
        Y = B_T[..., i + 1, :, :] @ Y
        row = -np.einsum('...a,...ak->...k', p[..., i, :], Y[..., :, i + 1:])
        U_inv[..., i, i + 1:] = row
        Y[..., :, i + 1:] += psi[..., i, :, None] * row[..., None, :]
        Y[..., :, i] = psi[..., i, :]
    return U_inv


def inverse_inertia_matrix(kin) -> np.ndarray:
    """Return I^-1 = U^-T D^-1 U^-1 (..., n, n) (000 eq. 36)."""
    psi, m_hat = articulated_bodies(kin)
    U_inv = unit_upper_inverse(kin.p, psi, kin.B_prev)
    return np.swapaxes(U_inv, -1, -2) @ (U_inv / m_hat[..., :, None])
