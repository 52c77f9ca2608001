"""
A frame's Jacobian, velocity and acceleration bias J-dot q-dot (paper 000, eqs. 10-14).

The twist of body i, t_i = [w_i; v_i] with v_i the velocity of its joint origin O_i,
propagates from the base along the frame's support (000 eq. 10, the body referred to
O_i as everywhere in the core, :mod:`.kinematics`):

    t_i = B_{i,lambda(i)} t_lambda(i) + p_i qd_i,   B_{i,lambda(i)} t = [w; v + w x r_i],

r_i = O_i - O_lambda(i), p_i = [e_i; 0] (revolute) or [0; e_i] (prismatic).  Unrolled
to a frame f of body b, origin o_f, this is the DeNOC map t = N qd (000 eq. 14) read
at one point: the velocity of o_f is the sum over the support i of B_{f,i} p_i qd_i,
so the column of joint i is B_{f,i} p_i:

    revolute:   [e_i x (o_f - O_i); e_i],      prismatic:   [e_i; 0]     (linear first)

the ``'local_world_aligned'`` Jacobian; ``'world'`` moves the point to the base origin
(e_i x (0 - O_i) = O_i x e_i), ``'local'`` turns both parts into the frame's axes,
R_f^T.  With mimic joints, body k's column adds a_k times itself to its leader's
column: J G, G the map of :class:`~.robot.Robot` (q_bodies = G q + b).

The time derivative of eq. 10 at qdd = 0 (000 after eq. 17: t-dot = N qdd + N-dot qd)
gives the twist rate t-dot_i = [alpha_i; a_i], a_i the classical acceleration of
O_i:

    t-dot_i = B_{i,lambda(i)} t-dot_lambda(i) + B-dot_{i,lambda(i)} t_lambda(i) + p-dot_i qd_i,

    B-dot t_lambda = [0; w_lambda x (v_i - v_lambda)],   v_i - v_lambda = w_lambda x r_i
                                                          (+ e_i qd_i, prismatic),
    p-dot_i = [w_lambda x e_i; 0] (revolute),   [0; w_lambda x e_i] (prismatic),

so that, with w = w_lambda(i) and alpha = alpha_lambda(i),

    revolute:   alpha_i = alpha + (w x e_i) qd_i,   a_i = a + alpha x r_i + w x (w x r_i)
    prismatic:  alpha_i = alpha,   a_i = a + alpha x r_i + w x (w x r_i) + 2 (w x e_i) qd_i

and at the frame's origin, s = o_f - O_b: a_f = a_b + alpha_b x s + w_b x (w_b x s).
``frame_acceleration_bias`` returns the classical acceleration at qdd = 0, as
Pinocchio's ``getFrameClassicalAcceleration`` in each reference: [a_f; alpha_b] in
``'local_world_aligned'`` (this is d(J qd)/dt of that Jacobian, J-dot qd), turned by
R_f^T in ``'local'``, and in ``'world'`` the classical acceleration of the body point
at the base origin, a_f - alpha x o_f - w x (w x o_f).
"""

import numba
from numba import types
import numpy as np

from .frames import bad_state, CHECKED, frame_arrays, MATRIX, MODEL, not_finite, place_frame
from .frames import open_frame, STATES, VECTOR
from .model import data_arrays, hold, model_arrays, unowned
from .spatial import njit, njit_inline

#: ``reference`` codes of the kernels (:data:`.task_space.REFERENCES`).
LOCAL, LOCAL_WORLD_ALIGNED, WORLD = 0, 1, 2


@njit_inline
def _point(T, reference):
    """Return the point the linear rows refer to: o_f, or the base origin for 'world'."""
    if reference == WORLD:
        return (0.0, 0.0, 0.0)
    return (T[0, 3], T[1, 3], T[2, 3])


@njit_inline
def _to_local(T, x, offset):
    """Turn x[offset:offset + 3] into the frame's axes in place: R_f^T x."""
    x0, x1, x2 = x[offset], x[offset + 1], x[offset + 2]
    for a in range(3):
        x[offset + a] = T[0, a] * x0 + T[1, a] * x1 + T[2, a] * x2


