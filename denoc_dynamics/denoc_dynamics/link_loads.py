"""
Wrenches on the simulated links and a virtual wall, as the external wrenches of the dynamics.

The core's inverse dynamics takes each body's external wrench w_ext,k = [moment about
C_k; force] in the base frame (000 eq. 17); Saha's O(n) forward dynamics removes it
with the other non-inertial terms, phi = tau - ID(q, qd, 0) (002 eqs. 14-19).  This
module turns the loads of the simulation into those wrenches at each stage's state:

* an applied wrench: force f and torque n on body k, f acting at a point X fixed in
  the body (X = O_k + R_k x, x in body coordinates); f and n either fixed in the base
  frame or turning with a body b (f = R_b f_b).  Its wrench about C_k is
  [n + (X - C_k) x f; f];
* the virtual wall: planes through a_j with unit normal n_j, stiffness k_j and damping
  c_j, and contact points X_i fixed in their bodies.  Behind a plane, at depth
  delta = (a_j - X_i) . n_j > 0, the point is pushed out along n_j by the one-sided
  spring-damper lambda = max(k_j delta - c_j (v_i . n_j), 0), never pulled in, with
  v_i the point's velocity, v_i = sum over the joints m from body k to the base of
  qd_m (e_m x (X_i - O_m)) (revolute) or qd_m e_m (prismatic).

:func:`link_wrenches` writes them at the kinematics of a stage; the physics passes them
to the core's forward dynamics (:func:`.physics.accelerations`).
"""

import numpy as np

from .core.kinematics import kinematics
from .core.model import data_arrays, model_arrays
from .core.spatial import njit, njit_inline

#: Columns of the applied wrenches' reals: the point x (body coordinates), the force and
#: the torque (base components, or the reference body's coordinates).
WRENCH_REALS = 9

#: Columns of the wall's planes: a point, the unit normal, stiffness, damping.
PLANE_REALS = 8


class Loads:
    """
    The flat arrays of the loads (module doc) for :func:`link_wrenches`.

    ``wrench_ints`` (m, 2): body k and reference body b (-1: the base frame);
    ``wrench_reals`` (m, 9): x, f, n.  ``planes`` (w, 8); ``contact_body`` (c,) and
    ``contact_point`` (c, 3) the wall's contact points; ``f_ext`` (n_bodies, 6) and
    ``wall_force`` (c, 3), what the last evaluation gave (the force on each contact
    point, base frame).
    """

    def __init__(self, n_bodies):
        """No loads on ``n_bodies`` bodies."""
        self.wrench_ints = np.zeros((0, 2), dtype=np.int64)
        self.wrench_reals = np.zeros((0, WRENCH_REALS))
        self.planes = np.zeros((0, PLANE_REALS))
        self.contact_body = np.zeros(0, dtype=np.int64)
        self.contact_point = np.zeros((0, 3))
        self.f_ext = np.zeros((n_bodies, 6))
        self.wall_force = np.zeros((0, 3))

    @property
    def active(self) -> bool:
        """Return True if a wrench or a wall with contact points is set."""
        return len(self.wrench_ints) > 0 or (len(self.planes) > 0 and len(self.contact_body) > 0)

    def arrays(self):
        """Return the tuple the compiled functions take."""
        return (self.wrench_ints, self.wrench_reals, self.planes, self.contact_body,
                self.contact_point, self.f_ext, self.wall_force)


