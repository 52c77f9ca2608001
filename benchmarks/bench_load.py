"""
Start-up cost: import + ``load_urdf`` + the first forward dynamics in a fresh process.

Every node start, relaunch and CLI call pays it.  Each measurement is a fresh Python
process; the programs alternate, so that drift in the machine's load hits all of them
alike, and the median over the repeats is reported:

* ``baseline``: ``import numpy``;
* ``import numba``: the compiler's own import, part of what the core costs;
* ``import denoc_dynamics``: the package (numba included, and the one kernel the
  one-state forward dynamics calls, loaded from the cache);
* ``first FD``: ``import numpy``, ``from denoc_dynamics import load_urdf``,
  ``load_urdf(<bundled denoc_arm7.urdf>)`` and one ``forward_dynamics`` (every kernel
  these need is loaded from numba's on-disk cache, which the first, untimed run of
  each program warms).

Two clocks: **ready**, from the start of the process to the end of its last line
(the program prints the system's monotonic clock there), which is what the target
names (import + load_urdf + first FD); and **exit**, start to exit, which adds the
interpreter's teardown (a CLI call pays it; a node pays it at shutdown).  The target
is on ``first FD - baseline`` ready, with a warm cache: <= 1.0 s.  The cold compile
(the same ``first FD`` program with an empty ``NUMBA_CACHE_DIR``, so that numba
compiles every kernel it reaches and writes them there) is reported apart.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import common

NAME = 'load'
TITLE = 'Start-up: import + load_urdf + first FD in a fresh process, beyond numpy'
TARGET_S = 1.0

BASELINE = 'import numpy'
FIRST_FD = (BASELINE + '\nfrom denoc_dynamics import load_urdf\nrobot = load_urdf({path!r})\n'
            'z = numpy.zeros(robot.n)\nrobot.forward_dynamics(z, z, z)')
PROGRAMS = {
    'baseline': BASELINE,
    'import numba': BASELINE + '\nimport numba',
    'import denoc_dynamics': BASELINE + '\nimport denoc_dynamics',
    'first FD': FIRST_FD,
}
#: Appended to each program: the moment its last line is done (``ready``).
READY = '\nimport time as _t\nprint(_t.monotonic())'


def _time(code: str, env=None):
    """Run ``code`` in a fresh process; return (seconds to its end, seconds to exit)."""
    start = time.monotonic()
    run = subprocess.run([sys.executable, '-c', code + READY], capture_output=True, text=True,
                         env=dict(env or os.environ, PYTHONDONTWRITEBYTECODE='1'),
                         cwd=str(common.BENCH_DIR))
    elapsed = time.monotonic() - start
    if run.returncode != 0:
        raise RuntimeError(f'{code!r} failed: {run.stderr.strip()[-300:]}')
    return float(run.stdout.split()[-1]) - start, elapsed


def _environment() -> dict:
    """Return this process's environment with denoc_dynamics importable as here."""
    package_parent = os.path.dirname(os.path.dirname(common.denoc_dynamics.__file__))
    path = os.environ.get('PYTHONPATH', '')
    return dict(os.environ, PYTHONPATH=package_parent + (os.pathsep + path if path else ''))


def cold_compile(code: str, env: dict) -> float:
    """Return the wall time of ``code`` with an empty numba cache (compiling everything)."""
    with tempfile.TemporaryDirectory() as cache:
        return _time(code, dict(env, NUMBA_CACHE_DIR=cache))[1]


def run(opts) -> dict:
    """Time the programs in alternating fresh processes; return the section's results."""
    from denoc_dynamics.resources import bundled_urdf
    path = str(bundled_urdf('denoc_arm7'))
    env = _environment()
    programs = {name: code.format(path=path) for name, code in PROGRAMS.items()}
    repeats = 5 if opts.quick else 15
    progress = common.Progress(repeats + 2, NAME)
    cold = cold_compile(programs['first FD'], env)
    progress.step(f'cold compile {cold:.1f} s')
    for code in programs.values():          # warm the cache and the file cache once
        _time(code, env)
    progress.step('warm')
    times = {name: [] for name in programs}
    exits = {name: [] for name in programs}
    for _ in range(repeats):
        for name, code in programs.items():
            ready, exit_ = _time(code, env)
            times[name].append(ready)
            exits[name].append(exit_)
        progress.step(f'first FD {statistics.median(times["first FD"]):.2f} s')
    median = {name: statistics.median(t) for name, t in times.items()}
    added = {name: median[name] - median['baseline'] for name in programs if name != 'baseline'}
    spread = {name: [min(t) - median['baseline'], max(t) - median['baseline']]
              for name, t in times.items() if name != 'baseline'}
    median_exit = {name: statistics.median(t) for name, t in exits.items()}
    added_exit = {name: median_exit[name] - median_exit['baseline']
                  for name in programs if name != 'baseline'}
    return {
        'robot': 'denoc_arm7', 'urdf': path, 'repeats': repeats,
        'programs': {name: PROGRAMS[name].format(path='<urdf>') for name in programs},
        'clock': 'ready: process start to the end of the program (the target); exit: '
                 'process start to exit (adds the interpreter teardown)',
        'median_s': median, 'min_s': {name: min(t) for name, t in times.items()},
        'max_s': {name: max(t) for name, t in times.items()},
        'added_beyond_baseline_s': added, 'added_range_s': spread,
        'median_to_exit_s': median_exit, 'added_to_exit_s': added_exit,
        'cold_compile_first_fd_s': cold,
        'cold_compile_added_s': cold - median_exit['baseline'],
        'targets': [common.target(
            'fresh process, warm cache: import + load_urdf + first FD, beyond import numpy',
            added['first FD'], 's', f'<= {TARGET_S:g}', added['first FD'] <= TARGET_S,
            spread=f'{spread["first FD"][0]:.2f}..{spread["first FD"][1]:.2f} s; to exit '
                   f'{added_exit["first FD"]:.2f} s; cold compile {cold:.1f} s',
            figures=f'{median["first FD"]:.2f} s - import numpy {median["baseline"]:.2f} s '
                    f'(to exit: {added_exit["first FD"]:.2f} s)')],
    }


if __name__ == '__main__':
    sys.exit(common.main(sys.modules[__name__]))
