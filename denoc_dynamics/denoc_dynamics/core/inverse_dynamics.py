"""
Recursive inverse dynamics in DeNOC form (paper 000, eqs. 10-18).

With the DeNOC matrices, t = N qd, N = N_l N_d (000 eq. 13), and the equations of
motion are tau = N^T w~ (000 eqs. 16-18): the joint efforts are the projections
p_i^T of the wrenches w~_i that the composite bodies beyond joint i need.  Written
as two sweeps over the tree, each body referred to its joint origin O_i
(:mod:`.kinematics`):

    forward,  i = 1..n:  t_i  = B_{i,lambda(i)} t_lambda(i) + p_i qd_i                (000 eq. 10)
                         td_i = B_{i,lambda(i)} td_lambda(i) + p_i qdd_i + (t_i x p_i) qd_i
                         w*_i = M_i td_i + t_i x* (M_i t_i) - w_ext,i                  (000 eq. 17)
    backward, i = n..1:  tau_i = p_i^T w~_i,   w~_lambda(i) += B_{i,lambda(i)}^T w~_i  (000 eq. 18)

with w~_i starting at w*_i, and gravity as the base acceleration td_0 = [0; -g].
td_i is the spatial acceleration (the rate of the twist at the point fixed in space
where O_i is now), for which pd_i = t_i x p_i.
"""

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import moved_twist, njit, njit_inline, pass_to_parent


@njit
def inverse_dynamics(reals, ints, q, qd, qdd, f_ext, workspace, tau):
    """Write tau = ID(q, qd, qdd) (000 eqs. 10-18)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    newton_euler(model, data, qd, qdd, f_ext, tau)


@njit
def bias_forces(reals, ints, q, qd, f_ext, workspace, tau):
    """Write tau = ID(q, qd, 0): Coriolis, centrifugal, gravity and external efforts."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    newton_euler(model, data, qd, None, f_ext, tau)


@njit_inline
def newton_euler(model, data, qd, qdd, f_ext, tau):
    """
    Write tau = ID(q, qd, qdd) at the kinematics in ``data``; ``qdd`` None is zero.

    ``f_ext`` (n, 6): external wrenches [moment about C_i; force] on each body, in the
    base frame, taken off the Newton-Euler wrenches; None for none (a one-state call
    without wrenches; batches pass zeros, and w - 0 = w to the bit).
    """
    lam, prismatic, g = model.lam, model.prismatic, model.g
    n = qd.shape[0]
    r, p, M, d, t, td, w = data.r, data.p, data.M, data.d, data.t, data.td, data.w
    twists_and_rates(lam, prismatic, g, r, p, t, td, range(n), qd, qdd)
    for i in range(n):                                             # 000 eq. 17, written out:
        h0, h1, h2, mass = M[i, 2, 4], M[i, 0, 5], M[i, 1, 3], M[i, 3, 3]   # M_i's h_i, m_i
        w0, w1, w2, v0, v1, v2 = t[i, 0], t[i, 1], t[i, 2], t[i, 3], t[i, 4], t[i, 5]
        n0 = M[i, 0, 0] * w0 + M[i, 0, 1] * w1 + M[i, 0, 2] * w2 + h1 * v2 - h2 * v1
        n1 = M[i, 1, 0] * w0 + M[i, 1, 1] * w1 + M[i, 1, 2] * w2 + h2 * v0 - h0 * v2
        n2 = M[i, 2, 0] * w0 + M[i, 2, 1] * w1 + M[i, 2, 2] * w2 + h0 * v1 - h1 * v0
        f0 = mass * v0 - h1 * w2 + h2 * w1                         # M_i t_i = [n; f]
        f1 = mass * v1 - h2 * w0 + h0 * w2
        f2 = mass * v2 - h0 * w1 + h1 * w0
        a0, a1, a2, l0, l1, l2 = td[i, 0], td[i, 1], td[i, 2], td[i, 3], td[i, 4], td[i, 5]
        w[i, 0] = (w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1           # t_i x* M_i t_i
                   + (M[i, 0, 0] * a0 + M[i, 0, 1] * a1 + M[i, 0, 2] * a2 + h1 * l2 - h2 * l1))
        w[i, 1] = (w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2           # + M_i td_i
                   + (M[i, 1, 0] * a0 + M[i, 1, 1] * a1 + M[i, 1, 2] * a2 + h2 * l0 - h0 * l2))
        w[i, 2] = (w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
                   + (M[i, 2, 0] * a0 + M[i, 2, 1] * a1 + M[i, 2, 2] * a2 + h0 * l1 - h1 * l0))
        w[i, 3] = w1 * f2 - w2 * f1 + (mass * l0 - h1 * a2 + h2 * a1)
        w[i, 4] = w2 * f0 - w0 * f2 + (mass * l1 - h2 * a0 + h0 * a2)
        w[i, 5] = w0 * f1 - w1 * f0 + (mass * l2 - h0 * a1 + h1 * a0)
        if f_ext is not None:                                      # indexed, no row view
            w[i, 0] -= f_ext[i, 0] + d[i, 1] * f_ext[i, 5] - d[i, 2] * f_ext[i, 4]   # about O_i
            w[i, 1] -= f_ext[i, 1] + d[i, 2] * f_ext[i, 3] - d[i, 0] * f_ext[i, 5]
            w[i, 2] -= f_ext[i, 2] + d[i, 0] * f_ext[i, 4] - d[i, 1] * f_ext[i, 3]
            for k in range(3, 6):
                w[i, k] -= f_ext[i, k]
    project_to_joints(lam, prismatic, r, p, w, tau)


