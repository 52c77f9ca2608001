"""
The compiled core and the same lines in CPython (``NUMBA_DISABLE_JIT=1``) agree.

The core's kernels are plain Python compiled by numba; with ``NUMBA_DISABLE_JIT=1``
numba compiles nothing and CPython runs the same lines.  :func:`results` evaluates
ID, the GIM, FD by both methods, U D U^T, the analytical inverse, the composite-body
H, b and a batch call on the bundled arm and on a small tree with a mimic joint.  It
runs once in a child process with the JIT off (this file run as a script, writing an
.npz) and once here, compiled; the two must agree to 1e-13 relative, FD to 1e-13 or
to its rounding, 10 cond(I) eps, whichever is larger.
"""

import os
from pathlib import Path
import subprocess
import sys

import numpy as np

TOL = 1e-13
#: FD solves I qdd = tau - b: its rounding is cond(I) eps, and LLVM may fuse a multiply
#: and an add that CPython rounds twice, so FD is held to FD_ULPS cond(I) eps (the arm's
#: cond(I) is 5e3: 1.2e-11); measured: every result within 1e-15.
FD_ULPS = 10.0
HERE = Path(__file__).resolve().parent


def _robots():
    """Return {name: robot}: the bundled arm and a branched tree with a mimic joint."""
    from denoc_dynamics import load_urdf
    from denoc_dynamics.resources import bundled_urdf
    from denoc_dynamics.sample_urdfs import random_tree_urdf
    tree = load_urdf(random_tree_urdf(np.random.default_rng(0), 5, fixed=0.2, mimic=0.3))
    return {'arm': load_urdf(bundled_urdf('denoc_arm7')), 'tree': tree}


def results():
    """Return {key: array} of every checked algorithm on each robot, at 2 states."""
    out = {}
    for name, robot in _robots().items():
        rng = np.random.default_rng(3)
        out[f'{name} mimic joints'] = np.array(len(robot.mimic_joints))
        out[f'{name} parents'] = robot.chain.parent
        Q, QD, QDD, TAU = (rng.uniform(-1.0, 1.0, (2, robot.n)) for _ in range(4))
        out[f'{name} cond'] = np.array(max(np.linalg.cond(robot.inertia_matrix(q))
                                           for q in Q))
        for s, (q, qd, qdd, tau) in enumerate(zip(Q, QD, QDD, TAU)):
            U, d = robot.udu(q)
            H, b = robot.composite_body(q, qd)
            values = {'ID': robot.inverse_dynamics(q, qd, qdd), 'GIM': robot.inertia_matrix(q),
                      'FD denoc': robot.forward_dynamics(q, qd, tau, method='denoc'),
                      'FD cholesky': robot.forward_dynamics(q, qd, tau, method='cholesky'),
                      'U': U, 'd': d, 'inverse': robot.inverse_inertia_matrix(q), 'H': H,
                      'b': b}
            out.update({f'{name} {key} {s}': value for key, value in values.items()})
        out[f'{name} batch FD'] = robot.forward_dynamics(Q, QD, TAU)
        out[f'{name} batch GIM'] = robot.inertia_matrix(Q)
    return out


def _kernels_compiled() -> bool:
    """Return True if the core's kernels are numba dispatchers (False with the JIT off)."""
    import numba
    from denoc_dynamics.core import forward_dynamics
    return isinstance(forward_dynamics.forward_dynamics, numba.core.dispatcher.Dispatcher)


def test_the_same_lines_in_cpython_give_the_same_results(tmp_path):
    path = tmp_path / 'no_jit.npz'
    env = dict(os.environ, NUMBA_DISABLE_JIT='1')
    subprocess.run([sys.executable, __file__, str(path)], env=env, check=True, cwd=HERE,
                   timeout=600)
    interpreted = dict(np.load(path))
    assert not interpreted.pop('compiled'), 'the child process ran compiled kernels'
    assert _kernels_compiled(), 'this process should run the compiled kernels'
    compiled = results()
    assert sorted(interpreted) == sorted(compiled)
    assert compiled['tree mimic joints'] > 0 and compiled['arm mimic joints'] == 0
    assert len(set(compiled['tree parents'].tolist())) < len(compiled['tree parents'])
    for key, value in compiled.items():
        scale = max(np.abs(value).max(), 1e-300)
        err = np.abs(interpreted[key] - value).max() / scale
        tol = TOL
        if ' FD' in key:      # a solve: rounding grows with the condition number of I
            tol = max(TOL, FD_ULPS * np.finfo(float).eps * compiled[key.split()[0] + ' cond'])
        assert err <= tol, f'{key}: compiled and interpreted differ by {err:.2e} relative'


if __name__ == '__main__':
    sys.path.insert(0, str(HERE))
    np.savez(sys.argv[1], compiled=np.array(_kernels_compiled()), **results())
