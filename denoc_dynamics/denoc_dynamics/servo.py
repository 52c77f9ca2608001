"""
The joint drives of the simulated arm in a real arm's modes: effort, position, velocity.

Per joint, a drive takes one of three modes (:data:`EFFORT`, :data:`POSITION`,
:data:`VELOCITY`), all held in plain arrays that the compiled physics step reads
once per step (:func:`.physics.drive_efforts`), at
the physics rate (1 kHz by default: fast enough for a PD loop on a wrist of
0.0005 kg m^2, which the 100 Hz command rate is not):

* effort: ``tau = tau_cmd``;
* position: ``tau = kp (q_ref - q) + kd (qd_ref - qd) + tau_ff + tau_cmd``, a joint
  PD servo (``qd_ref`` zero unless a velocity is commanded) with the model's
  compensation ``tau_ff``;
* velocity: the same law on a reference that moves on at the commanded velocity
  ``qd_ref`` from where the joint was (:func:`.physics.drive_efforts`): a
  velocity loop whose integral action is the position error, as a drive's velocity
  mode has, so that friction leaves no velocity error;

each limited to the URDF effort.  ``tau_ff`` is the model's gravity and bias forces
(Coriolis, centrifugal: ``Robot.bias_forces``), ``tau_cmd`` in the servo modes an
effort feedforward (zero unless commanded).

:func:`default_gains` sets ``kp`` and ``kd`` per joint from the joint's smallest
effective inertia I: a critically damped error of natural frequency w at that
inertia (``kp = I w^2``, ``kd = 2 zeta I w``), slower and less damped where the arm's
inertia about the joint is larger.  A PD law held over a step h (a zero-order hold,
like a drive's control cycle) on an inertia I is stable for ``w h`` below about 0.9
with zeta = 1 (:func:`unstable_gains` checks any gains); :data:`MAX_OMEGA_STEP`
keeps w h well under it.
"""

import math

import numpy as np

#: Drive modes, the values of a joint's entry in the ``mode`` array.
EFFORT, POSITION, VELOCITY = 0, 1, 2

#: Their names, indexed by mode.
MODE_NAMES = ('effort', 'position', 'velocity')

#: Largest natural frequency of the default gains, times the physics step.
MAX_OMEGA_STEP = 0.3


def default_gains(inertia, h: float, frequency: float, damping_ratio: float):
    """
    Return (kp, kd) of a critically damped servo on each joint's effective ``inertia``.

    ``frequency`` [Hz] is the natural frequency at that inertia, lowered to
    :data:`MAX_OMEGA_STEP` / ``h`` where the physics step ``h`` [s] needs it;
    ``damping_ratio`` the error's damping ratio there.
    """
    omega = min(2.0 * math.pi * frequency, MAX_OMEGA_STEP / h)
    inertia = np.asarray(inertia, dtype=float)
    return inertia * omega ** 2, 2.0 * damping_ratio * inertia * omega


def saturation_error(effort_limit, kp, out):
    """Set ``out`` to the error effort / kp at which each servo saturates (inf: kp 0)."""
    out[:] = np.inf
    np.divide(effort_limit, kp, out=out, where=kp > 0.0)


def unstable_gains(inertia, h: float, kp, kd):
    """
    Return the joints whose PD law, held over a step ``h``, is unstable on ``inertia``.

    Per joint, the error of ``I qdd = -kp e - kd qd`` with the effort held over each
    step (an exact step of the double integrator) grows unless both eigenvalues of
    its step matrix lie inside the unit circle.  Checked on each joint's smallest
    effective inertia, without the URDF damping (which only helps).
    """
    inertia, kp, kd = (np.asarray(x, dtype=float) for x in (inertia, kp, kd))
    step = np.zeros(inertia.shape + (2, 2))
    step[..., 0, 0] = 1.0 - 0.5 * h * h * kp / inertia
    step[..., 0, 1] = h - 0.5 * h * h * kd / inertia
    step[..., 1, 0] = -h * kp / inertia
    step[..., 1, 1] = 1.0 - h * kd / inertia
    radius = np.abs(np.linalg.eigvals(step)).max(axis=-1)
    return np.flatnonzero(radius >= 1.0)
