#!/usr/bin/env python3
"""
Run the benchmark sections and write the report.

Usage::

    python benchmarks/run_all.py                 # full run (~3 min on 2 cores)
    python benchmarks/run_all.py --quick         # smoke run (< 2 min), own folder
    python benchmarks/run_all.py --only scaling  # one section (repeatable, or a,b)
    make bench ARGS='--quick'                    # the same through the ROS env

Writes ``latest.json``, ``latest.md`` and PNG plots into ``benchmarks/results/``
(``benchmarks/results/quick/`` for ``--quick``, so that a smoke run never replaces
the full results).  With ``--only`` the other sections of an existing
``latest.json`` are kept and the report is rebuilt from the merged results.
Progress goes to stderr, the target summary to stdout.
"""

import argparse
import json
import os
from pathlib import Path
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402  (sets the BLAS thread count before numpy)

import bench_batch  # noqa: E402, I100
import bench_contact  # noqa: E402
import bench_fixman  # noqa: E402
import bench_load  # noqa: E402
import bench_node_latency  # noqa: E402
import bench_payload  # noqa: E402
import bench_scaling  # noqa: E402
import bench_sim  # noqa: E402
import bench_single  # noqa: E402
import bench_task_space  # noqa: E402
import bench_tracking  # noqa: E402
import opcount  # noqa: E402
import report  # noqa: E402

SECTIONS = {module.NAME: module for module in
            (bench_single, bench_task_space, bench_payload, bench_contact, bench_batch,
             bench_scaling, bench_fixman, bench_sim, bench_tracking, bench_node_latency,
             opcount, bench_load)}
ALIASES = {'node': 'node_latency', 'latency': 'node_latency', 'ops': 'opcount',
           'simulation': 'sim', 'batched': 'batch', 'startup': 'load'}


def parse_args(argv):
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        description='denoc_dynamics benchmarks, side by side with Pinocchio.',
        epilog='sections: ' + ', '.join(f'{k} ({m.TITLE})' for k, m in SECTIONS.items()))
    parser.add_argument('--quick', action='store_true',
                        help='fewer repeats and smaller problems (a smoke run, < 2 min)')
    parser.add_argument('--only', action='append', default=[], metavar='SECTION',
                        help='run only this section (repeatable, or comma-separated)')
    parser.add_argument('--output', type=Path, default=None,
                        help='results folder (default: benchmarks/results, or '
                             'benchmarks/results/quick with --quick)')
    parser.add_argument('--seed', type=int, default=2025, help='random seed')
    parser.add_argument('--runs', type=int, default=1,
                        help='run each section this many times; the targets show the median '
                             'over the runs and their range (the machine is shared)')
    parser.add_argument('--list', action='store_true', help='list the sections and exit')
    args = parser.parse_args(argv)
    chosen = []
    for item in args.only:
        for name in item.split(','):
            name = ALIASES.get(name.strip(), name.strip())
            if name not in SECTIONS:
                parser.error(f'unknown section {name!r}; choose from {", ".join(SECTIONS)}')
            chosen.append(name)
    args.sections = [name for name in SECTIONS if name in chosen] if chosen else list(SECTIONS)
    if args.output is None:
        args.output = common.BENCH_DIR / 'results' / ('quick' if args.quick else '')
    return args


