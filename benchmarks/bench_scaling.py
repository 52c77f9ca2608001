"""
Scaling of single-state forward dynamics with the number of joints n.

Random serial chains of n revolute joints (random axes, offsets, masses, inertias;
:func:`common.random_chain_urdf`), the same URDF string loaded by ``load_urdf`` and
by ``pinocchio.buildModelFromXML``.  Four single-state FD solvers:

* ours ``method='denoc'``: the O(n) three-sweep DeNOC solve (paper 002);
* ours ``method='cholesky'``: the GIM by composite bodies, then Cholesky, O(n^3);
* Pinocchio ``aba`` (O(n) articulated-body algorithm, C++);
* Pinocchio CRBA + Cholesky: ``nonLinearEffects`` (bias), ``crba`` (upper triangle of
  M), then ``scipy.linalg.cho_factor`` / ``cho_solve`` (LAPACK potrf/potrs on the upper
  triangle): the C++ equivalent of our cholesky path, O(n^3).

Pinocchio's ``Data`` allocates dense nv^3 derivative tensors (about 64 n^3 bytes:
1.8 GB at n = 300, 64 GB at n = 1000), so Pinocchio is measured only where that fits
in a quarter of the available memory; larger n are reported as skipped.

Reported: time per call against n (log-log plot, the shape of Fig. 2 of paper 001),
t(1000)/t(100) for the denoc path (a linear algorithm gives 10), the crossover n above
which our denoc path beats our cholesky path (interpolated on log scales), and denoc
against ``aba`` at n = 200.
"""

import math

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'scaling'
TITLE = 'FD time against the number of joints n'
FULL_NS = (2, 3, 5, 7, 10, 12, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000)
QUICK_NS = (2, 5, 10, 12, 20, 50, 100, 200, 1000)
SCALING_TARGET = 11.0
CROSSOVER_TARGET = 12
N200_TARGET = 1.5
METHODS = ('denoc', 'cholesky', 'pin_aba', 'pin_crba_cholesky')


def _pin_crba_cholesky(pin, cho_factor, cho_solve, model, data, q, qd, tau):
    """FD by Pinocchio's CRBA + bias, then LAPACK Cholesky on the upper triangle."""
    bias = pin.nonLinearEffects(model, data, q, qd)
    M = pin.crba(model, data, q)
    return cho_solve(cho_factor(M, lower=False, check_finite=False), tau - bias,
                     check_finite=False)


def crossover(ns, t_fast_late, t_slow_late):
    """
    Return the n above which ``t_fast_late`` stays below ``t_slow_late``.

    Takes the last n where the first method is still slower (ratio >= 1) and
    interpolates log(ratio) linearly in log(n) to the next point.  Returns
    (n, how): how is 'interpolated', 'below range' (faster at every n) or 'above
    range' (never faster at the largest n).
    """
    points = [(n, a / b) for n, a, b in zip(ns, t_fast_late, t_slow_late)
              if a is not None and b is not None]
    if not points:
        return None, 'no data'
    if points[-1][1] >= 1.0:
        return None, 'above range'
    slower = [i for i, (_, ratio) in enumerate(points) if ratio >= 1.0]
    if not slower:
        return float(points[0][0]), 'below range'
    i = slower[-1]
    (n0, r0), (n1, r1) = points[i], points[i + 1]
    x0, x1, y0, y1 = math.log(n0), math.log(n1), math.log(r0), math.log(r1)
    x = x0 + (0.0 - y0) * (x1 - x0) / (y1 - y0) if y1 != y0 else x0
    return float(math.exp(x)), 'interpolated'


