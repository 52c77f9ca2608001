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

import math

import numba
from numba import types
import numpy as np

from .gim import composite_inertia_matrix
from .inverse_dynamics import newton_euler
from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import add_p, dot, njit, njit_inline, p_dot, twist_to_child, wrench_to_parent
from .udu import articulated_bodies


@njit
def forward_dynamics(reals, ints, q, qd, tau, f_ext, workspace, qdd):
    """Write qdd = FD(q, qd, tau) by the O(n) sweeps (002 eqs. 14-19)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    phi = data.phi
    kinematics(model, data, q)
    newton_euler(model, data, qd, None, f_ext, phi)
    for k in range(q.shape[0]):
        phi[k] = tau[k] - phi[k]
    articulated_bodies(model, data)
    solve(model, data, phi, qdd)


@njit_inline
def solve(model, data, phi, qdd):
    """Solve I qdd = phi, I at the articulated bodies in ``data`` (002 eqs. 14-19)."""
    lam, prismatic = model.lam, model.prismatic
    n = lam.shape[0]
    r, p, psi, m_hat, eta, mu, tau_hat = (data.r, data.p, data.psi, data.m_hat, data.eta,
                                          data.mu, data.tau_hat)
    for k in range(n):
        for a in range(6):
            eta[k, a] = 0.0
    for k in range(n - 1, -1, -1):
        tau_hat[k] = phi[k] - p_dot(p[k], eta[k], prismatic[k])    # 002 eq. 14
        for a in range(6):
            eta[k, a] += psi[k, a] * tau_hat[k]                     # 002 eq. 15
        if lam[k] >= 0:
            wrench_to_parent(r[k], eta[k], eta[lam[k]])             # 002 eq. 16
    for k in range(n):
        if lam[k] >= 0:
            twist_to_child(r[k], mu[lam[k]], mu[k])                 # 002 eq. 18
        else:
            for a in range(6):
                mu[k, a] = 0.0
        qdd[k] = tau_hat[k] / m_hat[k] - dot(psi[k], mu[k])         # 002 eqs. 17, 19
        add_p(p[k], qdd[k], prismatic[k], mu[k])


@njit
def forward_dynamics_mimic(reals, ints, body, leader, a, b, q, qd, tau, f_ext, workspace, qdd):
    """
    Write qdd = FD(q, qd, tau) of a tree with mimic joints q_m = a_m q_l + b_m, in O(n).

    ``body[c]`` is coordinate c's body; ``leader[k]`` is body k's leader body, -1 if
    k is no mimic joint.  The bodies' accelerations solve M qdd_b + h = tau_b + C^T lam,
    C qdd_b = 0, with one row qdd_m - a_m qdd_l of C per mimic joint (lam: the efforts
    that hold the mimic joints to their leaders) and tau_b the coordinates' efforts on
    their own bodies:

        qdd_0 = M^-1 (tau_b - h)          (the three sweeps, 002 eqs. 14-19)
        Y = M^-1 C^T,  lam = -(C Y)^-1 C qdd_0,  qdd_b = qdd_0 + Y lam,

    one more sweep pair per mimic joint (M^-1 from the same articulated bodies) and a
    Cholesky solve of C Y, as small as the number of mimic joints.  This is the
    constrained system G^T M G qdd = tau - G^T h of :meth:`.robot.Robot.forward_dynamics`.
    """
    nb = leader.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, nb)
    q_b, qd_b, phi = np.empty(nb), np.empty(nb), data.phi
    for c in range(q.shape[0]):
        q_b[body[c]], qd_b[body[c]] = q[c], qd[c]
    mimics = np.flatnonzero(leader >= 0)
    for m in mimics:
        q_b[m], qd_b[m] = a[m] * q_b[leader[m]] + b[m], a[m] * qd_b[leader[m]]
    kinematics(model, data, q_b)
    newton_euler(model, data, qd_b, None, f_ext, phi)                # h
    for k in range(nb):
        phi[k] = -phi[k]
    for c in range(q.shape[0]):
        phi[body[c]] += tau[c]                                        # tau_b - h
    articulated_bodies(model, data)
    qdd_b = np.empty(nb)
    solve(model, data, phi, qdd_b)                                    # qdd_0
    k = mimics.shape[0]
    Y, S, lam = np.zeros((k, nb)), np.empty((k, k)), np.empty(k)
    for i in range(k):
        phi[:] = 0.0
        phi[mimics[i]], phi[leader[mimics[i]]] = 1.0, -a[mimics[i]]  # C_i^T
        solve(model, data, phi, Y[i])                                 # Y_i = M^-1 C_i^T
    for i in range(k):
        m, lead = mimics[i], leader[mimics[i]]
        lam[i] = qdd_b[lead] * a[m] - qdd_b[m]                       # -C qdd_0
        for j in range(k):
            S[i, j] = Y[j, m] - a[m] * Y[j, lead]                     # C Y
    cholesky(S)
    cholesky_solve(S, lam, lam)
    for i in range(k):
        for j in range(nb):
            qdd_b[j] += Y[i, j] * lam[i]
    for c in range(q.shape[0]):
        qdd[c] = qdd_b[body[c]]


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


_VECTOR, _INDICES = types.float64[::1], types.int64[::1]
_CHECKED = {'cache': True, 'error_model': 'numpy'}


@numba.njit(inline='always')
def _lengths_differ(n, q, qd, tau, qdd):
    """Return True unless q, qd, tau and qdd all have length n."""
    return q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n


@numba.njit(inline='always')
def _not_finite(qdd):
    """Return 2 if an entry of qdd is NaN or infinite, else 0."""
    for k in range(qdd.shape[0]):
        if not math.isfinite(qdd[k]):
            return 2
    return 0


@numba.njit(types.int64(_VECTOR, types.int64[:, ::1], _VECTOR, _VECTOR, _VECTOR, _VECTOR,
                        _VECTOR), **_CHECKED)
def forward_dynamics_checked(reals, ints, q, qd, tau, workspace, qdd):
    """
    Run :func:`forward_dynamics` on one state as given, no external wrench; 0 or why not.

    For the API's one-state call: compiled for float64 vectors only (anything else is
    a TypeError from numba's dispatch, and the caller's full checks take over); 1 if
    a vector is not of length n, 2 if qdd is not finite.
    """
    if _lengths_differ(ints.shape[1], q, qd, tau, qdd):
        return 1
    forward_dynamics(reals, ints, q, qd, tau, None, workspace, qdd)
    return _not_finite(qdd)


@numba.njit(types.int64(_VECTOR, types.int64[:, ::1], _INDICES, _INDICES, _VECTOR, _VECTOR,
                        _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR), **_CHECKED)
def forward_dynamics_mimic_checked(reals, ints, body, leader, a, b, q, qd, tau, workspace,
                                   qdd):
    """:func:`forward_dynamics_mimic` as :func:`forward_dynamics_checked` runs its kernel."""
    if _lengths_differ(body.shape[0], q, qd, tau, qdd):
        return 1
    forward_dynamics_mimic(reals, ints, body, leader, a, b, q, qd, tau, None, workspace, qdd)
    return _not_finite(qdd)
