"""
The generalized-momentum observer of external joint torques, in discrete time.

De Luca and Mattone ("Sensorless robot collision detection and hybrid force/motion
control", ICRA 2005) and Haddadin, De Luca and Albu-Schaeffer ("Robot Collisions: A
Survey on Detection, Isolation, and Identification", IEEE T-RO 2017, Sec. IV) define
the residual

    r(t) = K (p(t) - p(0) - int_0^t (tau + C^T qd - g + r) ds),    p = I(q) qd,

with tau the measured joint torques (the link side of the drives) and K > 0
diagonal.  Since pd = tau + C^T qd - g + tau_ext (:mod:`.momentum`), differentiating
gives

    rd = K (tau_ext - r):

each r_i follows its tau_ext,i through a first-order lag of time constant 1 / K_i,
and no acceleration is ever needed.  p, C^T qd and g come from one pair of DeNOC
sweeps per sample (:func:`.momentum.momentum_sweeps`).

Discrete update.  Joint states arrive at t_k, dt_k = t_k - t_k-1 apart.  Over one
interval, write beta = tau + C^T qd - g; the external torque's mean over it is, by
the momentum balance,

    tau~_k = (p_k - p_k-1 - int beta dt) / dt_k,
    int beta dt ~ dt_k (beta_k + beta_k-1) / 2          (trapezoid, error O(dt^3)),

and rd = K (tau_ext - r) with tau_ext = tau~_k over the interval is solved exactly:

    r_k = r_k-1 + (1 - exp(-K dt_k)) (tau~_k - r_k-1).

For K dt << 1 this is Haddadin's r_k = r_k-1 + K (p_k - p_k-1 - dt_k (beta + r_k-1)),
the Euler step of the integral form; unlike it, it stays stable and unbiased for any
K dt (a step of tau_ext is followed within 1 - exp(-K t) at each sample), and
irregular sample times cost nothing.  The first sample only sets p_0 and beta_0
(r_0 = 0).  With mimic joints the bodies' terms are projected by G^T (:mod:`.momentum`).
"""

import math

import numpy as np

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .momentum import momentum_sweeps
from .spatial import njit

#: Rows of the observer's state buffer (:func:`observer_step`), one column per
#: coordinate: the last sample's momentum p and beta = tau + C^T qd - g, the residual
#: r, and this sample's p, C^T qd and g (scratch).
P_LAST, BETA_LAST, RESIDUAL, P_NOW, CT_QD, GRAVITY = range(6)


@njit
def observer_step(reals, ints, G, offset, q, qd, tau, dt, K, first, state, bodies,
                  workspace):
    """
    Take one sample (q, qd, tau) dt after the last; the residual r in ``state[RESIDUAL]``.

    ``G`` (n_bodies, n), ``offset``: q_b = G q + offset with mimic joints, G of no
    rows without them; ``bodies`` (5, n_bodies) scratch; ``first``: this sample only
    starts the observer (module doc).
    """
    n = q.shape[0]
    p, ct_qd, g = state[P_NOW], state[CT_QD], state[GRAVITY]
    if G.shape[0] == 0:
        model, data = model_arrays(reals, ints), data_arrays(workspace, n)
        kinematics(model, data, q)
        momentum_sweeps(model, data, qd, p, ct_qd, g)
    else:
        nb = G.shape[0]
        q_b, qd_b, p_b, ct_b, g_b = bodies[0], bodies[1], bodies[2], bodies[3], bodies[4]
        for a in range(nb):
            q_b[a], qd_b[a] = offset[a], 0.0
            for j in range(n):
                q_b[a] += G[a, j] * q[j]                          # q_b = G q + b
                qd_b[a] += G[a, j] * qd[j]
        model, data = model_arrays(reals, ints), data_arrays(workspace, nb)
        kinematics(model, data, q_b)
        momentum_sweeps(model, data, qd_b, p_b, ct_b, g_b)
        for j in range(n):
            p[j], ct_qd[j], g[j] = 0.0, 0.0, 0.0
            for a in range(nb):
                if G[a, j] != 0.0:
                    p[j] += G[a, j] * p_b[a]                      # G^T p
                    ct_qd[j] += G[a, j] * ct_b[a]
                    g[j] += G[a, j] * g_b[a]
    p_last, beta_last, r = state[P_LAST], state[BETA_LAST], state[RESIDUAL]
    for i in range(n):
        beta = tau[i] + ct_qd[i] - g[i]                           # beta = tau + C^T qd - g
        if first:
            r[i] = 0.0
        else:
            tau_mean = (p[i] - p_last[i]) / dt - 0.5 * (beta + beta_last[i])
            r[i] += (1.0 - math.exp(-K[i] * dt)) * (tau_mean - r[i])
        p_last[i], beta_last[i] = p[i], beta


class MomentumObserver:
    """
    The external joint torques of a :class:`~.robot.Robot` from its measured states.

    ``gain``: K [1/s], one value or one per coordinate.  :meth:`update` takes each
    joint state (positions, velocities, measured link-side torques) and its time
    step; :attr:`residual` is the estimate r of tau_ext (module doc).
    """

    def __init__(self, robot, gain):
        """Observe ``robot`` with gain K = ``gain``; the first update starts it."""
        n, nb = robot.n, robot.n_bodies
        self.n = n
        self._reals, self._ints = robot.model.reals, robot.model.ints
        mimic = nb > n                               # q_b = G q + offset (Robot.mimic_map)
        self._G = robot.mimic_map.G if mimic else np.zeros((0, n))
        self._offset = robot.mimic_map.b.copy() if mimic else np.zeros(0)
        self.gain = np.empty(n)
        self.set_gain(gain)
        self.state = np.zeros((6, n))
        self._bodies = np.zeros((5, nb))
        self._workspace = robot.model.data()
        self._started = False

    def set_gain(self, gain):
        """Set K [1/s] (one value or one per coordinate); ValueError unless all > 0."""
        gain = np.broadcast_to(np.asarray(gain, dtype=float), (self.n,))
        if not np.all(np.isfinite(gain)) or not np.all(gain > 0.0):
            raise ValueError(f'the observer gain must be finite and > 0, got {gain!r}')
        self.gain[:] = gain

    @property
    def residual(self) -> np.ndarray:
        """Return r, the estimate of the external joint torques (a view)."""
        return self.state[RESIDUAL]

    def reset(self):
        """Start again at the next update (r = 0)."""
        self._started = False
        self.state[RESIDUAL] = 0.0

    def update(self, q, qd, tau, dt: float) -> np.ndarray:
        """
        Take the joint state (q, qd, tau) ``dt`` [s] after the last; return r (a view).

        The arrays must be float64 of length n and finite (the caller checks); a dt
        that is not > 0 (a repeated or reordered stamp) restarts the observer.
        """
        first = not self._started or not dt > 0.0
        observer_step(self._reals, self._ints, self._G, self._offset, q, qd, tau,
                      dt if dt > 0.0 else 1.0, self.gain, first, self.state, self._bodies,
                      self._workspace)
        self._started = True
        return self.state[RESIDUAL]