@njit
def frame_jacobian(reals, ints, frame_ints, frame_reals, q, workspace, J):
    """Write the frame's Jacobian (6, n) at q, rows [linear; angular], into J; return 0."""
    n = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    frame = frame_arrays(frame_ints, frame_reals, n)
    _columns(model, data, frame, q, q, False, J)
    return 0


@njit
def frame_velocity(reals, ints, frame_ints, frame_reals, q, qd, workspace, v):
    """Write the frame's velocity J qd (6,) at (q, qd) into v; return 0."""
    n = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    frame = frame_arrays(frame_ints, frame_reals, n)
    _columns(model, data, frame, q, qd, True, v.reshape((6, 1)))
    return 0


@njit_inline
def _columns(model, data, frame, q, qd, velocity, out):
    """
    Write J (6, n) into out, or with ``velocity``, J qd (6, 1): the columns B_{f,k} p_k.

    Body k's column goes to its coordinate's, times a_k (mimic joints: J G).
    """
    R, O, prismatic, support = data.R, data.O, model.prismatic, frame.support
    a, column, reference = frame.a, frame.column, frame.reference
    T = data.M[0, :4, :4]                            # the pose, in a slot it does not use
    place_frame(model, frame, q, data, T)
    x0, x1, x2 = _point(T, reference)
    for row in range(6):
        for c in range(out.shape[1]):
            out[row, c] = 0.0
    for j in range(support.shape[0]):               # B_{f,k} p_k, linear first
        k = support[j]
        e0, e1, e2 = R[k, 0, 2], R[k, 1, 2], R[k, 2, 2]
        s0, s1, s2 = x0 - O[k, 0], x1 - O[k, 1], x2 - O[k, 2]
        a_k, c = a[k], column[k]
        if velocity:
            a_k, c = a_k * qd[c], 0                  # qd_k = a_k qd_leader
        if prismatic[k]:                             # [e_k; 0]
            out[0, c] += a_k * e0
            out[1, c] += a_k * e1
            out[2, c] += a_k * e2
        else:                                        # [e_k x (x - O_k); e_k]
            out[0, c] += a_k * (e1 * s2 - e2 * s1)
            out[1, c] += a_k * (e2 * s0 - e0 * s2)
            out[2, c] += a_k * (e0 * s1 - e1 * s0)
            out[3, c] += a_k * e0
            out[4, c] += a_k * e1
            out[5, c] += a_k * e2
    if reference == LOCAL:                           # R_f^T, both parts
        for c in range(out.shape[1]):
            for offset in (0, 3):
                y0, y1, y2 = out[offset, c], out[offset + 1, c], out[offset + 2, c]
                for row in range(3):
                    out[offset + row, c] = T[0, row] * y0 + T[1, row] * y1 + T[2, row] * y2


@njit
def frame_acceleration_bias(reals, ints, frame_ints, frame_reals, q, qd, workspace, a_out):
    """
    Write the frame's classical acceleration at qdd = 0 (6,) into a_out; return 0.

    The twist and its rate (000 eqs. 10 and 14, derivative at qdd = 0) along the
    support, then moved to the frame's origin (see the module's docstring).
    """
    n = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    frame = frame_arrays(frame_ints, frame_reals, n)
    R, r, O, prismatic, support = data.R, data.r, data.O, model.prismatic, frame.support
    T = data.M[0, :4, :4]                             # the pose, in a slot it does not use
    place_frame(model, frame, q, data, T)
    w, alpha, a = np.zeros(3), np.zeros(3), np.zeros(3)     # w_i, alpha_i, a_i (at O_i)
    for j in range(support.shape[0]):
        k = support[j]
        rate = frame.a[k] * qd[frame.column[k]]
        _twist_rate_step(R, r, k, prismatic[k], rate, w, alpha, a)
    s0 = s1 = s2 = 0.0
    if support.shape[0]:
        b = support[support.shape[0] - 1]
        s0, s1, s2 = T[0, 3] - O[b, 0], T[1, 3] - O[b, 1], T[2, 3] - O[b, 2]
    _rigid_point(w, alpha, s0, s1, s2, a)             # O_b -> o_f
    if frame.reference == WORLD:                      # o_f -> the base origin
        _rigid_point(w, alpha, -T[0, 3], -T[1, 3], -T[2, 3], a)
    for row in range(3):
        a_out[row], a_out[3 + row] = a[row], alpha[row]
    if frame.reference == LOCAL:
        _to_local(T, a_out, 0)
        _to_local(T, a_out, 3)
    return 0


