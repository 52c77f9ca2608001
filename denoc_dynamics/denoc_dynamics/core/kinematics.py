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
    geometry(model, data, q)
    extended_masses(data.R, model.m, model.I_O, range(q.shape[0]), data.d, data.M)


@njit_inline
def geometry(model, data, q):
    """
    Fill R, r, e, p, d and O of ``data`` at q (000 eqs. 1-12): all but the masses M_i.

    For the kernels that never multiply by an inertia tensor (the gravity efforts, the
    regressor, whose parameters are the inertias).
    """
    n = q.shape[0]
    R, r, O = data.R, data.r, data.O
    placements(model.lam, model.prismatic, model.R_tree, model.o_tree, q, range(n), R, r, O)
    axes(R, model.prismatic, model.c, range(n), data.e, data.p, data.d)


@njit_inline
def placements(lam, prismatic, R_tree, o_tree, q, bodies, R, r, O):
    """
    Fill R_i, r_i = O_i - O_lambda(i) and O_i of each body i of ``bodies``, parents first.

    R_i = R_lambda(i) R_tree,i J_i(q_i), O_i = O_lambda(i) + R_lambda(i) o_tree,i (plus
    q_i along z for a prismatic joint): the forward sweep of every kinematics over the
    tree.  R_tree,i J_i stays in locals until R_i is written.  The loop is written out
    over the model's and the workspace's arrays, indexed by body, with no per-body
    helper and no row view: numba reference-counts every
    array that an inlined helper takes or a row view makes, at each body (measured on
    denoc_arm7: 1.2 us against 0.2 us for this sweep).
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
        T = R_tree                                 # X = R_tree,i J_i(q_i), in locals
        x00, x01 = c * T[i, 0, 0] + s * T[i, 0, 1], c * T[i, 0, 1] - s * T[i, 0, 0]
        x10, x11 = c * T[i, 1, 0] + s * T[i, 1, 1], c * T[i, 1, 1] - s * T[i, 1, 0]
        x20, x21 = c * T[i, 2, 0] + s * T[i, 2, 1], c * T[i, 2, 1] - s * T[i, 2, 0]
        x02, x12, x22 = T[i, 0, 2], T[i, 1, 2], T[i, 2, 2]
        j = lam[i]
        if j >= 0:                                 # R_i = R_lambda(i) R_tree,i J_i
            for row in range(3):
                y0, y1, y2 = R[j, row, 0], R[j, row, 1], R[j, row, 2]
                R[i, row, 0] = y0 * x00 + y1 * x10 + y2 * x20
                R[i, row, 1] = y0 * x01 + y1 * x11 + y2 * x21
                R[i, row, 2] = y0 * x02 + y1 * x12 + y2 * x22
                r[i, row] = y0 * o0 + y1 * o1 + y2 * o2
                O[i, row] = O[j, row] + r[i, row]
        else:
            R[i, 0, 0], R[i, 0, 1], R[i, 0, 2] = x00, x01, x02
            R[i, 1, 0], R[i, 1, 1], R[i, 1, 2] = x10, x11, x12
            R[i, 2, 0], R[i, 2, 1], R[i, 2, 2] = x20, x21, x22
            r[i, 0], r[i, 1], r[i, 2] = o0, o1, o2
            O[i, 0], O[i, 1], O[i, 2] = o0, o1, o2


@njit_inline
def body_terms(R, prismatic, m, c_body, I_body, bodies, e, p, M, d):
    """
    Fill e_i (R_i's z column), p_i (000 eq. 12), M_i about O_i (000 eq. 15) and d_i.

    For each body i of ``bodies``, its R_i placed: :func:`axes`, then
    :func:`extended_masses`.
    """
    axes(R, prismatic, c_body, bodies, e, p, d)
    extended_masses(R, m, I_body, bodies, d, M)


@njit_inline
def axes(R, prismatic, c_body, bodies, e, p, d):
    """
    Fill e_i (R_i's z column), p_i (000 eq. 12) and d_i = R_i c_i for each body of ``bodies``.

    The arrays indexed by body, written out as :func:`placements` is.
    """
    for i in bodies:
        for row in range(3):
            e[i, row] = R[i, row, 2]
            d[i, row] = (R[i, row, 0] * c_body[i, 0] + R[i, row, 1] * c_body[i, 1]
                         + R[i, row, 2] * c_body[i, 2])
        for k in range(3):
            p[i, k] = 0.0 if prismatic[i] else e[i, k]
            p[i, 3 + k] = e[i, k] if prismatic[i] else 0.0


@njit_inline
def extended_masses(R, m, I_body, bodies, d, M):
    """
    Fill M_i = [[R_i I_O,i R_i^T, [h_i x]], [-[h_i x], m_i 1]], h_i = m_i d_i (000 eq. 15).

    For each body i of ``bodies``, its R_i and d_i filled (:func:`axes`).  R_i and the
    six numbers of the symmetric I_O,i are read into locals once, X = R_i I_O,i and
    the upper triangle of X R_i^T are written out, and M_i is stored row by row, both
    triangles: the same products in the same order as a loop over rows and columns,
    without its index arithmetic (74 ns of 509 for the kinematics of the Panda).
    """
    for i in bodies:
        mass = m[i]
        h0, h1, h2 = mass * d[i, 0], mass * d[i, 1], mass * d[i, 2]     # h_i = m_i d_i
        a00, a01, a02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
        a10, a11, a12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
        a20, a21, a22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
        i00, i01, i02 = I_body[i, 0, 0], I_body[i, 0, 1], I_body[i, 0, 2]
        i11, i12, i22 = I_body[i, 1, 1], I_body[i, 1, 2], I_body[i, 2, 2]
        x00 = a00 * i00 + a01 * i01 + a02 * i02                    # X = R I_O
        x01 = a00 * i01 + a01 * i11 + a02 * i12
        x02 = a00 * i02 + a01 * i12 + a02 * i22
        x10 = a10 * i00 + a11 * i01 + a12 * i02
        x11 = a10 * i01 + a11 * i11 + a12 * i12
        x12 = a10 * i02 + a11 * i12 + a12 * i22
        x20 = a20 * i00 + a21 * i01 + a22 * i02
        x21 = a20 * i01 + a21 * i11 + a22 * i12
        x22 = a20 * i02 + a21 * i12 + a22 * i22
        c00 = x00 * a00 + x01 * a01 + x02 * a02                    # R I_O R^T, upper
        c01 = x00 * a10 + x01 * a11 + x02 * a12
        c02 = x00 * a20 + x01 * a21 + x02 * a22
        c11 = x10 * a10 + x11 * a11 + x12 * a12
        c12 = x10 * a20 + x11 * a21 + x12 * a22
        c22 = x20 * a20 + x21 * a21 + x22 * a22
        M[i, 0, 0], M[i, 0, 1], M[i, 0, 2] = c00, c01, c02         # [R I_O R^T, [h x]]
        M[i, 0, 3], M[i, 0, 4], M[i, 0, 5] = 0.0, -h2, h1
        M[i, 1, 0], M[i, 1, 1], M[i, 1, 2] = c01, c11, c12
        M[i, 1, 3], M[i, 1, 4], M[i, 1, 5] = h2, 0.0, -h0
        M[i, 2, 0], M[i, 2, 1], M[i, 2, 2] = c02, c12, c22
        M[i, 2, 3], M[i, 2, 4], M[i, 2, 5] = -h1, h0, 0.0
        M[i, 3, 0], M[i, 3, 1], M[i, 3, 2] = 0.0, h2, -h1          # [-[h x], m 1]
        M[i, 3, 3], M[i, 3, 4], M[i, 3, 5] = mass, 0.0, 0.0
        M[i, 4, 0], M[i, 4, 1], M[i, 4, 2] = -h2, 0.0, h0
        M[i, 4, 3], M[i, 4, 4], M[i, 4, 5] = 0.0, mass, 0.0
        M[i, 5, 0], M[i, 5, 1], M[i, 5, 2] = h1, -h0, 0.0
        M[i, 5, 3], M[i, 5, 4], M[i, 5, 5] = 0.0, 0.0, mass
