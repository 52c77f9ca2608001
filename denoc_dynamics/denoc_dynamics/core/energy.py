"""
The kinetic and the potential energy of the robot at (q, qd), in one forward sweep.

With the twists t_i = [w_i; v_i] at the joint origins O_i (000 eq. 10, as
:mod:`.inverse_dynamics` propagates them) and M_i the extended mass about O_i
(000 eq. 15), the kinetic energy is

    T = 1/2 sum_i t_i^T M_i t_i  = 1/2 qd^T I qd          (000 eqs. 13-15, 19-22)

and the potential energy of the weights, zero at the base origin,

    V = -sum_i m_i g . C_i,   C_i = O_i + d_i.

V alone needs only the placements and the mass centres (:func:`.kinematics.geometry`),
not the extended masses M_i: :func:`potential_energy` is its own pass.
"""

from .kinematics import geometry, kinematics
from .model import data_arrays, model_arrays
from .spatial import add_p, body_inertia_times, dot, njit, njit_inline, twist_to_child


@njit
def energies(reals, ints, q, qd, workspace, out):
    """Write out[0, 0] = T and out[1, 0] = V at (q, qd), the rest of out (2, n) zero."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    lam, prismatic = model.lam, model.prismatic
    t, y, p = data.t, data.y, data.p
    T = 0.0
    for i in range(lam.shape[0]):
        if lam[i] >= 0:
            twist_to_child(data.r[i], t[lam[i]], t[i])              # 000 eq. 10
        else:
            t[i, :] = 0.0
        add_p(p[i], qd[i], prismatic[i], t[i])
        body_inertia_times(data.M[i], t[i], y[i], False)            # M_i t_i
        T += 0.5 * dot(t[i], y[i])
    out[:] = 0.0
    out[0, 0], out[1, 0] = T, weights_energy(model, data)


@njit
def potential_energy(reals, ints, q, workspace, out):
    """Write out[1, 0] = V at q, the rest of out (2, n) zero: the placements alone."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    geometry(model, data, q)
    out[:] = 0.0
    out[1, 0] = weights_energy(model, data)


@njit_inline
def weights_energy(model, data):
    """Return V = -sum_i m_i g . (O_i + d_i) at the placements in ``data``."""
    m, g, O, d = model.m, model.g, data.O, data.d
    V = 0.0
    for i in range(m.shape[0]):
        V -= m[i] * (g[0] * (O[i, 0] + d[i, 0]) + g[1] * (O[i, 1] + d[i, 1])
                     + g[2] * (O[i, 2] + d[i, 2]))
    return V
