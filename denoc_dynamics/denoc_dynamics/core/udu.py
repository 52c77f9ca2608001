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

Each M^_k is referred to the joint origin O_k (see :mod:`.kinematics`), so that its
entries stay of the size of the bodies beyond joint k wherever the chain sits; the
step to link k-1 applies B_{k,k-1} (``B_prev``) on both sides.  The backward sweep is
the one truly sequential part: it runs over the links once, vectorized over states.
U is evaluated like the GIM (:mod:`.gim`), with p_i and psi_k moved to O_1.
"""

import numpy as np

from .spatial import dot, matvec


def articulated_bodies(kin):
    """
    Return (psi, m_hat): psi_k = M^_k p_k / m^_k (..., n, 6) and m^_k (..., n).

    The backward recursion of 000 eq. 35 / 002 eq. 11, once over the links.
    """
    p, M, B = kin.p, kin.M, kin.B_prev
    B_T = B.swapaxes(-1, -2)
    n = p.shape[-2]
    psi = np.empty_like(p)
    m_hat = np.empty(p.shape[:-1])
    M_hat = M[..., n - 1, :, :]
    for k in range(n - 1, -1, -1):
        psi_hat = matvec(M_hat, p[..., k, :])
        m_hat[..., k] = dot(p[..., k, :], psi_hat)
        psi[..., k, :] = psi_hat / m_hat[..., k, None]
        if k:
            Psi_M_hat = M_hat - psi_hat[..., :, None] * psi[..., k, None, :]
            M_hat = M[..., k - 1, :, :] + B_T[..., k, :, :] @ Psi_M_hat @ B[..., k, :, :]
    return psi, m_hat


def udu(kin):
    """Return (U, d) with I = U diag(d) U^T, U unit upper triangular (000 eqs. 32-34)."""
    psi, m_hat = articulated_bodies(kin)
    psi_O1, p_O1 = kin.at_O1(psi)
    A = p_O1 @ psi_O1.swapaxes(-1, -2)         # A_ik = p_i^T B_ki^T psi_k
    n = A.shape[-1]
    U = np.triu(A, 1) + np.eye(n)
    return U, m_hat
