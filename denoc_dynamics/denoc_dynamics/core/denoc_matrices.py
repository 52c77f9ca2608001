"""
The equations of motion with the DeNOC matrices formed explicitly (paper 000, eqs. 14-18).

Writing the twist propagation t_i = B_{i,i-1} t_{i-1} + p_i qd_i (000 eq. 10) for
every link gives t = N qd with the 6n x n DeNOC matrix N = N_l N_d (000 eqs. 14-15):
N_l holds the blocks B_ij (i >= j) and N_d the p_i on its diagonal, so block (i, j)
of N is B_ij p_j, the twist of link i when joint j alone moves at unit rate.
Premultiplying the Newton-Euler equations of the links by N^T removes the
constraint wrenches (000 eqs. 16-17) and leaves

    I qdd + C qd = tau,   I = N^T M N,   C qd = N^T (M Nd qd + Omega M N qd)  (000 eq. 18)

(with gravity as the base acceleration, C qd also holds the gravity efforts).  This
module evaluates eq. 18 as it stands: N as one array, then I = N^T (M N) and
b = N^T w*, where w*_i = M_i td_i + t_i x* M_i t_i are the Newton-Euler wrenches at
qdd = 0 (:func:`.inverse_dynamics.newton_euler_wrenches`).

As everywhere in the core, link i is referred to its joint origin O_i
(see :mod:`.kinematics`), where B_ij p_j = [a_j; l_j + a_j x (O_i - O_j)] for
p_j = [a_j; l_j].  O_i - O_j is the sum of the short joint offsets r_k, k = j+1..i,
so a_j x (O_i - O_j) = sum_k a_j x r_k: a running sum over k, from k = j + 1, of the
n^2 cross products a_j x r_k.  No point far from the links enters.

Cost: I = N^T (M N) takes about 6 n^3 multiplications, against O(n^2) for the
composite bodies (:mod:`.gim`, 000 eqs. 19-22, which are eq. 18 evaluated
recursively) and O(n) for the three sweeps (002).  But it takes a fixed, small
number of numpy calls, so for one state of a short chain it is the fastest way to
the forward dynamics (``Robot.forward_dynamics(method="dense")``, chosen by
``"auto"`` below :data:`.robot.AUTO_DENSE_MAX_DOF` joints).  It is also an
independent check of the recursive algorithms: N^T M N = the composite-body GIM,
and N^T w* = the recursive inverse dynamics at qdd = 0.
"""

from functools import lru_cache
from typing import Optional

import numpy as np

from .inverse_dynamics import accelerations, newton_euler_wrenches
from .spatial import cumsum, lower_mask, skew


@lru_cache(maxsize=16)
def _beyond(n: int) -> np.ndarray:
    """Return (n, 1, n): [j, 0, k] = 1 where k > j (the offsets r_k between O_j and O_i)."""
    return (np.arange(n)[None, :] > np.arange(n)[:, None]).astype(float)[:, None, :]


def denoc_matrix(kin) -> np.ndarray:
    """
    Return N = N_l N_d (..., n, 6, n): N[..., i, :, j] = B_ij p_j (000 eqs. 14-15).

    ``N.reshape(..., 6 n, n)`` is the 6n x n matrix of the paper (rows: link i's six
    twist components; columns: joints j), zero above the block diagonal.
    """
    p, r = kin.p, kin.r
    n = p.shape[-2]
    a_x_r = skew(p[..., :3]) @ r[..., None, :, :].swapaxes(-1, -2)   # [j, :, k] = a_j x r_k
    a_x_O = cumsum(a_x_r * _beyond(n), axis=-1)      # [j, :, i] = a_j x (O_i - O_j), i > j
    N = np.empty(kin.q.shape[:-1] + (n, 6, n))
    below = lower_mask(n)[:, None, :]                  # [i, 0, j]: i >= j
    np.multiply(p[..., None, :, :].swapaxes(-1, -2), below, out=N)   # N_d, below the diagonal
    N[..., 3:, :] += a_x_O.swapaxes(-1, -3)
    return N


def mass_terms(kin):
    """
    Return (N, M N, I), the terms of 000 eq. 18 that depend on q alone.

    N is the DeNOC matrix, M N the links' momenta per unit joint rate (both of the
    shape of :func:`denoc_matrix`) and I = N^T M N the GIM (..., n, n).
    """
    N = denoc_matrix(kin)
    M_N = kin.M @ N                                      # M N, link by link
    I = _flat(N).swapaxes(-1, -2) @ _flat(M_N)           # 000 eq. 18
    return N, M_N, I


def bias_vector(kin, N: np.ndarray, M_N: np.ndarray, qd: np.ndarray, td0: np.ndarray,
                f_ext: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Return b = N^T w* = ID(q, qd, 0), from N and M N of :func:`mass_terms` (000 eq. 17).

    b holds the Coriolis, centrifugal and gravity efforts (``td0`` = [0; -g],
    :func:`.inverse_dynamics.base_acceleration`), less those of the external wrenches
    ``f_ext`` (..., n, 6) [moment about C_i; force] on each link.
    """
    t = (N @ qd[..., None, :, None])[..., 0]             # t = N qd (000 eq. 14)
    t_x, td = accelerations(kin, t, kin.p * qd[..., None], None, td0)
    M_t = (M_N @ qd[..., None, :, None])[..., 0]         # M t = (M N) qd
    w_star = newton_euler_wrenches(kin, td, M_t, t_x, f_ext)
    return (_flat(N).swapaxes(-1, -2) @ _flat(w_star[..., None]))[..., 0]


def equations_of_motion(kin, qd: np.ndarray, td0: np.ndarray,
                        f_ext: Optional[np.ndarray] = None):
    """
    Return (I, b) with I qdd + b = tau: I = N^T M N and b = N^T w* (000 eqs. 17-18).

    :func:`mass_terms`, then :func:`bias_vector` (``td0`` and ``f_ext`` as there).
    """
    N, M_N, I = mass_terms(kin)
    return I, bias_vector(kin, N, M_N, qd, td0, f_ext)


def _flat(A: np.ndarray) -> np.ndarray:
    """Return (..., n, 6, m) as the (..., 6 n, m) matrix of the paper (a view)."""
    return A.reshape(A.shape[:-3] + (6 * A.shape[-3], A.shape[-1]))
