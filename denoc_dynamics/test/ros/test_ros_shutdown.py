"""
Deterministic shutdown of every executable: exit code 0 and no traceback.

Each executable gets SIGINT, SIGTERM, or two SIGINTs 50 ms apart (a terminal's Ctrl-C
under ``ros2 launch``: the terminal signals the process group, then launch signals
each node again), once it is running and while it is still being constructed.  Every
case runs ``DENOC_SHUTDOWN_REPEAT`` processes (default 10, at staggered moments, ten
at a time), so a race lost one time in ten shows up more often than not; set it to 50
for a long run.
"""

import os
import random
import signal

from denoc_dynamics.resources import bundled_urdf
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import wait_for

pytestmark = pytest.mark.ros

REPEAT = int(os.environ.get('DENOC_SHUTDOWN_REPEAT', '10'))
#: Processes started at once (one DDS domain holds only so many participants).
BATCH = 10
#: How long [s] a batch may take until its first process is up.
START_TIMEOUT = 180.0

#: Command line of each executable and the output that says it is running; the
#: "starting" marker is logged while the nodes are still being constructed (the model
#: is loaded before the subscriptions and services are created).
EXECUTABLES = {
    'dynamics_node': (ros_args(urdf_path=bundled_urdf()), 'effort commands rejected',
                      'robot model from'),
    'sim_node': (ros_args(urdf_path=bundled_urdf(), status_period=0.5), 'real-time factor',
                 'robot model from'),
    'denoc_sim_arm': (['--no-demo', '--ros-args', '-p', 'status_period:=0.5'],
                      'real-time factor', 'robot model from'),
}
EXECUTABLES['dynamics_node'][0].extend(['-p', 'diagnostics_period:=0.5'])

SIGNALS = {
    'SIGINT': (signal.SIGINT,),
    'SIGTERM': (signal.SIGTERM,),
    'SIGINT-SIGINT': (signal.SIGINT, signal.SIGINT),
}


def _run(name, signals, running):
    rng = random.Random(f'{name} {signals} {running}')
    for first in range(0, REPEAT, BATCH):
        _run_batch(name, signals, running, range(first, min(first + BATCH, REPEAT)), rng)


def _run_batch(name, signals, running, numbers, rng):
    args, ready, starting = EXECUTABLES[name]
    marker = ready if running else starting
    procs = [NodeProcess(name, args + ['-r', f'__ns:=/shutdown_test_{k}']) for k in numbers]
    try:
        pending = list(procs)
        while pending:
            # ten processes loading numba's kernels at once: under a load of 15 on two
            # cores none had printed its marker within 60 s
            if not wait_for(lambda: any(marker in p.output() or not p.alive() for p in pending),
                            timeout=START_TIMEOUT):
                for proc in pending:   # a start that hangs: where (SIGABRT, the fault handler)
                    proc.finish(0.1)
                pytest.fail(f'none of {len(pending)} printed {marker!r} in {START_TIMEOUT:g} s:\n'
                            + '\n'.join(p.describe() for p in pending), pytrace=False)
            for proc in [p for p in pending if marker in p.output() or not p.alive()]:
                pending.remove(proc)
                if running:  # somewhere within the physics and callback cycle
                    wait_for(lambda: False, timeout=rng.uniform(0.0, 0.2), period=0.01)
                proc.send(*SIGNALS[signals], gap=0.05)
        failed = []
        for proc in procs:
            code = proc.finish(20.0)   # a hang: SIGABRT, the stacks in the output
            out = proc.output()
            if code != 0 or 'Traceback' in out or '[ERROR]' in out:
                failed.append(proc.describe())
        if failed:   # pytest.fail: the whole output, which an assert's message is cut to
            pytest.fail(f'{len(failed)} of {len(procs)} did not exit cleanly:\n'
                        + '\n'.join(failed), pytrace=False)
    finally:
        for proc in procs:
            proc.stop()


@pytest.mark.parametrize('signals', SIGNALS)
@pytest.mark.parametrize('name', EXECUTABLES)
def test_signal_while_running_exits_cleanly(name, signals):
    _run(name, signals, running=True)


@pytest.mark.parametrize('signals', ['SIGINT', 'SIGINT-SIGINT'])
@pytest.mark.parametrize('name', EXECUTABLES)
def test_signal_while_starting_exits_cleanly(name, signals):
    _run(name, signals, running=False)
