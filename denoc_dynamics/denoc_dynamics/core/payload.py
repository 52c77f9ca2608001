"""
Payloads: rigid bodies fixed to links, attached at run time and identified from motion.

A payload is attached without re-reading the URDF, and identified by least squares on
the joint-torque regressor.

Attaching.  A payload of mass m_p, mass centre c_p and inertia I_p (about c_p), both
in the frame of a link L, joins the body k that L is merged into.  With L's pose
(R_L, o_L) in body k's frame (the URDF link frame of joint k; the chain's frame
table, :meth:`.urdf.Chain.link_frame`), the payload's mass
centre there is c = R_L c_p + o_L and its inertia R_L I_p R_L^T; body k's mass, mass
centre and inertia combine with them by the parallel-axis theorem, exactly as the
URDF reader merges a link on a fixed joint.  Only body k's constants change: the new
robot shares every other array with the old one.  Adding a positive semidefinite
inertia never lowers an articulated-body inertia m^_k (000 eq. 33), so the check that
every joint moves mass holds without running it again.

The attachment is one compiled call, :func:`attach`: the checks of the payload and of
the merged body, the merge and the body's new constants (:func:`.model.body_constants`)
written into copies of the model's arrays.  It decides only where every check clearly
passes; anything else (a bad payload, a tensor at the edge of a check) takes the
Python checks, which raise or warn as the URDF reader does.  The principal moments of
a symmetric 3x3 tensor I come in closed form (O. K. Smith, "Eigenvalues of a symmetric
3 x 3 matrix", 1961): with q = tr(I) / 3, p^2 = |I - q 1|_F^2 / 6 and
B = (I - q 1) / p, the moments are q + 2 p cos(phi + 2 pi j / 3), j = 0, 1, 2, where
cos(3 phi) = det(B) / 2; its rounding, a few units of eps |I|, is the margin by which
a check must pass.

Identification.  tau = Y pi (:mod:`.regressor`) with the robot's own parameters known:

    tau - ID(q, qd, qdd) = Y_k Delta pi_k = (Y_k L) phi

Y_k the ten columns of body k, phi = [m, m c_p, I_O,p] the payload's parameters in
link L's frame about L's origin, and L (10 x 10) the linear map from phi to body k's
parameters: the spatial inertia M(phi) = [[I_O, [h x]], [-[h x], m 1]] moved from L's
frame to body k's is X^T M(phi) X, linear in phi (X the motion transform from body k's
frame to L's).  Stacking the N samples gives an overdetermined linear system, solved
by least squares; its columns are scaled to unit norm first, and the condition number
of the scaled matrix is reported.  A matrix of lower rank (a parameter that the data
never excites, such as every inertia when nothing accelerates) is refused with the
parameter it cannot determine.
"""

import copy
import dataclasses
import math
import threading
from typing import NamedTuple

import numba
from numba import types
import numpy as np

from .model import body_constants, model_arrays
from .regressor import INERTIA_PAIRS
from .spatial import njit_inline
from .urdf import _check_triangle, merge_inertias, principal_moments, PSD_TOLERANCE
from .urdf import TRIANGLE_ROUNDING_EPS

#: The rounding of :func:`_moments` in units of eps |I|: a check passes in the compiled
#: call only by this margin (inside it, the Python checks decide).
MOMENTS_ROUNDING = 64.0

#: The argument types of :func:`attach`.
_VECTOR, _MATRIX = types.float64[::1], types.float64[:, ::1]
_MATRICES = types.float64[:, :, ::1]

#: identify_payload refuses data whose column-scaled regressor has a larger condition.
MAX_CONDITION = 1e8

#: The payload's parameters phi, in Pinocchio's order (link frame, about its origin).
PARAMETER_NAMES = ('m', 'm c_x', 'm c_y', 'm c_z', 'I_xx', 'I_xy', 'I_yy', 'I_xz', 'I_yz',
                   'I_zz')


