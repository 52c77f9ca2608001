"""
The generalized inertia matrix by composite bodies (paper 000, eqs. 19-22).

The composite body i is bodies i..n welded together; its extended mass is

    M~_n = M_n,    M~_i = M_i + B_{i+1,i}^T M~_{i+1} B_{i+1,i}      (000 eq. 21)

and the GIM follows as

    i_ij = p_i^T M~_i B_ij p_j    (i >= j, symmetric)              (000 eq. 22).

Referred to the base origin every B is 1 (see :mod:`.kinematics`), so M~_i is the
reverse running sum of the M_k, and with y_i = M~_i p_i the whole lower triangle is
i_ij = y_i^T p_j: O(n^2) work in a fixed number of array operations.
"""

from functools import lru_cache

import numpy as np

from .spatial import matvec, reverse_cumsum


def composite_inertias(kin) -> np.ndarray:
    """Return M~_i (..., n, 6, 6), the extended masses of the composite bodies (000 eq. 21)."""
    return reverse_cumsum(kin.M, axis=-3)


def inertia_matrix(kin) -> np.ndarray:
    """Return the GIM I (..., n, n) at the configuration of ``kin`` (000 eq. 22)."""
    A = lower_triangle(kin)
    return np.where(_lower_mask(A.shape[-1]), A, np.swapaxes(A, -1, -2))


def lower_triangle(kin) -> np.ndarray:
    """
    Return A (..., n, n) whose lower triangle (i >= j) is the GIM's (000 eq. 22).

    With y_i = M~_i p_i, A_ij = y_i^T p_j; above the diagonal A is not the GIM.
    """
    y = matvec(composite_inertias(kin), kin.p)
    return y @ np.swapaxes(kin.p, -1, -2)


@lru_cache(maxsize=None)
def _lower_mask(n: int) -> np.ndarray:
    """Return the (n, n) mask of i >= j."""
    return np.arange(n)[:, None] >= np.arange(n)
