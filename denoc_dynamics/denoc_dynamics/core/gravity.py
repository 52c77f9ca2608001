"""
The efforts that hold the robot still against gravity, by their own pass (000 eqs. 10-18).

Inverse dynamics at qd = 0, qdd = 0 (:mod:`.inverse_dynamics`) has every twist t_i
zero, and gravity as the base acceleration td_0 = [0; -g] passes unchanged to every
body: B_{i,lambda(i)} [0; -g] = [0; -g] (the moved point adds 0 x r_i).  So
w*_i = M_i [0; -g] = [-h_i x g; -m_i g] (h_i = m_i d_i, 000 eq. 17 with M_i about
O_i): the weight of body i and its moment about O_i.  What is left is the backward
sweep of 000 eq. 18,

    tau_i = p_i^T w~_i,   w~_lambda(i) += B_{i,lambda(i)}^T w~_i,

with no velocity terms and no product by the bodies' inertia tensors.
"""

from .inverse_dynamics import project_to_joints
from .kinematics import geometry
from .model import data_arrays, model_arrays
from .spatial import njit, njit_inline


@njit
def gravity_torques(reals, ints, q, workspace, tau):
    """
    Write tau = ID(q, 0, 0), the gravity efforts, by the weights' backward sweep.

    The kinematics without the extended masses (:func:`.kinematics.geometry`): at rest
    only m_i and h_i = m_i d_i enter.
    """
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    geometry(model, data, q)
    weights(model, data, tau)


@njit_inline
def weights(model, data, tau):
    """Write tau = ID(q, 0, 0) at the kinematics in ``data`` (000 eqs. 17-18 at rest)."""
    lam, prismatic, g, m = model.lam, model.prismatic, model.g, model.m
    r, p, d, w = data.r, data.p, data.d, data.w
    n = lam.shape[0]
    for i in range(n):                                  # w*_i = [-m_i d_i x g; -m_i g]
        h0, h1, h2 = m[i] * d[i, 0], m[i] * d[i, 1], m[i] * d[i, 2]
        w[i, 0] = h2 * g[1] - h1 * g[2]
        w[i, 1] = h0 * g[2] - h2 * g[0]
        w[i, 2] = h1 * g[0] - h0 * g[1]
        w[i, 3], w[i, 4], w[i, 5] = -m[i] * g[0], -m[i] * g[1], -m[i] * g[2]
    project_to_joints(lam, prismatic, r, p, w, tau)                   # 000 eq. 18
