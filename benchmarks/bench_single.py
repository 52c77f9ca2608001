"""
Single-state calls against Pinocchio: Panda, xArm7 and a 200-joint chain; Baxter (a tree).

Our calls go through the public API (``Robot.forward_dynamics`` etc.), input checks
included; Pinocchio's through its Python bindings, which include their own call
overhead.  Panda pairs:

=================  =====================================  ==============================
call               ours                                   Pinocchio
=================  =====================================  ==============================
FD default         ``forward_dynamics(q, qd, tau)``       ``aba``
FD denoc           ``forward_dynamics(method='denoc')``   ``aba``
FD cholesky        ``forward_dynamics(method='cholesky')`` ``aba``
ID                 ``inverse_dynamics``                   ``rnea``
bias forces        ``bias_forces``                        ``nonLinearEffects``
gravity            ``gravity_torques``                    ``computeGeneralizedGravity``
GIM                ``inertia_matrix``                     ``crba``
UDU                ``udu``                                ``crba`` + ``cholesky.decompose``
inverse GIM        ``inverse_inertia_matrix``             ``computeMinverse``
composite body     ``composite_body`` (H, b)              ``crba`` + ``nonLinearEffects``
kinetic energy     ``kinetic_energy``                     ``computeKineticEnergy``
potential energy   ``potential_energy``                   ``computePotentialEnergy``
=================  =====================================  ==============================

The same rows for the xArm7 of example-robot-data (a second 7-DOF arm: the KUKA iiwa
is not in example-robot-data) and for a random 200-joint chain
(:func:`common.random_chain_urdf`); every call's target is at most 1.0x its twin,
FD on the Panda at most 0.75x ``aba``.

Baxter: ``load_urdf(path)`` without a tip, the whole tree (two 7-DOF arms, the head
pan and the grippers, whose second finger is a mimic joint), against
Pinocchio's model of the same URDF; FD by ``forward_dynamics`` against ``pin.aba`` and
Pinocchio's constrained CRBA + Cholesky (see :func:`baxter`).  Joints are
matched by name.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'single'
TITLE = ('Single-state calls: Panda 7-DOF (fingers locked), xArm7, a 200-joint chain, and '
         'Baxter (tree, mimic joints)')
FD_RATIO_TARGET = 0.75
CALL_RATIO_TARGET = 1.0
XARM_RELATIVE = 'xarm_description/urdf/xarm7.urdf'
CHAIN_N = 200
BAXTER_RATIO_TARGET = 1.2
BAXTER_RELATIVE = 'baxter_description/urdf/baxter.urdf'


def _pin_calls(pin, model, data, q, qd, qdd, tau):
    def udu():
        pin.crba(model, data, q)
        return pin.cholesky.decompose(model, data)

    return {
        'FD': lambda: pin.aba(model, data, q, qd, tau),
        'ID': lambda: pin.rnea(model, data, q, qd, qdd),
        'bias forces': lambda: pin.nonLinearEffects(model, data, q, qd),
        'gravity': lambda: pin.computeGeneralizedGravity(model, data, q),
        'GIM': lambda: pin.crba(model, data, q),
        'UDU': udu,
        'inverse GIM': lambda: pin.computeMinverse(model, data, q),
        'composite body': lambda: (pin.crba(model, data, q),
                                   pin.nonLinearEffects(model, data, q, qd)),
        'kinetic energy': lambda: pin.computeKineticEnergy(model, data, q, qd),
        'potential energy': lambda: pin.computePotentialEnergy(model, data, q),
    }


def _symmetric(upper):
    """Return the symmetric matrix of which ``upper`` holds the upper triangle."""
    return np.triu(upper) + np.triu(upper, 1).T


def panda(opts, pin) -> dict:
    """Time the Panda's calls; return rows, agreement checks and the ratios."""
    robot, model, data, path = common.panda(pin)
    return pair(opts, pin, robot, model, data, path,
                f'Panda {robot.n} DOF (tip panda_hand, fingers locked)')


def xarm(opts, pin) -> dict:
    """Time the xArm7's calls (a second 7-DOF arm), as :func:`panda`."""
    robots = common.example_robot_data_dir()
    if robots is None:
        return {'available': False, 'reason': 'example-robot-data is not installed'}
    path = robots / XARM_RELATIVE
    robot = common.load_urdf(str(path))
    model = data = None
    if pin is not None:
        model, data = common.pin_model(pin, path.read_text(), keep_joints=robot.joint_names)
    return pair(opts, pin, robot, model, data, str(path), f'xArm7, {robot.n} DOF')


def chain(opts, pin) -> dict:
    """Time a random chain of CHAIN_N joints, as :func:`panda`."""
    xml = common.random_chain_urdf(CHAIN_N, seed=opts.seed)
    robot = common.load_urdf(xml)
    model = data = None
    if pin is not None:
        model, data = common.pin_model(pin, xml)
    return pair(opts, pin, robot, model, data, 'random_chain_urdf',
                f'random chain, {robot.n} joints')


