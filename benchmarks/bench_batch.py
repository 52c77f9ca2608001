"""
Batched forward dynamics: 10,000 Panda states in one call, against a loop over pin.aba.

``Robot.forward_dynamics`` takes a (N, 7) batch and runs the single-state kernel over
the states in a numba ``prange`` (as many threads as numba has: the report records
it).  Pinocchio has no batched Python call, so its peer is the plain Python loop
``for i in range(N): pin.aba(model, data, q[i], qd[i], tau[i])`` over the same states
(each iteration includes the binding's call overhead, which is what a Python user of
Pinocchio pays).  The reported ratio is pin_loop_per_state / ours_per_state; above 1
the batched call is faster per state.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numba
import numpy as np


NAME = 'batch'
TITLE = 'Batched FD, 10,000 Panda states'
RATIO_TARGET = 3.0
COUNT = 10000


def run(opts) -> dict:
    """Time one batched FD call over COUNT states against the pin.aba loop."""
    pin = common.import_pinocchio()
    robot, model, data, _ = common.panda(pin)
    rng = np.random.default_rng(opts.seed + 1)
    q, qd, tau = common.random_states(rng, robot, count=COUNT)
    funcs = {f'ours {method}': (lambda m=method: robot.forward_dynamics(q, qd, tau, method=m))
             for method in ('denoc', 'cholesky')}
    checks = {}
    if pin is not None:
        aba = pin.aba

        def pin_loop():
            for i in range(COUNT):
                aba(model, data, q[i], qd[i], tau[i])

        funcs['pinocchio aba loop'] = pin_loop
        reference = np.array([aba(model, data, q[i], qd[i], tau[i]) for i in range(COUNT)])
        for method in ('denoc', 'cholesky'):
            ours = robot.forward_dynamics(q, qd, tau, method=method)
            checks[f'{method} vs aba'] = max(
                common.rel_error(ours[i], reference[i]) for i in range(0, COUNT, 97))

    progress = common.Progress(1, NAME)
    timings = common.compare(funcs, repeats=5 if opts.quick else 15, target=0.0)
    progress.step(f'{COUNT} states')

    pin_key = 'pinocchio aba loop'
    rows = []
    for name, stat in timings.items():
        row = {'call': name, 'per_call_ms': stat['median_us'] / 1000.0,
               'per_state_us': stat['median_us'] / COUNT, 'timing': stat}
        if pin_key in timings:
            row['ratio_pin_loop_over_this'] = timings[pin_key]['median_us'] / stat['median_us']
        rows.append(row)
    result = {'states': COUNT, 'numba_threads': numba.get_num_threads(),
              'numba_threading_layer': _threading_layer(), 'rows': rows,
              'max_rel_error_vs_pinocchio': checks, 'targets': []}
    if pin_key in timings:
        r = common.ratio(timings, pin_key, 'ours denoc')
        result['ratio'] = r
        result['targets'].append(common.target(
            f'{COUNT} Panda states in one call (denoc): pin.aba loop / ours, per state',
            r['of_medians'], 'x', f'>= {RATIO_TARGET:g}', r['of_medians'] >= RATIO_TARGET,
            spread=f'paired {r["paired_q1"]:.2f}..{r["paired_q3"]:.2f}, '
                   f'{numba.get_num_threads()} numba threads',
            figures=f'{timings["ours denoc"]["median_us"] / COUNT:.2f} us / pin.aba loop '
                    f'{timings[pin_key]["median_us"] / COUNT:.2f} us per state'))
    return result


def _threading_layer() -> str:
    try:
        return numba.threading_layer()
    except ValueError:          # no parallel region has run in this process
        return 'not initialized'


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
