"""
The generalized-momentum observer of external joint torques, in discrete time.

De Luca and Mattone ("Sensorless robot collision detection and hybrid force/motion
control", ICRA 2005) and Haddadin, De Luca and Albu-Schaeffer ("Robot Collisions: A
Survey on Detection, Isolation, and Identification", IEEE T-RO 2017, Sec. IV) start
from the equations of motion with the measured joint torques tau (the link side of
the drives) and the external ones tau_ext,

    I(q) qdd + C(q, qd) qd + g(q) = tau + tau_ext,                               (1)

and the generalized momentum p = I qd.  With Id = C + C^T (the skew symmetry of
Id - 2 C), (1) becomes

    pd = tau + C^T qd - g + tau_ext,                                             (2)

which holds no acceleration.  The residual, K > 0 diagonal,

    r(t) = K (p(t) - p(0) - int_0^t (tau + C^T qd - g + r) ds),                  (3)

obeys, by (2),

    rd = K (tau_ext - r):                                                        (4)

each r_i follows its tau_ext,i through a first-order lag of time constant 1 / K_i.
p, C^T qd and g come from one pair of DeNOC sweeps per sample
(:func:`.momentum.momentum_sweeps`: C^T qd is the rate of the joint axes acting on
the momentum beyond each joint, no finite differences).

Discrete update.  Joint states arrive at t_k, dt_k = t_k - t_k-1 apart.  Integrate
(2) over one interval, with beta = C^T qd - g (a function of the state alone):

    p_k - p_k-1 = int tau dt + int beta dt + int tau_ext dt.                     (5)

The state moves continuously, so beta is smooth and the trapezoid rule is accurate
to O(dt^3):

    int beta dt ~ dt_k (beta_k + beta_k-1) / 2.                                  (6)

How tau moved between its samples is a property of the robot, chosen by ``hold``:

    'first_order'  (a first-order hold: tau straight between its samples, as a
                   torque sensor sampling a continuous signal sees it)
                   int tau dt = dt_k (tau_k + tau_k-1) / 2,                      (7a)
    'zero_order'   (a zero-order hold: each sample's tau acted since the sample
                   before, as drives hold a command from one control cycle to the
                   next and report the torque that brought the arm to the state)
                   int tau dt = dt_k tau_k.                                      (7b)

(7b) is exact for a held command, where (7a) errs by dt_k (tau_k - tau_k-1) / 2, a
lag of dt_k / 2 on every change of the command: with nothing pushing, the bundled
arm's demo under computed torque at 100 Hz reads 0.044 N m RMS on its worst joint by
(7a), 0.003 N m by (7b) (test_contact_sim.py).  The link-side torque of a
held command also carries the joints' friction and damping, which move with the
state; (7b) takes them as held too, an error of dt_k / 2 times their rate, small
next to the command's.  (7a) suits torques that are continuous in time (a robot
whose drives are commanded much faster than it reports its state).

By (5)-(7), the external torque's mean over the interval is

    tau~_k = (p_k - p_k-1 - int tau dt - int beta dt) / dt_k,                    (8)

and (4) with tau_ext = tau~_k over the interval is solved exactly:

    r_k = r_k-1 + (1 - exp(-K dt_k)) (tau~_k - r_k-1).                           (9)

For K dt << 1, (9) is Haddadin's r_k = r_k-1 + K (p_k - p_k-1 - dt_k (tau + beta +
r_k-1)), the Euler step of (3); unlike it, (9) stays stable and unbiased for any K dt
(a step of tau_ext is followed within 1 - exp(-K t) at each sample), and irregular
sample times cost nothing.  The first sample only sets p_0, tau_0 and beta_0
(r_0 = 0).  With mimic joints the bodies' terms are projected by G^T
(:mod:`.momentum`).
"""


import math

import numpy as np

from .kinematics import kinematics
from .model import data_arrays, model_arrays, unowned
from .momentum import momentum_sweeps
from .spatial import njit

#: Rows of the observer's state buffer (:func:`observer_step`), one column per
#: coordinate: the last sample's momentum p, torque tau and beta = C^T qd - g, the
#: residual r, and this sample's p, C^T qd and g (scratch).
P_LAST, TAU_LAST, BETA_LAST, RESIDUAL, P_NOW, CT_QD, GRAVITY = range(7)

#: How the measured torques moved between samples (module doc, (7a) and (7b)); the
#: kernel's ``zero_order`` flag is ``hold == 'zero_order'``.
HOLDS = ('first_order', 'zero_order')


@njit
def observer_step(reals, ints, G, offset, q, qd, tau, dt, K, zero_order, first, state,
                  bodies, workspace):
    """
    Take one sample (q, qd, tau) dt after the last; the residual r in ``state[RESIDUAL]``.

    ``G`` (n_bodies, n), ``offset``: q_b = G q + offset with mimic joints, G of no
    rows without them; ``zero_order``: tau held over the interval before its sample
    (7b), else straight between samples (7a); ``bodies`` (5, n_bodies) scratch;
    ``first``: this sample only starts the observer (module doc).
    """
    n = q.shape[0]
    reals, ints, workspace = unowned((reals, ints, workspace))
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
    p_last, tau_last, beta_last, r = (state[P_LAST], state[TAU_LAST], state[BETA_LAST],
                                      state[RESIDUAL])
    for i in range(n):
        beta = ct_qd[i] - g[i]                                    # beta = C^T qd - g
        if first:
            r[i] = 0.0
        else:
            if zero_order:
                tau_mean = tau[i]                                 # (7b)
            else:
                tau_mean = 0.5 * (tau[i] + tau_last[i])           # (7a)
            tau_ext = ((p[i] - p_last[i]) / dt - tau_mean
                       - 0.5 * (beta + beta_last[i]))             # (8), (6)
            r[i] += (1.0 - math.exp(-K[i] * dt)) * (tau_ext - r[i])    # (9)
        p_last[i], tau_last[i], beta_last[i] = p[i], tau[i], beta


class MomentumObserver:
    """
    The external joint torques of a :class:`~.robot.Robot` from its measured states.

    ``gain``: K [1/s], one value or one per coordinate.  ``hold``: how the measured
    torques moved between samples, one of :data:`HOLDS` (module doc, (7a), (7b)):
    ``'zero_order'`` (the default) for drives that hold each command until the next
    sample, as the simulated arm's do, ``'first_order'`` for torques that are
    continuous in time.  :meth:`update` takes each joint state (positions,
    velocities, measured link-side torques) and its time step; :attr:`residual` is
    the estimate r of tau_ext (module doc).
    """

    def __init__(self, robot, gain, hold: str = 'zero_order'):
        """Observe ``robot`` with gain K = ``gain``; the first update starts it."""
        if hold not in HOLDS:
            raise ValueError(f'the observer hold must be one of {HOLDS}, got {hold!r}')
        n, nb = robot.n, robot.n_bodies
        self.n = n
        self._reals, self._ints = robot.model.reals, robot.model.ints
        mimic = nb > n                               # q_b = G q + offset (Robot.mimic_map)
        self._G = robot.mimic_map.G if mimic else np.zeros((0, n))
        self._offset = robot.mimic_map.b.copy() if mimic else np.zeros(0)
        self.gain = np.empty(n)
        self.set_gain(gain)
        self.hold = hold
        self._zero_order = hold == 'zero_order'
        self.state = np.zeros((7, n))
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
                      dt if dt > 0.0 else 1.0, self.gain, self._zero_order, first, self.state,
                      self._bodies, self._workspace)
        self._started = True
        return self.state[RESIDUAL]
