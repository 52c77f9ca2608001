"""
Small vector helpers shared by the algorithms.

A twist is t = [w; v] and a wrench is [n; f] (angular part first), as in paper 000.
Every function broadcasts over leading axes, so one state and a batch of states go
through the same code.
"""

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


def skew(a: np.ndarray) -> np.ndarray:
    """Return the cross-product matrix [a x] of 3-vectors on the last axis."""
    return -np.einsum('ijk,...k->...ij', _LEVI_CIVITA, a)


def _spatial_tensor(force: bool) -> np.ndarray:
    """Return E with (t x s)_i = E_ijk t_j s_k (motion) or (t x* f)_i (force)."""
    E = np.zeros((6, 6, 6))
    A, L = slice(0, 3), slice(3, 6)
    if force:       # [w x n + v x f; w x f]
        E[A, A, A] = E[A, L, L] = E[L, A, L] = _LEVI_CIVITA
    else:           # [w x s_w; w x s_v + v x s_w]
        E[A, A, A] = E[L, A, L] = E[L, L, A] = _LEVI_CIVITA
    return E


_E_MOTION, _E_FORCE = _spatial_tensor(False), _spatial_tensor(True)


def cross_motion(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Return t x s for twists referred to a fixed point: [w x s_w; w x s_v + v x s_w]."""
    return np.einsum('ijk,...j,...k->...i', _E_MOTION, t, s)


def cross_force(t: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Return t x* f, the dual cross product on wrenches: [w x n + v x f; w x f]."""
    return np.einsum('ijk,...j,...k->...i', _E_FORCE, t, f)


if hasattr(np, 'matvec'):      # numpy >= 2.2: ufuncs with the least call overhead
    def matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Return A x for stacks of matrices and vectors."""
        return np.matvec(A, x)

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Return a . b over the last axis."""
        return np.vecdot(a, b)
else:                           # older numpy, e.g. Ubuntu's for ROS 2 from apt
    def matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Return A x for stacks of matrices and vectors."""
        return (A @ x[..., None])[..., 0]

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Return a . b over the last axis."""
        return np.einsum('...i,...i->...', a, b)


def cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    """Return sum_{k <= i} x_k along ``axis`` (the forward recursion of a sum)."""
    return np.add.accumulate(x, axis=axis)


def reverse_cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    """Return sum_{k >= i} x_k along ``axis`` (the backward recursion of a sum)."""
    flip = (slice(None),) * (axis % x.ndim) + (slice(None, None, -1),)
    return np.add.accumulate(x[flip], axis=axis)[flip]
