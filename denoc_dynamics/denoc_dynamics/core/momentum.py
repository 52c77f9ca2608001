"""
Generalized momentum p = I qd, C^T qd and gravity g(q) in one pass pair (paper 000).

The momentum observer (:mod:`.momentum_observer`) integrates

    pd = tau + C^T(q, qd) qd - g(q) + tau_ext,

the equations of motion I qdd + C qd + g = tau + tau_ext written for p = I qd with
Id = C + C^T (De Luca and Mattone, ICRA 2005).  All three terms come from the DeNOC
recursions at (q, qd), without forming I or C and without finite differences.

With the DeNOC matrices t = N qd and I = N^T M N (000 eqs. 13, 19), p = N^T (M t):
the momentum of each body, M_i t_i, gathered into the composite bodies like the
wrenches of the inverse dynamics (000 eq. 18),

    H_i = M_i t_i + sum over children c of i of B_{c,i}^T H_c,     p_i = p_i^T H_i,

H_i the momentum of everything beyond joint i about O_i.  Differentiating p_i =
p_i^T H_i along the motion, with spatial (fixed-point) rates as in
:mod:`.inverse_dynamics` (pd_i = t_i x p_i; the rate of a body's momentum M_j t_j
is M_j td_j + t_j x* M_j t_j):

    pd_i = (t_i x p_i)^T H_i + p_i^T sum_j (M_j td_j + t_j x* M_j t_j).

The second sum is the backward pass of the inverse dynamics (000 eqs. 17-18), whose
projection is I qdd + C qd (no gravity); the first term holds no qdd.  So
pd = I qdd + C qd + [(t_i x p_i)^T H_i]_i, and since pd = I qdd + Id qd,

    Id qd - C qd = C^T qd,     (C^T qd)_i = (t_i x p_i)^T H_i:

C^T qd is what the rate of the joint axes, pd_i = t_i x p_i, does to the momentum
beyond each joint; the C q̇ of Coriolis and centrifugal forces needs the
velocity-product accelerations, C^T qd does not.  Gravity's g_i = p_i^T G_i gathers
G_i = M_i [0; -g] the same way (000 eqs. 17-18 with td_0 = [0; -g], qd = qdd = 0).
One forward sweep for the twists and one backward sweep for H and G: O(n).

With mimic joints q_b = G q + b, I_r = G^T I G, so p_r = G^T p, (C_r^T qd)_r =
G^T C^T qd_b and g_r = G^T g (the caller projects).
"""

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import add_motion_cross, add_p, body_inertia_times, dot, njit, njit_inline
from .spatial import p_dot, twist_to_child, wrench_to_parent


@njit
def momentum_terms(reals, ints, q, qd, workspace, p_out, ct_qd, g_out):
    """Write p = I qd, C^T qd and g(q) at (q, qd) (module doc), each (n,)."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    momentum_sweeps(model, data, qd, p_out, ct_qd, g_out)


@njit_inline
def momentum_sweeps(model, data, qd, p_out, ct_qd, g_out):
    """Write p, C^T qd and g at the kinematics in ``data`` (module doc)."""
    lam, prismatic, g = model.lam, model.prismatic, model.g
    n = qd.shape[0]
    r, p, M, t, td, H, G = data.r, data.p, data.M, data.t, data.td, data.w, data.y
    for i in range(n):
        if lam[i] >= 0:
            twist_to_child(r[i], t[lam[i]], t[i])                  # 000 eq. 10
        else:
            for a in range(6):
                t[i, a] = 0.0
        add_p(p[i], qd[i], prismatic[i], t[i])
        body_inertia_times(M[i], t[i], H[i], False)                # M_i t_i
        td[i, 0], td[i, 1], td[i, 2] = 0.0, 0.0, 0.0
        td[i, 3], td[i, 4], td[i, 5] = -g[0], -g[1], -g[2]         # td_0 = [0; -g]
        body_inertia_times(M[i], td[i], G[i], False)               # M_i [0; -g]
    for i in range(n - 1, -1, -1):
        for a in range(6):
            td[i, a] = 0.0
        add_motion_cross(t[i], p[i], 1.0, td[i])                   # pd_i = t_i x p_i
        p_out[i] = p_dot(p[i], H[i], prismatic[i])                 # p_i^T H_i
        ct_qd[i] = dot(td[i], H[i])                                # (t_i x p_i)^T H_i
        g_out[i] = p_dot(p[i], G[i], prismatic[i])
        if lam[i] >= 0:
            wrench_to_parent(r[i], H[i], H[lam[i]])                # 000 eq. 18
            wrench_to_parent(r[i], G[i], G[lam[i]])
