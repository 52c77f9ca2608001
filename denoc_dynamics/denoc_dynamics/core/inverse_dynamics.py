"""
Recursive inverse dynamics in DeNOC form (paper 000, eqs. 10-18).

With the DeNOC matrices, t = N qd, N = N_l N_d (000 eq. 13), and the equations of
motion of the chain are tau = N^T w* (000 eqs. 16-18): the joint torques are the
projections p_i^T of the wrenches w~_i that the composite bodies i..n need.

Each body's twist and wrench are referred to its joint origin O_i (see
:mod:`.kinematics`), so B_{i,i-1} only moves the point by r_i = O_i - O_{i-1}.  The
forward recursion t_i = B_{i,i-1} t_{i-1} + p_i qd_i (000 eq. 10) and its time
derivative,

    td_i = B_{i,i-1} td_{i-1} + p_i qdd_i + pd_i qd_i,    pd_i = t_i x p_i,

are running sums over the links (:func:`.spatial.shifted_cumsum`), with gravity as
the base acceleration td_0 = [0; -g] (the same at every point).  td_i is the spatial
acceleration (the rate of the twist at the point fixed in space where O_i is now), so
the Newton-Euler wrench of body i is w*_i = M_i td_i + t_i x* M_i t_i (the W_i M_i t_i
term of 000 eq. 17 for this reference point), less any external wrench.  The backward
recursion w~_i = w*_i + B_{i+1,i}^T w~_{i+1} (000 eq. 18) is the reverse running sum
(:func:`.spatial.shifted_reverse_cumsum`), and tau_i = p_i^T w~_i.
"""

from typing import Optional

import numpy as np

from .spatial import (cross, cross_matrix, dot, matvec, shifted_cumsum,
                      shifted_reverse_cumsum, vecmat)


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
    p, r_x = kin.p, kin.r_x
    p_qd = p * qd[..., None]
    t = shifted_cumsum(p_qd, r_x)                                     # 000 eq. 10
    t_x, td = accelerations(kin, t, p_qd, qdd, td0)
    w_star = newton_euler_wrenches(kin, td, matvec(kin.M, t), t_x, f_ext)
    w_tilde = shifted_reverse_cumsum(w_star, r_x)                     # 000 eq. 18
    return dot(p, w_tilde)


def accelerations(kin, t: np.ndarray, p_qd: np.ndarray, qdd: Optional[np.ndarray],
                  td0: np.ndarray):
    """
    Return ([t_i x], td_i): the twists' cross-product matrices and the accelerations.

    td_i = B_{i,i-1} td_{i-1} + p_i qdd_i + pd_i qd_i with pd_i = t_i x p_i, summed
    from td_0 = ``td0`` (the time derivative of 000 eq. 10; td = N qdd + Nd qd,
    000 eq. 17).  ``p_qd`` holds p_i qd_i; ``qdd`` None means zero.
    """
    t_x = cross_matrix(t)                                           # [t_i x]
    accel = matvec(t_x, p_qd)                                       # pd_i qd_i = t_i x p_i qd_i
    if qdd is not None:
        accel += kin.p * qdd[..., None]
    return t_x, td0 + shifted_cumsum(accel, kin.r_x)


def newton_euler_wrenches(kin, td: np.ndarray, M_t: np.ndarray, t_x: np.ndarray,
                          f_ext: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Return w*_i = M_i td_i + t_i x* (M_i t_i), less the external wrenches (000 eq. 17).

    ``M_t`` holds the momenta M_i t_i and ``t_x`` the matrices [t_i x]; the dual cross
    product is t x* f = -[t x]^T f.  ``f_ext`` as in :func:`inverse_dynamics`.
    """
    w_star = matvec(kin.M, td) - vecmat(M_t, t_x)
    if f_ext is not None:
        moment_O = f_ext[..., :3] + cross(kin.d, f_ext[..., 3:])     # about O_i
        w_star = w_star - np.concatenate((moment_O, f_ext[..., 3:]), axis=-1)
    return w_star
