"""
Gains changed at runtime without a jump in effort: a linear ramp to the new values.

A PD law ``tau = kp e + kd e'`` whose gains change at once changes its effort at once
by ``(kp' - kp) e + (kd' - kd) e'``: with a position error under load (a held joint
against friction or an effort feedforward) that is a step in effort, which a real
drive avoids.  :class:`GainRamp` moves the gains linearly from the values they have
when a change is asked to the new ones over :data:`RAMP_TIME` seconds of the
controller's time (simulated time in the sim, the joint states' stamps in the
trajectory controller), sampled by the caller at every control period: the effort
moves by at most ``(kp' - kp) e`` times the period over the ramp time per period.
A change asked during a ramp starts a new one from where the gains are.
"""

import numpy as np

#: Seconds over which a change of gains is applied.
RAMP_TIME = 0.25


class GainRamp:
    """
    Rows of gains (``names``, one entry per joint) and their ramp to new targets.

    :attr:`values` holds the gains now (a dict of arrays); :meth:`change` starts a ramp,
    :meth:`at` advances it to a time and returns whether the values changed.
    """

    def __init__(self, values: dict, duration: float = RAMP_TIME):
        """Start at ``values`` ({name: array}), with no ramp running."""
        self.values = {name: np.array(v, dtype=float) for name, v in values.items()}
        self.duration = duration
        self._start = None   # (time, {name: values at the start})
        self._target = None  # {name: target values}

    @property
    def ramping(self) -> bool:
        """Return True while a ramp is running (or waits for its first time)."""
        return self._target is not None

    def change(self, name: str, joint: int, value: float):
        """Ask gain ``name`` of joint ``joint`` to become ``value``, ramped from now on."""
        target = self._target if self._target is not None else {
            k: v.copy() for k, v in self.values.items()}
        target[name][joint] = value
        self._target = target
        self._start = None   # the ramp starts at the next at(), from the gains then

    def at(self, now: float) -> bool:
        """Move the gains to their ramp's value at ``now``; return True if they changed."""
        if self._target is None:
            return False
        if self._start is None:
            self._start = (now, {k: v.copy() for k, v in self.values.items()})
        t0, start = self._start
        s = 1.0 if self.duration <= 0.0 else min(max((now - t0) / self.duration, 0.0), 1.0)
        for name, target in self._target.items():
            self.values[name][:] = target if s >= 1.0 else start[name] + s * (
                target - start[name])
        if s >= 1.0:
            self._target = self._start = None
        return True

    def target(self, name: str) -> np.ndarray:
        """Return where gain ``name`` is going (its value if no ramp runs)."""
        return (self._target if self._target is not None else self.values)[name].copy()
