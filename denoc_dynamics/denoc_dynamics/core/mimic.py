"""
Mimic joints: the bodies' motion from the coordinates, and forward dynamics held to them.

A URDF ``<mimic joint="l" multiplier="a" offset="b"/>`` on joint m makes q_m = a q_l + b:
m is a body but no coordinate.  Every body i moves as

    q_i = a_i q[column_i] + b_i,    qd_i = a_i qd[column_i]                   (1)

(a = 1, b = 0 for a coordinate's own body; :class:`.model.ModelArrays`), which is
q_b = G q + b with G (n_bodies x n), G[i, column_i] = a_i.  :func:`to_bodies` is the
one place where (1) is written; the efforts on the coordinates are G^T tau_b
(:func:`to_coordinates`, a mimic joint's effort on its leader) and the inertia
matrix is G^T M G (:func:`project`).

Forward dynamics in O(n).  The bodies' accelerations solve

    M qdd_b + h = tau_b + C^T lam,   C qdd_b = 0,

with one row qdd_m - a_m qdd_l of C per mimic joint (lam: the efforts that hold the
mimic joints to their leaders) and tau_b the coordinates' efforts on their own bodies:

    qdd_0 = M^-1 (tau_b - h)          (the three sweeps, 002 eqs. 14-19)
    Y = M^-1 C^T,  lam = -(C Y)^-1 C qdd_0,  qdd_b = qdd_0 + Y lam,

one more solve per mimic joint on the same articulated bodies and a Cholesky solve of
C Y, as small as the number of mimic joints.  This is G^T M G qdd = tau - G^T h, the
constrained system (:func:`constrained_cholesky` forms and factors it: the O(n^3)
reference).  :func:`unit_response` gives (G^T M G)^-1 e at the last state from the
same factors, for the simulation's velocity limits.
"""

from .forward_dynamics import cholesky, cholesky_solve, solve
from .gim import composite_inertia_matrix
from .inverse_dynamics import newton_euler
from .kinematics import kinematics
from .model import data_arrays, mimic_arrays, model_arrays
from .spatial import njit, njit_inline
from .udu import articulated_bodies


@njit_inline
def to_bodies(model, x, out, offset):
    """Write out = G x, + b with ``offset``: every body's joint position or rate, (1)."""
    for i in range(out.shape[0]):
        out[i] = model.a[i] * x[model.column[i]] + (model.b[i] if offset else 0.0)


@njit_inline
def to_coordinates(model, tau_b, out):
    """Write out = G^T tau_b: the bodies' efforts on the coordinates."""
    out[:] = 0.0
    for i in range(tau_b.shape[0]):
        out[model.column[i]] += model.a[i] * tau_b[i]


@njit_inline
def project(model, M_b, out):
    """Write out = G^T M_b G (out n x n, M_b n_bodies x n_bodies)."""
    out[:] = 0.0
    column, a = model.column, model.a
    for i in range(M_b.shape[0]):
        for j in range(M_b.shape[0]):
            out[column[i], column[j]] += a[i] * a[j] * M_b[i, j]


@njit
def forward_dynamics(reals, ints, q, qd, tau, f_ext, workspace, qdd):
    """Write qdd = FD(q, qd, tau) on the coordinates of a tree with mimic joints, O(n)."""
    nb = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, nb)
    accelerations(model, data, mimic_arrays(workspace, nb, nb - q.shape[0]), q, qd, tau,
                  f_ext, qdd)


@njit_inline
def accelerations(model, data, mimic, q, qd, tau, f_ext, qdd):
    """
    Write qdd = FD(q, qd, tau) on the coordinates; keep the factors for unit_response.

    Inlined into its caller, which builds the named views once: numba reference-counts
    every array of the tuples that a compiled call takes.
    """
    place_bodies(model, mimic, q, qd)
    kinematics(model, data, mimic.q_b)
    accelerations_at(model, data, mimic, tau, f_ext, qdd)


@njit_inline
def place_bodies(model, mimic, q, qd):
    """Write the bodies' q_b = G q + b and qd_b = G qd, (1)."""
    to_bodies(model, q, mimic.q_b, True)
    to_bodies(model, qd, mimic.qd_b, False)


