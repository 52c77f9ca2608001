"""
The frames of a robot: every URDF link, and its placement in the base frame.

A link joined to its parent by fixed joints (``flange``, ``tool0``, a hand, a sensor
frame) is merged into the body it hangs from (:mod:`.urdf`); it keeps its own frame,
fixed in that body's frame.  A frame f is therefore a body b(f) (-1: the base) and a
constant offset (R_f,b, s_f,b) in body b's frame, as Pinocchio's frames are a parent
joint and a placement.  Its pose in the base frame at q is

    R_f = R_b R_f,b,   o_f = O_b + R_b s_f,b,

R_b and O_b the body's orientation and joint origin (000 eqs. 1-9), of which only the
bodies on the path from the base to b, the support of f, are needed.  Since
lambda(i) < i they are among the bodies 0..b, which a frame's kinematics places in
one loop; its Jacobian then walks the support, root first.

A frame kernel takes the model's buffers and two of the frame's own (Python builds
them once per frame, :func:`frame_buffers`; numba's call costs per argument, and the
checked one-state entries take the model's in one buffer and the frame's in another,
:func:`frame_buffer`): the int64 ``frame_ints`` and the float64 ``frame_reals``, read
inside the kernel through the named views of :func:`frame_arrays` (a
:class:`FrameArrays`).  They carry the
support, the offset, the Jacobian's reference and the mimic map: body k's position is
q_k = a_k q[column_k] + b_k, column_k the coordinate of its leader, (a_k, b_k) = (1, 0)
and its own coordinate for a coordinate's body; ``leader[k]`` is the leader's body
(k itself for a coordinate's body).
"""

from collections import namedtuple

import numba
from numba import types
import numpy as np

from .kinematics import placements
from .model import data_arrays, hold, model_arrays, open_model, unowned, workspace_size
from .spatial import njit, njit_inline

#: A frame's named views (:func:`frame_arrays`): the ``reference`` code of its
#: Jacobian (:data:`.task_space.REFERENCES`), the number ``n`` of coordinates, its
#: ``support`` (the bodies from the base to its body b, root first; empty on the
#: base), its ``offset`` R_f,b (9, row-major) and s_f,b (3) in body b's frame as the
#: model turns it (:class:`.model.Model`: the body frame's z is the joint axis), and
#: the mimic map ``column``, ``leader``, ``a``, ``b`` per body.
FrameArrays = namedtuple('FrameArrays', ['reference', 'n', 'support', 'offset', 'column',
                                         'leader', 'a', 'b'])


def frame_buffers(chain, A, f, reference):
    """
    Return (frame_ints, frame_reals) of frame ``f`` of ``chain`` with ``reference``.

    frame_ints = [reference, n, s, support (s), column, leader (n_bodies each)] and
    frame_reals = [R_f,b (9), s_f,b (3), a, b (n_bodies each)], as :func:`frame_arrays`
    reads them.
    """
    b = int(chain.frame_body[f])
    pose = chain.frame_pose[f]
    support = []
    k = b
    while k >= 0:
        support.append(k)
        k = int(chain.parent[k])
    turn = A[b].T if b >= 0 else np.eye(3)
    mimic = chain.mimic_leader >= 0
    leader = np.where(mimic, chain.mimic_leader, np.arange(chain.n))
    column = np.empty(chain.n, dtype=np.int64)
    column[chain.coordinates] = np.arange(len(chain.coordinates))
    ints = np.concatenate(([reference, len(chain.coordinates), len(support)], support[::-1],
                           column[leader], leader)).astype(np.int64)
    reals = np.concatenate(((turn @ pose[:3, :3]).ravel(), turn @ pose[:3, 3],
                            np.where(mimic, chain.mimic_multiplier, 1.0),
                            np.where(mimic, chain.mimic_offset, 0.0)))
    return ints, reals


@njit_inline
def frame_arrays(frame_ints, frame_reals, n_bodies):
    """Return the frame's :class:`FrameArrays` (views of its two buffers, no copy)."""
    s = frame_ints[2]
    return FrameArrays(reference=frame_ints[0], n=frame_ints[1], support=frame_ints[3:3 + s],
                       offset=frame_reals[:12],
                       column=frame_ints[3 + s:3 + s + n_bodies],
                       leader=frame_ints[3 + s + n_bodies:3 + s + 2 * n_bodies],
                       a=frame_reals[12:12 + n_bodies],
                       b=frame_reals[12 + n_bodies:12 + 2 * n_bodies])


@njit_inline
def support_placements(model, frame, q, data):
    """
    Fill R_i, r_i and O_i of ``data`` at q for the bodies 0..b, b the frame's body.

    They include the frame's support (lambda(i) < i), and on a chain they are it; the
    bodies of other branches numbered before b are placed too, as Pinocchio's
    ``forwardKinematics`` places every joint, so that one loop over the bodies
    (:func:`.kinematics.placements`) serves.  Each body's position
    q_i = a_i q[column_i] + b_i goes to the workspace's phi slot (data.phi) first.
    """
    s = frame.support.shape[0]
    count = frame.support[s - 1] + 1 if s else 0
    q_body, a, b, column = data.phi, frame.a, frame.b, frame.column
    for i in range(count):
        q_body[i] = a[i] * q[column[i]] + b[i]
    placements(model.lam, model.prismatic, model.R_tree, model.o_tree, q_body, range(count),
               data.R, data.r, data.O)