def run(opts) -> dict:
    """Time the four solvers over the chain lengths; return the section's results."""
    pin = common.import_pinocchio()
    from scipy.linalg import cho_factor, cho_solve

    ns = QUICK_NS if opts.quick else FULL_NS
    repeats = 5 if opts.quick else 15
    budget = 0.3 if opts.quick else 1.5
    pin_limit = 0.25 * common.mem_available()
    progress = common.Progress(len(ns), NAME)
    rows = []
    for n in ns:
        xml = common.random_chain_urdf(n, seed=opts.seed + n)
        robot = common.load_urdf(xml)
        rng = np.random.default_rng(opts.seed + 7 * n)
        q, qd, tau = common.random_states(rng, robot)
        funcs = {
            'denoc': lambda: robot.forward_dynamics(q, qd, tau, method='denoc'),
            'cholesky': lambda: robot.forward_dynamics(q, qd, tau, method='cholesky'),
        }
        row = {'n': n}
        model = data = None
        if pin is None:
            row['pinocchio'] = 'not installed'
        elif common.pin_data_bytes(n) > pin_limit:
            row['pinocchio'] = (f'skipped: Data needs ~{common.pin_data_bytes(n) / 1e9:.0f} GB'
                                f' (limit {pin_limit / 1e9:.1f} GB)')
        else:
            model, data = common.pin_model(pin, xml)
            funcs['pin_aba'] = lambda: pin.aba(model, data, q, qd, tau)
            funcs['pin_crba_cholesky'] = lambda: _pin_crba_cholesky(
                pin, cho_factor, cho_solve, model, data, q, qd, tau)
            reference = pin.aba(model, data, q, qd, tau).copy()
            row['rel_error_vs_aba'] = {
                name: common.rel_error(funcs[name](), reference)
                for name in ('denoc', 'cholesky', 'pin_crba_cholesky')}
        timings = common.compare(funcs, repeats=repeats, target=opts.repeat_time,
                                 budget=budget)
        for name in METHODS:
            row[f'{name}_us'] = timings[name]['median_us'] if name in timings else None
        row['timings'] = timings
        rows.append(row)
        funcs = model = data = None     # free Pinocchio's Data before the next n
        progress.step(f'n={n}: denoc {row["denoc_us"]:.0f} us, '
                      f'cholesky {row["cholesky_us"]:.0f} us')

    by_n = {row['n']: row for row in rows}
    result = {'ns': list(ns), 'rows': rows,
              'pinocchio_crba_cholesky': 'nonLinearEffects + crba + scipy.linalg.cho_factor'
                                         '/cho_solve (upper triangle, LAPACK)'}
    xo, how = crossover(ns, [r['denoc_us'] for r in rows], [r['cholesky_us'] for r in rows])
    ratios = {r['n']: r['denoc_us'] / r['cholesky_us'] for r in rows}
    slower_from_12 = [n for n, x in ratios.items() if n >= CROSSOVER_TARGET and x >= 1.0]
    result['crossover_denoc_beats_cholesky'] = {
        'n': xo, 'how': how, 'ratio_denoc_over_cholesky': ratios,
        'n_at_least_12_where_denoc_is_slower': slower_from_12}
    result['targets'] = []
    result['targets'].append(common.target(
        'DeNOC faster than own GIM + Cholesky from n (crossover, one state)',
        math.inf if xo is None else xo, '', f'<= {CROSSOVER_TARGET}',
        xo is not None and xo <= CROSSOVER_TARGET and not slower_from_12,
        spread=f'denoc/cholesky at n=12: {ratios.get(12, math.nan):.2f}',
        figures=(f'n=12: {by_n[12]["denoc_us"]:.2f} us / cholesky {by_n[12]["cholesky_us"]:.2f} us'
                 if 12 in by_n else '')))
    if 100 in by_n and 1000 in by_n:
        growth = by_n[1000]['denoc_us'] / by_n[100]['denoc_us']
        result['denoc_t1000_over_t100'] = growth
        result['targets'].append(common.target(
            'FD denoc scaling t(1000)/t(100)', growth, 'x', f'<= {SCALING_TARGET:g}',
            growth <= SCALING_TARGET,
            figures=f'{by_n[1000]["denoc_us"]:.0f} us / {by_n[100]["denoc_us"]:.1f} us'))
    if by_n.get(200, {}).get('pin_aba_us'):
        r = common.ratio(by_n[200]['timings'], 'denoc', 'pin_aba')
        result['n200_denoc_over_aba'] = r
        result['targets'].append(common.target(
            'one FD at n = 200 (denoc): ours / pin.aba', r['of_medians'], 'x',
            f'<= {N200_TARGET:g}', r['of_medians'] <= N200_TARGET,
            spread=f'paired {r["paired_q1"]:.2f}..{r["paired_q3"]:.2f}',
            figures=f'{by_n[200]["denoc_us"]:.1f} us / pin.aba {by_n[200]["pin_aba_us"]:.1f} us'))
    for name in METHODS:
        result[f'loglog_slope_{name}'] = _slope(rows, name)
    return result


def _slope(rows, name, n_min=50):
    """Return the least-squares slope of log t against log n for n >= n_min."""
    points = [(math.log(r['n']), math.log(r[f'{name}_us'])) for r in rows
              if r['n'] >= n_min and r.get(f'{name}_us')]
    if len(points) < 2:
        return None
    x, y = np.array(points).T
    return float(np.polyfit(x, y, 1)[0])


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
