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
from .spatial import add_motion_cross, add_p, body_inertia_times, force_cross, njit
from .spatial import njit_inline, p_dot, twist_to_child, wrench_to_parent


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
    for i in range(n):
        twist_and_rate(lam, prismatic, g, r, p, t, td, i, qd, qdd)
        body_inertia_times(M[i], t[i], w[i], False)                 # M_i t_i
        force_cross(t[i], w[i], w[i])                               # t_i x* M_i t_i
        body_inertia_times(M[i], td[i], w[i], True)                 # 000 eq. 17
        if f_ext is not None:
            f = f_ext[i]
            w[i, 0] -= f[0] + d[i, 1] * f[5] - d[i, 2] * f[4]      # moment about O_i
            w[i, 1] -= f[1] + d[i, 2] * f[3] - d[i, 0] * f[5]
            w[i, 2] -= f[2] + d[i, 0] * f[4] - d[i, 1] * f[3]
            for k in range(3, 6):
                w[i, k] -= f[k]
    for i in range(n - 1, -1, -1):
        tau[i] = p_dot(p[i], w[i], prismatic[i])                   # 000 eq. 18
        if lam[i] >= 0:
            wrench_to_parent(r[i], w[i], w[lam[i]])


@njit_inline
def twist_and_rate(lam, prismatic, g, r, p, t, td, i, qd, qdd):
    """
    Write t_i and td_i from body lambda(i)'s (000 eq. 10 and its rate); ``qdd`` None is 0.

    t_i = B_{i,lambda(i)} t_lambda(i) + p_i qd_i and td_i = B_{i,lambda(i)} td_lambda(i)
    + p_i qdd_i + (t_i x p_i) qd_i, from td_0 = [0; -g] (gravity as a base acceleration).
    The model's and the workspace's arrays, not the named tuples, as
    :func:`.kinematics.placement` takes them (numba's reference counting per body).
    """
    if lam[i] >= 0:
        twist_to_child(r[i], t[lam[i]], t[i])                   # 000 eq. 10
        twist_to_child(r[i], td[lam[i]], td[i])
    else:
        t[i, :] = 0.0
        td[i, :3] = 0.0
        td[i, 3], td[i, 4], td[i, 5] = -g[0], -g[1], -g[2]    # td_0 = [0; -g]
    add_p(p[i], qd[i], prismatic[i], t[i])
    if qdd is not None:
        add_p(p[i], qdd[i], prismatic[i], td[i])
    add_motion_cross(t[i], p[i], qd[i], td[i])                 # pd_i qd_i
