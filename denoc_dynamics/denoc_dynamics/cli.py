"""
The ``denoc-dynamics`` command: look at a URDF the way the dynamics core sees it.

    denoc-dynamics info [URDF]                       the chain: joints, merged links, masses
    denoc-dynamics inertia [URDF] --q ... [--udu] [--inverse]
    denoc-dynamics fd [URDF] --q ... --qd ... --tau ... [--method denoc|cholesky]
    denoc-dynamics compile                           compile the kernels into numba's cache
    denoc-dynamics id [URDF] --q ... --qd ... --qdd ...
    denoc-dynamics identify-payload [URDF] --link LINK RECORDING.csv|.npz
    denoc-dynamics excite [URDF] --out TRAJECTORY.csv|.npz [--duration 10] [--seed 0]

URDF is a file path or the name of a bundled model (``denoc_arm7``, the default, or
``planar3``).  Vectors are comma- or space-separated; omitted ones are zero.  Add
``--json`` for machine-readable output.
"""

import argparse
import json
import os
import sys

import numpy as np

from .core import load_urdf
from .core.robot import FD_METHODS
from .core.urdf import SIDE_BRANCHES
from .resources import bundled_urdf, DEFAULT_ROBOT


def _vector(text):
    try:
        return [float(x) for x in text.replace(',', ' ').split()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f'not a list of numbers: {text!r}') from exc


def _parser():
    parser = argparse.ArgumentParser(prog='denoc-dynamics', description=__doc__.split('\n')[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split('\n\n', 1)[1])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('urdf', nargs='?', default=DEFAULT_ROBOT,
                        help=f'URDF file or bundled model name (default {DEFAULT_ROBOT})')
    common.add_argument('--base-link')
    common.add_argument('--tip-link')
    common.add_argument('--side-branches', choices=SIDE_BRANCHES, default='lock')
    common.add_argument('--gravity', type=_vector, default=[0.0, 0.0, -9.81],
                        help='gravity in the base frame (default "0 0 -9.81")')
    common.add_argument('--json', action='store_true', help='print JSON')
    sub = parser.add_subparsers(dest='command', required=True)
    sub.add_parser('info', parents=[common], help='describe the chain')
    sub.add_parser('compile', help="compile the core's kernels into numba's cache")
    inertia = sub.add_parser('inertia', parents=[common], help='the inertia matrix at q')
    inertia.add_argument('--udu', action='store_true', help='also U and d of I = U D U^T')
    inertia.add_argument('--inverse', action='store_true', help='also the analytical inverse')
    fd = sub.add_parser('fd', parents=[common], help='forward dynamics: qdd at (q, qd, tau)')
    fd.add_argument('--method', choices=FD_METHODS, default='denoc')
    sub.add_parser('id', parents=[common], help='inverse dynamics: tau at (q, qd, qdd)')
    identify = sub.add_parser('identify-payload', parents=[common],
                              help='the payload on a link from recorded joint states')
    identify.add_argument('recording', help='CSV or NPZ of time, q, qd, effort (qdd optional;'
                          ' see denoc_dynamics.recording)')
    identify.add_argument('--link', required=True, help='the link the payload is fixed to')
    identify.add_argument('--effort-timing', choices=('interval', 'sample'), default='interval',
                          help="'interval': each effort was applied over the period before "
                          "its stamp (sim_node's joint_states); 'sample': measured at it")
    identify.add_argument('--friction-velocity', type=_vector, default=[0.0],
                          help='take the URDF joint damping and friction, friction * '
                          'tanh(qd / v), off the efforts first (one v [rad/s] or one per '
                          'joint), for efforts that are drive torques; 0 (default): do '
                          "not, the efforts are link-side torques (sim_node's "
                          'joint_states, a joint torque sensor) with the friction in them')
    excite = sub.add_parser('excite', parents=[common],
                            help='an exciting trajectory (Fourier terms within the limits)')
    excite.add_argument('--out', required=True, help='CSV or NPZ file to write')
    excite.add_argument('--duration', type=float, default=10.0)
    excite.add_argument('--period', type=float, default=5.0)
    excite.add_argument('--dt', type=float, default=0.01)
    excite.add_argument('--seed', type=int, default=0)
    for name, command in sub.choices.items():
        if name in ('info', 'compile', 'identify-payload', 'excite'):
            continue
        vectors = {'inertia': ('q',), 'fd': ('q', 'qd', 'tau'), 'id': ('q', 'qd', 'qdd')}
        for vector in vectors[name]:
            command.add_argument(f'--{vector}', type=_vector, default=None,
                                 help=f'{vector} (default zeros)')
    return parser


def _load(args):
    path = args.urdf
    if not os.path.exists(path) and not path.lstrip().startswith('<'):
        path = bundled_urdf(path)
    return load_urdf(path, base_link=args.base_link, tip_link=args.tip_link,
                     gravity=args.gravity, side_branches=args.side_branches)


def _table(robot, rows):
    width = max(len(name) for name in robot.joint_names)
    lines = []
    for label, values in rows:
        if np.ndim(values) == 1:
            lines.append(f'{label}:')
            lines += [f'  {name:<{width}} {value: .10g}'
                      for name, value in zip(robot.joint_names, values)]
        else:
            lines.append(f'{label}:')
            lines += ['  ' + ' '.join(f'{x: .6e}' for x in row) for row in values]
    return '\n'.join(lines)


def run(argv=None):
    """Run the command line; return the text to print (raises ValueError on bad input)."""
    args = _parser().parse_args(argv)
    if args.command == 'compile':
        # imported here: the other commands load only the kernels they call
        from .core.warm_up import compile_kernels
        from .sim_compile import compile_simulation
        seconds = compile_kernels() + compile_simulation()
        return f'compiled the kernels in {seconds:.1f} s'
    robot = _load(args)
    n = robot.n
    vec = {name: np.zeros(n) if getattr(args, name, None) is None
           else np.asarray(getattr(args, name)) for name in ('q', 'qd', 'qdd', 'tau')}
    for name, value in vec.items():
        if value.shape != (n,):
            raise ValueError(f'--{name} needs {n} values ({", ".join(robot.joint_names)}), '
                             f'got {value.size}')
    if args.command in ('identify-payload', 'excite'):
        return _payload_command(robot, args)
    if args.command == 'info':
        c = robot.chain
        if args.json:
            return json.dumps({
                'name': c.name, 'base_link': c.base_link, 'tip_link': c.tip_link,
                'gravity': robot.gravity.tolist(),
                'joints': [{'name': c.joint_names[k],
                            'type': 'prismatic' if c.prismatic[k] else
                            'continuous' if c.continuous[k] else 'revolute',
                            'mass': float(c.mass[k]), 'com': c.com[k].tolist(),
                            'merged_links': c.merged_links[k],
                            'limits': [float(c.lower[k]), float(c.upper[k])],
                            'effort': float(c.effort[k])} for k in range(n)],
                'static_links': c.static_links, 'ignored_base_mass': c.root_mass_ignored,
                'locked_joints': c.locked_joints, 'dropped_links': c.dropped_links}, indent=2)
        return robot.summary()
    q = vec['q']
    if args.command == 'inertia':
        out = {'joint_names': robot.joint_names, 'q': q, 'inertia': robot.inertia_matrix(q)}
        if args.udu:
            out['U'], out['d'] = robot.udu(q)
        if args.inverse:
            out['inverse'] = robot.inverse_inertia_matrix(q)
    elif args.command == 'fd':
        out = {'joint_names': robot.joint_names, 'q': q, 'qd': vec['qd'], 'tau': vec['tau'],
               'qdd': robot.forward_dynamics(q, vec['qd'], vec['tau'], method=args.method)}
    else:
        out = {'joint_names': robot.joint_names, 'q': q, 'qd': vec['qd'], 'qdd': vec['qdd'],
               'tau': robot.inverse_dynamics(q, vec['qd'], vec['qdd'])}
    if args.json:
        return json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v)
                           for k, v in out.items()}, indent=2)
    return _table(robot, [(k, v) for k, v in out.items() if k != 'joint_names'])