def main(argv=None) -> int:
    """Run the chosen sections, write the results, print the target summary."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    if args.list:
        for name, module in SECTIONS.items():
            print(f'{name:<14}{module.TITLE}')
        return 0
    opts = common.Options(quick=args.quick, seed=args.seed)
    args.output.mkdir(parents=True, exist_ok=True)
    json_path = args.output / 'latest.json'

    results = {'meta': common.metadata(argv), 'sections': {}}
    if len(args.sections) < len(SECTIONS) and json_path.is_file():
        try:
            previous = json.loads(json_path.read_text())
            results['sections'] = previous.get('sections', {})
            results['meta']['section_dates'] = previous.get('meta', {}).get(
                'section_dates', {})
            results['meta']['section_seconds'] = previous.get('meta', {}).get(
                'section_seconds', {})
        except (OSError, ValueError):
            pass
    results['meta']['quick'] = args.quick
    results['meta'].setdefault('section_dates', {})
    results['meta'].setdefault('section_seconds', {})

    common.log(f'benchmarks: sections {", ".join(args.sections)}'
               f'{" (quick)" if args.quick else ""}; denoc_dynamics from '
               f'{results["meta"]["code"]["denoc_dynamics_from"]}')
    total_start = time.monotonic()
    for name in args.sections:
        start = time.monotonic()
        runs = []
        for _ in range(max(1, args.runs) if name not in SINGLE_RUN else 1):
            load = list(os.getloadavg())
            try:
                runs.append(SECTIONS[name].run(opts))
            except Exception as exc:  # noqa: B902  (one failed section must not lose the rest)
                traceback.print_exc()
                runs.append({'error': f'{type(exc).__name__}: {exc}', 'targets': []})
            runs[-1]['load_average_at_start'] = load
        section = merge_runs(runs)
        elapsed = time.monotonic() - start
        section['seconds'] = elapsed
        results['sections'][name] = section
        results['meta']['section_dates'][name] = results['meta']['date']
        results['meta']['section_seconds'][name] = elapsed
        common.log(f'{name}: done in {elapsed:.1f} s')
        common.write_json(json_path, results)    # keep what is done if a later one hangs
    results['meta']['total_seconds'] = time.monotonic() - total_start
    results['summary'] = summary_dict(results)
    common.write_json(json_path, results)
    written = report.write(json.loads(json_path.read_text()), args.output)

    print(summary(results))
    print('\nwritten: ' + ', '.join(str(p.relative_to(common.REPO))
                                    if p.is_relative_to(common.REPO) else str(p)
                                    for p in [json_path] + written))
    return 0


#: sections that are not timings, or too long to repeat
SINGLE_RUN = ('opcount', 'tracking', 'node_latency', 'sim', 'load', 'contact')


def _passes(value, goal: str) -> bool:
    """Return whether ``value`` meets ``goal`` ('<= 1', '>= 3', '< 2800')."""
    if value is None:
        return False
    op, bound = goal.split()[:2]
    bound = float(bound)
    return {'<=': value <= bound, '>=': value >= bound, '<': value < bound,
            '>': value > bound}[op]


def merge_runs(runs: list) -> dict:
    """
    Return the last run's section with each target's median over the runs.

    Every run's targets and load average stay in ``runs``; a target's ``spread`` then
    gives the range over the runs.
    """
    section = runs[-1]
    if len(runs) == 1 or 'error' in section:
        return section
    section['runs'] = [{'load_average_at_start': r.get('load_average_at_start'),
                        'targets': r.get('targets', [])} for r in runs]
    for i, t in enumerate(section['targets']):
        values = [r['targets'][i]['value'] for r in runs
                  if len(r.get('targets', [])) > i and r['targets'][i]['value'] is not None]
        if not values:
            continue
        t['last_run'] = t['value']
        t['value'] = statistics.median(values)
        t['pass'] = _passes(t['value'], t['target'])
        t['spread'] = (f'{len(values)} runs: {min(values):.3g}..{max(values):.3g}; last run '
                       + t.get('spread', ''))
    return section


def summary_dict(results: dict) -> dict:
    """Return the headline numbers: every target, the crossover, the op-count fits."""
    sections = results['sections']
    out = {'targets': [dict(t, section=name) for name, section in sections.items()
                       for t in section.get('targets', [])]}
    scaling = sections.get('scaling', {})
    xo = scaling.get('crossover_denoc_beats_cholesky')
    if xo:
        out['crossover_n_denoc_beats_cholesky'] = xo['n']
    if 'denoc_t1000_over_t100' in scaling:
        out['denoc_t1000_over_t100'] = scaling['denoc_t1000_over_t100']
    fits = sections.get('opcount', {}).get('fits', {})
    out['opcount'] = {name: {'M': f['all_M']['formula'], 'A': f['all_A']['formula']}
                      for name, f in fits.items()}
    return out


def summary(results: dict) -> str:
    """Return the target table as plain text."""
    lines = ['', common.targets_table(results['sections'])]
    scaling = results['sections'].get('scaling', {})
    xo = scaling.get('crossover_denoc_beats_cholesky')
    if xo:
        lines.append(f'crossover n (denoc beats cholesky): '
                     f'{xo["n"] if xo["n"] is None else round(xo["n"], 1)} ({xo["how"]})')
    return '\n'.join(lines)


if __name__ == '__main__':
    sys.exit(main())
