"""
The runner in lockstep: a controller that answers every published state is in the loop.

* With commands coming, each chunk after the first waits for the command that answers
  the state before it: under load, no chunk runs on a stale command.
* A command that does not come releases the chunk after ``lockstep_timeout`` (counted),
  and the runner then runs free until commands come again.
* Without ``lockstep_timeout`` the runner never waits (the default).
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.runner import SimulationRunner
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest


class Clock:
    """A wall clock that the test moves."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture(scope='module')
def arm():
    return load_urdf(bundled_urdf('denoc_arm7'))


def runner_of(arm, rtf, timeout):
    sim = Simulation(arm, initial_positions=np.zeros(arm.n), start_mode='running')
    published, clock = [], Clock()
    runner = SimulationRunner(sim, publish_rate=100.0, real_time_factor=rtf,
                              on_publish=published.append, clock=clock,
                              lockstep_timeout=timeout)
    return runner, published, clock


@pytest.mark.parametrize('rtf', [0.0, 1.0])
def test_each_chunk_waits_for_the_command_answering_the_last_state(arm, rtf):
    runner, published, clock = runner_of(arm, rtf, timeout=0.1)
    if rtf:
        runner.tick()                   # sets the pace
        clock.now += 0.02
    runner.tick()                       # free: no command has come yet
    assert len(published) == 1
    runner.command_arrived()            # the controller is in the loop from here on
    for k in range(2, 12):
        clock.now += 0.02               # behind the pace: a chunk is due at every tick
        runner.tick()
        assert len(published) == k      # the chunk answered by the command ran
        for _ in range(3):              # no command for it yet: the next chunk waits
            clock.now += 0.02
            runner.tick()
            assert len(published) == k
        runner.command_arrived()
    assert runner.lockstep_misses == 0
    assert runner.sim.t == pytest.approx(0.11)


def test_a_command_that_does_not_come_releases_the_chunk_after_the_timeout(arm):
    runner, published, clock = runner_of(arm, 0.0, timeout=0.1)
    runner.tick()
    runner.command_arrived()
    runner.tick()
    assert len(published) == 2          # waits for the answer to state 2 from here
    clock.now += 0.099
    runner.tick()
    assert len(published) == 2
    clock.now += 0.002
    runner.tick()
    assert len(published) == 3 and runner.lockstep_misses == 1
    for k in range(4, 10):              # the controller went silent: free running
        runner.tick()
        assert len(published) == k
    assert runner.lockstep_misses == 1
    runner.command_arrived()            # it is back: lockstep again
    runner.tick()
    n = len(published)
    runner.tick()
    assert len(published) == n


def test_without_lockstep_the_runner_never_waits(arm):
    runner, published, clock = runner_of(arm, 0.0, timeout=None)
    for k in range(1, 6):
        runner.command_arrived()
        runner.tick()
        runner.tick()
        assert len(published) == 2 * k
    assert runner.lockstep_misses == 0


def test_a_lockstep_timeout_must_be_positive(arm):
    sim = Simulation(arm, initial_positions=np.zeros(arm.n), start_mode='running')
    for bad in (0.0, -1.0, float('nan')):
        with pytest.raises(ValueError, match='lockstep_timeout'):
            SimulationRunner(sim, lockstep_timeout=bad)
