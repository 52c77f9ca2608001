"""
Helpers shared by the benchmark sections: timing, progress, robots, machine info.

Import this module before numpy anywhere in the benchmarks: it pins the BLAS
thread pools to one thread (the machine has 2 cores and the timings compare
single-threaded code), and it makes ``import denoc_dynamics`` work from a plain
checkout by falling back to the source tree when the package is not installed.
"""

import contextlib
import datetime
import gc
import importlib
import json
import math
import os
from pathlib import Path
import platform
import signal
import statistics
import subprocess
import sys
import time

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')

import numpy as np  # noqa: E402  (after the thread count is set)

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SOURCE_PACKAGE_PARENT = REPO / 'denoc_dynamics'
INSTALL_DIR = REPO / 'install'
ENV_SH = REPO / '.ci' / 'env.sh'


def _import_package():
    """
    Import denoc_dynamics: installed (or on PYTHONPATH) first, else the source tree.

    The repository's ``denoc_dynamics/`` folder (the ROS package, no __init__.py) can
    shadow the real package as an empty namespace package; that counts as missing.
    """
    try:
        module = importlib.import_module('denoc_dynamics')
        if hasattr(module, 'load_urdf'):
            return module
    except ImportError:
        pass
    sys.modules.pop('denoc_dynamics', None)
    sys.path.insert(0, str(SOURCE_PACKAGE_PARENT))
    return importlib.import_module('denoc_dynamics')


denoc_dynamics = _import_package()

load_urdf = denoc_dynamics.load_urdf
sample_urdfs = importlib.import_module('denoc_dynamics.sample_urdfs')   # as the tests'
example_robot_data_dir = importlib.import_module('denoc_dynamics.resources').example_robot_data_dir


# --------------------------------------------------------------------------- options

class Options:
    """What a section may read from the command line: quick mode and its scale."""

    def __init__(self, quick: bool = False, seed: int = 2025):
        """Store ``quick`` (fewer repeats, smaller problems) and the random seed."""
        self.quick = quick
        self.seed = seed

    @property
    def repeats(self) -> int:
        """Return how many timed repeats a measurement takes (the median is reported)."""
        return 5 if self.quick else 21

    @property
    def repeat_time(self) -> float:
        """Return the target wall time of one timed repeat [s]."""
        return 0.02 if self.quick else 0.05


# --------------------------------------------------------------------------- timing

