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
    """Set loads' f_ext (and wall forces) at the kinematics in ``data`` (module doc)."""
    wrench_ints, wrench_reals, planes, contact_body, contact_point, f_ext, wall_force = loads
    lam, prismatic = model.lam, model.prismatic
    R, e, O, d = data.R, data.e, data.O, data.d
    f_ext[:] = 0.0
    for j in range(wrench_ints.shape[0]):
        k, b = wrench_ints[j, 0], wrench_ints[j, 1]
        x = wrench_reals[j]
        X = _point(R[k], O[k], x)
        if b >= 0:                                                # turns with body b
            f = _rotate(R[b], x[3], x[4], x[5])
            n = _rotate(R[b], x[6], x[7], x[8])
        else:
            f, n = (x[3], x[4], x[5]), (x[6], x[7], x[8])
        _add_wrench(f_ext[k], X, O[k], d[k], f, n)
    for i in range(contact_body.shape[0]):
        k = contact_body[i]
        X = _point(R[k], O[k], contact_point[i])
        v0, v1, v2 = 0.0, 0.0, 0.0
        m = k
        while m >= 0:                                             # the point's velocity
            if prismatic[m]:
                v0, v1, v2 = v0 + qd[m] * e[m, 0], v1 + qd[m] * e[m, 1], v2 + qd[m] * e[m, 2]
            else:
                r0, r1, r2 = X[0] - O[m, 0], X[1] - O[m, 1], X[2] - O[m, 2]
                v0 += qd[m] * (e[m, 1] * r2 - e[m, 2] * r1)
                v1 += qd[m] * (e[m, 2] * r0 - e[m, 0] * r2)
                v2 += qd[m] * (e[m, 0] * r1 - e[m, 1] * r0)
            m = lam[m]
        F = wall_force[i]
        F[0], F[1], F[2] = 0.0, 0.0, 0.0
        for j in range(planes.shape[0]):
            P = planes[j]
            depth = (P[0] - X[0]) * P[3] + (P[1] - X[1]) * P[4] + (P[2] - X[2]) * P[5]
            if depth > 0.0:
                speed = v0 * P[3] + v1 * P[4] + v2 * P[5]
                push = max(P[6] * depth - P[7] * speed, 0.0)      # one-sided
                F[0] += push * P[3]
                F[1] += push * P[4]
                F[2] += push * P[5]
        _add_wrench(f_ext[k], X, O[k], d[k], (F[0], F[1], F[2]), (0.0, 0.0, 0.0))


@njit_inline
def _point(R, O, x):
    """Return X = O + R x, a body point in the base frame."""
    return (O[0] + R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2],
            O[1] + R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2],
            O[2] + R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2])


@njit_inline
def _rotate(R, x0, x1, x2):
    """Return R x."""
    return (R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2,
            R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2,
            R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2)


@njit_inline
def _add_wrench(w, X, O, d, f, n):
    """Add force f at X and torque n to w = [moment about C = O + d; force]."""
    r0, r1, r2 = X[0] - O[0] - d[0], X[1] - O[1] - d[1], X[2] - O[2] - d[2]
    w[0] += n[0] + r1 * f[2] - r2 * f[1]
    w[1] += n[1] + r2 * f[0] - r0 * f[2]
    w[2] += n[2] + r0 * f[1] - r1 * f[0]
    w[3] += f[0]
    w[4] += f[1]
    w[5] += f[2]


@njit
def evaluate_loads(reals, ints, q, qd, loads, workspace):
    """Set the loads' f_ext and wall forces at (q, qd) of the bodies."""
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    link_wrenches(model, data, qd, loads)
