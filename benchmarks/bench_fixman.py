"""
Fixman's O(N) forward dynamics of the planar point-mass chain against the dense inverse.

The shape of Fig. 2 of Lee and Chirikjian, "A New Perspective on O(n) Mass-Matrix
Inversion for Serial Revolute Manipulators" (ICRA 2005): for N = 10..1000 point masses,

* ``fixman``: ``fixman.forward_dynamics``, the banded blocks of H = G^-1, the bias force
  and (G^aa)^-1 b = H^aa b - H^ab (H^bb)^-1 H^ba b, all O(N);
* ``dense inverse``: the conventional route, ``fixman.mass_matrix`` (G^aa, O(N^2)) and
  ``fixman.bias_force``, then ``numpy.linalg.inv(G^aa) @ b`` (LAPACK, O(N^3)).

Reported: the time per call, t(1000)/t(100) (10 for a linear algorithm) and the log-log
slope of each for N >= 50, and the relative difference of each result from
``numpy.linalg.solve`` (LU) on the same G^aa and b: both grow with cond(G^aa), about
1e7 at N = 100 and 4e10 at N = 1000, the explicit inverse's by far the most.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np

from denoc_dynamics.core import fixman  # noqa: I100

NAME = 'fixman'
TITLE = 'Fixman O(N) FD of the point-mass chain against the dense inverse'
NS = (10, 20, 50, 100, 200, 500, 1000)
SCALING_TARGET = 12.0


def _dense(theta, theta_dot, L, m, tau):
    """Return (G^aa)^-1 (tau - C - g) by the explicit dense inverse."""
    b = tau - fixman.bias_force(theta, theta_dot, L, m)
    return np.linalg.inv(fixman.mass_matrix(theta, L, m)) @ b


def run(opts) -> dict:
    """Time both routes over the chain lengths; return the section's results."""
    rows = []
    progress = common.Progress(len(NS), NAME)
    for n in NS:
        rng = np.random.default_rng(opts.seed + n)
        theta, theta_dot, tau = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), \
            rng.normal(size=n)
        L, m = rng.uniform(0.2, 1.5, n), rng.uniform(0.3, 3.0, n)
        funcs = {'fixman': lambda: fixman.forward_dynamics(theta, theta_dot, L, m, tau),
                 'dense inverse': lambda: _dense(theta, theta_dot, L, m, tau)}
        timings = common.compare(funcs, repeats=5 if opts.quick else 11,
                                 target=opts.repeat_time, budget=0.5 if opts.quick else 1.5)
        rows.append({'n': n, 'fixman_us': timings['fixman']['median_us'],
                     'dense_us': timings['dense inverse']['median_us'],
                     'timings': timings})
        solve = np.linalg.solve(fixman.mass_matrix(theta, L, m),
                                tau - fixman.bias_force(theta, theta_dot, L, m))
        for key, name in (('fixman', 'fixman'), ('dense', 'dense inverse')):
            rows[-1][f'{key}_rel_error_vs_solve'] = common.rel_error(funcs[name](), solve)
        progress.step(f'n={n}: fixman {rows[-1]["fixman_us"]:.0f} us, '
                      f'dense {rows[-1]["dense_us"]:.0f} us')
    by_n = {row['n']: row for row in rows}
    result = {'rows': rows}
    for key in ('fixman', 'dense'):
        result[f'{key}_t1000_over_t100'] = by_n[1000][f'{key}_us'] / by_n[100][f'{key}_us']
        big = [row for row in rows if row['n'] >= 50]
        result[f'{key}_loglog_slope'] = float(np.polyfit(
            np.log([r['n'] for r in big]), np.log([r[f'{key}_us'] for r in big]), 1)[0])
    growth = result['fixman_t1000_over_t100']
    result['targets'] = [{'name': 'Fixman FD scaling t(1000)/t(100)', 'value': growth,
                          'unit': 'x', 'target': f'<= {SCALING_TARGET:g}',
                          'pass': growth <= SCALING_TARGET}]
    return result


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
