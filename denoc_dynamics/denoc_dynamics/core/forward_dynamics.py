"""
O(n) forward dynamics by the three recursive sweeps (paper 002, eqs. 14-19).

With phi = tau - ID(q, qd, 0) (Coriolis, centrifugal, gravity and external wrenches
removed), I qdd = phi is solved as U tau^ = phi, D tau~ = tau^, U^T qdd = tau~,
without forming I, over the tree:

    backward k = n..1:  tau^_k = phi_k - p_k^T eta_k',   eta_k = psi_k tau^_k + eta_k',
                        eta_lambda(k)' += B_{k,lambda(k)}^T eta_k              (002 eqs. 14-16)
    diagonal:           tau~_k = tau^_k / m^_k                                  (002 eq. 17)
    forward k = 1..n:   mu_k' = B_{k,lambda(k)} mu_lambda(k),
                        qdd_k = tau~_k - psi_k^T mu_k',   mu_k = p_k qdd_k + mu_k'
                                                                                (002 eqs. 18-19)

(eta_k' sums what the children of k pass down; on a chain it is eta_{k,k+1} of 002.)
psi_k and m^_k come from the articulated-body sweep of :mod:`.udu`; eta and mu are
referred to the joint origins like every body quantity.  The O(n^3) reference solves
the same system with the composite-body GIM and a Cholesky factorization.
"""

import numpy as np

from .gim import composite_inertia_matrix
from .inverse_dynamics import newton_euler
from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import moved_twist, njit, njit_inline, pass_to_parent
from .udu import articulated_bodies


