"""
Task space against Pinocchio: a frame's Jacobian and the task-space inertia Lambda.

=========================  ====================================  ===========================
call                       ours                                  Pinocchio
=========================  ====================================  ===========================
Jacobian, Panda            ``frame_jacobian(q, 'panda_hand')``    ``computeFrameJacobian``
Lambda (6 rows), Panda     ``task_space_inertia(q, frame)``      assembled (below)
Lambda (6 rows), n = 200   ``task_space_inertia(q, tip)``        assembled (below)
=========================  ====================================  ===========================

Both Jacobians in ``LOCAL_WORLD_ALIGNED``.  Pinocchio has no task-space inertia call;
its users assemble Lambda = (J M^-1 J^T)^-1 as its maintainers advise:
``computeMinverse`` (the upper triangle, made symmetric), ``computeFrameJacobian``,
J M^-1 J^T and ``numpy.linalg.inv``.  Ours is one call, O(n k) from Saha's U D U^T
(:mod:`denoc_dynamics.core.task_space_inertia`).  The Panda is the one of the single
section (``tip_link='panda_hand'``, fingers locked); the n = 200 chain the random
revolute chain of the scaling section, Lambda of its last link.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np

NAME = 'task_space'
TITLE = 'Task space: frame Jacobian and task-space inertia (Panda, n = 200 chain)'
TARGETS = {'Jacobian, Panda': 1.0, 'Lambda 6 rows, Panda': 0.5, 'Lambda 6 rows, n = 200': 0.2}
CHAIN_N = 200


def _case(pin, robot, model, data, frame, q, what):
    """Return {label: (ours, pinocchio)} callables and the agreement of one robot."""
    fid = model.getFrameId(frame)
    world_aligned = pin.LOCAL_WORLD_ALIGNED

    def pin_jacobian():
        return pin.computeFrameJacobian(model, data, q, fid, world_aligned)

    def pin_lambda():
        M_inv = pin.computeMinverse(model, data, q)
        M_inv = np.triu(M_inv) + np.triu(M_inv, 1).T
        J = pin.computeFrameJacobian(model, data, q, fid, world_aligned)
        return np.linalg.inv(J @ M_inv @ J.T)

    checks = {f'Lambda 6 rows, {what}': common.rel_error(robot.task_space_inertia(q, frame),
                                                         pin_lambda())}
    calls = {f'Lambda 6 rows, {what}': (lambda: robot.task_space_inertia(q, frame),
                                        pin_lambda)}
    if what == 'Panda':
        checks['Jacobian, Panda'] = common.rel_error(robot.frame_jacobian(q, frame),
                                                     pin_jacobian())
        calls = dict({'Jacobian, Panda': (lambda: robot.frame_jacobian(q, frame),
                                          pin_jacobian)}, **calls)
    return calls, checks


def run(opts) -> dict:
    """Time the three calls against Pinocchio; return the section's results."""
    pin = common.import_pinocchio()
    if pin is None:
        return {'available': False, 'reason': 'Pinocchio is not installed'}
    progress = common.Progress(2, NAME)
    rng = np.random.default_rng(opts.seed)
    robot, model, data, _ = common.panda(pin)
    q = common.random_states(rng, robot)[0]
    calls, checks = _case(pin, robot, model, data, 'panda_hand', q, 'Panda')
    xml = common.random_chain_urdf(CHAIN_N, seed=opts.seed)
    chain = common.load_urdf(xml)
    chain_model, chain_data = common.pin_model(pin, xml)
    tip = chain.chain.link_names[-1]
    more, more_checks = _case(pin, chain, chain_model, chain_data, tip,
                              common.random_states(rng, chain)[0], f'n = {CHAIN_N}')
    calls.update(more)
    checks.update(more_checks)
    progress.step('set up')
    rows, _ = common.side_by_side(calls, opts)
    progress.step('timed')
    targets = common.ratio_targets(rows, TARGETS)
    return {'rows': rows, 'targets': targets, 'max_rel_error_vs_pinocchio': checks,
            'pinocchio_peers': {'Jacobian': 'computeFrameJacobian (LOCAL_WORLD_ALIGNED)',
                                'Lambda': 'computeMinverse + computeFrameJacobian + '
                                          'inv(J M^-1 J^T)'}}


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
