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

    M qdd_b + h = tau_b + C^T lam,   C qdd_b = 0,                               (2)

with one row C_j = e_m^T - a_m e_l^T of C per mimic joint m with leader l (lam: the
efforts that hold the mimic joints to their leaders) and tau_b the coordinates' efforts
on their own bodies.  This is G^T M G qdd = tau - G^T h (C G = 0): the constrained
system that :func:`constrained_cholesky` forms and factors, the O(n^3) reference.

With M = U D U^T (000 eqs. 32-35; :mod:`.udu`), M^-1 = U^-T D^-1 U^-1 (000 eq. 36),
and the solve of :mod:`.forward_dynamics` is U tau^ = phi (the backward sweep, 002
eqs. 14-16) followed by qdd = U^-T D^-1 tau^ (002 eqs. 17-19).  Write

    tau^_0 = U^-1 (tau_b - h),   Z = U^-1 C^T,   S = C M^-1 C^T = Z^T D^-1 Z.   (3)

Column j of Z is column m of U^-1 minus a_m times column l: (U^-1)_ik is non-zero
only for i on the path from k to the base, and 000 eq. 38 gives it by walking
psi_k from body k to the base (:func:`.udu.walk_to_base`), O(depth) per column.  So
Z and S = sum_i Z_i^T Z_i / m^_i are computed along the paths from the mimic joints
and their leaders to the base.  Then

    C qdd_0 = C M^-1 (tau_b - h) = Z^T D^-1 tau^_0,     S lam = -C qdd_0,
    qdd_b = M^-1 (tau_b - h + C^T lam) = U^-T D^-1 (tau^_0 + Z lam),             (4)

and C qdd_b = Z^T D^-1 tau^_0 + S lam = 0.  The backward sweep is done once, on
tau_b - h; the constraint efforts enter its result as Z lam, and the forward sweep
is done once, on the corrected tau^: one O(n) solve, the walks along the paths, and
a Cholesky solve of S, as small as the number of mimic joints (:func:`hold_to_leaders`).
:func:`unit_response` gives (G^T M G)^-1 e at the last state from the same
articulated bodies, Z and S's factor, for the simulation's velocity limits.
"""

from .forward_dynamics import cholesky, cholesky_solve, reduce, solve, substitute, sweeps
from .gim import composite_inertia_matrix
from .inverse_dynamics import newton_euler
from .kinematics import kinematics
from .model import data_arrays, mimic_arrays, model_arrays
from .spatial import njit, njit_inline
from .udu import articulated_bodies, walk_to_base


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
    """
    Write qdd = FD(q, qd, tau) on the coordinates of a tree with mimic joints, O(n).

    A tree without them (q_b = q) takes the sweeps of :mod:`.forward_dynamics` as they
    are (002 eqs. 14-19): the same numbers, without the copies to and from the bodies.
    """
    nb = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, nb)
    if nb == q.shape[0]:
        sweeps(model, data, q, qd, tau, f_ext, qdd)
        return
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

    phi = tau_b - h(q_b, qd_b), h = ID(q_b, qd_b, 0) (000 eqs. 10-18); the backward
    sweep gives tau^_0 = U^-1 phi (002 eqs. 14-16), :func:`hold_to_leaders` adds Z lam
    (4), the forward sweep gives qdd_b (002 eqs. 17-19).  A caller that needs the
    kinematics at q_b first (the external wrenches) calls :func:`place_bodies`,
    :func:`.kinematics.kinematics` and this.
    """
    nb = model.lam.shape[0]
    column, leader, phi, qdd_b = model.column, model.leader, data.phi, mimic.qdd_b
    newton_euler(model, data, mimic.qd_b, None, f_ext, phi)          # h
    for k in range(nb):
        phi[k] = (tau[column[k]] if leader[k] < 0 else 0.0) - phi[k]
    articulated_bodies(model, data)
    reduce(model, data, phi)                                          # tau^_0 = U^-1 phi
    if nb > qdd.shape[0]:
        constraint_columns(model.lam, data.r, data.p, data.psi, leader, model.a, mimic.Z)
        constraint_metric(mimic.Z, data.m_hat, mimic.S)               # S = Z^T D^-1 Z, (3)
        cholesky(mimic.S)
        hold_to_leaders(data, mimic)
    substitute(model, data, qdd_b)                                    # 002 eqs. 17-19
    for k in range(nb):
        if leader[k] < 0:
            qdd[column[k]] = qdd_b[k]


@njit_inline
def constraint_columns(lam, r, p, psi, leader, a, Z):
    """
    Fill Z (n_bodies, c) = U^-1 C^T, one column per mimic joint m (000 eq. 38), (3).

    C_j^T = e_m - a_m e_l: column m of U^-1 minus a_m times column l, each a walk from
    the body to the base.  A body m is a mimic joint's where leader[m] >= 0 and
    leader[m] != m (the model writes -1 for a coordinate's body, a frame writes m).
    """
    Z[:] = 0.0
    j = 0
    for m in range(leader.shape[0]):
        if leader[m] >= 0 and leader[m] != m:
            Z[m, j] += 1.0                                            # (U^-1)_mm = 1
            walk_to_base(lam, r, p, psi, m, Z, j, True, 1.0)
            Z[leader[m], j] -= a[m]
            walk_to_base(lam, r, p, psi, leader[m], Z, j, True, -a[m])
            j += 1


@njit_inline
def constraint_metric(Z, m_hat, S):
    """Write S = Z^T D^-1 Z = C M^-1 C^T (c x c, Z zero off the paths to the base), (3)."""
    for i in range(S.shape[0]):
        for j in range(i + 1):
            acc = 0.0
            for k in range(Z.shape[0]):
                acc += Z[k, i] * Z[k, j] / m_hat[k]
            S[i, j] = S[j, i] = acc


@njit_inline
def hold_to_leaders(data, mimic):
    """
    tau^ += Z lam with S lam = -Z^T D^-1 tau^ (4); S's Cholesky factor in mimic.S.

    Between the backward and the forward sweep: qdd_b = M^-1 (phi + C^T lam) then holds
    C qdd_b = 0.
    """
    Z, lam, tau_hat, m_hat = mimic.Z, mimic.lam, data.tau_hat, data.m_hat
    for i in range(lam.shape[0]):
        acc = 0.0
        for k in range(Z.shape[0]):
            acc -= Z[k, i] * tau_hat[k] / m_hat[k]                    # -C qdd_0
        lam[i] = acc
    cholesky_solve(mimic.S, lam, lam)
    for i in range(lam.shape[0]):
        for k in range(Z.shape[0]):
            tau_hat[k] += Z[k, i] * lam[i]


@njit
def unit_response(model, data, mimic, e, out):
    """Set out = (G^T M G)^-1 e at the state of the last :func:`accelerations`, (4)."""
    nb = model.lam.shape[0]
    if nb == e.shape[0]:
        solve(model, data, e, out)                                    # 002 eqs. 14-19
        return
    for k in range(nb):
        mimic.tau_b[k] = e[model.column[k]] if model.leader[k] < 0 else 0.0
    reduce(model, data, mimic.tau_b)
    hold_to_leaders(data, mimic)
    substitute(model, data, mimic.qdd_b)
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
