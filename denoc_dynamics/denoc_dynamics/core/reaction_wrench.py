"""
Joint reaction wrenches from the backward pass of DeNOC's inverse dynamics (paper 000).

The backward sweep of the recursive inverse dynamics (000 eq. 18, :mod:`.inverse_dynamics`)

    w~_i = w*_i + sum over children c of i of B_{c,i}^T w~_c,    tau_i = p_i^T w~_i,
    w*_i = M_i td_i + t_i x* (M_i t_i) - w_ext,i                  (000 eq. 17)

carries, before projecting it on p_i, the whole wrench w~_i that body i's parent
exerts on the composite body beyond joint i, about the joint origin O_i, in base
components: the actuation p_i tau_i plus the reaction that the joint's bearings
take (the five components that p_i^T discards).  Gravity enters as the base
acceleration td_0 = [0; -g], so at rest w~_i = [sum (C_j - O_i) x m_j (-g); -g sum
m_j] minus the applied wrenches: the support of everything beyond joint i.
:func:`reaction_wrenches` returns the w~_i of every body (Pinocchio's ``data.f``,
there in the joint's own frame).

A force/torque sensor sits at a *fixed* joint s, inside the rigid body k into which
the URDF reader merged the links on both sides of it.  Its reading is the wrench
that everything beyond s exerts on the link before it: minus the wrench w_s that
the link before s exerts on the part beyond it.  That part is the sub-body S of
body k (the links of body k beyond s, mass m_S, extended mass M_S about O_k) and
the composite bodies c whose joints hang from a link of S, so, by the same
Newton-Euler balance (000 eqs. 17-18) on it, about O_k,

    w_s = M_S td_k + t_k x* (M_S t_k) - w_ext,S + sum over those c of B_{c,k}^T w~_c,

S moving with body k (twist t_k, spatial acceleration td_k).  The sensor reads
F_s = -w_s moved to the sensor point P (the child link's origin), n_P = n_Ok +
(O_k - P) x f, in the child link's frame: F_s = [R_s^T n_P; R_s^T f].  At rest with
an applied force f on S: R_s^T (f + m_S g) and its moment, the weight of
everything beyond the sensor plus the wrenches applied beyond it.
"""

import numpy as np

from .inverse_dynamics import newton_euler
from .kinematics import body_terms, kinematics
from .model import data_arrays, model_arrays
from .spatial import body_inertia_times, force_cross, njit, wrench_to_parent

#: Float64 entries per sensor of :func:`sensor_wrenches`' constants (``sensor_reals``):
#: the sub-body's mass m_S, its mass centre c_S (3) and inertia I_O,S about O_k (9),
#: the sensor point P (3) and frame R (9), all in body k's coordinates.
SENSOR_REALS = 1 + 3 + 9 + 3 + 9


@njit
def reaction_wrenches(reals, ints, q, qd, qdd, f_ext, workspace, W):
    """
    Write W (n, 6) = w~_i, the wrench across each joint (000 eqs. 17-18), base frame.

    [moment about O_i; force] that body lambda(i) exerts on the composite body beyond
    joint i; ``f_ext`` as :func:`.inverse_dynamics.newton_euler` takes it (None: none).
    """
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    kinematics(model, data, q)
    newton_euler(model, data, qd, qdd, f_ext, data.phi)
    w_tilde = data.w
    for i in range(n):
        for a in range(6):
            W[i, a] = w_tilde[i, a]


@njit
def sensor_wrenches(reals, ints, q, qd, qdd, f_ext, workspace, body, beyond, sensor_reals,
                    f_sensor, F):
    """
    Write F (s, 6), the readings of force/torque sensors at fixed joints (module doc).

    Sensor j sits in body ``body[j]``; ``beyond[j, c]`` is 1 where body c's joint
    hangs from a link beyond the sensor; ``sensor_reals[j]`` holds the constants of
    :data:`SENSOR_REALS`; ``f_sensor[j]`` the external wrench on the links of body
    k beyond the sensor, [moment about P; force] in base components (already in
    ``f_ext[k]``, which acts on the whole body).  F_j = [torque about P; force] in
    the sensor's frame, the wrench the part beyond exerts on the part before.
    """
    n = q.shape[0]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    kinematics(model, data, q)
    newton_euler(model, data, qd, qdd, f_ext, data.phi)
    R, O, t, td, w_tilde = data.R, data.O, data.t, data.td, data.w
    e, p, d = np.empty((1, 3)), np.empty((1, 6)), np.empty((1, 3))   # one body's
    M_S, w, r = np.empty((1, 6, 6)), np.empty(6), np.empty(3)
    revolute = np.zeros(1, dtype=np.int64)
    for j in range(body.shape[0]):
        k = body[j]
        c = sensor_reals[j]
        body_terms(R[k:k + 1], revolute, c[0:1], c[1:4].reshape(1, 3),
                   c[4:13].reshape(1, 3, 3), range(1), e, p, M_S, d)  # M_S about O_k
        body_inertia_times(M_S[0], t[k], w, False)                   # M_S t_k
        force_cross(t[k], w, w)                                      # t_k x* M_S t_k
        body_inertia_times(M_S[0], td[k], w, True)                   # 000 eq. 17
        for b in range(n):
            if beyond[j, b]:
                for a in range(3):
                    r[a] = O[b, a] - O[k, a]
                wrench_to_parent(r, w_tilde[b], w)                   # 000 eq. 18
        for a in range(3):                                           # P - O_k
            r[a] = R[k, a, 0] * c[13] + R[k, a, 1] * c[14] + R[k, a, 2] * c[15]
        n0 = w[0] - (r[1] * w[5] - r[2] * w[4]) - f_sensor[j, 0]     # about P
        n1 = w[1] - (r[2] * w[3] - r[0] * w[5]) - f_sensor[j, 1]
        n2 = w[2] - (r[0] * w[4] - r[1] * w[3]) - f_sensor[j, 2]
        f0, f1, f2 = w[3] - f_sensor[j, 3], w[4] - f_sensor[j, 4], w[5] - f_sensor[j, 5]
        R_s = c[16:25].reshape(3, 3)
        for a in range(3):                                           # -(R_k R_s)^T w_s
            x0 = R[k, 0, 0] * R_s[0, a] + R[k, 0, 1] * R_s[1, a] + R[k, 0, 2] * R_s[2, a]
            x1 = R[k, 1, 0] * R_s[0, a] + R[k, 1, 1] * R_s[1, a] + R[k, 1, 2] * R_s[2, a]
            x2 = R[k, 2, 0] * R_s[0, a] + R[k, 2, 1] * R_s[1, a] + R[k, 2, 2] * R_s[2, a]
            F[j, a] = -(x0 * n0 + x1 * n1 + x2 * n2)
            F[j, 3 + a] = -(x0 * f0 + x1 * f1 + x2 * f2)
