"""
Single-state calls on the Panda (7 DOF, fingers locked) against Pinocchio.

Our calls go through the public API (``Robot.forward_dynamics`` etc.), input checks
and kinematics included; Pinocchio's through its Python bindings, which include
their own call overhead (about a microsecond).  Pairs:

=================  ================================  ====================================
call               ours                              Pinocchio
=================  ================================  ====================================
FD auto            ``forward_dynamics(method=auto)``  ``aba``
FD denoc           ``forward_dynamics(method=denoc)`` ``aba``
FD cholesky        ``forward_dynamics(cholesky)``     ``aba``
FD dense           ``forward_dynamics(dense)``        ``aba``
ID                 ``inverse_dynamics``               ``rnea``
bias forces        ``bias_forces``                    ``nonLinearEffects``
kinematics         ``kinematics``                     ``forwardKinematics``
GIM                ``inertia_matrix``                 ``crba``
UDU                ``udu``                            ``crba`` + ``cholesky.decompose``
inverse GIM        ``inverse_inertia_matrix``         ``computeMinverse``
=================  ================================  ====================================

``kinematics`` (our p_i and M_i at the joint origins) and ``bias forces`` (ID with
qdd = 0, the phi of FD) are the first two stages of every FD call, so the rows show
where the FD time goes.  Pinocchio's ``cholesky.decompose`` factors M = U D U^T (the
same factorization as our ``udu``) from the M that ``crba`` leaves in ``data``.
roboticstoolbox (``accel``, ``rne``, ``inertia``) joins the table when it is
installed.
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'single'
TITLE = 'Single-state calls, Panda 7-DOF (fingers locked)'
FD_TARGET_US = 50.0


def _pin_calls(pin, model, data, q, qd, qdd, tau):
    def udu():
        pin.crba(model, data, q)
        return pin.cholesky.decompose(model, data)

    return {
        'FD': lambda: pin.aba(model, data, q, qd, tau),
        'ID': lambda: pin.rnea(model, data, q, qd, qdd),
        'bias forces': lambda: pin.nonLinearEffects(model, data, q, qd),
        'kinematics': lambda: pin.forwardKinematics(model, data, q),
        'GIM': lambda: pin.crba(model, data, q),
        'UDU': udu,
        'inverse GIM': lambda: pin.computeMinverse(model, data, q),
    }


def _rtb_calls(path, q, qd, qdd, tau):
    """Return roboticstoolbox's calls on the same URDF, or (None, reason)."""
    try:
        import roboticstoolbox as rtb
    except ImportError:
        return None, 'not installed'
    try:
        loader = getattr(getattr(rtb, 'Robot', None), 'URDF', None) or rtb.ERobot.URDF
        robot = loader(path)
        n = robot.n
        # The URDF's finger joints, if rtb keeps them, are held at zero.
        pad = np.zeros(n - len(q))
        qq, qqd = np.concatenate((q, pad)), np.concatenate((qd, pad))
        qqdd, qtau = np.concatenate((qdd, pad)), np.concatenate((tau, pad))
        calls = {
            'FD': lambda: robot.accel(qq, qqd, qtau),
            'ID': lambda: robot.rne(qq, qqd, qqdd),
            'GIM': lambda: robot.inertia(qq),
        }
        for func in calls.values():
            func()
        note = f'{n} joints' + (' (fingers free, held at 0)' if n > len(q) else '')
        return calls, note
    except Exception as exc:  # noqa: B902  (any failure just drops the column)
        return None, f'failed: {type(exc).__name__}: {exc}'


