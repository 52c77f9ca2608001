"""
O(n) forward dynamics by the three recursive sweeps (paper 002, eqs. 14-19).

With phi = tau - ID(q, qd, 0) (Coriolis, centrifugal, gravity and external wrenches
removed), I qdd = phi is solved as U tau^ = phi, D tau~ = tau^, U^T qdd = tau~,
without forming I:

    backward i = n..1:  tau^_i = phi_i - p_i^T eta_{i,i+1},   eta_i = psi_i tau^_i + eta_{i,i+1},
                        eta_{i-1,i} = B_{i,i-1}^T eta_i                     (002 eqs. 14-16)
    diagonal:           tau~_i = tau^_i / m^_i                              (002 eq. 17)
    forward i = 1..n:   mu_{i,i-1} = B_{i,i-1} mu_{i-1},
                        qdd_i = tau~_i - psi_i^T mu_{i,i-1},  mu_i = p_i qdd_i + mu_{i,i-1}
                                                                            (002 eqs. 18-19)

psi_i and m^_i come from the articulated-body sweep of :mod:`.udu`.  eta_i and mu_i
are referred to the joint origin O_i like every body quantity (see :mod:`.kinematics`),
and B_{i,i-1} (``B_prev``) moves them between neighbouring joints.  The O(n^3)
reference solves the same system with the composite-body GIM and a Cholesky
factorization (:func:`cholesky_solve`, which also solves the equations of motion of
:mod:`.denoc_matrices`).
"""

import numpy as np
from scipy.linalg.lapack import dposv

from .gim import lower_triangle
from .spatial import dot, matvec, vecmat
from .udu import articulated_bodies


def solve_denoc(kin, phi: np.ndarray) -> np.ndarray:
    """Return qdd with I qdd = phi by the three O(n) sweeps (002 eqs. 14-19)."""
    psi, m_hat = articulated_bodies(kin)
    p, B = kin.p, kin.B_prev
    n = p.shape[-2]
    tau_hat = np.empty(phi.shape)
    eta = np.zeros(phi.shape[:-1] + (6,))
    for i in range(n - 1, -1, -1):
        tau_hat[..., i] = phi[..., i] - dot(p[..., i, :], eta)
        eta = eta + psi[..., i, :] * tau_hat[..., i, None]
        if i:
            eta = vecmat(eta, B[..., i, :, :])                      # eta_{i-1,i}
    tau_tilde = tau_hat / m_hat
    qdd = np.empty(phi.shape)
    mu = np.zeros(phi.shape[:-1] + (6,))
    for i in range(n):
        if i:
            mu = matvec(B[..., i, :, :], mu)                        # mu_{i,i-1}
        qdd[..., i] = tau_tilde[..., i] - dot(psi[..., i, :], mu)
        mu = mu + p[..., i, :] * qdd[..., i, None]
    return qdd


def solve_cholesky(kin, phi: np.ndarray) -> np.ndarray:
    """Return qdd with I qdd = phi from the composite-body GIM (000 eq. 22) by Cholesky."""
    return cholesky_solve(lower_triangle(kin), phi)


def cholesky_solve(I: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """
    Return x with I x = phi (I (..., n, n) symmetric positive definite) by Cholesky.

    LAPACK's dposv (Cholesky factor and solve) runs once per state, so one state
    and each state of a batch go through the same kernel.  It reads only the lower
    triangle of I.
    """
    if phi.ndim == 1:
        return _cholesky_solve(I, phi)
    n = phi.shape[-1]
    I_rows, phi_rows = I.reshape(-1, n, n), phi.reshape(-1, n)
    qdd = np.empty(phi_rows.shape)
    for k in range(len(phi_rows)):
        qdd[k] = _cholesky_solve(I_rows[k], phi_rows[k])
    return qdd.reshape(phi.shape)


def _cholesky_solve(I: np.ndarray, phi: np.ndarray) -> np.ndarray:
    _, qdd, info = dposv(I, phi, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(
            f'the inertia matrix is not positive definite (LAPACK dposv info {info})')
    return qdd
