"""
Two Python threads calling one Robot at once get the serial results.

A ROS 2 ``MultiThreadedExecutor`` may run two callbacks of the dynamics node at once.
Single states run each thread on its own workspace; batches run numba's parallel loop,
and numba's workqueue threading layer (the one left where neither TBB nor OpenMP is
installed) aborts the process when two threads enter a parallel region at once, so
the batches are serialized by a lock.  Each scenario runs two threads, started
together, ITERATIONS calls each, every result compared bit for bit with the serial
one:

* one thread on single states, one on batches, of the same robot;
* both threads on batches of the same robot, and both on single states;
* two robots loaded from the same URDF, both threads on batches;
* one thread on a robot's batches, one on batches of Fixman's planar chain
  (:mod:`denoc_dynamics.core.fixman`, another parallel loop).

The robots are the bundled arm and the bundled arm with its gripper (a tree with a
mimic joint).  The scenarios run here, on numba's default threading layer, and in a
child process with ``NUMBA_THREADING_LAYER=workqueue``, where a race aborts.
"""

import os
from pathlib import Path
import subprocess
import sys
import threading

import numpy as np
import pytest

ITERATIONS = 200
STATES = 8
SCENARIOS = ('single+batch', 'batch+batch', 'single+single', 'two robots batch+batch',
             'batch+fixman')
ROBOTS = ('denoc_arm7', 'denoc_arm7_gripper')


def _load(name):
    from denoc_dynamics import load_urdf
    from denoc_dynamics.resources import bundled_urdf
    return load_urdf(bundled_urdf(name))


def _single(robot, Q, QD, TAU, s):
    """Return the single-state results at state s."""
    q, qd, tau = Q[s], QD[s], TAU[s]
    return [robot.forward_dynamics(q, qd, tau), robot.forward_dynamics(q, qd, tau, 'cholesky'),
            robot.inverse_dynamics(q, qd, tau), robot.inertia_matrix(q), robot.udu(q)[0],
            robot.inverse_inertia_matrix(q), robot.composite_body(q, qd)[1]]


def _batch(robot, Q, QD, TAU, s):
    """Return the batched results of all states, rolled by s (so that each call differs)."""
    Q, QD, TAU = (np.roll(x, s, axis=0) for x in (Q, QD, TAU))
    return [robot.forward_dynamics(Q, QD, TAU), robot.inverse_dynamics(Q, QD, TAU),
            robot.inertia_matrix(Q), robot.udu(Q)[1]]


def _fixman(robot, Q, QD, TAU, s):
    """Return Fixman's batched FD of a planar chain of 6 links, states rolled by s."""
    from denoc_dynamics.core import fixman
    L, m = np.linspace(0.3, 0.8, 6), np.linspace(2.0, 0.5, 6)
    theta, theta_dot, tau = (np.roll(np.resize(x, (STATES, 6)), s, axis=0)
                             for x in (Q, QD, TAU))
    return [fixman.forward_dynamics(theta, theta_dot, L, m, tau)]


def run_scenario(scenario, name):
    """Run two threads at once; return the list of mismatches and errors (empty: pass)."""
    robot = _load(name)
    rng = np.random.default_rng(11)
    Q, QD, TAU = (rng.uniform(-1.0, 1.0, (STATES, robot.n)) for _ in range(3))
    kinds = scenario.split()[-1].split('+')
    robots = [robot, _load(name) if scenario.startswith('two robots') else robot]
    work = {'single': _single, 'batch': _batch, 'fixman': _fixman}
    # the serial results, one per state (or roll) and kind
    expected = {kind: [work[kind](robot, Q, QD, TAU, s) for s in range(STATES)]
                for kind in set(kinds)}
    barrier = threading.Barrier(2)
    problems = []

    def thread(kind, robot, offset):
        try:
            barrier.wait()
            for i in range(ITERATIONS):
                s = (i + offset) % STATES
                for k, (got, want) in enumerate(zip(work[kind](robot, Q, QD, TAU, s),
                                                    expected[kind][s])):
                    if not np.array_equal(got, want):
                        problems.append(f'{kind} call {i}, result {k} differs')
        except Exception as exc:      # reported by the test, with the thread's kind
            problems.append(f'{kind}: {exc!r}')

    threads = [threading.Thread(target=thread, args=(kind, r, 3 * j))
               for j, (kind, r) in enumerate(zip(kinds, robots))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return problems


@pytest.mark.parametrize('name', ROBOTS)
@pytest.mark.parametrize('scenario', SCENARIOS)
def test_two_threads_get_the_serial_results(scenario, name):
    problems = run_scenario(scenario, name)
    assert not problems, problems[:5]


def test_workqueue_layer_two_threads_do_not_abort():
    """The same scenarios where concurrent parallel regions abort the process."""
    env = dict(os.environ, NUMBA_THREADING_LAYER='workqueue')
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True,
                          text=True, cwd=Path(__file__).parent, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.split() == ['workqueue'] + ['ok'] * len(SCENARIOS) * len(ROBOTS), \
        done.stdout


if __name__ == '__main__':
    import numba
    _load('denoc_arm7').inertia_matrix(np.zeros((2, 7)))   # a parallel call picks the layer
    print(numba.threading_layer(), flush=True)
    for scenario in SCENARIOS:
        for name in ROBOTS:
            problems = run_scenario(scenario, name)
            print('ok' if not problems else f'FAILED {scenario} {name}: {problems[:3]}',
                  flush=True)
