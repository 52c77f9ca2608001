"""
Turn the results dictionary into ``latest.md`` and the PNG plots.

Everything here reads only the results (as written to ``latest.json``), so the
report can be regenerated from a JSON file: ``python benchmarks/report.py FILE.json``.
"""

import json
import math
from pathlib import Path
import sys

PLOTS = {'scaling': 'scaling.png', 'single': 'single_calls.png', 'opcount': 'opcount.png'}


def _f(value, digits=3, unit=''):
    """Format a number for a table (None/NaN as a dash)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return '-'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, int):
        return f'{value}{unit}'
    if abs(value) >= 1000:
        return f'{value:,.0f}{unit}'
    return f'{value:.{digits}g}{unit}'


def _table(header, rows):
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(str(c) for c in row) + ' |' for row in rows]
    return '\n'.join(lines)


def _section_error(section):
    if isinstance(section, dict) and 'error' in section:
        return f'**Failed:** `{section["error"]}`\n'
    return None


# --------------------------------------------------------------------------- markdown

def markdown(results: dict) -> str:
    """Return the whole report as markdown."""
    meta = results.get('meta', {})
    machine = meta.get('machine', {})
    versions = meta.get('versions', {})
    code = meta.get('code', {})
    out = ['# Benchmark results', '']
    out.append(f'- date: {meta.get("date", "?")}' + (' (**quick run**: fewer repeats, '
                                                     'smaller n)' if meta.get('quick') else ''))
    out.append(f'- machine: {machine.get("cpu", "?")}, {machine.get("usable_cpus", "?")} '
               f'usable of {machine.get("logical_cpus", "?")} logical CPUs, '
               f'{machine.get("memory_gb", "?")} GB; {machine.get("platform", "")}; load '
               f'average at start {machine.get("load_average", "?")}')
    listed = ', '.join(f'{k} {v}' for k, v in versions.items() if v is not None)
    if not versions.get('roboticstoolbox'):
        listed += '; roboticstoolbox not installed'
    out.append(f'- versions: {listed}')
    out.append(f'- code: git {code.get("git_commit", "?")}'
               + (' with uncommitted changes in denoc_dynamics/'
                  if code.get('package_sources_modified') else '')
               + f'; denoc_dynamics imported from `{code.get("denoc_dynamics_from", "?")}`')
    out.append(f'- command: `{meta.get("command", "")}`; OPENBLAS_NUM_THREADS='
               f'{meta.get("environment", {}).get("OPENBLAS_NUM_THREADS")}; sections took '
               + ', '.join(f'{k} {v:.0f} s' for k, v in meta.get('section_seconds', {}).items()))
    dates = meta.get('section_dates', {})
    if len(set(dates.values())) > 1:
        out.append('- sections merged from several runs (`--only`): ' + ', '.join(
            f'{k} {v}' for k, v in dates.items()))
    out.append('- all times are medians of repeated runs in one process, ours and the peer '
               'interleaved; ratios are taken between medians of the same run.')
    out += ['', '## Targets', '']
    targets = []
    for name, section in results.get('sections', {}).items():
        for t in section.get('targets', []) if isinstance(section, dict) else []:
            targets.append([t['name'], _f(t['value'], 4) + ' ' + t.get('unit', ''),
                            t['target'], '**pass**' if t['pass'] else '**FAIL**',
                            t.get('spread', '')])
        if isinstance(section, dict) and section.get('available') is False:
            targets.append([name, section.get('reason', 'not available'), '', 'n/a', ''])
        if isinstance(section, dict) and 'error' in section:
            targets.append([name, 'section failed', '', 'n/a', ''])
    out.append(_table(['target', 'measured', 'goal', 'result', 'spread / note'], targets))
    writers = [('single', _single), ('task_space', _task_space), ('batch', _batch),
               ('scaling', _scaling),
               ('fixman', _fixman), ('sim', _sim),
               ('tracking', _tracking), ('node_latency', _latency), ('opcount', _opcount),
               ('load', _load)]
    for key, writer in writers:
        section = results.get('sections', {}).get(key)
        if section is None:
            continue
        out.append('')
        error = _section_error(section)
        out.append(writer(section) if error is None else f'## {key}\n\n{error}')
    return '\n'.join(out) + '\n'


def _ratio_cell(r):
    """Return 'x (q1..q3)' of a ratio entry of common.ratio."""
    if not r:
        return '-'
    return f'{r["of_medians"]:.2f} ({r["paired_q1"]:.2f}..{r["paired_q3"]:.2f})'


def _task_space(s):
    if s.get('available') is False:
        return f'## Task space\n\n{s.get("reason", "not available")}'
    out = ['## Task space: frame Jacobian and task-space inertia', '',
           'Pinocchio peers: ' + ', '.join(f'{k}: `{v}`' for k, v in
                                           s['pinocchio_peers'].items()) + '.', '']
    rows = [[r['call'], _f(r['ours_us']), _f(r['pinocchio_us']), _ratio_cell(r['ratio'])]
            for r in s['rows']]
    out.append(_table(['call', 'ours [us]', 'Pinocchio [us]', 'ours / Pinocchio'], rows))
    out += ['', 'Largest relative difference to Pinocchio: ' + ', '.join(
        f'{k} {v:.1e}' for k, v in s['max_rel_error_vs_pinocchio'].items())]
    return '\n'.join(out)


def _single(s):
    out = ['## Single-state calls, Panda 7-DOF (fingers locked)', '',
           f'{s["robot"]}.  Pinocchio peers: '
           + ', '.join(f'{k}: `{v}`' for k, v in s['pinocchio_peers'].items()) + '.  '
           'Ratio: of the medians, and in brackets the quartiles of the ratios taken repeat '
           'by repeat (ours and the peer ran next to each other).', '']
    rows = [[r['call'], _f(r['ours_us']), _f(r.get('pinocchio_us')), _ratio_cell(r.get('ratio'))]
            for r in s['rows']]
    out.append(_table(['call', 'ours [us]', 'Pinocchio [us]', 'ours / Pinocchio'], rows))
    checks = s.get('max_rel_error_vs_pinocchio', {})
    if checks:
        out += ['', 'Agreement with Pinocchio (relative error): '
                + ', '.join(f'{k} {v:.1e}' for k, v in checks.items()) + '.']
    b = s.get('baxter', {})
    out += ['', '### Baxter, the whole tree', '']
    if b.get('available') is False or 'us' not in b:
        out.append(b.get('reason', 'not measured'))
    else:
        out.append(f'{b["robot"]}.  Pinocchio: {b.get("pinocchio_models")}; `pin.aba` refuses '
                   'the mimic model, so it runs on the model with each mimic joint free; the '
                   'constrained peer is CRBA + nonLinearEffects + LAPACK Cholesky on the mimic '
                   f'model.  Agreement with it: {b.get("rel_error_vs_pin_crba_cholesky", 0):.1e}.')
        out.append('')
        rows = [[name, _f(us), '-' if name == 'ours' else _ratio_cell(b['ratios'][name])]
                for name, us in b['us'].items()]
        out.append(_table(['FD', 'median [us]', 'ours / this'], rows))
    if 'single' in PLOTS:
        out += ['', f'![single-state calls]({PLOTS["single"]})']
    return '\n'.join(out)


def _batch(s):
    out = [f'## Batches of {s["states"]} Panda states in one call (FD, ID, GIM)', '',
           f'numba prange over the single-state kernel, {s.get("numba_threads")} threads '
           f'(threading layer {s.get("numba_threading_layer")}).  Peers: Python loops of '
           '`pin.aba`, `pin.rnea` and `pin.crba` over the same states.  The targets '
           "below give Pinocchio's loop time per state / this call's (> 1: faster).", '']
    rows = [[r['call'], _f(r['per_call_ms']), _f(r['per_state_us'])] for r in s['rows']]
    out.append(_table(['call', 'whole batch [ms]', 'per state [us]'], rows))
    return '\n'.join(out)


def _scaling(s):
    xo = s.get('crossover_denoc_beats_cholesky', {})
    out = ['## Scaling with n (random revolute chains)', '',
           'Single-state FD on random chains of n revolute joints, loaded from the same URDF '
           'string by both libraries.  Pinocchio CRBA + Cholesky = '
           f'{s.get("pinocchio_crba_cholesky")}.', '']
    rows = []
    for r in s['rows']:
        ratio = (r['denoc_us'] / r['cholesky_us']) if r.get('cholesky_us') else None
        rows.append([r['n'], _f(r['denoc_us']), _f(r['cholesky_us']), _f(ratio),
                     _f(r.get('pin_aba_us')), _f(r.get('pin_crba_cholesky_us')),
                     _f(r['denoc_us'] / r['pin_aba_us']) if r.get('pin_aba_us') else '-'])
    out.append(_table(['n', 'ours denoc [us]', 'ours cholesky [us]', 'denoc / cholesky',
                       'pin ABA [us]', 'pin CRBA+Cholesky [us]', 'denoc / pin ABA'], rows))
    skipped = [f'n={r["n"]}' for r in s['rows'] if isinstance(r.get('pinocchio'), str)]
    if skipped:
        note = next(r['pinocchio'] for r in s['rows'] if isinstance(r.get('pinocchio'), str))
        out += ['', f'Pinocchio not measured at {", ".join(skipped)}: {note} (its `Data` '
                'holds dense nv^3 derivative tensors, about 64 n^3 bytes).']
    out.append('')
    if xo.get('n') is not None:
        out.append(f'**Crossover**: our denoc path beats our cholesky path above '
                   f'n = {xo["n"]:.1f} ({xo["how"]}, log-log interpolation of the time '
                   'ratio).')
    else:
        out.append(f'**Crossover**: {xo.get("how", "?")} (denoc never faster in the range).')
    if s.get('n200_denoc_over_aba'):
        out.append(f'\n**n = 200**: denoc / pin ABA = {_ratio_cell(s["n200_denoc_over_aba"])}.')
    if s.get('denoc_t1000_over_t100') is not None:
        out.append(f'\n**t(1000)/t(100)** for denoc: {s["denoc_t1000_over_t100"]:.2f} '
                   '(10 for a linear algorithm).')
    slopes = {k[len('loglog_slope_'):]: v for k, v in s.items()
              if k.startswith('loglog_slope_') and v is not None}
    if slopes:
        out.append('\nLog-log slopes for n >= 50: ' + ', '.join(
            f'{k} {v:.2f}' for k, v in slopes.items()) + '.')
    out += ['', f'![time against n]({PLOTS["scaling"]})']
    return '\n'.join(out)


def _fixman(s):
    out = ['## Fixman O(N) FD of the planar point-mass chain', '',
           '`fixman.forward_dynamics` (banded H blocks, O(N)) against the dense route: '
           '`mass_matrix`, `bias_force`, then `numpy.linalg.inv` (O(N^3)).', '']
    rows = [[r['n'], _f(r['fixman_us']), _f(r['dense_us']), _f(r['dense_us'] / r['fixman_us']),
             _f(r['fixman_rel_error_vs_solve'], 2), _f(r['dense_rel_error_vs_solve'], 2)]
            for r in s['rows']]
    out.append(_table(['N', 'Fixman [us]', 'dense inverse [us]', 'dense / Fixman',
                       'Fixman vs LU solve', 'inverse vs LU solve'], rows))
    out.append(f'\n**t(1000)/t(100)**: Fixman {s["fixman_t1000_over_t100"]:.1f}, dense '
               f'{s["dense_t1000_over_t100"]:.0f}; log-log slopes for N >= 50: Fixman '
               f'{s["fixman_loglog_slope"]:.2f}, dense {s["dense_loglog_slope"]:.2f}.')
    return '\n'.join(out)


def _sim(s):
    api, bare, exe = s['simulation_api'], s['bare_rk4_loop'], s['denoc_sim_arm']
    out = [f'## Simulated arm, {s["robot"]}, RK4 at {s["physics_rate_hz"]:g} Hz', '']
    rows = []
    alone = s.get('physics_alone')
    if alone:
        rows.append([f'the physics alone: `{alone["how"]}`', _f(alone['simulated_s']),
                     _f(alone['wall_s']), _f(alone['rtf']), _f(alone['us_per_step'])])
    if api.get('available'):
        rows.append(['`simulation.Simulation` + `SimulationRunner` in process (' + api['how']
                     + ')', _f(api['simulated_s']), _f(api['wall_s']), _f(api['rtf']),
                     _f(api['us_per_step'])])
    else:
        rows.append(['`simulation` module', '-', '-', api.get('reason', 'not available'), '-'])
    rows.append(['bare RK4 loop over `forward_dynamics` (no passive physics)',
                 _f(bare['simulated_s']), _f(bare['wall_s']), _f(bare['rtf']),
                 _f(bare['us_per_step'])])
    if exe.get('available'):
        wall = exe.get('process_wall_s')
        rtf = exe.get('rtf')
        rows.append([f'`{Path(exe["command"].split()[0]).name} '
                     + ' '.join(exe['command'].split()[1:]) + '` (start_mode '
                     + exe.get('start_mode', '?') + '), its reported overall RTF',
                     _f(exe.get('simulated_s')), _f(wall) + ' (process)', _f(rtf), '-'])
    else:
        rows.append(['`denoc_sim_arm` headless', '-', '-', exe.get('reason', 'not available'),
                     '-'])
    out.append(_table(['run', 'simulated [s]', 'wall [s]', 'real-time factor',
                       'per step [us]'], rows))
    if exe.get('rtf_note'):
        out += ['', f'Note: {exe["rtf_note"]}.']
    if exe.get('error'):
        out += ['', f'denoc_sim_arm: {exe["error"]}.']
    cpu = s.get('make_run', {})
    if cpu.get('cpu_percent') is not None:
        out += ['', f'`make run` (`{cpu["command"]}`: real time, demo, 3D view), '
                f'{cpu["settle_s"]:g} s after start-up: **{cpu["cpu_percent"]:.0f} % of one '
                f'core** ({cpu["cpu_s"]:.1f} s of CPU in {cpu["wall_s"]:.1f} s, the process '
                f'tree), RTF {_f(cpu.get("rtf_during_window"))}; stand-in for the browser: '
                f'{cpu.get("viewer_client")}.']
    elif cpu:
        out += ['', f'`make run`: {cpu.get("error") or cpu.get("reason")}.']
    out += ['', 'The ROS processes run in a ROS domain of their own, localhost only.']
    return '\n'.join(out)


def _tracking(s):
    out = [f'## Trajectory tracking, {s["robot"]} demo ({s["physics"]}), K_p = {s["kp"]:g} / s^2, '
           f'K_d = {s["kd"]:g} / s', '',
           f'Controller rate {s["controller_rate_hz"]:g} Hz (`publish_rate` from '
           f'{Path(s["rate_from"]).name}); {s["duration_s"]:g} s of the {s["demo_period_s"]:g} s '
           'demo loop.  Joint position errors q_d - q; RMS over all joints and samples.', '']
    rows = []

    def row(label, r):
        per_joint = ', '.join(f'{1e3 * x:.2f}' for x in r.get('rms_per_joint_rad', []))
        rows.append([label, _f(r.get('controller_rate_hz', r.get('rate_hz'))),
                     f'{1e3 * r["rms_rad"]:.3f}', f'{1e3 * r["max_rad"]:.2f}', per_joint])

    for r in s['computed_torque']:
        row('computed torque, in process (sampled loop)', r)
    for r in s.get('computed_torque_late', []):
        row(f'computed torque, in process, commands {r["delay_periods"]} period(s) late', r)
    row('PD + gravity compensation, same gains, in process', s['pd_gravity'])
    node = s['denoc_sim_arm']
    if node.get('rms_rad') is not None:
        row(f'computed torque through `{node["command"]}` (DDS, overall RTF '
            f'{_f(node.get("overall_rtf"))})', node)
    out.append(_table(['run', 'rate [Hz]', 'RMS [mrad]', 'max [mrad]',
                       'RMS per joint [mrad]'], rows))
    out += ['', f'PD + g / computed torque (RMS, same rate): **{s["ratio_pd_over_ct"]:.0f}x**.']
    moves = s.get('point_to_point', [])
    if moves:
        out += ['', f'In motion and at rest: a 10-point {moves[0]["move_s"]:g} s quintic move, '
                'the controller\'s friction model scaled (the arm keeps its URDF friction); '
                f'at rest = largest joint error {moves[0]["rest_after_s"]:g} s after the last '
                'point.', '']
        out.append(_table(
            ['friction model', 'friction_feedback [1/s]', 'in motion RMS [mrad]',
             'in motion max [mrad]', 'at rest [mrad]'],
            [[f'x{r["friction_scale"]:g}', _f(r['friction_feedback']),
              f'{1e3 * r["rms_rad"]:.3f}', f'{1e3 * r["max_rad"]:.2f}',
              f'{1e3 * r["rest_max_rad"]:.4f}'] for r in moves]))
    if node.get('error') or node.get('available') is False:
        out += ['', f'denoc_sim_arm: {node.get("error") or node.get("reason")}.']
    return '\n'.join(out)


def _latency(s):
    out = ['## dynamics_node latency (joint_states -> joint_accelerations, 500 Hz, DDS)', '']
    if not s.get('available'):
        out.append(f'Not available: {s.get("reason")}.')
        return '\n'.join(out)
    lat = s['latency_ms']
    out.append(f'{s["sent"]} states sent over {s["duration_s"]:g} s at '
               f'{s["achieved_rate_hz"]:.0f} Hz ({s.get("rmw")}); {s["matched"]} answered, '
               f'{s["unanswered"]} without an answer (the node subscribes with sensor-data '
               'QoS: best effort, depth 5).')
    out.append('')
    rows = [['500 Hz', s['unanswered'], _f(lat['p50']), _f(lat['p90']), _f(lat['p99']),
             _f(lat['max']), _f(lat['mean'])]]
    observed = s.get('observer') or {}
    if observed.get('available'):
        o = observed['latency_ms']
        rows.append([f'{observed["rate_hz"]:g} Hz, momentum observer on',
                     observed['unanswered'], _f(o['p50']), _f(o['p90']), _f(o['p99']),
                     _f(o['max']), _f(o['mean'])])
    out.append(_table(['run', 'unanswered', 'p50 [ms]', 'p90 [ms]', 'p99 [ms]', 'max [ms]',
                       'mean [ms]'], rows))
    return '\n'.join(out)


def _load(s):
    out = ['## Start-up: import + load_urdf + first FD in a fresh process', '',
           f'Fresh Python processes, alternating; median of {s["repeats"]} each '
           f'({s["robot"]}), warm numba cache; "ready": from the start of the process to the '
           'end of its program (the target), "exit": to its exit (adds the interpreter\'s '
           'teardown).  Cold compile (empty NUMBA_CACHE_DIR) of the `first FD` program: '
           f'**{s["cold_compile_first_fd_s"]:.1f} s**.',
           '']
    exits = s.get('median_to_exit_s', {})
    added_exit = s.get('added_to_exit_s', {})
    rows = [['`' + s['programs'][name].replace('\n', '; ') + '`',
             _f(s['median_s'][name]), _f(s['min_s'][name]), _f(s.get('max_s', {}).get(name)),
             '-' if name == 'baseline' else _f(s['added_beyond_baseline_s'][name]),
             _f(exits.get(name)), '-' if name == 'baseline' else _f(added_exit.get(name))]
            for name in s['median_s']]
    out.append(_table(['program', 'ready, median [s]', 'min [s]', 'max [s]', 'added [s]',
                       'exit, median [s]', 'added to exit [s]'], rows))
    return '\n'.join(out)


def _opcount(s):
    import opcount
    out = ['## Operation counts', '',
           f'The kernels run with NUMBA_DISABLE_JIT=1 on object arrays of counting scalars, '
           f'n = {s["ns"][0]}..{s["ns"][-1]} (random revolute chains); M = multiplications and '
           'divisions, A = additions and subtractions.  Tiers: **all** operations the loops '
           'perform, **nonzero** without exact-zero operands.  Phases (indented) are the '
           'functions of the core inside FD denoc and the GIM.', '']
    out.append(opcount.table(s))
    out += ['', s['explanation'].strip(), '', f'![operation counts]({PLOTS["opcount"]})']
    return '\n'.join(out)


# --------------------------------------------------------------------------- plots

def plots(results: dict, folder: Path) -> list:
    """Write the PNG plots of the sections present; return the files written."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    sections = results.get('sections', {})
    for key, func in (('scaling', _plot_scaling), ('single', _plot_single),
                      ('opcount', _plot_opcount)):
        section = sections.get(key)
        if not isinstance(section, dict) or 'error' in section:
            continue
        fig = func(plt, section)
        path = folder / PLOTS[key]
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def _plot_scaling(plt, s):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    styles = {'denoc': ('ours: DeNOC O(n) (method="denoc")', 'C0', 'o-'),
              'cholesky': ('ours: GIM + Cholesky O(n^3) (method="cholesky")', 'C3', 's-'),
              'pin_aba': ('Pinocchio ABA O(n)', 'C0', 'o--'),
              'pin_crba_cholesky': ('Pinocchio CRBA + Cholesky O(n^3)', 'C3', 's--')}
    for key, (label, color, style) in styles.items():
        pts = [(r['n'], r[f'{key}_us']) for r in s['rows'] if r.get(f'{key}_us')]
        if pts:
            x, y = zip(*pts)
            ax.loglog(x, y, style, color=color, label=label, markersize=4,
                      markerfacecolor='none' if '--' in style else color)
    last = s['rows'][-1] if s['rows'] else None
    if last and last.get('denoc_us') and last.get('cholesky_us'):
        # slope guides through the largest n, slightly above the measured points
        n_max = last['n']
        for power, key, span in ((1, 'denoc_us', 100.0), (3, 'cholesky_us', 8.0)):
            xs = [n_max / span, n_max]
            ys = [1.6 * last[key] * (x / n_max) ** power for x in xs]
            ax.loglog(xs, ys, ':', color='grey', linewidth=1)
            ax.annotate(f'slope {power}: O(n{"^3" if power == 3 else ""})', (xs[0], ys[0]),
                        color='grey', fontsize=8, ha='right', va='bottom')
    xo = s.get('crossover_denoc_beats_cholesky', {}).get('n')
    if xo:
        ax.axvline(xo, color='k', linewidth=0.8, alpha=0.5)
        ax.annotate(f'crossover n = {xo:.0f}', (xo, ax.get_ylim()[0]), rotation=90,
                    fontsize=8, va='bottom', ha='right')
    ax.set_xlabel('number of joints n')
    ax.set_ylabel('time per forward-dynamics call [us]')
    ax.set_title('Single-state forward dynamics against n (cf. Fig. 2 of paper 001)')
    ax.grid(True, which='both', alpha=0.25)
    ax.legend(fontsize=8, loc='upper left')
    fig.tight_layout()
    return fig