def _time_once(func, number: int) -> float:
    """Return the wall time of ``number`` calls of ``func`` [s], with the GC paused."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            func()
        return time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()


def calibrate(func, target: float, max_number: int = 100000) -> tuple:
    """
    Return (number, seconds per call): how many calls make one repeat of ``target`` s.

    ``func`` is called once untimed first (imports, caches, lazy allocation).
    """
    func()
    number = 1
    while True:
        elapsed = _time_once(func, number)
        if elapsed >= 0.2 * target or number >= max_number:
            per_call = elapsed / number
            break
        number *= 10
    return max(1, min(max_number, int(target / per_call))), per_call


def compare(funcs: dict, repeats: int = 15, target: float = 0.05, budget: float = None,
            min_repeats: int = 3) -> dict:
    """
    Time several callables side by side; return {name: stats} (see :func:`stats`).

    Each callable is calibrated to take about ``target`` seconds per repeat (at least
    one call), then the repeats are interleaved (a, b, c, a, b, c, ...) so that slow
    drifts of the machine affect every candidate alike.  ``budget`` (seconds per
    candidate) lowers the repeat count of slow calls, down to ``min_repeats``.
    """
    plan = {}
    for name, func in funcs.items():
        number, per_call = calibrate(func, target)
        count = repeats
        if budget is not None:
            count = max(min_repeats, min(repeats, int(budget / max(per_call * number, 1e-9))))
        plan[name] = (func, number, count)
    samples = {name: [] for name in funcs}
    for r in range(max(count for _, _, count in plan.values())):
        for name, (func, number, count) in plan.items():
            if r < count:
                samples[name].append(_time_once(func, number) / number)
    return {name: stats(values, plan[name][1]) for name, values in samples.items()}


def stats(per_call: list, number: int = 1) -> dict:
    """Return median / min / quartiles of per-call times [us], and the samples in order."""
    us = [1e6 * t for t in per_call]
    ordered = sorted(us)
    quartiles = statistics.quantiles(ordered, n=4) if len(us) >= 2 else [us[0]] * 3
    return {'median_us': statistics.median(ordered), 'min_us': ordered[0],
            'q1_us': quartiles[0], 'q3_us': quartiles[2], 'repeats': len(us),
            'calls_per_repeat': number, 'samples_us': us}


def ratio(timings: dict, ours: str, peer: str) -> dict:
    """
    Return ours / peer from one :func:`compare`: of the medians, of the minima, and spread.

    ``paired`` are the ratios repeat by repeat (the two ran next to each other), given
    as median and quartiles (the spread over the run).
    """
    a, b = timings[ours], timings[peer]
    paired = sorted(x / y for x, y in zip(a['samples_us'], b['samples_us']))
    quartiles = statistics.quantiles(paired, n=4) if len(paired) >= 2 else [paired[0]] * 3
    return {'of_medians': a['median_us'] / b['median_us'], 'of_minima': a['min_us'] / b['min_us'],
            'paired_median': statistics.median(paired), 'paired_q1': quartiles[0],
            'paired_q3': quartiles[2], 'paired_min': paired[0], 'paired_max': paired[-1]}


def target(name: str, value: float, unit: str, goal: str, passed: bool, **extra) -> dict:
    """Return one target entry of a section (see run_all.summary)."""
    return dict({'name': name, 'value': value, 'unit': unit, 'target': goal,
                 'pass': bool(passed)}, **extra)


# --------------------------------------------------------------------------- against the peer

def side_by_side(calls: dict, opts) -> tuple:
    """
    Time each of our calls against its peer's in one run; return (rows, timings).

    ``calls``: {label: (ours, peer)} callables, ``peer`` None where there is none; a peer
    shared by several labels (one Pinocchio FD for our three methods) is timed once.
    All are timed by :func:`compare`, interleaved.  A row: ``call``, ``ours_us`` and,
    with a peer, ``pinocchio_us``, ``ratio`` (:func:`ratio`, ours / peer) and
    ``ratio_ours_over_pinocchio`` (its ratio of the medians).
    """
    funcs, peer_key = {}, {}
    for label, (ours, peer) in calls.items():
        funcs[f'ours|{label}'] = ours
        if peer is not None:
            key = next((k for k, f in funcs.items() if f is peer and k.startswith('peer|')),
                       f'peer|{label}')
            funcs[key] = peer
            peer_key[label] = key
    timings = compare(funcs, repeats=opts.repeats, target=opts.repeat_time)
    rows = []
    for label in calls:
        row = {'call': label, 'ours_us': timings[f'ours|{label}']['median_us']}
        if label in peer_key:
            r = ratio(timings, f'ours|{label}', peer_key[label])
            row.update(pinocchio_us=timings[peer_key[label]]['median_us'], ratio=r,
                       ratio_ours_over_pinocchio=r['of_medians'])
        rows.append(row)
    return rows, timings


def ratio_targets(rows: list, goals: dict, peer: str = 'Pinocchio') -> list:
    """Return a :func:`target` per row with a goal ({label: largest ours / peer})."""
    targets = []
    for row in rows:
        goal = goals.get(row['call'])
        if goal is None or 'ratio' not in row:
            continue
        r = row['ratio']
        targets.append(target(
            f'{row["call"]}: ours / {peer}', r['of_medians'], 'x', f'<= {goal:g}',
            r['of_medians'] <= goal,
            spread=f'paired {r["paired_q1"]:.2f}..{r["paired_q3"]:.2f}, '
                   f'of minima {r["of_minima"]:.2f}',
            figures=f'{row["ours_us"]:.2f} us / {peer} {row["pinocchio_us"]:.2f} us'))
    return targets


def rows_table(rows: list) -> str:
    """Return the rows of :func:`side_by_side` as plain text."""
    lines = [f'{"call":<34} {"ours [us]":>11} {"peer [us]":>11}  ours / peer (quartiles)']
    for row in rows:
        r = row.get('ratio')
        peer = f'{row["pinocchio_us"]:11.2f}' if 'pinocchio_us' in row else f'{"-":>11}'
        spread = (f'{r["of_medians"]:.2f} ({r["paired_q1"]:.2f}..{r["paired_q3"]:.2f})'
                  if r else '-')
        lines.append(f'{row["call"][:34]:<34} {row["ours_us"]:11.2f} {peer}  {spread}')
    return '\n'.join(lines)


def targets_table(sections: dict) -> str:
    """Return the targets of ``sections`` ({name: section result}) as plain text."""
    lines = [f'{"target":<66} {"measured":>14}  {"goal":<10} result']
    for name, section in sections.items():
        if section.get('error'):
            lines.append(f'{name:<66} {"failed":>14}  {"":<10} {section["error"][:60]}')
        if section.get('available') is False:
            lines.append(f'{name:<66} {"n/a":>14}  {"":<10} {section.get("reason", "")[:60]}')
        for t in section.get('targets', []):
            value = f'{t["value"]:.3g} {t["unit"]}' if t['value'] is not None else '-'
            lines.append(f'{t["name"][:66]:<66} {value:>14}  {t["target"]:<10} '
                         f'{"PASS" if t["pass"] else "FAIL"}  {t.get("spread", "")}')
    return '\n'.join(lines)


def main(section, argv=None) -> int:
    """
    Run one section as a script: ``python benchmarks/bench_X.py [--quick] [--json]``.

    Every section's script prints the same: the load average before and after (the
    machine is shared: quote a figure with it), the rows against the peer if the
    section has them, and its targets; ``--json`` prints the whole result instead.
    """
    argv = sys.argv[1:] if argv is None else argv
    opts = Options(quick='--quick' in argv)
    load = os.getloadavg()[0]
    result = section.run(opts)
    if '--json' in argv:
        for value in result.get('timings', {}).values():
            value.pop('samples_us', None)
        print(json.dumps(_clean(result), indent=2, default=str))
        return 0
    print(f'{section.NAME}: load average {load:.2f} at the start, '
          f'{os.getloadavg()[0]:.2f} at the end ({os.cpu_count()} cores)')
    if result.get('rows') and 'ours_us' in result['rows'][0]:
        print(rows_table(result['rows']))
    print(targets_table({section.NAME: result}))
    return 0


# --------------------------------------------------------------------------- progress

class Progress:
    """
    A plain text progress bar on stderr (tqdm is not a dependency).

    On a terminal the bar is redrawn in place; otherwise (make, CI logs) a line is
    written at most every ``log_every`` seconds and at the end.
    """

    def __init__(self, total: int, label: str, width: int = 30, log_every: float = 10.0):
        """Start a bar of ``total`` steps titled ``label``."""
        self.total = max(1, total)
        self.label = label
        self.width = width
        self.done = 0
        self.tty = sys.stderr.isatty()
        self.log_every = log_every
        self.start = time.monotonic()
        self._last_log = -math.inf
        self._draw('')

    def step(self, note: str = '', count: int = 1):
        """Advance by ``count`` steps; ``note`` says what was just done."""
        self.done = min(self.total, self.done + count)
        self._draw(note)

    def _draw(self, note: str):
        filled = int(self.width * self.done / self.total)
        elapsed = time.monotonic() - self.start
        line = (f'{self.label:<12} [{"#" * filled}{"." * (self.width - filled)}] '
                f'{self.done}/{self.total} {elapsed:6.1f}s {note}')
        if self.tty:
            sys.stderr.write('\r' + line[:110].ljust(110))
            if self.done >= self.total:
                sys.stderr.write('\n')
            sys.stderr.flush()
        elif self.done >= self.total or time.monotonic() - self._last_log >= self.log_every:
            self._last_log = time.monotonic()
            sys.stderr.write(line + '\n')
            sys.stderr.flush()

    def close(self):
        """Finish the bar (if the section ended early)."""
        if self.done < self.total:
            self.done = self.total
            self._draw('')


def log(message: str):
    """Write one line of section output to stderr."""
    sys.stderr.write(message + '\n')
    sys.stderr.flush()


# --------------------------------------------------------------------------- robots

PANDA_RELATIVE = 'panda_description/urdf/panda.urdf'
PANDA_FINGERS = ('panda_finger_joint1', 'panda_finger_joint2')


def import_pinocchio():
    """Return the pinocchio module, or None when it is not installed."""
    try:
        return importlib.import_module('pinocchio')
    except ImportError:
        return None


def pin_model(pin, urdf_xml: str, keep_joints=None):
    """
    Return (model, data) of Pinocchio from a URDF string, fixed base.

    Movable joints not in ``keep_joints`` are locked at 0 by ``buildReducedModel``
    (what ``load_urdf(..., side_branches='lock')`` does to side branches).
    """
    model = pin.buildModelFromXML(urdf_xml)
    if keep_joints is not None:
        locked = [model.getJointId(name) for name in list(model.names)[1:]
                  if name not in keep_joints]
        if locked:
            model = pin.buildReducedModel(model, locked, pin.neutral(model))
    return model, model.createData()


def pin_data_bytes(n: int) -> float:
    """
    Return the estimated size of a Pinocchio ``Data`` for an n-joint chain [bytes].

    Pinocchio's Data holds dense nv^3 tensors (second-order derivatives): about
    64 n^3 bytes measured with pin 4.1 (1.8 GB at n = 300, 64 GB at n = 1000).
    """
    return 64.0 * n ** 3 + 2e6


def meminfo(key: str = 'MemAvailable') -> float:
    """Return the ``key`` line of /proc/meminfo [bytes] (NaN if unreadable)."""
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith(key + ':'):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    return float('nan')


def mem_available() -> float:
    """Return the memory available [bytes] (8 GB if /proc/meminfo is unreadable)."""
    value = meminfo('MemAvailable')
    return value if math.isfinite(value) else 8e9


def panda(pin=None):
    """
    Return (robot, pin_model, pin_data, urdf_path) of the Panda, fingers locked.

    ``robot`` is ``load_urdf(path, tip_link='panda_hand')`` (the two finger joints
    locked at 0); the Pinocchio pair is None when Pinocchio is absent.  Raises
    FileNotFoundError when example-robot-data is not installed.
    """
    robots = example_robot_data_dir()
    if robots is None:
        raise FileNotFoundError('example-robot-data is not installed (no Panda URDF)')
    path = robots / PANDA_RELATIVE
    robot = load_urdf(str(path), tip_link='panda_hand')
    model = data = None
    if pin is not None:
        model, data = pin_model(pin, path.read_text(), keep_joints=robot.joint_names)
        names = list(model.names)[1:]
        if names != robot.joint_names:
            raise RuntimeError(f'Pinocchio joints {names} != ours {robot.joint_names}')
    return robot, model, data, str(path)


def random_states(rng, robot, count=None, q_scale=None):
    """Return (q, qd, tau): q uniform within the limits (+-pi if none), qd, tau normal."""
    coordinates = robot.chain.coordinates          # the bodies that are no mimic joint
    lower, upper = robot.chain.lower[coordinates], robot.chain.upper[coordinates]
    lower = np.where(np.isfinite(lower), lower, -np.pi)
    upper = np.where(np.isfinite(upper), upper, np.pi)
    shape = (robot.n,) if count is None else (count, robot.n)
    q = rng.uniform(lower, upper, size=shape)
    qd = rng.normal(0.0, 1.0, size=shape)
    tau = rng.normal(0.0, 5.0, size=shape)
    return q, qd, tau


def random_chain_urdf(n: int, seed: int = 0) -> str:
    """
    Return a URDF string of a random serial chain of n revolute joints.

    The tests' generator (``denoc_dynamics.sample_urdfs.random_chain_urdf``) without prismatic
    joints or welded links, so that both libraries see n revolute bodies.
    """
    return sample_urdfs.random_chain_urdf(np.random.default_rng(seed), n, prismatic=0.0,
                                          fixed=0.0, name=f'random_chain_{n}')


def rel_error(actual, expected) -> float:
    """Return ||actual - expected|| / max(||expected||, 1e-12)."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-12))


