"""
Start-up cost of ``load_urdf``: what loading the bundled arm adds to a fresh process.

Every node start, relaunch and CLI call pays it.  Each measurement is a fresh Python
process, timed from outside (start to exit); the programs alternate, so that drift
in the machine's load hits all of them alike, and the median over the repeats is
reported:

* ``baseline``: ``import numpy, scipy.linalg`` (what the core needs anyway);
* ``load_urdf``: the same imports, then ``from denoc_dynamics import load_urdf`` and
  ``load_urdf(<bundled denoc_arm7.urdf>)``;
* ``yourdfpy`` (peer, where installed): the same imports, then
  ``yourdfpy.URDF.load(<same file>, load_meshes=False)``, the parser the core used
  before (it imports trimesh).

The target is on ``load_urdf - baseline``: <= 0.3 s.
"""

import os
import statistics
import subprocess
import sys
import time

import common

NAME = 'load'
TITLE = 'Start-up: load_urdf of the bundled arm in a fresh process, beyond numpy + scipy'
TARGET_S = 0.3

BASELINE = 'import numpy, scipy.linalg'
PROGRAMS = {
    'baseline': BASELINE,
    'load_urdf': BASELINE + '\nfrom denoc_dynamics import load_urdf\nload_urdf({path!r})',
    'yourdfpy': (BASELINE + '\nimport yourdfpy\nyourdfpy.URDF.load({path!r}, '
                 'load_meshes=False, build_scene_graph=False, '
                 'build_collision_scene_graph=False, load_collision_meshes=False)'),
}


def _available(module: str) -> bool:
    run = subprocess.run([sys.executable, '-c', f'import {module}'], capture_output=True)
    return run.returncode == 0


def _time(code: str) -> float:
    start = time.perf_counter()
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONDONTWRITEBYTECODE='1'))
    elapsed = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f'{code!r} failed: {run.stderr.strip()[-300:]}')
    return elapsed


def run(opts) -> dict:
    """Time the programs in alternating fresh processes; return the section's results."""
    from denoc_dynamics.resources import bundled_urdf
    path = bundled_urdf('denoc_arm7')
    names = [name for name in PROGRAMS if name != 'yourdfpy' or _available('yourdfpy')]
    repeats = 5 if opts.quick else 15
    for name in names:                  # warm the file cache once
        _time(PROGRAMS[name].format(path=path))
    times = {name: [] for name in names}
    progress = common.Progress(repeats, NAME)
    for _ in range(repeats):
        for name in names:
            times[name].append(_time(PROGRAMS[name].format(path=path)))
        progress.step(f'load_urdf {statistics.median(times["load_urdf"]):.2f} s')
    median = {name: statistics.median(t) for name, t in times.items()}
    added = {name: median[name] - median['baseline'] for name in names if name != 'baseline'}
    result = {
        'robot': 'denoc_arm7', 'urdf': str(path), 'repeats': repeats,
        'programs': {name: PROGRAMS[name].format(path='<urdf>') for name in names},
        'median_s': median, 'min_s': {name: min(t) for name, t in times.items()},
        'added_beyond_baseline_s': added,
        'yourdfpy_available': 'yourdfpy' in names,
        'targets': [{
            'name': 'load_urdf(bundled arm) added to a fresh process beyond numpy + scipy',
            'value': added['load_urdf'], 'unit': 's', 'target': f'<= {TARGET_S:g}',
            'pass': added['load_urdf'] <= TARGET_S}],
    }
    if 'yourdfpy' in added:
        result['load_urdf_over_yourdfpy_added'] = added['load_urdf'] / added['yourdfpy']
    return result


if __name__ == '__main__':
    import json
    print(json.dumps(run(common.Options(quick=True)), indent=2, default=str))
