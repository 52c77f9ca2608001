"""
Small vector helpers shared by the algorithms.

A twist is t = [w; v] and a wrench is [n; f] (angular part first), as in paper 000.
Every function broadcasts over leading axes, so one state and a batch of states go
through the same code.
"""

import numpy as np


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return a x b for 3-vectors on the last axis (broadcasting)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def skew(a: np.ndarray) -> np.ndarray:
    """Return the cross-product matrix [a x] of 3-vectors on the last axis."""
    out = np.zeros(a.shape + (3,))
    out[..., 0, 1], out[..., 0, 2] = -a[..., 2], a[..., 1]
    out[..., 1, 0], out[..., 1, 2] = a[..., 2], -a[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -a[..., 1], a[..., 0]
    return out


def cross_motion(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Return t x s for twists referred to a fixed point: [w x s_w; w x s_v + v x s_w]."""
    w, v = t[..., :3], t[..., 3:]
    s_w, s_v = s[..., :3], s[..., 3:]
    return np.concatenate((cross(w, s_w), cross(w, s_v) + cross(v, s_w)), axis=-1)


def cross_force(t: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Return t x* f, the dual cross product on wrenches: [w x n + v x f; w x f]."""
    w, v = t[..., :3], t[..., 3:]
    n, force = f[..., :3], f[..., 3:]
    return np.concatenate((cross(w, n) + cross(v, force), cross(w, force)), axis=-1)


def matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Return A x for stacks of matrices and vectors."""
    return (A @ x[..., None])[..., 0]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return a . b over the last axis."""
    return np.einsum('...i,...i->...', a, b)


def reverse_cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    """Return sum_{k >= i} x_k along ``axis`` (the backward recursion of a sum)."""
    return np.flip(np.cumsum(np.flip(x, axis), axis), axis)