# --------------------------------------------------------------------------- ROS env

def ros_env_active() -> bool:
    """Return True if this process runs in the colcon install's ROS environment."""
    prefixes = os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)
    return any(Path(p).resolve() == (INSTALL_DIR / 'denoc_dynamics').resolve()
               for p in prefixes if p)


def ros_command(argv: list) -> list:
    """Return ``argv`` prefixed by ``.ci/env.sh`` unless the ROS env is already active."""
    if ros_env_active() or not ENV_SH.is_file():
        return list(argv)
    return [str(ENV_SH)] + list(argv)


def isolated_ros_environment() -> dict:
    """
    Return this process's environment with a ROS domain of its own, localhost only.

    For the ROS processes a benchmark starts: on the default domain, another
    ``denoc_sim_arm`` or dynamics node on the machine would add its joint states and
    commands to the measured run (and the run to theirs).  ``domain_coordinator``
    (as the tests use it) reserves the id until this process exits; without it, a
    random id from 101 to 200.
    """
    global _DOMAIN
    if _DOMAIN is None:
        try:
            import domain_coordinator
            _DOMAIN = _RESERVED_DOMAINS.enter_context(domain_coordinator.domain_id())
        except (ImportError, RuntimeError):
            import random
            _DOMAIN = random.randint(101, 200)
    return dict(os.environ, ROS_DOMAIN_ID=str(_DOMAIN),
                ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')


_DOMAIN = None
_RESERVED_DOMAINS = contextlib.ExitStack()


def interrupt(proc, timeout: float = 20.0):
    """Stop the subprocess ``proc`` as Ctrl-C does (SIGINT); kill it if it does not end."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def installed_executable(name: str):
    """Return the path of an installed console script of denoc_dynamics, or None."""
    path = INSTALL_DIR / 'denoc_dynamics' / 'lib' / 'denoc_dynamics' / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


# --------------------------------------------------------------------------- metadata

def cpu_model() -> str:
    """Return the CPU model name from /proc/cpuinfo (or platform.processor())."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def _git(*args) -> str:
    try:
        return subprocess.run(['git', '-C', str(REPO)] + list(args), capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ''


def _version(module_name: str):
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return str(getattr(module, '__version__', 'unknown'))


def metadata(args: list) -> dict:
    """Return date, machine, versions and the code under test, for the results file."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    dirty = _git('status', '--porcelain', '--', 'denoc_dynamics')
    package_dir = Path(denoc_dynamics.__file__).resolve().parent
    return {
        'date': datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
        'machine': {
            'cpu': cpu_model(), 'logical_cpus': os.cpu_count(), 'usable_cpus': affinity,
            'memory_gb': round(meminfo('MemTotal') / 1e9, 1),
            'platform': platform.platform(), 'load_average': list(os.getloadavg()),
        },
        'versions': {
            'python': platform.python_version(), 'numpy': np.__version__,
            'scipy': _version('scipy'), 'pinocchio': _version('pinocchio'),
            'matplotlib': _version('matplotlib'),
            'roboticstoolbox': _version('roboticstoolbox'),
        },
        'code': {
            'git_commit': _git('rev-parse', '--short', 'HEAD'),
            'package_sources_modified': bool(dirty),
            'denoc_dynamics_from': str(package_dir),
            'installed': 'site-packages' in package_dir.parts,
        },
        'environment': {k: os.environ.get(k) for k in
                        ('OPENBLAS_NUM_THREADS', 'RMW_IMPLEMENTATION', 'ROS_DOMAIN_ID')},
        'command': ' '.join(['benchmarks/run_all.py'] + list(args)),
    }


def write_json(path: Path, data: dict):
    """Write ``data`` as indented JSON (NaN/inf as null)."""
    path.write_text(json.dumps(_clean(data), indent=2, sort_keys=False) + '\n')


def _clean(value):
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Path):
        return str(value)
    return value
