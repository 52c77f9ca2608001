"""
The generalized inertia matrix by composite bodies (paper 000, eqs. 19-22).

The composite body i is bodies i..n welded together; its extended mass is

    M~_n = M_n,    M~_i = M_i + B_{i+1,i}^T M~_{i+1} B_{i+1,i}      (000 eq. 21)

and the GIM follows as

    i_ij = p_i^T M~_i B_ij p_j    (i >= j, symmetric)              (000 eq. 22).

Each M~_i is referred to the joint origin O_i (see :mod:`.kinematics`), where
B_{i+1,i} moves the point by r_{i+1}.  Written with the mass m, the first moment h
and the inertia J about the point, M = [[J, h x], [-h x, m 1]], eq. 21 becomes three
running sums over the links (vectorized, no sequential loop):

    m~_i = m_i + m~_{i+1},
    h~_i = h_i + h~_{i+1} + m~_{i+1} r_{i+1},
    J~_i = J_i + J~_{i+1} - [g x][r x] - [r x][g x],   g = h~_{i+1} + m~_{i+1} r / 2,

(the parallel-axis theorem between O_{i+1} and O_i, r = r_{i+1}).  The terms
h_i + m~_{i+1} r_{i+1} and m~_{i+1} r / 2 are vectors fixed in body i (but for the
slide of a prismatic joint i+1), so the kinematics rotates them to the base frame
together with the joint axes (``Kinematics.h_step``, ``g_step``).  Eq. 22 needs
B_ij for every pair: with y_i = M~_i p_i, i_ij = y_i^T B_ij p_j is evaluated with y_i
and p_j both moved to the first joint origin O_1, as one matrix product
(``Kinematics.at_O1``), and the diagonal i_ii = p_i^T y_i at O_i.
Only these off-diagonal products see the distance O_i - O_1, and only linearly (an
error of eps |O_i - O_1| |f_i|, f_i the force part of y_i); the distance of the
chain from the base origin does not enter at all.
"""

import numpy as np

from .spatial import dot, lower_mask, matvec, reverse_cumsum, skew


def _rigid_body_basis() -> np.ndarray:
    """Return E (13, 36): [J (9), h (3), m] E = [[J, h x], [-h x, m 1]] flattened."""
    E = np.zeros((13, 6, 6))
    E[np.arange(9), np.repeat(np.arange(3), 3), np.tile(np.arange(3), 3)] = 1.0
    for k in range(3):
        unit = np.zeros(3)
        unit[k] = 1.0
        E[9 + k, :3, 3:] = skew(unit)
        E[9 + k, 3:, :3] = -skew(unit)
    E[12, 3:, 3:] = np.eye(3)
    return E.reshape(13, 36)


_RIGID_BODY_BASIS = _rigid_body_basis()


def _parallel_axis_basis() -> np.ndarray:
    """Return P (9, 9): (g r^T flattened) P = [g x][r x] + [r x][g x] flattened."""
    P = np.zeros((3, 3, 9))
    for a in range(3):
        for b in range(3):
            g, r = np.eye(3)[a], np.eye(3)[b]
            P[a, b] = (skew(g) @ skew(r) + skew(r) @ skew(g)).ravel()
    return P.reshape(9, 9)


_PARALLEL_AXIS_BASIS = _parallel_axis_basis()


def composite_moments(kin) -> np.ndarray:
    """
    Return [J~_i (9), h~_i (3), m~_i] (..., n, 13): composite body i about O_i (000 eq. 21).

    Inertia J~ about O_i (row-major), first moment h~ and mass m~ of bodies i..n.
    The terms h_i + m~_{i+1} r_{i+1} and m~_{i+1} r_{i+1} / 2 come from the
    kinematics (``Kinematics.h_step``, ``g_step``).  The three running sums are one
    reverse sum over the rows [J_i - [g x][r x] - [r x][g x], h_step_i, m_i]; only
    g needs h~ first.  [g x][r x] + [r x][g x] is bilinear in g and r: one product of
    g r^T with a constant matrix of small integers.
    """
    shape = kin.q.shape
    h_tilde = reverse_cumsum(kin.h_step, axis=-2)
    g = h_tilde[..., 1:, :] + kin.g_step[..., :-1, :]
    steps = np.empty(shape + (13,))
    steps[..., :9].reshape(shape + (3, 3))[...] = kin.M[..., :3, :3]
    steps[..., :-1, :9] -= (g[..., :, None] * kin.r[..., 1:, None, :]).reshape(
        g.shape[:-1] + (9,)) @ _PARALLEL_AXIS_BASIS
    steps[..., 9:12] = kin.h_step
    steps[..., 12] = kin.m
    return reverse_cumsum(steps, axis=-2, out=steps)


def composite_inertias(kin) -> np.ndarray:
    """Return M~_i about O_i (..., n, 6, 6), the composite bodies' extended masses (000 eq. 21)."""
    moments = composite_moments(kin)
    return (moments @ _RIGID_BODY_BASIS).reshape(moments.shape[:-1] + (6, 6))


def inertia_matrix(kin) -> np.ndarray:
    """Return the GIM I (..., n, n) at the configuration of ``kin`` (000 eq. 22)."""
    A = lower_triangle(kin)
    return np.where(lower_mask(A.shape[-1]), A, A.swapaxes(-1, -2))


def lower_triangle(kin) -> np.ndarray:
    """
    Return A (..., n, n) whose lower triangle (i >= j) is the GIM's (000 eq. 22).

    With y_i = M~_i p_i, A_ij = y_i^T B_ij p_j, both moved to O_1; the diagonal
    i_ii = p_i^T y_i is taken at O_i, where no digit cancels.  Above the diagonal A is
    not the GIM.
    """
    p = kin.p
    y = matvec(composite_inertias(kin), p)
    diagonal = dot(p, y)
    y_O1, p_O1 = kin.at_O1(y)
    A = y_O1 @ p_O1.swapaxes(-1, -2)
    n = p.shape[-2]
    A.reshape(A.shape[:-2] + (n * n,))[..., ::n + 1] = diagonal
    return A
