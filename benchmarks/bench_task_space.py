"""
Task space against Pinocchio: a frame's pose, velocity, Jacobian, J-dot qd, Lambda, J-bar.

=========================  ====================================  ===========================
call                       ours                                  Pinocchio
=========================  ====================================  ===========================
Jacobian, Panda            ``frame_jacobian(q, 'panda_hand')``    ``computeFrameJacobian``
placement, Panda           ``frame_placement``                   ``forwardKinematics`` +
                                                                 ``updateFramePlacement``
velocity, Panda            ``frame_velocity``                    ``forwardKinematics`` +
                                                                 ``getFrameVelocity``
J-dot qd, Panda            ``frame_acceleration_bias``           ``forwardKinematics`` (qdd
                                                                 0) + ``getFrameClassical
                                                                 Acceleration``
Lambda (6 rows), Panda     ``task_space_inertia(q, frame)``      assembled (below)
J-bar (6 rows), Panda      ``dynamically_consistent_inverse``    assembled: M^-1 J^T Lambda
Lambda (6 rows), n = 200   ``task_space_inertia(q, tip)``        assembled (below)
=========================  ====================================  ===========================

Jacobians, velocities and accelerations in ``LOCAL_WORLD_ALIGNED``; Pinocchio's
placement, velocity and acceleration are its SE3 and Motion objects, not arrays (their
conversion not timed).  Pinocchio has no task-space inertia call;
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
TITLE = 'Task space: frames, Jacobian and task-space inertia (Panda, n = 200 chain)'
TARGETS = {'Jacobian, Panda': 1.0, 'Lambda 6 rows, Panda': 0.5, 'Lambda 6 rows, n = 200': 0.2}
CHAIN_N = 200


def _case(pin, robot, model, data, frame, q, what):
    """Return {label: (ours, pinocchio)} callables and the agreement of one robot."""
    fid = model.getFrameId(frame)
    world_aligned = pin.LOCAL_WORLD_ALIGNED

    def pin_jacobian():
        return pin.computeFrameJacobian(model, data, q, fid, world_aligned)

    def pin_inverse_and_jacobian():
        M_inv = pin.computeMinverse(model, data, q)
        return (np.triu(M_inv) + np.triu(M_inv, 1).T,
                pin.computeFrameJacobian(model, data, q, fid, world_aligned))

    def pin_lambda():
        M_inv, J = pin_inverse_and_jacobian()
        return np.linalg.inv(J @ M_inv @ J.T)

    def pin_j_bar():
        M_inv, J = pin_inverse_and_jacobian()
        M_inv_Jt = M_inv @ J.T
        return M_inv_Jt @ np.linalg.inv(J @ M_inv_Jt)

    qd = np.random.default_rng(len(q)).uniform(-1.0, 1.0, len(q))
    no_qdd = np.zeros(len(q))

    def pin_placement():
        pin.forwardKinematics(model, data, q)
        return pin.updateFramePlacement(model, data, fid)

    def pin_velocity():
        pin.forwardKinematics(model, data, q, qd)
        return pin.getFrameVelocity(model, data, fid, world_aligned)

    def pin_acceleration_bias():
        pin.forwardKinematics(model, data, q, qd, no_qdd)
        return pin.getFrameClassicalAcceleration(model, data, fid, world_aligned)

    checks = {f'Lambda 6 rows, {what}': common.rel_error(robot.task_space_inertia(q, frame),
                                                         pin_lambda())}
    calls = {f'Lambda 6 rows, {what}': (lambda: robot.task_space_inertia(q, frame),
                                        pin_lambda)}
    if what == 'Panda':
        checks['Jacobian, Panda'] = common.rel_error(robot.frame_jacobian(q, frame),
                                                     pin_jacobian())
        checks['placement, Panda'] = common.rel_error(robot.frame_placement(q, frame),
                                                      pin_placement().homogeneous)
        checks['velocity, Panda'] = common.rel_error(robot.frame_velocity(q, qd, frame),
                                                     pin_velocity().vector)
        checks['J-dot qd, Panda'] = common.rel_error(
            robot.frame_acceleration_bias(q, qd, frame), pin_acceleration_bias().vector)
        checks['J-bar 6 rows, Panda'] = common.rel_error(
            robot.dynamically_consistent_inverse(q, frame), pin_j_bar())
        calls = dict({'Jacobian, Panda': (lambda: robot.frame_jacobian(q, frame),
                                          pin_jacobian),
                      'placement, Panda': (lambda: robot.frame_placement(q, frame),
                                           pin_placement),
                      'velocity, Panda': (lambda: robot.frame_velocity(q, qd, frame),
                                          pin_velocity),
                      'J-dot qd, Panda': (lambda: robot.frame_acceleration_bias(q, qd, frame),
                                          pin_acceleration_bias)},
                     **calls,
                     **{'J-bar 6 rows, Panda': (
                         lambda: robot.dynamically_consistent_inverse(q, frame), pin_j_bar)})
    return calls, checks


def run(opts) -> dict:
    """Time the task-space calls against Pinocchio; return the section's results."""
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
                                'placement': 'forwardKinematics + updateFramePlacement',
                                'velocity': 'forwardKinematics + getFrameVelocity',
                                'J-dot qd': 'forwardKinematics (qdd = 0) + '
                                            'getFrameClassicalAcceleration',
                                'Lambda': 'computeMinverse + computeFrameJacobian + '
                                          'inv(J M^-1 J^T)',
                                'J-bar': 'M^-1 J^T Lambda, assembled as Lambda'}}


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
