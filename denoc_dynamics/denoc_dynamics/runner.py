"""
The runner of a :class:`~.simulation.Simulation`: chunks of one publish period, paced.

:class:`SimulationRunner` steps the simulation in chunks of one publish period (one
compiled :func:`~.physics.advance` call each, in practice), paces it to a real-time
factor, measures the achieved one (:class:`RealTimeFactorMeter`) and calls back once
per chunk to publish.  It owns the simulated time: :meth:`SimulationRunner.tick`
advances what is due now, so that the sim node drives it from a timer of its
executor, in the one thread that also runs the ROS callbacks (no second Python thread
competes for the GIL).
"""

from dataclasses import dataclass
import math
import threading
import time
from typing import Callable, Optional

import numpy as np


class RealTimeFactorMeter:
    """Real-time factor (simulated time / wall time) over a sliding window."""

    def __init__(self, window: float = 2.0):
        """Average over about ``window`` seconds of wall time."""
        self.window = window
        self._samples = []
        self.total_sim = 0.0
        self.total_wall = 0.0

    def reset(self):
        """Forget the history (after a pause or a reset)."""
        self._samples.clear()

    def update(self, sim_time: float, wall_time: float):
        """Record a (sim, wall) time pair."""
        if self._samples:
            ds = sim_time - self._samples[-1][0]
            dw = wall_time - self._samples[-1][1]
            if ds >= 0.0:
                self.total_sim += ds
                self.total_wall += dw
        self._samples.append((sim_time, wall_time))
        while len(self._samples) > 2 and wall_time - self._samples[1][1] >= self.window:
            self._samples.pop(0)

    @property
    def rtf(self) -> float:
        """Return the windowed real-time factor (nan before two samples)."""
        if len(self._samples) < 2:
            return math.nan
        (s0, w0), (s1, w1) = self._samples[0], self._samples[-1]
        return (s1 - s0) / (w1 - w0) if w1 > w0 else math.nan

    @property
    def overall(self) -> float:
        """Return the real-time factor over the whole run (nan before any time)."""
        return self.total_sim / self.total_wall if self.total_wall > 0.0 else math.nan


