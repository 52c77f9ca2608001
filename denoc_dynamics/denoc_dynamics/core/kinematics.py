"""
DeNOC kinematic quantities at a configuration q (paper 000, eqs. 1-15).

For each body i, in base-frame components at the current q (one forward sweep over
the tree, parent lambda(i) before child i):

* R_i, the orientation of body frame i: R_lambda(i) R_tree,i J_i(q_i), J_i the turn
  by q_i about the frame's z axis, which is the joint axis (:class:`.model.Model`
  chooses the body frames so, as Denavit and Hartenberg do), or 1 for a prismatic
  joint, which slides along z;
* e_i, the joint axis, R_i's third column, and O_i, the joint origin (the origin of
  body frame i);
* r_i = O_i - O_lambda(i), read off the joint's own transform (a short vector);
* d_i = C_i - O_i, C_i the mass centre (000 eq. 9);
* p_i = [e_i; 0] (revolute) or [0; e_i] (prismatic) (000 eq. 12);
* M_i = [[I_O,i, [h_i x]], [-[h_i x], m_i 1]], the extended mass of body i about O_i,
  h_i = m_i d_i (000 eq. 15 moved from C_i to O_i).

Saha refers the twist of body i to its mass centre C_i, t_i = B_{i,i-1} t_{i-1} + p_i qd_i
(000 eq. 10).  The choice of the point is free; here it is the joint origin O_i, so
p_i is [e_i; 0] or [0; e_i] and B_{i,lambda(i)} = [[1, 0], [-[r_i x], 1]] only moves
the point by the short r_i (:mod:`.spatial`).  Every number is then of the size of
the body and its neighbours wherever the chain sits; referring everything to the
base origin instead (paper 003) cancels digits as m |O_i|^2 against m (body size)^2
far from the base.
"""

import math

from .spatial import njit_inline


@njit_inline
def kinematics(model, data, q):
    """
    Fill R, r, e, p, M, d and O of ``data`` at q (000 eqs. 1-15), over the tree.

    ``model`` and ``data`` are the named views of :func:`.model.model_arrays` and
    :func:`.model.data_arrays`, as every kernel of the core takes them.
    """
    n = q.shape[0]
    lam, prismatic, R_tree, o_tree = model.lam, model.prismatic, model.R_tree, model.o_tree
    m, c, I_O = model.m, model.c, model.I_O
    R, r, e, p, M, d, O = data.R, data.r, data.e, data.p, data.M, data.d, data.O
    placements(lam, prismatic, R_tree, o_tree, q, range(n), R, r, O)
    for i in range(n):
        _body_terms(R[i], prismatic[i], m[i], c[i], I_O[i], e[i], p[i], M[i], d[i])


@njit_inline
def placements(lam, prismatic, R_tree, o_tree, q, bodies, R, r, O):
    """
    Fill R_i, r_i = O_i - O_lambda(i) and O_i of each body i of ``bodies``, parents first.

    R_i = R_lambda(i) R_tree,i J_i(q_i), O_i = O_lambda(i) + R_lambda(i) o_tree,i (plus
    q_i along z for a prismatic joint): the forward step of every sweep over the tree.
    The loop over the bodies is inside, and its body makes no array view: numba
    reference-counts every array a helper inlined into a per-body loop is given, and
    every view made in the loop, at each body (a microsecond at n = 7).
    """
    for i in bodies:
        if prismatic[i]:                           # a slide along z: J_i = 1
            c, s = 1.0, 0.0
            o0 = o_tree[i, 0] + q[i] * R_tree[i, 0, 2]
            o1 = o_tree[i, 1] + q[i] * R_tree[i, 1, 2]
            o2 = o_tree[i, 2] + q[i] * R_tree[i, 2, 2]
        else:                                      # J_i, a turn by q_i about z
            c, s = math.cos(q[i]), math.sin(q[i])
            o0, o1, o2 = o_tree[i, 0], o_tree[i, 1], o_tree[i, 2]
        for row in range(3):                       # R_tree,i J_i(q_i)
            x, y = R_tree[i, row, 0], R_tree[i, row, 1]
            R[i, row, 0], R[i, row, 1], R[i, row, 2] = c * x + s * y, c * y - s * x, \
                R_tree[i, row, 2]
        k = lam[i]
        if k >= 0:                                 # R_i = R_lambda(i) R_tree,i J_i
            for col in range(3):
                x0, x1, x2 = R[i, 0, col], R[i, 1, col], R[i, 2, col]
                for row in range(3):
                    R[i, row, col] = R[k, row, 0] * x0 + R[k, row, 1] * x1 + R[k, row, 2] * x2
            for row in range(3):
                r[i, row] = R[k, row, 0] * o0 + R[k, row, 1] * o1 + R[k, row, 2] * o2
                O[i, row] = O[k, row] + r[i, row]
        else:
            r[i, 0], r[i, 1], r[i, 2] = o0, o1, o2
            O[i, 0], O[i, 1], O[i, 2] = o0, o1, o2


@njit_inline
def _body_terms(R, prismatic, m, c_body, I_body, e, p, M, d):
    """Fill e_i (R_i's z column), p_i (000 eq. 12), M_i about O_i (000 eq. 15) and d_i."""
    for row in range(3):
        e[row] = R[row, 2]
        d[row] = R[row, 0] * c_body[0] + R[row, 1] * c_body[1] + R[row, 2] * c_body[2]
    for k in range(3):
        p[k] = 0.0 if prismatic else e[k]
        p[3 + k] = e[k] if prismatic else 0.0
    h0, h1, h2 = m * d[0], m * d[1], m * d[2]      # h_i = m_i d_i
    for row in range(3):                           # I_O in base components: R I R^T
        x0 = R[row, 0] * I_body[0, 0] + R[row, 1] * I_body[1, 0] + R[row, 2] * I_body[2, 0]
        x1 = R[row, 0] * I_body[0, 1] + R[row, 1] * I_body[1, 1] + R[row, 2] * I_body[2, 1]
        x2 = R[row, 0] * I_body[0, 2] + R[row, 1] * I_body[1, 2] + R[row, 2] * I_body[2, 2]
        for col in range(row, 3):
            M[row, col] = M[col, row] = x0 * R[col, 0] + x1 * R[col, 1] + x2 * R[col, 2]
    for row in range(3):
        for col in range(3):
            M[3 + row, 3 + col] = m if row == col else 0.0
    M[0, 3], M[0, 4], M[0, 5] = 0.0, -h2, h1       # [h x]
    M[1, 3], M[1, 4], M[1, 5] = h2, 0.0, -h0
    M[2, 3], M[2, 4], M[2, 5] = -h1, h0, 0.0
    for row in range(3):
        for col in range(3):
            M[3 + col, row] = M[row, 3 + col]      # -[h x] = [h x]^T