@njit_inline
def accelerations_at(model, data, mimic, tau, f_ext, qdd):
    """
    Write qdd = FD on the coordinates at the bodies' kinematics in ``data`` and qd_b.

    phi = tau_b - h(q_b, qd_b), h = ID(q_b, qd_b, 0) (000 eqs. 10-18); the three sweeps
    (002 eqs. 14-19) give qdd_0, and one more solve per mimic joint holds the mimic
    joints to their leaders (:func:`hold_to_leaders`).  A caller that needs the
    kinematics at q_b first (the external wrenches) calls :func:`place_bodies`,
    :func:`.kinematics.kinematics` and this.
    """
    nb = model.lam.shape[0]
    column, leader, phi, qdd_b = model.column, model.leader, data.phi, mimic.qdd_b
    newton_euler(model, data, mimic.qd_b, None, f_ext, phi)          # h
    for k in range(nb):
        phi[k] = (tau[column[k]] if leader[k] < 0 else 0.0) - phi[k]
    articulated_bodies(model, data)
    solve(model, data, phi, qdd_b)                                    # qdd_0
    if nb > qdd.shape[0]:
        hold_to_leaders(model, data, mimic)
    for k in range(nb):
        if leader[k] < 0:
            qdd[column[k]] = qdd_b[k]


@njit_inline
def hold_to_leaders(model, data, mimic):
    """qdd_b += Y lam with Y = M^-1 C^T and (C Y) lam = -C qdd_b; C Y factored into S."""
    leader, a, Y, S, rhs = model.leader, model.a, mimic.Y, mimic.S, mimic.tau_b
    nb, j = leader.shape[0], 0
    for m in range(nb):
        if leader[m] >= 0:
            for k in range(nb):
                rhs[k] = 0.0
            rhs[m], rhs[leader[m]] = 1.0, -a[m]                       # C_j^T
            solve(model, data, rhs, Y[j])                             # Y_j = M^-1 C_j^T
            j += 1
    _constraint_matrix(model, Y, S)
    cholesky(S)
    _correct(model, mimic)


@njit_inline
def _constraint_matrix(model, Y, S):
    """Write S = C Y, one row per mimic joint."""
    leader, a = model.leader, model.a
    i = 0
    for m in range(leader.shape[0]):
        if leader[m] >= 0:
            for j in range(S.shape[0]):
                S[i, j] = Y[j, m] - a[m] * Y[j, leader[m]]
            i += 1


@njit_inline
def _correct(model, mimic):
    """qdd_b += Y lam, (C Y) lam = -C qdd_b, with C Y's Cholesky factor in S."""
    leader, a, qdd_b, lam, Y = model.leader, model.a, mimic.qdd_b, mimic.lam, mimic.Y
    i = 0
    for m in range(leader.shape[0]):
        if leader[m] >= 0:
            lam[i] = a[m] * qdd_b[leader[m]] - qdd_b[m]                # -C qdd_0
            i += 1
    cholesky_solve(mimic.S, lam, lam)
    for i in range(lam.shape[0]):
        for j in range(qdd_b.shape[0]):
            qdd_b[j] += Y[i, j] * lam[i]


@njit
def unit_response(model, data, mimic, e, out):
    """Set out = (G^T M G)^-1 e at the state of the last :func:`accelerations`."""
    nb = model.lam.shape[0]
    if nb == e.shape[0]:
        solve(model, data, e, out)                                    # 002 eqs. 14-19
        return
    for k in range(nb):
        mimic.tau_b[k] = e[model.column[k]] if model.leader[k] < 0 else 0.0
    solve(model, data, mimic.tau_b, mimic.qdd_b)
    _correct(model, mimic)
    for k in range(nb):
        if model.leader[k] < 0:
            out[model.column[k]] = mimic.qdd_b[k]


@njit
def constrained_cholesky(model, data, mimic, q, qd, tau, f_ext, M_b, L, qdd):
    """
    Write qdd = FD(q, qd, tau) from G^T M G qdd = tau - G^T h by Cholesky into L.

    M the composite-body GIM of the bodies (000 eq. 22, in M_b), h = ID(q_b, qd_b, 0)
    (000 eqs. 10-18): the O(n^3) reference.  L keeps the factor (:func:`cholesky_solve`).
    """
    to_bodies(model, q, mimic.q_b, True)
    to_bodies(model, qd, mimic.qd_b, False)
    kinematics(model, data, mimic.q_b)
    newton_euler(model, data, mimic.qd_b, None, f_ext, mimic.tau_b)  # h
    composite_inertia_matrix(model, data, M_b)
    project(model, M_b, L)
    to_coordinates(model, mimic.tau_b, qdd)
    for i in range(qdd.shape[0]):
        qdd[i] = tau[i] - qdd[i]
    cholesky(L)
    cholesky_solve(L, qdd, qdd)


@njit
def bodies(reals, ints, X, OUT, offset):
    """OUT[s] = G X[s] (+ b with ``offset``) for every state s: :func:`to_bodies`."""
    model = model_arrays(reals, ints)
    for s in range(X.shape[0]):
        to_bodies(model, X[s], OUT[s], offset)
