"""The denoc-dynamics command line against the library it wraps."""

import json
import subprocess
import sys

from denoc_dynamics import load_urdf
from denoc_dynamics.cli import main, run
from denoc_dynamics.resources import bundled_urdf
import numpy as np


def _text(x):
    return ' '.join(repr(float(v)) for v in x)


def test_info_lists_the_chain():
    text = run(['info'])
    assert "7 joints from 'base_link' to 'flange'" in text
    data = json.loads(run(['info', 'planar3', '--json']))
    assert [j['name'] for j in data['joints']] == ['joint1', 'joint2', 'joint3']
    assert data['joints'][0]['mass'] > 0


def test_fd_id_inertia_match_the_library():
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    q = np.linspace(-0.6, 0.6, 7)
    qd = np.linspace(0.3, -0.3, 7)
    tau = np.arange(7.0)
    args = ['--q', _text(q), '--qd', ','.join(repr(float(v)) for v in qd), '--json']
    fd = json.loads(run(['fd', *args, '--tau', _text(tau), '--method', 'denoc']))
    np.testing.assert_allclose(fd['qdd'], robot.forward_dynamics(q, qd, tau, 'denoc'), rtol=1e-12)
    qdd = np.asarray(fd['qdd'])
    ident = json.loads(run(['id', *args, '--qdd', _text(qdd)]))
    np.testing.assert_allclose(ident['tau'], tau, atol=1e-9)
    inertia = json.loads(run(['inertia', '--q', _text(q), '--udu', '--inverse',
                              '--json']))
    M = np.array(inertia['inertia'])
    np.testing.assert_allclose(M, robot.inertia_matrix(q), rtol=1e-12)
    np.testing.assert_allclose(np.array(inertia['inverse']) @ M, np.eye(7), atol=1e-9)
    U, d = np.array(inertia['U']), np.array(inertia['d'])
    np.testing.assert_allclose(U @ np.diag(d) @ U.T, M, atol=1e-12)


def test_bad_input_is_a_clear_error(capsys, tmp_path):
    assert main(['id', '--q', '1,2']) == 2
    assert '--q needs 7 values' in capsys.readouterr().err
    bad = tmp_path / 'bad.urdf'
    bad.write_text('<robot name="x"><link name="a"')
    assert main(['info', str(bad)]) == 2
    assert 'malformed URDF XML' in capsys.readouterr().err
    assert main(['info', 'no_such_model']) == 2


def test_console_entry_point_runs(tmp_path):
    # cwd elsewhere: `python -m` puts the cwd first on sys.path, and the package
    # directory, where pytest runs, holds the source tree (whose kernels are not compiled)
    out = subprocess.run([sys.executable, '-m', 'denoc_dynamics.cli', 'info', 'planar3'],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert 'joint3' in out.stdout
