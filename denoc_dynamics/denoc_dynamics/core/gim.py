"""
The generalized inertia matrix by composite bodies (paper 000, eqs. 19-22).

The composite body i is body i with every body beyond it welded on; its extended
mass, and the GIM, are

    M~_i = M_i + sum over children c of i of B_{c,i}^T M~_c B_{c,i}      (000 eq. 21)
    i_ij = p_i^T M~_i B_ij p_j   for j = i or an ancestor of i           (000 eq. 22)

and i_ij = 0 when neither of i, j is an ancestor of the other (a tree's branches).
Each M~_i is referred to the joint origin O_i, where B_{c,i} moves the point by r_c
(:mod:`.spatial`).  Row i of eq. 22 walks y = M~_i p_i from body i towards the base,
y <- B_{j,lambda(j)}^T y, and reads i_ij = p_j^T y at each ancestor j, as
Featherstone's HandC does.
"""

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import dot, inertia_to_parent, matvec, move_wrench, njit


@njit
def inertia_matrix(reals, ints, q, workspace, I):
    """I (n, n) = the GIM at q (000 eq. 22), both triangles."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    composite_inertia_matrix(model, data, I)


@njit
def composite_inertia_matrix(model, data, I):
    """
    I = the GIM at the kinematics already in ``data`` (000 eqs. 21-22).

    M~_i starts at M_i and is M_i's storage: the sweep turns M into M~ in place.
    """
    lam = model.lam
    n = lam.shape[0]
    r, p, M_tilde, y = data.r, data.p, data.M_tilde, data.y
    for i in range(n - 1, -1, -1):
        if lam[i] >= 0:
            inertia_to_parent(r[i], M_tilde[i], M_tilde[lam[i]])   # 000 eq. 21
    I[:] = 0.0
    for i in range(n):
        matvec(M_tilde[i], p[i], y[i])                              # y = M~_i p_i
        I[i, i] = dot(p[i], y[i])
        j = i
        while lam[j] >= 0:
            move_wrench(r[j], y[i])                                 # B_{j,lambda(j)}^T y
            j = lam[j]
            I[i, j] = I[j, i] = dot(p[j], y[i])                     # 000 eq. 22
