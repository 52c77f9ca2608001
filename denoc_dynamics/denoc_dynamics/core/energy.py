"""
The kinetic and the potential energy of the robot at (q, qd), in one forward sweep.

With the twists t_i = [w_i; v_i] at the joint origins O_i (000 eq. 10, as
:mod:`.inverse_dynamics` propagates them) and M_i the extended mass about O_i
(000 eq. 15), the kinetic energy is

    T = 1/2 sum_i t_i^T M_i t_i  = 1/2 qd^T I qd          (000 eqs. 13-15, 19-22)

and the potential energy of the weights, zero at the base origin,

    V = -sum_i m_i g . C_i,   C_i = O_i + d_i.
"""

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import add_p, body_inertia_times, dot, njit, twist_to_child


@njit
def energies(reals, ints, q, qd, workspace, out):
    """Write out[0, 0] = T and out[1, 0] = V at (q, qd), the rest of out (2, n) zero."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    lam, prismatic, m, g = model.lam, model.prismatic, model.m, model.g
    t, y, p, O, d = data.t, data.y, data.p, data.O, data.d
    T, V = 0.0, 0.0
    for i in range(lam.shape[0]):
        if lam[i] >= 0:
            twist_to_child(data.r[i], t[lam[i]], t[i])              # 000 eq. 10
        else:
            t[i, :] = 0.0
        add_p(p[i], qd[i], prismatic[i], t[i])
        body_inertia_times(data.M[i], t[i], y[i], False)            # M_i t_i
        T += 0.5 * dot(t[i], y[i])
        V -= m[i] * (g[0] * (O[i, 0] + d[i, 0]) + g[1] * (O[i, 1] + d[i, 1])
                     + g[2] * (O[i, 2] + d[i, 2]))
    out[:] = 0.0
    out[0, 0], out[1, 0] = T, V