def _payload_command(robot, args):
    """Run ``identify-payload`` or ``excite``."""
    from .computed_torque import joint_friction
    from .excitation import exciting_trajectory
    from .recording import load_recording, save_recording
    if args.command == 'excite':
        joints = robot.joints
        trajectory = exciting_trajectory(joints.lower, joints.upper, joints.velocity,
                                         period=args.period, seed=args.seed)
        t = np.arange(0.0, args.duration + 0.5 * args.dt, args.dt)
        q, qd, qdd = trajectory.sample(t)
        tau = robot.inverse_dynamics(q, qd, qdd)
        save_recording(args.out, robot.joint_names, t, q, qd, tau, qdd)
        return f'wrote {len(t)} samples of {args.duration:g} s to {args.out}'
    rec = load_recording(args.recording, robot.joint_names, args.effort_timing)
    tau = rec.tau
    velocity = np.asarray(args.friction_velocity, dtype=float)
    if np.all(velocity > 0.0):
        joints = robot.joints
        tau = tau - joint_friction(rec.qd, joints.damping, joints.friction, velocity)
    estimate = robot.identify_payload(args.link, rec.q, rec.qd, rec.qdd, tau)
    mass, com, inertia = estimate
    if args.json:
        return json.dumps({'link': args.link, 'mass': mass, 'com': com.tolist(),
                           'inertia': inertia.tolist(), 'condition': estimate.condition,
                           'residual_rms': estimate.residual_rms,
                           'samples': estimate.samples}, indent=2)
    return '\n'.join([
        f'payload on {args.link!r} from {estimate.samples} samples:',
        f'  mass [kg]            {mass:.6g}',
        f'  center of mass [m]   {" ".join(f"{x:.6g}" for x in com)}  (link frame)',
        '  inertia [kg m^2]     about the center of mass, link frame:'] +
        ['    ' + ' '.join(f'{x: .6e}' for x in row) for row in inertia] + [
        f'  condition number     {estimate.condition:.3g} (column-scaled)',
        f'  residual RMS [N m]   {estimate.residual_rms:.3g}'])


def main(argv=None):
    """Entry point of ``denoc-dynamics``."""
    try:
        print(run(argv))
    except (ValueError, FileNotFoundError) as exc:
        print(f'denoc-dynamics: error: {exc}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
