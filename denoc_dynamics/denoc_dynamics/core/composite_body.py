"""
Composite bodies about one fixed point: H and the bias vector b (paper 003).

An independent way to form the equations of motion H qdd + b = tau, written with
3-vectors and every point measured from one point fixed in space, as in paper 003.
It shares no recursion with the DeNOC modules and serves as their cross-check.
Paper 003 measures from the base-frame origin; any fixed point will do, and here it
is the point where the first joint origin O_1 is now (``Kinematics.O_rel``,
``C_rel``), so that a chain mounted far from the base origin does not carry its
distance through the sums (the DeNOC modules go further and refer each body to its
own joint origin).  Below, "the origin" is that point.

Composite body j is links j..n (003 eqs. 2-3): mass m_j, first moment
s_j = sum m_k C_k about the origin, and inertia tensor J_j about the origin
(Huygens-Steiner, 003 eq. 3).  Moving joint j alone at unit rate gives it the
momentum (003 eqs. 4-9, the inertia force and torque referred to the origin)

    revolute j:   L = u_j x (s_j - m_j O_j),   h = J_j u_j + s_j x (O_j x u_j)
    prismatic j:  L = m_j u_j,                 h = s_j x u_j

and H_mj (m <= j) is its component along joint m, taken about joint m's origin
(003 eqs. 10-12): u_m . (h - O_m x L) for a revolute joint m, u_m . L for a
prismatic one.

The bias vector is b = D(qd) + g(q) (003 eq. 31).  D comes from Newton-Euler on the
composite bodies with qdd = 0: link accelerations by the moving-frame rule
a_p = a_o + alpha x r + w x (w x r) + 2 w x v_rel (003 eq. 38), link inertia forces
and torques summed outward-in about the origin, projected on each joint as above.
The gravity term is the weight m_j g of composite body j acting at its mass centre
s_j / m_j (003, "gravity term").
"""

import numpy as np

from .spatial import cross, dot, reverse_cumsum


def _composite_moments(kin):
    """Return composite mass (n,), first moment s (..., n, 3), inertia J about O (..., n, 3, 3)."""
    m = kin.m
    C = kin.C_rel
    J_link = kin.I + m[:, None, None] * (dot(C, C)[..., None, None] * np.eye(3)
                                         - C[..., :, None] * C[..., None, :])
    return (reverse_cumsum(m, axis=-1), reverse_cumsum(m[:, None] * C, axis=-2),
            reverse_cumsum(J_link, axis=-3))


def _project(kin, h, L, pairs=False):
    """
    Return the component along joint m of momentum-like (h about O, L) about O_m.

    u_m . (h - O_m x L) for a revolute joint m, u_m . L for a prismatic one.  With
    ``pairs`` the result is (..., m, j) for the h_j, L_j of every composite body j.
    """
    u, O, prismatic = kin.e, kin.O_rel, kin.prismatic
    if pairs:
        u, O, prismatic = u[..., :, None, :], O[..., :, None, :], prismatic[:, None]
        h, L = h[..., None, :, :], L[..., None, :, :]
    return np.where(prismatic, dot(u, L), dot(u, h - cross(O, L)))


def inertia_matrix(kin) -> np.ndarray:
    """Return H (..., n, n) by the composite-body method (003 eq. 12), symmetric."""
    m_c, s, J = _composite_moments(kin)
    u, O = kin.e, kin.O_rel
    r = s - m_c[:, None] * O
    L = np.where(kin.prismatic[:, None], m_c[:, None] * u, cross(u, r))
    h = np.where(kin.prismatic[:, None], cross(s, u),
                 np.einsum('...ij,...j->...i', J, u) + cross(s, cross(O, u)))
    # H[m, j] for all m, j from composite body j's momentum; keep m <= j.
    H = _project(kin, h, L, pairs=True)
    upper = np.triu(H)
    return upper + np.swapaxes(np.triu(H, 1), -1, -2)


def bias_vector(kin, qd: np.ndarray, gravity) -> np.ndarray:
    """Return b(q, qd) = D(qd) + g(q), so that H qdd + b = tau (003 eq. 31)."""
    g = np.asarray(gravity, float)
    u, O, C = kin.e, kin.O_rel, kin.C_rel
    n = kin.m.shape[0]
    shape = np.broadcast_shapes(qd.shape[:-1], O.shape[:-2])
    w = np.zeros(shape + (3,))           # angular velocity of the previous link
    alpha = np.zeros(shape + (3,))       # its angular acceleration
    a_o = np.zeros(shape + (3,))         # its acceleration (qdd = 0)
    O_prev = np.zeros(O.shape[:-2] + (3,))
    a_C = np.empty(shape + (n, 3))
    w_all = np.empty(shape + (n, 3))
    alpha_all = np.empty(shape + (n, 3))
    for k in range(n):
        r = O[..., k, :] - O_prev
        rate = u[..., k, :] * qd[..., k, None]
        # joint origin k as a point of link k-1, then the joint's own motion (003 eq. 38)
        a_new = a_o + cross(alpha, r) + cross(w, cross(w, r))
        if kin.prismatic[k]:
            a_new = a_new + 2.0 * cross(w, rate)
        else:
            alpha = alpha + cross(w, rate)
            w = w + rate
        a_o, O_prev = a_new, O[..., k, :]
        d = kin.d[..., k, :]
        a_C[..., k, :] = a_o + cross(alpha, d) + cross(w, cross(w, d))
        w_all[..., k, :] = w
        alpha_all[..., k, :] = alpha
    force = kin.m[:, None] * a_C
    Iw = np.einsum('...ij,...j->...i', kin.I, w_all)
    torque = np.einsum('...ij,...j->...i', kin.I, alpha_all) + cross(w_all, Iw)
    F = reverse_cumsum(force, axis=-2)
    N = reverse_cumsum(torque + cross(C, force), axis=-2)
    return _project(kin, N, F) + gravity_term(kin, g)


def gravity_term(kin, gravity) -> np.ndarray:
    """Return g(q): joint j holds the weight m_j g of composite body j at its mass centre."""
    g = np.asarray(gravity, float)
    m_c, s, _ = _composite_moments(kin)
    support = -m_c[:, None] * g                      # the force the joints must supply
    return _project(kin, cross(s, -g), support)