def pair(opts, pin, robot, model, data, path, label) -> dict:
    """Time one robot's calls against Pinocchio's; return rows and agreement checks."""
    rng = np.random.default_rng(opts.seed)
    q, qd, tau = common.random_states(rng, robot)
    qdd = rng.normal(size=robot.n)
    ours = {
        'FD default': lambda: robot.forward_dynamics(q, qd, tau),
        'FD denoc': lambda: robot.forward_dynamics(q, qd, tau, method='denoc'),
        'FD cholesky': lambda: robot.forward_dynamics(q, qd, tau, method='cholesky'),
        'ID': lambda: robot.inverse_dynamics(q, qd, qdd),
        'bias forces': lambda: robot.bias_forces(q, qd),
        'gravity': lambda: robot.gravity_torques(q),
        'GIM': lambda: robot.inertia_matrix(q),
        'UDU': lambda: robot.udu(q),
        'inverse GIM': lambda: robot.inverse_inertia_matrix(q),
        'composite body': lambda: robot.composite_body(q, qd),
        'kinetic energy': lambda: robot.kinetic_energy(q, qd),
        'potential energy': lambda: robot.potential_energy(q),
    }
    peer_of = {call: 'FD' for call in ours if call.startswith('FD')}
    peers = _pin_calls(pin, model, data, q, qd, qdd, tau) if pin is not None else {}
    checks = {}
    if pin is not None:
        reference = pin.aba(model, data, q, qd, tau).copy()
        for method in ('denoc', 'cholesky'):
            checks[f'FD {method} vs aba'] = common.rel_error(
                robot.forward_dynamics(q, qd, tau, method=method), reference)
        checks['ID vs rnea'] = common.rel_error(robot.inverse_dynamics(q, qd, qdd),
                                                pin.rnea(model, data, q, qd, qdd))
        checks['GIM vs crba'] = common.rel_error(
            robot.inertia_matrix(q), _symmetric(pin.crba(model, data, q)))
        checks['gravity vs computeGeneralizedGravity'] = common.rel_error(
            robot.gravity_torques(q), pin.computeGeneralizedGravity(model, data, q))
        checks['inverse GIM vs computeMinverse'] = common.rel_error(
            robot.inverse_inertia_matrix(q), _symmetric(pin.computeMinverse(model, data, q)))
        H, b = robot.composite_body(q, qd)
        checks['composite body H vs crba'] = common.rel_error(
            H, _symmetric(pin.crba(model, data, q)))
        checks['composite body b vs nonLinearEffects'] = common.rel_error(
            b, pin.nonLinearEffects(model, data, q, qd))
        checks['kinetic energy vs computeKineticEnergy'] = common.rel_error(
            robot.kinetic_energy(q, qd), pin.computeKineticEnergy(model, data, q, qd))
        checks['potential energy vs computePotentialEnergy'] = common.rel_error(
            robot.potential_energy(q), pin.computePotentialEnergy(model, data, q))
    rows, _ = common.side_by_side(
        {call: (f, peers.get(peer_of.get(call, call))) for call, f in ours.items()}, opts)
    return {'robot': label, 'urdf': path, 'rows': rows,
            'max_rel_error_vs_pinocchio': checks}


def _pin_indices(model, names):
    """Return the q and v indices of Pinocchio's joints ``names``."""
    ids = [model.getJointId(name) for name in names]
    return [model.idx_qs[i] for i in ids], [model.idx_vs[i] for i in ids]


