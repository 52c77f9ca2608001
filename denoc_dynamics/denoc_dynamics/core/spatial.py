"""
Small vector helpers shared by the algorithms.

A twist is t = [w; v] and a wrench is [n; f] (angular part first), as in paper 000.
Every function broadcasts over leading axes, so one state and a batch of states go
through the same code.
"""

from functools import lru_cache

import numpy as np


_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """
    Return a x b for 3-vectors on the last axis (broadcasting).

    One einsum with the Levi-Civita symbol: a single numpy call, which is what costs
    for the few vectors of one robot state.
    """
    return np.einsum('ijk,...j,...k->...i', _LEVI_CIVITA, a, b)


_SKEW_BASIS = -_LEVI_CIVITA.transpose(2, 0, 1).reshape(3, 9)     # a E = [a x] flattened


def skew(a: np.ndarray) -> np.ndarray:
    """Return the cross-product matrix [a x] of 3-vectors on the last axis (one product)."""
    return (a @ _SKEW_BASIS).reshape(a.shape[:-1] + (3, 3))


def _cross_matrix_basis() -> np.ndarray:
    """
    Return E (6, 36) with t E = [t x] flattened, for a twist t = [w; v].

    [t x] = [[w x, 0], [v x, w x]] (the motion cross product at a fixed point, with
    (t x s)_i = sum_k [t x]_ik s_k).  Each entry is +-1 times one component of t, so
    the product with E is exact.
    """
    E = np.zeros((6, 6, 6))         # E[j, i, k]: coefficient of t_j in [t x]_ik
    for j in range(3):
        block = _LEVI_CIVITA[:, j, :]           # [a x]_ik = eps_ijk a_j
        E[j, :3, :3] = E[j, 3:, 3:] = block     # w x in both diagonal blocks
        E[3 + j, 3:, :3] = block                # v x below the diagonal
    return E.reshape(6, 36)


_CROSS_BASIS = _cross_matrix_basis()


def cross_matrix(t: np.ndarray) -> np.ndarray:
    """
    Return [t x] (..., 6, 6), the matrix of the twist cross product t x s.

    For twists referred to a fixed point, t x s = [w x s_w; w x s_v + v x s_w] =
    [t x] s, and the dual product on wrenches is t x* f = [w x n + v x f; w x f] =
    -[t x]^T f.  Forming the matrix once is one matrix product (BLAS) for any number
    of twists, and it serves both products.
    """
    return (t @ _CROSS_BASIS).reshape(t.shape[:-1] + (6, 6))


if hasattr(np, 'matvec'):      # numpy >= 2.2: ufuncs with the least call overhead
    def matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Return A x for stacks of matrices and vectors."""
        return np.matvec(A, x)

    def vecmat(x: np.ndarray, A: np.ndarray) -> np.ndarray:
        """Return x^T A (that is, A^T x) for stacks of vectors and matrices."""
        return np.vecmat(x, A)

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Return a . b over the last axis."""
        return np.vecdot(a, b)
else:                           # older numpy, e.g. Ubuntu's for ROS 2 from apt
    def matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Return A x for stacks of matrices and vectors."""
        return (A @ x[..., None])[..., 0]

    def vecmat(x: np.ndarray, A: np.ndarray) -> np.ndarray:
        """Return x^T A (that is, A^T x) for stacks of vectors and matrices."""
        return (x[..., None, :] @ A)[..., 0, :]

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Return a . b over the last axis."""
        return np.einsum('...i,...i->...', a, b)


def cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    """Return sum_{k <= i} x_k along ``axis`` (the forward recursion of a sum)."""
    return np.add.accumulate(x, axis=axis)


_FLIP = {-k: (Ellipsis, slice(None, None, -1)) + (slice(None),) * (k - 1) for k in (1, 2, 3)}


def reverse_cumsum(x: np.ndarray, axis: int, out: np.ndarray = None) -> np.ndarray:
    """
    Return sum_{k >= i} x_k along ``axis`` (the backward recursion of a sum).

    ``out``, if given, receives the result (it may be ``x`` itself).
    """
    flip = _FLIP.get(axis) or (slice(None),) * (axis % x.ndim) + (slice(None, None, -1),)
    if out is None:
        return np.add.accumulate(x[flip], axis=axis)[flip]
    np.add.accumulate(x[flip], axis=axis, out=out[flip])
    return out


def shifted_cumsum(x: np.ndarray, r_x: np.ndarray) -> np.ndarray:
    """
    Return y_i = B_{i,i-1} y_{i-1} + x_i, y_1 = x_1, for twists x_i at the points O_i.

    B_{i,i-1} moves a twist [w; v] from O_{i-1} to O_i = O_{i-1} + r_i: [w; v + w x r_i]
    (000 eq. 11).  Moves add up, so y_i = sum_{k <= i} B_ik x_k is a running sum of x
    plus a running sum of W_{i-1} x r_i, with W the running sum of the angular parts:
    two passes over the links at once.  x (..., n, 6); r_x (..., n, 3, 3) holds
    [r_i x] (r_1 is not used).
    """
    y = cumsum(x, axis=-2)
    y[..., 1:, 3:] -= cumsum(matvec(r_x[..., 1:, :, :], y[..., :-1, :3]), axis=-2)
    return y


def shifted_reverse_cumsum(w: np.ndarray, r_x: np.ndarray) -> np.ndarray:
    """
    Return y_i = w_i + B_{i+1,i}^T y_{i+1}, y_n = w_n, for wrenches w_i at the points O_i.

    B_{i+1,i}^T moves a wrench [n; f] from O_{i+1} to O_i: [n + r_{i+1} x f; f].  As in
    :func:`shifted_cumsum`: the reverse running sum of w, plus the reverse running sum
    of r_{i+1} x F_{i+1}, with F the reverse running sum of the forces.
    """
    y = reverse_cumsum(w, axis=-2)
    y[..., :-1, :3] += reverse_cumsum(matvec(r_x[..., 1:, :, :], y[..., 1:, 3:]), axis=-2)
    return y


@lru_cache(maxsize=None)
def lower_mask(n: int) -> np.ndarray:
    """Return the (n, n) boolean mask of i >= j: where N_l and the GIM's lower triangle live."""
    return np.arange(n)[:, None] >= np.arange(n)
