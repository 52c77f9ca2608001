"""
Batches: 10,000 Panda states in one call (FD, ID, the GIM), against a loop over Pinocchio.

``Robot.forward_dynamics``, ``inverse_dynamics`` and ``inertia_matrix`` take a (N, 7)
batch and run the single-state kernel over the states in a numba ``prange`` (as many
threads as numba has: the report records it).  Pinocchio has no batched Python call,
so each peer is the plain Python loop ``for i in range(N): pin.aba(model, data, q[i],
qd[i], tau[i])`` (``pin.rnea``, ``pin.crba``) over the same states (each iteration
includes the binding's call overhead, which is what a Python user of Pinocchio pays).
The reported ratio is pin_loop_per_state / ours_per_state; above 1 the batched call
is faster per state.  Target: >= 4 for each of the three, on 2 quiet cores.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numba
import numpy as np


NAME = 'batch'
TITLE = 'Batches of 10,000 Panda states: FD, ID, GIM'
RATIO_TARGET = 4.0
COUNT = 10000


def _symmetric(M):
    """Return crba's upper triangle made symmetric (Pinocchio fills only that)."""
    return np.triu(M) + np.triu(M, 1).T


def run(opts) -> dict:
    """Time one batched call of each over COUNT states against its Pinocchio loop."""
    pin = common.import_pinocchio()
    robot, model, data, _ = common.panda(pin)
    rng = np.random.default_rng(opts.seed + 1)
    q, qd, x = common.random_states(rng, robot, count=COUNT)
    calls = {   # label: (ours, Pinocchio's one-state call, its arguments)
        'FD': (lambda: robot.forward_dynamics(q, qd, x), 'aba', (q, qd, x)),
        'ID': (lambda: robot.inverse_dynamics(q, qd, x), 'rnea', (q, qd, x)),
        'GIM': (lambda: robot.inertia_matrix(q), 'crba', (q,)),
    }
    funcs = {f'ours {label}': ours for label, (ours, _, _) in calls.items()}
    funcs['ours FD cholesky'] = lambda: robot.forward_dynamics(q, qd, x, method='cholesky')
    checks = {}
    if pin is not None:
        for label, (ours, name, args) in calls.items():
            one = getattr(pin, name)

            def pin_loop(one=one, args=args):
                for i in range(COUNT):
                    one(model, data, *(a[i] for a in args))

            funcs[f'pinocchio {name} loop'] = pin_loop
            result = ours()
            fix = _symmetric if name == 'crba' else np.array
            checks[f'{label} vs {name}'] = max(
                common.rel_error(result[i], fix(one(model, data, *(a[i] for a in args))))
                for i in range(0, COUNT, 97))

    progress = common.Progress(1, NAME)
    timings = common.compare(funcs, repeats=5 if opts.quick else 15, target=0.0)
    progress.step(f'{COUNT} states')

    rows = []
    for name, stat in timings.items():
        rows.append({'call': name, 'per_call_ms': stat['median_us'] / 1000.0,
                     'per_state_us': stat['median_us'] / COUNT, 'timing': stat})
    result = {'states': COUNT, 'numba_threads': numba.get_num_threads(),
              'numba_threading_layer': _threading_layer(), 'rows': rows,
              'max_rel_error_vs_pinocchio': checks, 'targets': []}
    for label, (_, name, _) in calls.items():
        pin_key, ours_key = f'pinocchio {name} loop', f'ours {label}'
        if pin_key not in timings:
            continue
        r = common.ratio(timings, pin_key, ours_key)
        result['targets'].append(common.target(
            f'{COUNT} Panda states in one call, {label}: pin.{name} loop / ours, per state',
            r['of_medians'], 'x', f'>= {RATIO_TARGET:g}', r['of_medians'] >= RATIO_TARGET,
            spread=f'paired {r["paired_q1"]:.2f}..{r["paired_q3"]:.2f}, '
                   f'{numba.get_num_threads()} numba threads',
            figures=f'{timings[ours_key]["median_us"] / COUNT:.2f} us / pin.{name} loop '
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