def baxter(opts, pin) -> dict:
    """
    Time one FD of the whole Baxter tree (mimic grippers) against Pinocchio.

    ``pin.aba`` refuses a model with mimic joints (Pinocchio 4.1: "This algorithm does
    not support Joint Mimic type"), so the peers are ``aba`` on the model without
    mimic (the same bodies, each mimic joint a free coordinate at G q + b) and the
    same constrained system as ours, ``crba`` + ``nonLinearEffects`` on the mimic
    model and a LAPACK Cholesky solve.
    """
    robots = common.example_robot_data_dir()
    if robots is None or not (robots / BAXTER_RELATIVE).is_file():
        return {'available': False, 'reason': 'example-robot-data has no Baxter URDF'}
    path = robots / BAXTER_RELATIVE
    robot = common.load_urdf(str(path))
    result = {'robot': f'Baxter, whole tree: {robot.n} coordinates, {robot.n_bodies} bodies, '
                       f'mimic joints {sorted(robot.mimic_joints)}', 'urdf': str(path),
              'n': robot.n, 'n_bodies': robot.n_bodies}
    rng = np.random.default_rng(opts.seed + 16)
    q, qd, tau = common.random_states(rng, robot)
    funcs = {'ours': lambda: robot.forward_dynamics(q, qd, tau)}
    if pin is not None:
        from scipy.linalg import cho_factor, cho_solve
        free = pin.buildModelFromUrdf(str(path))          # mimic joints free
        free_data = free.createData()
        iq, iv = _pin_indices(free, robot.body_joint_names)
        fq, fv, ft = pin.neutral(free), np.zeros(free.nv), np.zeros(free.nv)
        fq[iq], fv[iv] = robot.body_positions(q), robot.body_positions(qd) - (
            robot.body_positions(np.zeros(robot.n)))
        ft[iv] = np.zeros(robot.n_bodies)
        ft[_pin_indices(free, robot.joint_names)[1]] = tau
        funcs['pin aba (mimic=False)'] = lambda: pin.aba(free, free_data, fq, fv, ft)
        mimic = pin.buildModelFromUrdf(str(path), mimic=True)
        mimic_data = mimic.createData()
        mq, mv = _pin_indices(mimic, robot.joint_names)
        pq, pv, pt = pin.neutral(mimic), np.zeros(mimic.nv), np.zeros(mimic.nv)
        pq[mq], pv[mv], pt[mv] = q, qd, tau

        def constrained():
            bias = pin.nonLinearEffects(mimic, mimic_data, pq, pv)
            M = pin.crba(mimic, mimic_data, pq)
            return cho_solve(cho_factor(M, lower=False, check_finite=False), pt - bias,
                             check_finite=False)

        funcs['pin crba + Cholesky (mimic=True)'] = constrained
        result['pinocchio_models'] = {'aba': f'buildModelFromUrdf: nv {free.nv}',
                                      'crba': f'buildModelFromUrdf(mimic=True): nv {mimic.nv}'}
        result['rel_error_vs_pin_crba_cholesky'] = common.rel_error(
            robot.forward_dynamics(q, qd, tau), constrained()[mv])
    timings = common.compare(funcs, repeats=opts.repeats, target=opts.repeat_time)
    result['us'] = {name: t['median_us'] for name, t in timings.items()}
    result['timings'] = timings
    result['ratios'] = {name: common.ratio(timings, 'ours', name)
                        for name in timings if name != 'ours'}
    return result


def run(opts) -> dict:
    """Time the single-state calls; return the section's results."""
    pin = common.import_pinocchio()
    progress = common.Progress(4, NAME)
    result = panda(opts, pin)
    progress.step('Panda')
    result['xarm7'] = xarm(opts, pin)
    progress.step('xArm7')
    result['chain'] = chain(opts, pin)
    progress.step(f'chain n = {CHAIN_N}')
    result['baxter'] = baxter(opts, pin)
    progress.step('Baxter')
    result['pinocchio_peers'] = {'FD': 'aba', 'ID': 'rnea', 'bias forces': 'nonLinearEffects',
                                 'gravity': 'computeGeneralizedGravity', 'GIM': 'crba',
                                 'UDU': 'crba + cholesky.decompose',
                                 'inverse GIM': 'computeMinverse',
                                 'composite body': 'crba + nonLinearEffects',
                                 'kinetic energy': 'computeKineticEnergy',
                                 'potential energy': 'computePotentialEnergy'}
    result['targets'] = []
    for key, section in (('Panda', result), ('xArm7', result['xarm7']),
                         (f'chain n = {CHAIN_N}', result['chain'])):
        for row in section.get('rows', ()):
            if 'ratio' not in row or row['call'] in ('FD denoc', 'FD cholesky'):
                continue
            r = row['ratio']
            goal = FD_RATIO_TARGET if (key, row['call']) == ('Panda', 'FD default') else (
                CALL_RATIO_TARGET)
            peer = result['pinocchio_peers'][row['call'].split(' default')[0]]
            result['targets'].append(common.target(
                f'one {row["call"]}, {key}: ours / pin.{peer}', r['of_medians'], 'x',
                f'<= {goal:g}', r['of_medians'] <= goal,
                spread=f'paired {r["paired_q1"]:.2f}..{r["paired_q3"]:.2f}, '
                       f'of minima {r["of_minima"]:.2f}',
                figures=f'{row["ours_us"]:.2f} us / {row["pinocchio_us"]:.2f} us'))
    b = result['baxter']
    if 'pin aba (mimic=False)' in b.get('ratios', {}):
        r = b['ratios']['pin aba (mimic=False)']
        result['targets'].append(common.target(
            'one FD, Baxter whole tree (mimic grippers): ours / pin.aba (mimic free)',
            r['of_medians'], 'x',
            f'<= {BAXTER_RATIO_TARGET:g}', r['of_medians'] <= BAXTER_RATIO_TARGET,
            spread=f'paired {r["paired_q1"]:.2f}..{r["paired_q3"]:.2f}, '
                   f'of minima {r["of_minima"]:.2f}',
            figures=f'{b["us"]["ours"]:.1f} us / pin.aba {b["us"]["pin aba (mimic=False)"]:.1f}'
                    f' us (pin CRBA + Cholesky {b["us"]["pin crba + Cholesky (mimic=True)"]:.1f}'
                    ' us)'))
    return result


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