def _plot_single(plt, s):
    order = ['FD default', 'ID', 'GIM', 'UDU', 'inverse GIM']
    rows = {r['call']: r for r in s['rows']}
    calls = [c for c in order if c in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    who = [('ours', 'ours_us', 'C0'), ('Pinocchio', 'pinocchio_us', 'C1'),
           ('roboticstoolbox', 'roboticstoolbox_us', 'C2')]
    who = [w for w in who if any(rows[c].get(w[1]) for c in calls)]
    width = 0.8 / len(who)
    for k, (label, key, color) in enumerate(who):
        xs = [i + (k - (len(who) - 1) / 2) * width for i in range(len(calls))]
        ys = [rows[c].get(key) or 0 for c in calls]
        bars = ax.bar(xs, ys, width, label=label, color=color)
        for bar, y in zip(bars, ys):
            if y:
                ax.annotate(f'{y:.3g}', (bar.get_x() + bar.get_width() / 2, y),
                            ha='center', va='bottom', fontsize=7)
    ax.set_yscale('log')
    ax.set_xticks(range(len(calls)))
    ax.set_xticklabels(['FD' if c == 'FD default' else c for c in calls])
    ax.set_ylabel('median time per call [us] (log)')
    ax.set_title('Panda 7-DOF single-state calls')
    ax.legend(fontsize=8)
    ax.grid(True, axis='y', which='both', alpha=0.25)
    fig.tight_layout()
    return fig


def _plot_opcount(plt, s):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    papers = {'FD denoc': ((-335.0, 201.0), (-361.0, 193.0)),
              'GIM': ((-85.0, 38.5, 10.5), (-70.0, 39.0, 6.0))}
    for ax, name in zip(axes, ('FD denoc', 'GIM')):
        series = s['per_n'][name]
        for tier, style in (('all', 'o-'), ('nonzero', 's-')):
            for kind, color in (('M', 'C0'), ('A', 'C1')):
                points = series[f'{tier}_{kind}']
                ns = [int(n) for n in points]
                ax.plot(ns, list(points.values()), style, color=color, markersize=3,
                        alpha={'all': 0.5, 'nonzero': 1.0}[tier], label=f'{kind} {tier}')
        for coef, kind, color in ((papers[name][0], 'M', 'C0'), (papers[name][1], 'A', 'C1')):
            ax.plot(ns, [sum(c * n ** k for k, c in enumerate(coef)) for n in ns], ':',
                    color=color, linewidth=2, label=f'{kind} paper')
        ax.set_title(name)
        ax.set_xlabel('n')
        ax.set_ylabel('operations')
        ax.grid(True, alpha=0.25)
    axes[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def readme_table(results: dict) -> str:
    """Return the short target table for the project README (markdown)."""
    rows = []
    for section in results.get('sections', {}).values():
        for t in section.get('targets', []) if isinstance(section, dict) else []:
            rows.append([t['name'], _f(t['value'], 3) + ' ' + t.get('unit', ''), t['target'],
                         'yes' if t['pass'] else 'no', t.get('figures', '')])
    date = results.get('meta', {}).get('date', '?')
    machine = results.get('meta', {}).get('machine', {})
    return (f'Measured {date[:10]} on {machine.get("cpu", "?")} ({machine.get("usable_cpus", "?")}'
            ' cores, shared), ratios to the peer measured in the same run; '
            'benchmarks/results/latest.md has the details.\n\n'
            + _table(['what', 'measured', 'target', 'met', 'ours / peer (same run, medians)'],
                     rows) + '\n')


def write(results: dict, folder: Path):
    """Write latest.md and the plots into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = plots(results, folder)
    (folder / 'latest.md').write_text(markdown(results))
    (folder / 'readme_table.md').write_text(readme_table(results))
    return [folder / 'latest.md', folder / 'readme_table.md'] + written


if __name__ == '__main__':
    source = Path(sys.argv[1])
    for path in write(json.loads(source.read_text()), source.parent):
        print(path)