def run(opts) -> dict:
    """Time the single-state calls; return the section's results."""
    pin = common.import_pinocchio()
    robot, model, data, path = common.panda(pin)
    rng = np.random.default_rng(opts.seed)
    q, qd, tau = common.random_states(rng, robot)
    qdd = rng.normal(size=robot.n)

    ours = {
        'FD auto': lambda: robot.forward_dynamics(q, qd, tau),
        'FD denoc': lambda: robot.forward_dynamics(q, qd, tau, method='denoc'),
        'FD cholesky': lambda: robot.forward_dynamics(q, qd, tau, method='cholesky'),
        'FD dense': lambda: robot.forward_dynamics(q, qd, tau, method='dense'),
        'ID': lambda: robot.inverse_dynamics(q, qd, qdd),
        'bias forces': lambda: robot.bias_forces(q, qd),
        'kinematics': lambda: robot.kinematics(q),
        'GIM': lambda: robot.inertia_matrix(q),
        'UDU': lambda: robot.udu(q),
        'inverse GIM': lambda: robot.inverse_inertia_matrix(q),
    }
    peer_of = {'FD auto': 'FD', 'FD denoc': 'FD', 'FD cholesky': 'FD', 'FD dense': 'FD'}
    funcs = {('ours', k): f for k, f in ours.items()}
    checks = {}
    if pin is not None:
        pin_calls = _pin_calls(pin, model, data, q, qd, qdd, tau)
        funcs.update({('pinocchio', k): f for k, f in pin_calls.items()})
        reference = pin.aba(model, data, q, qd, tau).copy()
        for method in ('auto', 'denoc', 'cholesky', 'dense'):
            checks[f'FD {method} vs aba'] = common.rel_error(
                robot.forward_dynamics(q, qd, tau, method=method), reference)
        checks['ID vs rnea'] = common.rel_error(robot.inverse_dynamics(q, qd, qdd),
                                                pin.rnea(model, data, q, qd, qdd))
    rtb_calls, rtb_note = _rtb_calls(path, q, qd, qdd, tau)
    if rtb_calls:
        funcs.update({('roboticstoolbox', k): f for k, f in rtb_calls.items()})

    progress = common.Progress(1, NAME)
    timings = common.compare({f'{who}|{k}': f for (who, k), f in funcs.items()},
                             repeats=opts.repeats, target=opts.repeat_time)
    progress.step(f'{len(funcs)} calls timed')

    rows = []
    for call in ours:
        peer = peer_of.get(call, call)
        row = {'call': call, 'ours_us': timings[f'ours|{call}']['median_us'],
               'ours': timings[f'ours|{call}']}
        for who in ('pinocchio', 'roboticstoolbox'):
            key = f'{who}|{peer}'
            if key in timings:
                row[f'{who}_us'] = timings[key]['median_us']
                row[who] = timings[key]
                row[f'ratio_ours_over_{who}'] = row['ours_us'] / row[f'{who}_us']
        rows.append(row)
    fd = {row['call']: row for row in rows}
    fd_auto = fd['FD auto']['ours_us']
    return {
        'robot': f'Panda {robot.n} DOF (tip panda_hand, fingers locked)',
        'urdf': path,
        'auto_method': auto_method(robot, q, qd, tau),
        'AUTO_DENOC_MIN_DOF': _auto_min_dof(),
        'rows': rows,
        'pinocchio_peers': {'FD': 'aba', 'ID': 'rnea', 'bias forces': 'nonLinearEffects',
                            'kinematics': 'forwardKinematics', 'GIM': 'crba',
                            'UDU': 'crba + cholesky.decompose',
                            'inverse GIM': 'computeMinverse'},
        'roboticstoolbox': rtb_note,
        'max_rel_error_vs_pinocchio': checks,
        'targets': [{
            'name': 'single-state FD (Panda 7-DOF, method auto) median',
            'value': fd_auto, 'unit': 'us', 'target': f'<= {FD_TARGET_US:g} us',
            'pass': fd_auto <= FD_TARGET_US,
        }],
    }


def auto_method(robot, q, qd, tau) -> str:
    """Return which method ``method='auto'`` used here, by comparing the results."""
    auto = robot.forward_dynamics(q, qd, tau)
    for method in ('dense', 'cholesky', 'denoc'):
        if np.array_equal(auto, robot.forward_dynamics(q, qd, tau, method=method)):
            return method
    return 'unknown'


def _auto_min_dof():
    from denoc_dynamics.core import robot as robot_module
    return getattr(robot_module, 'AUTO_DENOC_MIN_DOF', None)


if __name__ == '__main__':
    import json
    print(json.dumps(run(common.Options(quick=True)), indent=2, default=str))