@njit_inline
def project_to_joints(lam, prismatic, r, p, w, tau):
    """
    Write tau_i = p_i^T w~_i, w~_lambda(i) += B^T w~_i: the backward sweep of 000 eq. 18.

    ``w`` holds the bodies' w*_i and becomes w~_i (the composite bodies' wrenches);
    written out over the arrays indexed by body (no per-body helper, no row view).
    """
    for i in range(lam.shape[0] - 1, -1, -1):
        c = 3 if prismatic[i] else 0                               # p_i = [e_i; 0] or [0; e_i]
        tau[i] = p[i, c] * w[i, c] + p[i, c + 1] * w[i, c + 1] + p[i, c + 2] * w[i, c + 2]
        if lam[i] >= 0:
            pass_to_parent(r, w, i, lam[i])                        # B_{i,lambda(i)}^T w~_i


@njit_inline
def twists_and_rates(lam, prismatic, g, r, p, t, td, bodies, qd, qdd):
    """
    Write t_i and td_i of each body i of ``bodies``, parents first (000 eq. 10 and its rate).

    t_i = B_{i,lambda(i)} t_lambda(i) + p_i qd_i and td_i = B_{i,lambda(i)} td_lambda(i)
    + p_i qdd_i + (t_i x p_i) qd_i, from td_0 = [0; -g] (gravity as a base acceleration);
    ``qdd`` None is zero.  t_i = [w; v] and td_i = [a; l] are built in locals and stored
    once (136 against 80 ns on the Panda, the same numbers to the bit), over the arrays
    indexed by body, as :func:`.kinematics.placements` is (numba's reference counting
    of helpers' arrays and row views, per body).
    """
    for i in bodies:
        j = lam[i]
        if j >= 0:                                 # B_{i,lambda(i)}: v + w x r_i
            r0, r1, r2 = r[i, 0], r[i, 1], r[i, 2]
            w0, w1, w2, v0, v1, v2 = moved_twist(r0, r1, r2, t[j, 0], t[j, 1], t[j, 2],
                                                 t[j, 3], t[j, 4], t[j, 5])
            a0, a1, a2, l0, l1, l2 = moved_twist(r0, r1, r2, td[j, 0], td[j, 1], td[j, 2],
                                                 td[j, 3], td[j, 4], td[j, 5])
        else:                                      # td_0 = [0; -g]
            w0, w1, w2, v0, v1, v2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            a0, a1, a2, l0, l1, l2 = 0.0, 0.0, 0.0, -g[0], -g[1], -g[2]
        s = qd[i]
        e0, e1, e2, f0, f1, f2 = p[i, 0], p[i, 1], p[i, 2], p[i, 3], p[i, 4], p[i, 5]
        if prismatic[i]:                           # p_i = [0; e_i]: + p_i qd_i, p_i qdd_i
            v0, v1, v2 = v0 + f0 * s, v1 + f1 * s, v2 + f2 * s
            if qdd is not None:
                l0, l1, l2 = l0 + f0 * qdd[i], l1 + f1 * qdd[i], l2 + f2 * qdd[i]
        else:                                      # p_i = [e_i; 0]
            w0, w1, w2 = w0 + e0 * s, w1 + e1 * s, w2 + e2 * s
            if qdd is not None:
                a0, a1, a2 = a0 + e0 * qdd[i], a1 + e1 * qdd[i], a2 + e2 * qdd[i]
        a0 += s * (w1 * e2 - w2 * e1)              # pd_i qd_i = (t_i x p_i) qd_i
        a1 += s * (w2 * e0 - w0 * e2)
        a2 += s * (w0 * e1 - w1 * e0)
        l0 += s * (w1 * f2 - w2 * f1 + v1 * e2 - v2 * e1)
        l1 += s * (w2 * f0 - w0 * f2 + v2 * e0 - v0 * e2)
        l2 += s * (w0 * f1 - w1 * f0 + v0 * e1 - v1 * e0)
        t[i, 0], t[i, 1], t[i, 2], t[i, 3], t[i, 4], t[i, 5] = w0, w1, w2, v0, v1, v2
        td[i, 0], td[i, 1], td[i, 2], td[i, 3], td[i, 4], td[i, 5] = a0, a1, a2, l0, l1, l2
