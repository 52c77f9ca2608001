"""
Recursive inverse dynamics in DeNOC form (paper 000, eqs. 10-18).

With the DeNOC matrices, t = N qd, N = N_l N_d (000 eq. 13), and the equations of
motion of the chain are tau = N^T w* (000 eqs. 16-18): the joint torques are the
projections p_i^T of the wrenches w~_i that the composite bodies i..n need.

Every twist here is referred to the base origin (see :mod:`.kinematics`), where
every B_ij = 1.  The forward recursion t_i = B_{i,i-1} t_{i-1} + p_i qd_i (000
eq. 10) is then a running sum over the links, and so is its time derivative,

    td_i = td_{i-1} + p_i qdd_i + pd_i qd_i,    pd_i = t_i x p_i,

with gravity entering as the base acceleration td_0 = [0; -g].  The Newton-Euler
wrench of body i is w*_i = M_i td_i + t_i x* M_i t_i (the W_i M_i t_i term of 000
eq. 17 for this reference point), less any external wrench.  The backward recursion
w~_i = w*_i + B_{i+1,i}^T w~_{i+1} is the reverse running sum, and tau_i = p_i^T w~_i.
"""

from typing import Optional

import numpy as np

from .spatial import cross, cross_matrix, cumsum, dot, matvec, reverse_cumsum, vecmat


def base_acceleration(gravity) -> np.ndarray:
    """Return td_0 = [0; -g]: gravity as an upward acceleration of the base."""
    return np.concatenate((np.zeros(3), -np.asarray(gravity, float)))


def inverse_dynamics(kin, qd: np.ndarray, qdd: Optional[np.ndarray], td0: np.ndarray,
                     f_ext: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Return tau = ID(q, qd, qdd) for the chain at the configuration of ``kin``.

    ``td0`` is the base acceleration [0; -g] (:func:`base_acceleration`); ``qdd``
    None means zero.  ``f_ext`` (..., n, 6) holds external wrenches [moment about
    C_i; force] in the base frame acting on each body; they are subtracted from the
    Newton-Euler wrenches.
    """
    p = kin.p
    p_qd = p * qd[..., None]
    t = cumsum(p_qd, axis=-2)                                       # 000 eq. 10
    t_x = cross_matrix(t)                                           # [t_i x]
    accel = matvec(t_x, p_qd)                                       # pd_i qd_i = t_i x p_i qd_i
    if qdd is not None:
        accel += p * qdd[..., None]
    td = td0 + cumsum(accel, axis=-2)
    # 000 eq. 17: w*_i = M_i td_i + t_i x* (M_i t_i), and t x* f = -[t x]^T f
    w_star = matvec(kin.M, td) - vecmat(matvec(kin.M, t), t_x)
    if f_ext is not None:
        moment_O = f_ext[..., :3] + cross(kin.C, f_ext[..., 3:])
        w_star = w_star - np.concatenate((moment_O, f_ext[..., 3:]), axis=-1)
    w_tilde = reverse_cumsum(w_star, axis=-2)                       # 000 eq. 18
    return dot(p, w_tilde)
