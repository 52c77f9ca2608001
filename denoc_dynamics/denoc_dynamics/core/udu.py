"""
UDU^T decomposition of the GIM by reverse Gaussian elimination (000 §5.1; 002; 004).

Eliminating the GIM from its last row upwards leaves the articulated-body inertias
(000 eqs. 33-35; 004):

    M^_n = M_n,   psi^_k = M^_k p_k,   m^_k = p_k^T psi^_k,   psi_k = psi^_k / m^_k,
    M^_{k-1} = M_{k-1} + B_{k,k-1}^T Psi_k M^_k B_{k,k-1},   Psi_k M^_k = M^_k - psi^_k psi_k^T.

M^_k is the extended mass of the articulated body k (bodies k..n with joints k+1..n
free) and m^_k its moment of inertia about joint k.  Then I = U D U^T with
D = diag(m^_1 .. m^_n) and the unit upper-triangular U of

    U_ik = alpha_ik = psi_k^T B_ki p_i   (i < k)                     (000 eq. 34).

Referred to the base origin, B = 1 (see :mod:`.kinematics`).  The backward sweep is
the one truly sequential part: it runs over the links once, vectorized over states.
"""

import numpy as np

from .spatial import dot, matvec


def articulated_bodies(kin):
    """
    Return (psi, m_hat): psi_k = M^_k p_k / m^_k (..., n, 6) and m^_k (..., n).

    The backward recursion of 000 eq. 35 / 002 eq. 11, once over the links.
    """
    p, M = kin.p, kin.M
    n = p.shape[-2]
    psi = np.empty_like(p)
    m_hat = np.empty(p.shape[:-1])
    M_hat = M[..., n - 1, :, :]
    for k in range(n - 1, -1, -1):
        psi_hat = matvec(M_hat, p[..., k, :])
        m_hat[..., k] = dot(p[..., k, :], psi_hat)
        psi[..., k, :] = psi_hat / m_hat[..., k, None]
        if k:
            M_hat = M[..., k - 1, :, :] + M_hat - psi_hat[..., :, None] * psi[..., k, None, :]
    return psi, m_hat


def udu(kin):
    """Return (U, d) with I = U diag(d) U^T, U unit upper triangular (000 eqs. 32-34)."""
    psi, m_hat = articulated_bodies(kin)
    A = kin.p @ np.swapaxes(psi, -1, -2)          # A_ik = p_i^T psi_k
    n = A.shape[-1]
    U = np.triu(A, 1) + np.eye(n)
    return U, m_hat
