"""
Batched forward dynamics: many Panda states in one call, against a loop over pin.aba.

Our ``Robot.forward_dynamics`` takes a (N, 7) batch and evaluates every state at once
in numpy; Pinocchio has no batched Python call, so its peer is the plain Python loop
``for i in range(N): pin.aba(model, data, q[i], qd[i], tau[i])`` over the same states
(each iteration includes the binding's call overhead, which is what a Python user of
Pinocchio pays).  The reported ratio is pin_loop_per_state / ours_per_state; above 1
the batched call is faster per state.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'batch'
TITLE = 'Batched FD, Panda 7-DOF'
RATIO_TARGET = 1.0


def run(opts) -> dict:
    """Time one batched FD call over N states against the pin.aba loop."""
    pin = common.import_pinocchio()
    robot, model, data, _ = common.panda(pin)
    count = 10000
    rng = np.random.default_rng(opts.seed + 1)
    q, qd, tau = common.random_states(rng, robot, count=count)
    funcs = {
        f'ours {method}': (lambda m=method: robot.forward_dynamics(q, qd, tau, method=m))
        for method in ('auto', 'denoc', 'cholesky')
    }
    checks = {}
    if pin is not None:
        aba = pin.aba

        def pin_loop():
            for i in range(count):
                aba(model, data, q[i], qd[i], tau[i])

        funcs['pinocchio aba loop'] = pin_loop
        reference = np.array([aba(model, data, q[i], qd[i], tau[i]) for i in range(count)])
        for method in ('auto', 'denoc', 'cholesky'):
            ours = robot.forward_dynamics(q, qd, tau, method=method)
            checks[f'{method} vs aba'] = max(
                common.rel_error(ours[i], reference[i]) for i in range(0, count, 97))

    progress = common.Progress(1, NAME)
    repeats = 3 if opts.quick else 15
    timings = common.compare(funcs, repeats=repeats, target=0.0, budget=None)
    progress.step(f'{count} states')

    rows = []
    pin_per_state = (timings['pinocchio aba loop']['median_us'] / count
                     if 'pinocchio aba loop' in timings else None)
    for name, stat in timings.items():
        per_state = stat['median_us'] / count
        row = {'call': name, 'per_call_ms': stat['median_us'] / 1000.0,
               'per_state_us': per_state, 'timing': stat}
        if pin_per_state is not None:
            row['ratio_pin_loop_over_this'] = pin_per_state / per_state
        rows.append(row)
    from bench_single import auto_method
    result = {'states': count, 'rows': rows, 'max_rel_error_vs_pinocchio': checks,
              'auto_method': auto_method(robot, q, qd, tau), 'targets': []}
    if pin_per_state is not None:
        ratio = pin_per_state / (timings['ours auto']['median_us'] / count)
        result['targets'].append({
            'name': f'batched FD ({count} Panda states, auto): pin_loop / ours per state',
            'value': ratio, 'unit': 'x', 'target': f'>= {RATIO_TARGET:g}',
            'pass': ratio >= RATIO_TARGET,
        })
    return result


if __name__ == '__main__':
    import json
    print(json.dumps(run(common.Options(quick=True)), indent=2, default=str))