@njit
def forward_dynamics(reals, ints, q, qd, tau, f_ext, workspace, qdd):
    """Write qdd = FD(q, qd, tau) by the O(n) sweeps (002 eqs. 14-19)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    sweeps(model, data, q, qd, tau, f_ext, qdd)


@njit_inline
def sweeps(model, data, q, qd, tau, f_ext, qdd):
    """Write qdd = FD(q, qd, tau): the kinematics at q (000 eqs. 1-15), then :func:`sweeps_at`."""
    kinematics(model, data, q)
    sweeps_at(model, data, qd, tau, f_ext, qdd)


@njit_inline
def sweeps_at(model, data, qd, tau, f_ext, qdd):
    """
    Write qdd = FD at the kinematics in ``data``: phi = tau - ID(q, qd, 0), I qdd = phi (002).

    A caller that needs the kinematics first (the simulation's link wrenches, which
    f_ext then carries) fills them and calls this.
    """
    phi = data.phi
    newton_euler(model, data, qd, None, f_ext, phi)
    for k in range(qd.shape[0]):
        phi[k] = tau[k] - phi[k]
    articulated_bodies(model, data)
    solve(model, data, phi, qdd)


@njit_inline
def solve(model, data, phi, qdd):
    """
    Solve I qdd = phi, I at the articulated bodies in ``data`` (002 eqs. 14-19).

    :func:`reduce` (U tau^ = phi) then :func:`substitute` (D tau~ = tau^, U^T qdd =
    tau~).  The sweeps are written out over the arrays indexed by body (B and B^T as in
    :mod:`.spatial`), with no per-body helper or row view: numba reference-counts the
    arrays that an inlined helper takes, at each body.
    """
    reduce(model, data, phi)
    substitute(model, data, qdd)


@njit_inline
def reduce(model, data, phi):
    """
    Write tau^ = U^-1 phi into data.tau_hat: the backward sweep (002 eqs. 14-16).

    eta_k is read once (what the children passed down), held in locals while tau^_k
    and psi_k tau^_k are added, and stored once before it is passed to the parent: a
    store and a load of each component less on the sweep's chain (this sweep and
    :func:`substitute`, written so, 229 against 306 ns on the Panda, the same numbers
    to the bit).
    """
    lam, prismatic = model.lam, model.prismatic
    n = lam.shape[0]
    r, p, psi, eta, tau_hat = data.r, data.p, data.psi, data.eta, data.tau_hat
    for k in range(n):
        for a in range(6):
            eta[k, a] = 0.0
    for k in range(n - 1, -1, -1):
        eta0, eta1, eta2 = eta[k, 0], eta[k, 1], eta[k, 2]          # eta_k' of the children
        eta3, eta4, eta5 = eta[k, 3], eta[k, 4], eta[k, 5]
        if prismatic[k]:                                            # p_k = [0; e_k]
            tau_hat_k = phi[k] - (p[k, 3] * eta3 + p[k, 4] * eta4 + p[k, 5] * eta5)
        else:                                                       # p_k = [e_k; 0]
            tau_hat_k = phi[k] - (p[k, 0] * eta0 + p[k, 1] * eta1 + p[k, 2] * eta2)
        tau_hat[k] = tau_hat_k                                      # 002 eq. 14
        eta[k, 0] = eta0 + psi[k, 0] * tau_hat_k                    # 002 eq. 15
        eta[k, 1] = eta1 + psi[k, 1] * tau_hat_k
        eta[k, 2] = eta2 + psi[k, 2] * tau_hat_k
        eta[k, 3] = eta3 + psi[k, 3] * tau_hat_k
        eta[k, 4] = eta4 + psi[k, 4] * tau_hat_k
        eta[k, 5] = eta5 + psi[k, 5] * tau_hat_k
        if lam[k] >= 0:
            pass_to_parent(r, eta, k, lam[k])                       # 002 eq. 16


@njit_inline
def substitute(model, data, qdd):
    """
    Write qdd = U^-T D^-1 tau^ from data.tau_hat: the forward sweep (002 eqs. 17-19).

    mu_k = [omega; v] is built in locals from mu_lambda(k) and stored once.
    """
    lam, prismatic = model.lam, model.prismatic
    n = lam.shape[0]
    r, p, psi, m_hat, mu, tau_hat = data.r, data.p, data.psi, data.m_hat, data.mu, data.tau_hat
    for k in range(n):
        j = lam[k]
        if j >= 0:                                                  # 002 eq. 18: B mu_lambda
            w0, w1, w2, v0, v1, v2 = moved_twist(r[k, 0], r[k, 1], r[k, 2], mu[j, 0], mu[j, 1],
                                                 mu[j, 2], mu[j, 3], mu[j, 4], mu[j, 5])
        else:
            w0, w1, w2, v0, v1, v2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        x = ((psi[k, 0] * w0 + psi[k, 1] * w1)                      # psi_k^T mu_k', in pairs:
             + (psi[k, 2] * w2 + psi[k, 3] * v0)                    # the sweep waits on it
             + (psi[k, 4] * v1 + psi[k, 5] * v2))
        qdd_k = tau_hat[k] / m_hat[k] - x                           # 002 eqs. 17, 19
        qdd[k] = qdd_k
        if prismatic[k]:                                            # mu_k = p_k qdd_k + mu_k'
            v0, v1, v2 = v0 + p[k, 3] * qdd_k, v1 + p[k, 4] * qdd_k, v2 + p[k, 5] * qdd_k
        else:
            w0, w1, w2 = w0 + p[k, 0] * qdd_k, w1 + p[k, 1] * qdd_k, w2 + p[k, 2] * qdd_k
        mu[k, 0], mu[k, 1], mu[k, 2], mu[k, 3], mu[k, 4], mu[k, 5] = w0, w1, w2, v0, v1, v2


@njit
def forward_dynamics_cholesky(reals, ints, q, qd, tau, f_ext, workspace, qdd):
    """Write qdd = FD(q, qd, tau) from the composite-body GIM (000 eq. 22) by Cholesky."""
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    phi = data.phi
    kinematics(model, data, q)
    newton_euler(model, data, qd, None, f_ext, phi)
    L = np.empty((n, n))                              # one n x n scratch
    composite_inertia_matrix(model, data, L)
    cholesky(L)                                       # I = L L^T, lower triangle
    for i in range(n):
        phi[i] = tau[i] - phi[i]
    cholesky_solve(L, phi, qdd)                       # L L^T qdd = tau - ID(q, qd, 0)


@njit
def cholesky(L):
    """Overwrite L with its lower Cholesky factor (L symmetric positive definite)."""
    n = L.shape[0]
    for j in range(n):
        for k in range(j):
            for i in range(j, n):
                L[i, j] -= L[i, k] * L[j, k]
        L[j, j] = L[j, j] ** 0.5
        for i in range(j + 1, n):
            L[i, j] /= L[j, j]


@njit
def cholesky_solve(L, b, out):
    """Set out = (L L^T)^-1 b by forward and back substitution (``out`` may be ``b``)."""
    n = L.shape[0]
    for i in range(n):                                # L z = b
        acc = b[i]
        for k in range(i):
            acc -= L[i, k] * out[k]
        out[i] = acc / L[i, i]
    for i in range(n - 1, -1, -1):                    # L^T out = z
        acc = out[i]
        for k in range(i + 1, n):
            acc -= L[k, i] * out[k]
        out[i] = acc / L[i, i]