def checked_payload(mass, com, inertia, link: str = 'payload'):
    """
    Return (mass, com (3,), inertia (3, 3)) as floats; ValueError for a non-physical body.

    That is: NaN or Inf anywhere, a negative mass, an asymmetric tensor, or one that
    fails the URDF reader's checks (negative principal moments, triangle inequality).
    """
    mass = float(mass)
    com = np.array(com, dtype=float).reshape(-1)
    inertia = np.array(inertia, dtype=float)
    if not np.isfinite(mass) or mass < 0.0:
        raise ValueError(f'payload on {link!r}: mass must be finite and >= 0, got {mass}')
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise ValueError(f'payload on {link!r}: center of mass must be 3 finite numbers, '
                         f'got {com.tolist()}')
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise ValueError(f'payload on {link!r}: inertia must be a finite (3, 3) tensor, '
                         f'got shape {inertia.shape}')
    if np.abs(inertia - inertia.T).max() > 1e-12 * max(1.0, np.abs(inertia).max()):
        raise ValueError(f'payload on {link!r}: inertia tensor is not symmetric')
    moments = principal_moments(inertia)
    if moments[0] < -PSD_TOLERANCE * max(1.0, float(np.abs(inertia).max())):
        raise ValueError(f'payload on {link!r}: inertia tensor is not positive '
                         f'(semi)definite, principal moments {moments}')
    _check_triangle([f'payload on {link}'], inertia)
    return mass, com, inertia


def with_payload(robot, link: str, mass: float, com, inertia):
    """
    Return a copy of ``robot`` with a rigid payload fixed to ``link`` (see the module).

    ``com`` (3,) in the link's frame; ``inertia`` (3, 3) about the payload's mass centre,
    in the link's frame.  O(1) beyond the checks: one body's constants change.
    """
    k, T = robot.chain.link_frame(link)
    new = _attached(robot, k, T, mass, com, inertia)
    if new is not None:
        return new
    mass, com, inertia = checked_payload(mass, com, inertia, link)
    new = copy.copy(robot)
    new._local = threading.local()             # its own workspaces
    if k < 0:                                  # fixed to the base: it never moves
        new.chain = dataclasses.replace(
            robot.chain, root_mass_ignored=robot.chain.root_mass_ignored + mass)
        return new
    R = T[:3, :3]
    chain = robot.chain
    m_k, c_k, I_k = merge_inertias([(chain.mass[k], chain.com[k], chain.inertia[k]),
                                    (mass, R @ com + T[:3, 3], R @ inertia @ R.T)])
    body_mass, body_com, body_inertia = chain.mass.copy(), chain.com.copy(), \
        chain.inertia.copy()
    body_mass[k], body_com[k], body_inertia[k] = m_k, c_k, I_k
    _check_triangle(chain.merged_links[k] + [f'payload on {link}'], I_k)
    new.chain = dataclasses.replace(chain, mass=body_mass, com=body_com, inertia=body_inertia)
    new.model = model = robot.model.copy()
    arrays = model_arrays(model.reals, model.ints)
    arrays.m[k], arrays.c[k], arrays.I_O[k] = body_constants(model.A[k], m_k, c_k, I_k)
    new._buffer, new._reals, new._ints = model.buffer, model.reals, model.ints
    return new


def _attached(robot, k, T, mass, com, inertia):
    """
    Return the robot with the payload on body k by the compiled :func:`attach`, or None.

    None (the Python checks then decide) for a payload on the base, input of other
    types or shapes, or a check that does not clearly pass.
    """
    if k < 0:
        return None
    try:
        mass = float(mass)
        com = np.ascontiguousarray(com, dtype=float)
        inertia = np.ascontiguousarray(inertia, dtype=float)
    except (TypeError, ValueError):
        return None
    chain, model = robot.chain, robot.model
    body_mass, body_com, body_inertia = chain.mass.copy(), chain.com.copy(), \
        chain.inertia.copy()
    model = model.copy()
    try:
        status = attach(mass, com, inertia, T, k, model.A, body_mass, body_com, body_inertia,
                        model.reals, model.ints)
    except TypeError:                          # other shapes or layouts than attach's
        return None
    if status:
        return None
    new = _replaced(robot, _local=threading.local(), _buffer=model.buffer, _reals=model.reals,
                    _ints=model.ints,
                    chain=_replaced(chain, mass=body_mass, com=body_com,
                                    inertia=body_inertia),
                    model=model)
    return new


