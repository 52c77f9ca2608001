"""
Exciting trajectories for identification: a few Fourier terms per joint (no ROS here).

The finite Fourier series of Swevers, Ganseman, Tukel, de Schutter and Van Brussel,
"Optimal robot excitation and identification" (1997):

    q_i(t) = q0_i + sum_{l=1..L} a_il / (w_f l) sin(w_f l t) - b_il / (w_f l) cos(w_f l t)

periodic with the base frequency w_f, smooth, with qd and qdd in closed form, so that a
recording can be averaged over periods and differentiated without noise.  The
coefficients are drawn at random (a seed) and each joint's are then scaled, once, so
that the joint stays within ``margin`` of its position limits and within
``velocity_fraction`` of its velocity limit, and its acceleration below ``max_accel``.
A joint without limits swings by at most ``max_amplitude`` about its centre.
"""

from typing import List, NamedTuple, Optional

import numpy as np

from .trajectory import TrajectoryPoint


class FourierTrajectory(NamedTuple):
    """q(t) = q0 + sum_l a_l/(w l) sin(w l t) - b_l/(w l) cos(w l t), per joint."""

    q0: np.ndarray          # (n,)
    a: np.ndarray           # (n, L)
    b: np.ndarray           # (n, L)
    omega: float            # w_f [rad/s]

    def sample(self, t):
        """Return (q, qd, qdd), each (len(t), n), at the times ``t`` [s]."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        wl = self.omega * np.arange(1, self.a.shape[1] + 1)     # (L,)
        s, c = np.sin(t[:, None] * wl), np.cos(t[:, None] * wl)  # (T, L)
        q = self.q0 + (s / wl) @ self.a.T - (c / wl) @ self.b.T
        qd = c @ self.a.T + s @ self.b.T
        qdd = (-s * wl) @ self.a.T + (c * wl) @ self.b.T
        return q, qd, qdd

    def points(self, duration: float, dt: float, start: float = 0.0) -> List[TrajectoryPoint]:
        """Return the points of a joint trajectory every ``dt`` from ``start`` [s]."""
        t = np.arange(0.0, duration + 0.5 * dt, dt)
        q, qd, qdd = self.sample(t)
        return [TrajectoryPoint(float(start + t[k]), q[k].tolist(), qd[k].tolist(),
                                qdd[k].tolist()) for k in range(len(t))]


def exciting_trajectory(lower, upper, velocity=None, period: float = 5.0,
                        harmonics: int = 3, seed: int = 0, margin: float = 0.1,
                        velocity_fraction: float = 0.5, max_accel: float = 3.0,
                        max_amplitude: float = 1.0,
                        centre: Optional[np.ndarray] = None) -> FourierTrajectory:
    """
    Return a random Fourier trajectory within the limits (see the module).

    ``lower``, ``upper`` and ``velocity`` (n,) are the joint limits (inf for none, as
    :attr:`.core.robot.Robot.joints` gives them); ``period`` the base period [s];
    ``centre`` the mean position (default: the middle of the limits, 0 without them).
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    n = lower.shape[0]
    velocity = np.full(n, np.inf) if velocity is None else np.asarray(velocity, dtype=float)
    if not (period > 0.0 and harmonics >= 1 and 0.0 <= margin < 0.5):
        raise ValueError('period must be > 0, harmonics >= 1 and 0 <= margin < 0.5')
    bounded = np.isfinite(lower) & np.isfinite(upper)
    if centre is None:
        middle = 0.5 * (np.where(bounded, lower, 0.0) + np.where(bounded, upper, 0.0))
        centre = np.where(bounded, middle, 0.0)
    centre = np.asarray(centre, dtype=float)
    room = np.minimum(np.where(bounded, np.minimum(upper - centre, centre - lower)
                               - margin * (upper - lower), np.inf), max_amplitude)
    if np.any(room <= 0.0):
        raise ValueError(f'no room to move within the limits for joints '
                         f'{np.flatnonzero(room <= 0.0).tolist()} (centre or margin)')
    rng = np.random.default_rng(seed)
    omega = 2.0 * np.pi / period
    a, b = rng.normal(size=(2, n, harmonics))
    trajectory = FourierTrajectory(centre, a, b, omega)
    q, qd, qdd = trajectory.sample(np.linspace(0.0, period, 400, endpoint=False))
    scale = np.minimum.reduce([room / np.abs(q - centre).max(axis=0),
                               velocity_fraction * velocity / np.abs(qd).max(axis=0),
                               max_accel / np.abs(qdd).max(axis=0)])
    # the offset keeps q(t) - q0 zero-mean: the sampled extremes scale exactly
    return FourierTrajectory(centre, a * scale[:, None], b * scale[:, None], omega)