@njit_inline
def frame_pose(frame, R, O, T):
    """
    Write the frame's pose [[R_f, o_f], [0, 1]] into T (4, 4), its support placed.

    R_f = R_b R_f,b and o_f = O_b + R_b s_f,b; on the base, R_f,b and s_f,b themselves.
    """
    s, offset = frame.support.shape[0], frame.offset
    for row in range(3):
        for col in range(3):
            if s:
                b = frame.support[s - 1]
                T[row, col] = (R[b, row, 0] * offset[col] + R[b, row, 1] * offset[3 + col]
                               + R[b, row, 2] * offset[6 + col])
            else:
                T[row, col] = offset[3 * row + col]
        if s:
            b = frame.support[s - 1]
            T[row, 3] = O[b, row] + (R[b, row, 0] * offset[9] + R[b, row, 1] * offset[10]
                                     + R[b, row, 2] * offset[11])
        else:
            T[row, 3] = offset[9 + row]
        T[3, row] = 0.0
    T[3, 3] = 1.0


@njit_inline
def place_frame(model, frame, q, data, T):
    """
    Place the frame's support at q (:func:`support_placements`), write its pose into T.

    The caller makes the named views (:func:`.model.model_arrays`,
    :func:`.model.data_arrays`, :func:`frame_arrays`), reads the fields it needs from
    them before this call, and passes a T it does not allocate (the frame kernels put
    it in the workspace's M_0, which they do not use otherwise).  Otherwise numba keeps
    every view of the three alive and reference-counts it, and an allocation in the
    kernel stops it from pruning those counts: a microsecond a call at n = 7.
    """
    support_placements(model, frame, q, data)
    frame_pose(frame, data.R, data.O, T)


@njit
def frame_placement(reals, ints, frame_ints, frame_reals, q, workspace, T):
    """Write the pose (4, 4) of a frame in the base frame at q into T; return 0."""
    n = ints.shape[1]
    model, data = model_arrays(reals, ints), data_arrays(workspace, n)
    frame = frame_arrays(frame_ints, frame_reals, n)
    place_frame(model, frame, q, data, T)
    return 0


#: The argument types of the checked entries (one state, as the API passes it): the
#: model's buffer and a frame's :func:`frame_buffer` (MODEL); a state is a
#: C-ordered float64 vector (STATES[0]) or, converted by numba's dispatch, any other
#: float64 vector (STATES[1]).
VECTOR, INTS, MATRIX = types.float64[::1], types.int64[::1], types.float64[:, ::1]
MODEL = (VECTOR, VECTOR)
STATES = (VECTOR, types.Array(types.float64, 1, 'A', readonly=True))
CHECKED = {'cache': True, 'error_model': 'numpy'}


def frame_buffer(buffers):
    """
    Return a frame's (frame_ints, frame_reals) in one float64 buffer, ints bit for bit.

    For the checked entries, as :func:`open_frame` reads it back: numba's call costs
    about 30 ns per array argument.  Constant, shared by every thread.
    """
    frame_ints, frame_reals = buffers
    m = frame_ints.shape[0]
    out = np.empty(m + frame_reals.shape[0])
    out[:m].view(np.int64)[:] = frame_ints
    out[m:] = frame_reals
    return out


@njit_inline
def open_frame(model, frame):
    """
    Return (reals, ints, frame_ints, frame_reals, workspace) for a checked entry.

    The model's buffer (:func:`.model.open_model`) and a :func:`frame_buffer`, views on
    :func:`.model.unowned`; the workspace is allocated here, for the entry to pass on
    an unowned view and :func:`.model.hold` after the kernel.
    """
    reals, ints = open_model(model)
    frame = unowned(frame)
    n_bodies = ints.shape[1]
    m = 3 + frame[:3].view(np.int64)[2] + 2 * n_bodies      # 3 + s + 2 n_bodies
    frame_ints = frame[:m].view(np.int64)
    return (reals, ints, frame_ints, frame[m:],
            np.empty(workspace_size(n_bodies, frame_ints[1])))


@njit_inline
def not_finite(x):
    """
    Return True if an entry of x (any shape, any layout) is NaN or infinite.

    One test, not a test and branch per entry: x - x is 0 for a finite x and NaN for
    NaN or an infinity, and a NaN stays in a sum.  Four partial sums of x - x, taken in
    turn along x.flat (the additions of one sum wait for each other, those of four
    overlap), then one test: a state of n entries as fast as a test per entry, and
    the regressor's n x 10 n a third faster (a 7 x 70: 0.16 us, not 0.22 us).
    """
    s0 = s1 = s2 = s3 = 0.0
    for value in x.flat:
        s0, s1, s2, s3 = s1, s2, s3, s0 + (value - value)
    return not (s0 + s1 + s2 + s3 == 0.0)


@njit_inline
def bad_state(frame_ints, q, qd):
    """Return 1 if q or qd is not of length n, 2 if one is not finite, else 0."""
    n = frame_ints[1]
    if q.shape[0] != n or qd.shape[0] != n:
        return 1
    return 2 if not_finite(q) or not_finite(qd) else 0


@numba.njit([types.int64(*MODEL, state, MATRIX) for state in STATES], **CHECKED)
def frame_placement_checked(model, frame, q, T):
    """
    Run :func:`frame_placement` on one state as the API passes it; 0, or why not.

    For the API's fast path, on the model's buffer and a :func:`frame_buffer`: 1 if q
    is not of length n, 2 if it is not finite, 3 if the result is not.
    """
    reals, ints, frame_ints, frame_reals, owned = open_frame(model, frame)
    status = bad_state(frame_ints, q, q)
    if status:
        return status
    frame_placement(reals, ints, frame_ints, frame_reals, q, unowned(owned), T)
    return hold(owned, 3 if not_finite(T) else 0)