def _replaced(obj, **changes):
    """Return a shallow copy of ``obj`` with the attributes ``changes`` (no __init__)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


@njit_inline
def _parallel_axes(m, c, com, inertia):
    """Add m (r.r 1 - r r^T), r = c - com, to inertia: a part moved to the mass centre."""
    r0, r1, r2 = c[0] - com[0], c[1] - com[1], c[2] - com[2]
    rr = r0 * r0 + r1 * r1 + r2 * r2
    r = (r0, r1, r2)
    for row in range(3):
        for col in range(3):
            inertia[row, col] += m * ((rr if row == col else 0.0) - r[row] * r[col])


@njit_inline
def _clearly_rigid(inertia, positive):
    """
    Return True if ``inertia`` passes the URDF reader's checks by the rounding's margin.

    Its principal moments (:func:`_moments`) meet the triangle inequality as
    :func:`.urdf._check_triangle` has it, and, with ``positive``, the test of
    :func:`checked_payload` that they are not negative.
    """
    largest = 0.0
    for row in range(3):
        for col in range(3):
            largest = max(largest, abs(inertia[row, col]))
    m0, m1, m2 = _moments(inertia)
    margin = MOMENTS_ROUNDING * 2.220446049250313e-16 * largest
    if positive and m0 - margin < -PSD_TOLERANCE * max(1.0, largest):
        return False
    total = m0 + m1 + m2
    rounding = max(TRIANGLE_ROUNDING_EPS * 2.220446049250313e-16 * 0.5 * (total - 3 * margin),
                   2.0 * PSD_TOLERANCE)
    return m2 - m0 - m1 + 3.0 * margin <= rounding


@njit_inline
def _moments(I):
    """
    Return the principal moments of a symmetric 3x3 tensor, ascending (Smith, 1961).

    A diagonal tensor's are its diagonal, sorted (as :func:`.urdf.principal_moments`).
    """
    q = (I[0, 0] + I[1, 1] + I[2, 2]) / 3.0
    off = I[0, 1] * I[0, 1] + I[0, 2] * I[0, 2] + I[1, 2] * I[1, 2]
    if off == 0.0:
        a, b, c = I[0, 0], I[1, 1], I[2, 2]
        a, b = min(a, b), max(a, b)
        b, c = min(b, c), max(b, c)
        a, b = min(a, b), max(a, b)
        return a, b, c
    d0, d1, d2 = I[0, 0] - q, I[1, 1] - q, I[2, 2] - q
    p = math.sqrt((d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * off) / 6.0)
    det = (d0 * (d1 * d2 - I[1, 2] * I[1, 2]) - I[0, 1] * (I[0, 1] * d2 - I[1, 2] * I[0, 2])
           + I[0, 2] * (I[0, 1] * I[1, 2] - d1 * I[0, 2])) / (p * p * p)
    phi = math.acos(min(1.0, max(-1.0, 0.5 * det))) / 3.0
    largest = q + 2.0 * p * math.cos(phi)
    smallest = q + 2.0 * p * math.cos(phi + 2.0 * math.pi / 3.0)
    return smallest, 3.0 * q - largest - smallest, largest


@numba.njit(types.int64(types.float64, _VECTOR, _MATRIX, _MATRIX, types.int64, _MATRICES,
                        _VECTOR, _MATRIX, _MATRICES, _VECTOR, types.int64[:, ::1]),
            cache=True, error_model='numpy')
def attach(mass, com, inertia, T, k, A, body_mass, body_com, body_inertia, reals, ints):
    """
    Merge the payload into body k of the arrays given; return 0, or 1 where not sure.

    The payload (mass, com, inertia) in the frame T (4, 4) of body k's URDF frame; the
    chain's ``body_*`` rows k and the model's m, c, I_O of body k (in ``reals``) become
    the merged body's, as :func:`with_payload`'s Python path computes them.  1, with
    nothing decided, where a check of :func:`checked_payload` or of the merged body's
    triangle inequality does not clearly pass.
    """
    if not (math.isfinite(mass) and mass >= 0.0) or com.shape[0] != 3 or \
            inertia.shape[0] != 3 or inertia.shape[1] != 3:
        return 1
    largest, asymmetry = 0.0, 0.0
    for row in range(3):
        if not math.isfinite(com[row]):
            return 1
        for col in range(3):
            if not math.isfinite(inertia[row, col]):
                return 1
            largest = max(largest, abs(inertia[row, col]))
            asymmetry = max(asymmetry, abs(inertia[row, col] - inertia[col, row]))
    if asymmetry > 1e-12 * max(1.0, largest) or not _clearly_rigid(inertia, True):
        return 1
    R = T[:3, :3]
    c_p = np.empty(3)                            # R c_p + o, in body k's URDF frame
    I_p = np.empty((3, 3))                       # R I_p R^T
    for row in range(3):
        c_p[row] = T[row, 3] + R[row, 0] * com[0] + R[row, 1] * com[1] + R[row, 2] * com[2]
    for row in range(3):
        for col in range(3):
            s = 0.0
            for a in range(3):
                s += R[row, a] * (inertia[a, 0] * R[col, 0] + inertia[a, 1] * R[col, 1]
                                  + inertia[a, 2] * R[col, 2])
            I_p[row, col] = s
    m_b, c_b, I_b = body_mass[k], body_com[k], body_inertia[k]
    m = m_b + mass                                           # merge_inertias
    c = np.zeros(3)
    if m > 0.0:
        for row in range(3):
            c[row] = (m_b * c_b[row] + mass * c_p[row]) / m
    I_k = np.empty((3, 3))
    for row in range(3):
        for col in range(3):
            I_k[row, col] = I_b[row, col] + I_p[row, col]
    _parallel_axes(m_b, c_b, c, I_k)
    _parallel_axes(mass, c_p, c, I_k)
    if not _clearly_rigid(I_k, False):
        return 1
    body_mass[k] = m
    body_com[k, :] = c
    body_inertia[k, :, :] = I_k
    model = model_arrays(reals, ints)                        # body_constants
    A_k, c_k, I_O = A[k], model.c[k], model.I_O[k]
    for row in range(3):                                     # c = A^T c
        c_k[row] = A_k[0, row] * c[0] + A_k[1, row] * c[1] + A_k[2, row] * c[2]
    cc = c_k[0] * c_k[0] + c_k[1] * c_k[1] + c_k[2] * c_k[2]
    for row in range(3):                                     # A^T I A + m (c.c 1 - c c^T)
        for col in range(3):
            s = 0.0
            for a in range(3):
                s += A_k[a, row] * (I_k[a, 0] * A_k[0, col] + I_k[a, 1] * A_k[1, col]
                                    + I_k[a, 2] * A_k[2, col])
            I_O[row, col] = s + m * ((cc if row == col else 0.0) - c_k[row] * c_k[col])
    model.m[k] = m
    return 0


class _Payload(NamedTuple):
    mass: float
    com: np.ndarray
    inertia: np.ndarray


class PayloadEstimate(_Payload):
    """
    An identified payload, (mass, com (3,), inertia (3, 3) about the mass centre).

    Both in the link's frame, with how well the data determined it: ``condition``, the
    condition number of the column-scaled least-squares problem; ``residual_rms``, the
    RMS of the joint efforts it leaves unexplained [N m]; ``samples``, the states used.
    """

    def __new__(cls, mass, com, inertia, condition, residual_rms, samples):
        """Unpack as (mass, com, inertia); the rest are attributes."""
        self = super().__new__(cls, mass, com, inertia)
        self.condition, self.residual_rms, self.samples = condition, residual_rms, samples
        return self


def parameter_map(T) -> np.ndarray:
    """
    Return L (10 x 10): body parameters = L phi, phi a payload's in the frame T (4, 4).

    Column c is the body parameters of the spatial inertia X^T M(e_c) X (see the module).
    """
    R, o = T[:3, :3], T[:3, 3]
    L = np.empty((10, 10))
    k, l = np.array(INERTIA_PAIRS).T
    for c in range(10):
        phi = np.zeros(10)
        phi[c] = 1.0
        m, h = phi[0], phi[1:4]
        I_O = np.zeros((3, 3))
        I_O[k, l] = I_O[l, k] = phi[4:]
        h_b, I_b = R @ h, R @ I_O @ R.T               # turned into the body's axes
        # moved from the link origin to the body origin by -o: I_O' = I_O + m [o]^T [o]
        # + [o]^T [h] + [h]^T [o], h' = h + m o
        o_x, h_x = _skew(o), _skew(h_b)
        I_moved = I_b + m * o_x.T @ o_x + o_x.T @ h_x + h_x.T @ o_x
        L[:, c] = np.concatenate(([m], h_b + m * o, I_moved[k, l]))
    return L


def _skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def identify_payload(robot, link: str, q, qd, qdd, tau) -> PayloadEstimate:
    """
    Return the payload on ``link`` that explains tau - ID(q, qd, qdd), (N, n) samples.

    Least squares on the regressor columns of the link's body (see the module).
    ValueError, with the reason, when the data cannot determine the ten parameters.
    """
    k, T = robot.chain.link_frame(link)
    if k < 0:
        raise ValueError(f'link {link!r} is fixed to the base: a payload there moves with '
                         'no joint, and no joint effort can identify it')
    q, qd, qdd, tau = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd, tau))
    shapes = {x.shape for x in (q, qd, qdd, tau)}
    if len(shapes) != 1 or q.ndim != 2 or q.shape[1] != robot.n:
        raise ValueError(f'q, qd, qdd and tau must be (N, {robot.n}) samples of one shape, '
                         f'got {[x.shape for x in (q, qd, qdd, tau)]}')
    if not np.all(np.isfinite(tau)):
        raise ValueError('tau contains NaN or Inf')
    N = q.shape[0]
    if N * robot.n < 10:
        raise ValueError(f'{N} samples of {robot.n} joints give {N * robot.n} equations '
                         'for 10 unknowns')
    A = (robot.regressor(q, qd, qdd)[..., 10 * k:10 * k + 10] @ parameter_map(T))
    A = A.reshape(-1, 10)
    b = (tau - robot.inverse_dynamics(q, qd, qdd)).reshape(-1)
    scale = np.linalg.norm(A, axis=0)
    unexcited = [PARAMETER_NAMES[c] for c in np.flatnonzero(scale <= 1e-12 * scale.max())]
    if scale.max() == 0.0 or unexcited:
        raise ValueError(f'the data cannot determine the payload on {link!r}: no joint '
                         f'effort depends on {", ".join(unexcited) or "any parameter"} '
                         '(move the joints that carry the link, with accelerations)')
    A_s = A / scale
    U, s, Vt = np.linalg.svd(A_s, full_matrices=False)
    condition = float(s[0] / s[-1]) if s[-1] > 0 else np.inf
    if not condition <= MAX_CONDITION:
        worst = np.argsort(-np.abs(Vt[-1]))[:3]
        raise ValueError(
            f'the data cannot determine the payload on {link!r}: condition number '
            f'{condition:.3g} > {MAX_CONDITION:.0g}; the least determined combination '
            f'is mostly {", ".join(PARAMETER_NAMES[c] for c in worst)} (use an exciting '
            'trajectory: denoc_dynamics.excitation)')
    phi = (Vt.T @ ((U.T @ b) / s)) / scale
    residual = float(np.sqrt(np.mean((A @ phi - b) ** 2)))
    mass = float(phi[0])
    com = phi[1:4] / mass if mass != 0.0 else np.zeros(3)
    I_O = np.zeros((3, 3))
    kk, ll = np.array(INERTIA_PAIRS).T
    I_O[kk, ll] = I_O[ll, kk] = phi[4:]
    c_x = _skew(com)
    inertia = I_O - mass * c_x.T @ c_x                # about the mass centre
    return PayloadEstimate(mass, com, inertia, condition, residual, N)
