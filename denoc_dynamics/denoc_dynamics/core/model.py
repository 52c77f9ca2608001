"""
The prepared model and the workspace of the compiled algorithms (Pinocchio's Model/Data).

The kernels of the core are numba functions whose arguments are a handful of flat
float64 and int64 buffers: numba's call costs about 0.06 us per array argument, and a
tuple or a class of arrays costs microseconds.  The named arrays are views of those
buffers, carved in one place each: :func:`model_arrays` for the constant model (the
body tree read from the URDF) and :func:`data_arrays` for the workspace one state
fills.

Bodies i = 0..n-1 (the papers' 1..n) hang in a tree by the parent array lambda(i) < i,
-1 for the fixed base; a serial chain is lambda(i) = i - 1.
"""

import numpy as np

from .spatial import njit

#: Float64 entries per body of the workspace: M, M~, M^ (36 each); p, t, td, w~, psi,
#: eta, mu, y (6 each); r, e, d, O (3 each); R (9); m^, tau^, phi (1 each).
DATA_REALS = 3 * 36 + 8 * 6 + 4 * 3 + 9 + 3

#: Float64 entries per body of the model: R_tree and I_O (9 each), axis, o_tree and
#: h (3 each) and m; gravity (3) follows the bodies.
MODEL_REALS = 2 * 9 + 3 * 3 + 1


class Model:
    """
    The constant arrays of a body tree (Pinocchio's Model), flat for the kernels.

    ``reals`` holds each body's constants (see :func:`model_arrays`) and gravity;
    ``ints`` (2, n) holds lambda(i) and the joint type (1 prismatic, 0 revolute).
    """

    def __init__(self, chain, gravity):
        """Lay out ``chain``'s per-body arrays and ``gravity`` (base frame)."""
        n = chain.n
        self.n = n
        self.reals = np.zeros(MODEL_REALS * n + 3)
        self.ints = np.zeros((2, n), dtype=np.int64)
        self.ints[0] = getattr(chain, 'parent', np.arange(n) - 1)
        self.ints[1] = chain.prismatic
        parent, prismatic, axis, R_tree, o_tree, m, h, I_O, g = model_arrays(self.reals,
                                                                             self.ints)
        axis[:] = chain.axis
        R_tree[:] = chain.X_tree[:, :3, :3]
        o_tree[:] = chain.X_tree[:, :3, 3]
        m[:] = chain.mass
        h[:] = chain.mass[:, None] * chain.com
        c = chain.com
        cc = np.einsum('ki,ki->k', c, c)
        I_O[:] = chain.inertia + chain.mass[:, None, None] * (
            cc[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :])
        g[:] = gravity

    def data(self) -> np.ndarray:
        """Return a new workspace for one state (Pinocchio's Data)."""
        return np.zeros(DATA_REALS * self.n)


@njit
def model_arrays(reals, ints):
    """
    Return the model's named views (four reshapes; every view C-contiguous).

    (lambda, prismatic, axis a_i, R_tree,i, o_tree,i, m_i, h_i = m_i c_i, I_O,i,
    gravity g): joint i's frame is R_tree,i, o_tree,i in body lambda(i)'s frame at
    q_i = 0, a_i its unit axis, and body i has mass m_i, first moment h_i and inertia
    I_O,i about its joint origin, in body coordinates.
    """
    n = ints.shape[1]
    m3 = reals[:18 * n].reshape((2, n, 3, 3))
    v3 = reals[18 * n:27 * n].reshape((3, n, 3))
    return (ints[0], ints[1], v3[0], m3[0], v3[1], reals[27 * n:28 * n], v3[2], m3[1],
            reals[28 * n:28 * n + 3])


@njit
def data_arrays(data, n):
    """
    Return the workspace's named views (four reshapes; every view C-contiguous).

    (R_i, r_i = O_i - O_lambda(i), e_i, p_i, M_i, d_i = C_i - O_i, O_i, t_i, td_i, w~_i,
    M~_i, M^_i, psi_i, m^_i, eta_i, mu_i, tau^_i, phi_i, y_i), the DeNOC quantities of
    000 eqs. 1-22 and 002 eqs. 11-19 with body i referred to its joint origin O_i;
    y_i is a wrench walked from body i towards the base (000 eqs. 22, 34, 38).
    """
    m6 = data[:108 * n].reshape((3, n, 6, 6))
    v6 = data[108 * n:156 * n].reshape((8, n, 6))
    v3 = data[156 * n:168 * n].reshape((4, n, 3))
    R = data[168 * n:177 * n].reshape((n, 3, 3))
    s = data[177 * n:180 * n].reshape((3, n))
    return (R, v3[0], v3[1], v6[0], m6[0], v3[2], v3[3], v6[1], v6[2], v6[3], m6[1], m6[2],
            v6[4], s[0], v6[5], v6[6], s[1], s[2], v6[7])