@njit_inline
def _twist_rate_step(R, r, k, prismatic, rate, w, alpha, a):
    """
    Step w, alpha and a from body lambda(k) to body k (000 eq. 10 and its rate).

    On entry the parent's, a at O_lambda(k); on exit body k's, a at O_k (the linear
    velocity v does not enter the accelerations).  e_k = R_k's z column and r_k are
    read from the bodies' arrays at k (a row view per body would be reference-counted).
    """
    e0, e1, e2 = R[k, 0, 2], R[k, 1, 2], R[k, 2, 2]
    we0, we1, we2 = _cross(w[0], w[1], w[2], e0, e1, e2)
    _rigid_point(w, alpha, r[k, 0], r[k, 1], r[k, 2], a)   # a + alpha x r + w x (w x r)
    if prismatic:                                     # p = [0; e]
        a[0] += 2.0 * we0 * rate
        a[1] += 2.0 * we1 * rate
        a[2] += 2.0 * we2 * rate
    else:                                             # p = [e; 0]
        alpha[0] += we0 * rate
        alpha[1] += we1 * rate
        alpha[2] += we2 * rate
        w[0] += e0 * rate
        w[1] += e1 * rate
        w[2] += e2 * rate


@njit_inline
def _rigid_point(w, alpha, s0, s1, s2, a):
    """Move the classical acceleration a of a body point by s, to a point of the same body."""
    as0, as1, as2 = _cross(alpha[0], alpha[1], alpha[2], s0, s1, s2)
    ws0, ws1, ws2 = _cross(w[0], w[1], w[2], s0, s1, s2)
    wws0, wws1, wws2 = _cross(w[0], w[1], w[2], ws0, ws1, ws2)
    a[0] += as0 + wws0                                # a + alpha x s + w x (w x s)
    a[1] += as1 + wws1
    a[2] += as2 + wws2


@njit_inline
def _cross(x0, x1, x2, y0, y1, y2):
    """Return x x y for 3-vectors given by their components, as three numbers."""
    return x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0


@numba.njit([types.int64(*MODEL, state, MATRIX) for state in STATES], **CHECKED)
def frame_jacobian_checked(model, frame, q, J):
    """Run :func:`frame_jacobian` as :func:`.frames.frame_placement_checked` does."""
    reals, ints, frame_ints, frame_reals, owned = open_frame(model, frame)
    status = bad_state(frame_ints, q, q)
    if status:
        return status
    frame_jacobian(reals, ints, frame_ints, frame_reals, q, unowned(owned), J)
    return hold(owned, 3 if not_finite(J) else 0)


@numba.njit([types.int64(*MODEL, state, state, VECTOR) for state in STATES], **CHECKED)
def frame_velocity_checked(model, frame, q, qd, v):
    """Run :func:`frame_velocity` as :func:`.frames.frame_placement_checked` does."""
    reals, ints, frame_ints, frame_reals, owned = open_frame(model, frame)
    status = bad_state(frame_ints, q, qd)
    if status:
        return status
    frame_velocity(reals, ints, frame_ints, frame_reals, q, qd, unowned(owned), v)
    return hold(owned, 3 if not_finite(v) else 0)


@numba.njit([types.int64(*MODEL, state, state, VECTOR) for state in STATES], **CHECKED)
def frame_acceleration_bias_checked(model, frame, q, qd, a):
    """Run :func:`frame_acceleration_bias` as :func:`.frames.frame_placement_checked` does."""
    reals, ints, frame_ints, frame_reals, owned = open_frame(model, frame)
    status = bad_state(frame_ints, q, qd)
    if status:
        return status
    frame_acceleration_bias(reals, ints, frame_ints, frame_reals, q, qd, unowned(owned), a)
    return hold(owned, 3 if not_finite(a) else 0)