@njit_inline
def link_wrenches(model, data, qd, loads):
    """
    Set loads' f_ext (and wall forces) at the kinematics in ``data`` (module doc).

    Written out over the arrays, indexed by body, load and plane, with no row view and
    no per-point helper taking arrays: numba reference-counts each of those, at every
    stage of every step (as :func:`.core.kinematics.placements` is written).
    """
    wrench_ints, wrench_reals, planes, contact_body, contact_point, f_ext, wall_force = loads
    lam, prismatic = model.lam, model.prismatic
    R, e, O, d = data.R, data.e, data.O, data.d
    for k in range(f_ext.shape[0]):
        for a in range(6):
            f_ext[k, a] = 0.0
    for j in range(wrench_ints.shape[0]):
        k, b = wrench_ints[j, 0], wrench_ints[j, 1]
        X0, X1, X2 = _point(R, O, k, wrench_reals[j, 0], wrench_reals[j, 1],
                            wrench_reals[j, 2])
        f0, f1, f2 = wrench_reals[j, 3], wrench_reals[j, 4], wrench_reals[j, 5]
        n0, n1, n2 = wrench_reals[j, 6], wrench_reals[j, 7], wrench_reals[j, 8]
        if b >= 0:                                                # turns with body b
            f0, f1, f2 = _rotate(R, b, f0, f1, f2)
            n0, n1, n2 = _rotate(R, b, n0, n1, n2)
        _add_wrench(f_ext, O, d, k, X0, X1, X2, f0, f1, f2, n0, n1, n2)
    for i in range(contact_body.shape[0]):
        k = contact_body[i]
        X0, X1, X2 = _point(R, O, k, contact_point[i, 0], contact_point[i, 1],
                            contact_point[i, 2])
        v0, v1, v2 = 0.0, 0.0, 0.0
        m = k
        while m >= 0:                                             # the point's velocity
            if prismatic[m]:
                v0, v1, v2 = v0 + qd[m] * e[m, 0], v1 + qd[m] * e[m, 1], v2 + qd[m] * e[m, 2]
            else:
                r0, r1, r2 = X0 - O[m, 0], X1 - O[m, 1], X2 - O[m, 2]
                v0 += qd[m] * (e[m, 1] * r2 - e[m, 2] * r1)
                v1 += qd[m] * (e[m, 2] * r0 - e[m, 0] * r2)
                v2 += qd[m] * (e[m, 0] * r1 - e[m, 1] * r0)
            m = lam[m]
        F0, F1, F2 = 0.0, 0.0, 0.0
        for j in range(planes.shape[0]):           # a point (0-2), the normal (3-5), k, c
            depth = ((planes[j, 0] - X0) * planes[j, 3] + (planes[j, 1] - X1) * planes[j, 4]
                     + (planes[j, 2] - X2) * planes[j, 5])
            if depth > 0.0:
                speed = v0 * planes[j, 3] + v1 * planes[j, 4] + v2 * planes[j, 5]
                push = max(planes[j, 6] * depth - planes[j, 7] * speed, 0.0)   # one-sided
                F0 += push * planes[j, 3]
                F1 += push * planes[j, 4]
                F2 += push * planes[j, 5]
        wall_force[i, 0], wall_force[i, 1], wall_force[i, 2] = F0, F1, F2
        _add_wrench(f_ext, O, d, k, X0, X1, X2, F0, F1, F2, 0.0, 0.0, 0.0)


@njit_inline
def _point(R, O, k, x0, x1, x2):
    """Return X = O_k + R_k x, a point of body k in the base frame."""
    return (O[k, 0] + R[k, 0, 0] * x0 + R[k, 0, 1] * x1 + R[k, 0, 2] * x2,
            O[k, 1] + R[k, 1, 0] * x0 + R[k, 1, 1] * x1 + R[k, 1, 2] * x2,
            O[k, 2] + R[k, 2, 0] * x0 + R[k, 2, 1] * x1 + R[k, 2, 2] * x2)


@njit_inline
def _rotate(R, b, x0, x1, x2):
    """Return R_b x."""
    return (R[b, 0, 0] * x0 + R[b, 0, 1] * x1 + R[b, 0, 2] * x2,
            R[b, 1, 0] * x0 + R[b, 1, 1] * x1 + R[b, 1, 2] * x2,
            R[b, 2, 0] * x0 + R[b, 2, 1] * x1 + R[b, 2, 2] * x2)


@njit_inline
def _add_wrench(w, O, d, k, X0, X1, X2, f0, f1, f2, n0, n1, n2):
    """Add force f at X and torque n to w_k = [moment about C_k = O_k + d_k; force]."""
    r0, r1, r2 = X0 - O[k, 0] - d[k, 0], X1 - O[k, 1] - d[k, 1], X2 - O[k, 2] - d[k, 2]
    w[k, 0] += n0 + r1 * f2 - r2 * f1
    w[k, 1] += n1 + r2 * f0 - r0 * f2
    w[k, 2] += n2 + r0 * f1 - r1 * f0
    w[k, 3] += f0
    w[k, 4] += f1
    w[k, 5] += f2


@njit
def evaluate_loads(reals, ints, q, qd, loads, workspace):
    """Set the loads' f_ext and wall forces at (q, qd) of the bodies."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    link_wrenches(model, data, qd, loads)
