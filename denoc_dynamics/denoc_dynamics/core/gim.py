"""
The generalized inertia matrix by composite bodies (paper 000, eqs. 19-22).

The composite body i is body i with every body beyond it welded on; its extended
mass, and the GIM, are

    M~_i = M_i + sum over children c of i of B_{c,i}^T M~_c B_{c,i}      (000 eq. 21)
    i_ij = p_i^T M~_i B_ij p_j   for j = i or an ancestor of i           (000 eq. 22)

and i_ij = 0 when neither of i, j is an ancestor of the other (a tree's branches).
Each M~_i is referred to the joint origin O_i, where B_{c,i} moves the point by r_c
(:mod:`.spatial`); a composite body is rigid, so eq. 21 moves its ten inertial
parameters by the parallel axes (:func:`.spatial.rigid_inertia_to_parent`), and
M~_i p_i is [I~_i e_i; e_i x h~_i] (revolute) or [h~_i x e_i; m~_i e_i] (prismatic),
h~_i = m~_i d~_i.  Row i of eq. 22 walks y = M~_i p_i from body i towards the base,
y <- B_{j,lambda(j)}^T y, and reads i_ij = p_j^T y at each ancestor j, as
Featherstone's HandC does.
"""

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import moved_wrench, njit, njit_inline, rigid_inertia_to_parent


@njit
def inertia_matrix(reals, ints, q, workspace, I):
    """I (n, n) = the GIM at q (000 eq. 22), both triangles."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    composite_inertia_matrix(model, data, I)


@njit_inline
def composite_inertia_matrix(model, data, I):
    """
    I = the GIM at the kinematics already in ``data`` (000 eqs. 21-22).

    M~_i starts at M_i and is M_i's storage: the sweep turns M into M~ in place.  The
    walk of y = M~_i p_i is written out in scalars (p_j = [e_j; 0] or [0; e_j], B^T as
    :func:`.spatial.moved_wrench`): no per-body helper or row view, which numba would
    reference-count at each step.
    """
    lam, prismatic = model.lam, model.prismatic
    n = lam.shape[0]
    r, e, M_tilde = data.r, data.e, data.M_tilde
    for i in range(n - 1, -1, -1):
        if lam[i] >= 0:
            rigid_inertia_to_parent(r, M_tilde, i, lam[i])          # 000 eq. 21
    I[:] = 0.0
    for i in range(n):
        e0, e1, e2 = e[i, 0], e[i, 1], e[i, 2]                      # y = M~_i p_i
        h0, h1, h2 = M_tilde[i, 2, 4], M_tilde[i, 0, 5], M_tilde[i, 1, 3]
        if prismatic[i]:
            m = M_tilde[i, 3, 3]
            y0, y1, y2 = h1 * e2 - h2 * e1, h2 * e0 - h0 * e2, h0 * e1 - h1 * e0
            y3, y4, y5 = m * e0, m * e1, m * e2
        else:
            y0 = M_tilde[i, 0, 0] * e0 + M_tilde[i, 0, 1] * e1 + M_tilde[i, 0, 2] * e2
            y1 = M_tilde[i, 1, 0] * e0 + M_tilde[i, 1, 1] * e1 + M_tilde[i, 1, 2] * e2
            y2 = M_tilde[i, 2, 0] * e0 + M_tilde[i, 2, 1] * e1 + M_tilde[i, 2, 2] * e2
            y3, y4, y5 = e1 * h2 - e2 * h1, e2 * h0 - e0 * h2, e0 * h1 - e1 * h0
        I[i, i] = _p_dot(e, i, prismatic[i], y0, y1, y2, y3, y4, y5)
        j = i
        while lam[j] >= 0:                                          # B_{j,lambda(j)}^T y
            y0, y1, y2, y3, y4, y5 = moved_wrench(r[j, 0], r[j, 1], r[j, 2], y0, y1, y2, y3,
                                                  y4, y5)
            j = lam[j]
            I[i, j] = I[j, i] = _p_dot(e, j, prismatic[j], y0, y1, y2, y3, y4, y5)  # eq. 22


@njit_inline
def _p_dot(e, j, prismatic, y0, y1, y2, y3, y4, y5):
    """Return p_j^T y for p_j = [e_j; 0] or [0; e_j]."""
    if prismatic:
        return e[j, 0] * y3 + e[j, 1] * y4 + e[j, 2] * y5
    return e[j, 0] * y0 + e[j, 1] * y1 + e[j, 2] * y2
