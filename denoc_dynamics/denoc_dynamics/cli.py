"""
The ``denoc-dynamics`` command: look at a URDF the way the dynamics core sees it.

    denoc-dynamics info [URDF]                       the chain: joints, merged links, masses
    denoc-dynamics inertia [URDF] --q ... [--udu] [--inverse]
    denoc-dynamics fd [URDF] --q ... --qd ... --tau ... [--method denoc|cholesky]
    denoc-dynamics compile                           compile the kernels into numba's cache
    denoc-dynamics id [URDF] --q ... --qd ... --qdd ...

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
    for name, command in sub.choices.items():
        if name in ('info', 'compile'):
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
        from .simulation import compile_simulation
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