class SimulationRunner:
    """
    Step a :class:`Simulation` in chunks of one publish period, paced in wall time.

    The runner owns the simulated time: each :meth:`tick` advances the chunk that is
    due at the current wall time, if any, and says when the next one is due, so that a
    ROS timer (the sim node), or :meth:`run`'s plain loop, can drive it.

    ``real_time_factor`` > 0 keeps simulated time at that multiple of wall time (if the
    physics cannot keep up it runs as fast as it can, without catching up later); 0
    runs as fast as possible, one chunk per tick.  After each chunk
    ``on_publish(snapshot)`` is called with a :class:`Snapshot`
    (never with a failed, non-finite state); paused or failed, the frozen state is
    published once a publish period.  ``on_failure(message)`` is called once when the
    simulation fails.  Commands, pause and reset come between two ticks, in the
    thread that ticks (the sim node's executor): nothing here is shared between threads.

    **Lockstep** (``lockstep_timeout`` > 0): a controller that answers every published
    state with one command is put in the simulator's loop, as gz_ros2_control and
    mujoco_ros2_control run their controller manager inside the step.  After a chunk is
    published, the next one waits until :meth:`command_arrived` says the command for it
    came (or ``lockstep_timeout`` wall seconds passed: counted in ``lockstep_misses``).
    Under load the control then never acts a period late; the real-time factor drops
    instead.  It waits only while commands are coming: a chunk after which no command
    came runs the next one free, so a controller that stops or was never started costs
    one timeout, not the pace.
    """

    #: Fall this far behind (wall seconds) and the pacing restarts from now.
    MAX_LAG = 0.25

    def __init__(self, sim, publish_rate: float = 100.0,
                 real_time_factor: float = 1.0,
                 on_publish: Optional[Callable] = None,
                 clock: Callable[[], float] = time.monotonic,
                 on_failure: Optional[Callable] = None,
                 lockstep_timeout: Optional[float] = None):
        """Prepare to run ``sim``; nothing happens until :meth:`tick` or :meth:`run`."""
        if not publish_rate > 0.0:
            raise ValueError(f'publish_rate must be > 0, got {publish_rate!r}')
        if not real_time_factor >= 0.0:
            raise ValueError(f'real_time_factor must be >= 0, got {real_time_factor!r}')
        if lockstep_timeout is not None and not lockstep_timeout > 0.0:
            raise ValueError(f'lockstep_timeout must be > 0, got {lockstep_timeout!r}')
        self.sim = sim
        self.publish_rate = publish_rate
        self.real_time_factor = real_time_factor
        self.on_publish = on_publish
        self.on_failure = on_failure
        self.clock = clock
        self.meter = RealTimeFactorMeter()
        self.chunk = max(1, int(round(sim.params.physics_rate / publish_rate)))
        sim.drives.feedforward_steps = self.chunk
        self._anchor = None
        self._was_frozen = True
        self._next_frozen = -math.inf
        self._reported = None
        self.lockstep_timeout = lockstep_timeout
        self.lockstep_misses = 0
        self._commanded = False      # a command came since the last chunk was published
        self._awaiting = None        # wall time since which the next chunk waits for one

    def command_arrived(self):
        """Say that a command came (lockstep: the chunk waiting for it may run)."""
        self._commanded = True
        self._awaiting = None

    def _in_lockstep(self, now) -> bool:
        """Return True while the next chunk waits for its command (lockstep only)."""
        if self._awaiting is None:
            return False
        if now - self._awaiting < self.lockstep_timeout:
            return True
        self.lockstep_misses += 1
        self._awaiting = None
        return False

    @property
    def period(self) -> float:
        """Return the wall time between two chunks at the target pace [s] (0: flat out)."""
        if self.real_time_factor == 0.0:
            return 0.0
        return self.chunk * self.sim.h / self.real_time_factor

    def set_simulation(self, sim):
        """Swap in another simulation (a new robot model)."""
        self.sim = sim
        self.chunk = max(1, int(round(sim.params.physics_rate / self.publish_rate)))
        sim.drives.feedforward_steps = self.chunk
        self._anchor = None
        self.meter.reset()
        self._commanded, self._awaiting = False, None   # the loop closes again from here

    def step_chunk(self):
        """Advance one publish period; return the snapshot to publish."""
        self.sim.advance(self.chunk)
        return self.snapshot()

    def snapshot(self):
        """Return the snapshot of the current state; None if failed."""
        sim = self.sim
        if sim.failure is not None:
            return None
        return Snapshot(sim.t, sim.q, sim.qd, np.array(sim.joint_torque, dtype=float),
                        sim.mode, sim.paused)

    def finished(self, duration: Optional[float]) -> bool:
        """Return True once the simulated time has reached ``duration`` (None: never)."""
        return duration is not None and self.sim.t >= duration - 0.5 * self.sim.h

    def tick(self, duration: Optional[float] = None) -> float:
        """
        Advance the chunk due now (none past ``duration``); return the wait until the next.

        The wait is in seconds of wall time (0 when running as fast as possible).
        """
        now = self.clock()
        sim = self.sim
        frozen = sim.paused or sim.failure is not None
        if frozen != self._was_frozen:
            self._anchor = None
            self.meter.reset()
            self._was_frozen = frozen
            self._awaiting = None     # a wait from before the pause is no miss
        if frozen:
            if now < self._next_frozen:
                return self._next_frozen - now
            self._next_frozen = now + 1.0 / self.publish_rate
            self._chunk()
            return 1.0 / self.publish_rate
        if self.real_time_factor == 0.0:
            # One chunk per tick here too, so that the callbacks between two ticks (a
            # controller's commands above all) act every publish period of simulated
            # time.  Several chunks a tick put a computed-torque loop through the
            # executor 3 to 4 periods late: beyond its margin, the arm then swung
            # against its velocity limits for the whole run.
            if not self.finished(duration) and not self._in_lockstep(now):
                self._chunk()
            return 0.0
        if self._anchor is None:
            self._anchor = (sim.t, now)
        s0, w0 = self._anchor
        due = s0 + (now - w0) * self.real_time_factor  # simulated time due now
        chunk_time = self.chunk * sim.h
        if due - sim.t > self.MAX_LAG * self.real_time_factor:
            # cannot keep up: one chunk now, and the pacing restarts from here
            self._anchor = (sim.t + chunk_time, now)
            due = sim.t + chunk_time
        # One chunk per tick, even when behind: the callbacks between two ticks (the
        # commands above all) then act every publish period of simulated time, as on
        # pace.  A burst of chunks on a stale command put a closed loop through another
        # process three periods late and cost its stability margin
        # (test_ros_trajectory_controller.py on a loaded machine).  To catch up, tick
        # more often than once a chunk (the sim node ticks twice).
        if (sim.t + chunk_time <= due + 0.5 * sim.h and not self.finished(duration)
                and not self._in_lockstep(now)):
            self._chunk()
            sim = self.sim
        s0, w0 = self._anchor
        return max(w0 + (sim.t + chunk_time - s0) / self.real_time_factor - self.clock(), 0.0)

    def _chunk(self) -> bool:
        """Step one chunk and publish it; return True if the simulation is frozen."""
        snapshot = self.step_chunk()
        sim = self.sim
        frozen = sim.paused or sim.failure is not None
        if not frozen:
            self.meter.update(sim.t, self.clock())
            if self.lockstep_timeout is not None:
                # the next chunk waits for its command if the controller is in the loop
                self._awaiting = self.clock() if self._commanded else None
                self._commanded = False
        if snapshot is not None and self.on_publish is not None:
            self.on_publish(snapshot)
        failure = sim.failure
        if failure is not None and failure is not self._reported:
            self._reported = failure
            if self.on_failure is not None:
                self.on_failure(failure)
        return frozen

    def run(self, stop: threading.Event, duration: Optional[float] = None):
        """Tick until ``stop`` is set or the simulated time reaches ``duration``."""
        while not stop.is_set() and not self.finished(duration):
            wait = self.tick(duration)
            if wait > 0.0 and not self.finished(duration):
                stop.wait(wait)


@dataclass
class Snapshot:
    """What the runner publishes after a chunk: time, state and joint torques (tau_J)."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    mode: str
    paused: bool
