# Copyright 2025 denoc_dynamics developers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
The dynamics of every example-robot-data URDF, loaded whole, against Pinocchio.

Each URDF is loaded with no tip by :func:`load_urdf` (a fixed base at the URDF root,
mimic joints following their leaders) and by Pinocchio twice:

* ``pin.buildModelFromUrdf(path, mimic=True)``, which reduces each mimic joint to its
  leader as we do: its nv must equal ``robot.n`` and its coordinates come in the order
  of ``robot.joint_names``.  Compared at random states: M (``crba``), ID (``rnea``), FD
  (``aba``, or M^-1 (tau - ``nonLinearEffects``) where Pinocchio's ``aba`` refuses mimic
  joints; ``method="denoc"`` and ``"cholesky"``), U D U^T, I^-1 (the inverse of
  Pinocchio's M) and the composite-body H, b (``crba``, ``nonLinearEffects``).
  Pinocchio refuses a mimic joint that comes before its leader in its depth-first order
  (TALOS full), and Pinocchio 2 has no ``mimic=``; for those only the next check runs.
* ``pin.buildModelFromUrdf(path)``, every joint independent, and G, b of q_bodies =
  G q + b read from the URDF text's ``<mimic>`` tags (not from our model): the
  constrained system is M_r = G^T M G, tau = G^T ID(G q + b, G qd, G qdd) and
  FD = M_r^-1 (tau - G^T h).

Continuous joints (PR2, TIAGo, the Kinova arm) are (cos q, sin q) in Pinocchio's
configuration; q is converted, so they are compared too.  Errors are relative in the
Frobenius norm, to 1e-12.  Forward dynamics and I^-1 lose digits in proportion to
the condition number of M (the iCub's is 2e7, and Pinocchio's own ``aba`` there is
3e-11 from an exact solve): they are held to 1e-12 relative or to ``COND_EPS`` cond(M)
eps, whichever is larger, and FD's normwise backward error
||M qdd - (tau - b)|| / (||M|| ||qdd|| + ||tau - b||) to 1e-14.
"""

import re
import warnings
import xml.etree.ElementTree as ET
import zlib

from denoc_dynamics import load_urdf
import numpy as np
import pytest
# the autouse fixture that skips without Pinocchio or example-robot-data, shared
from test_urdf_pinocchio import _oracles_installed  # noqa: F401
from test_urdf_pinocchio import _path, _urdf_mimics, BUNDLED, pin, REFUSED, ROBOTS_DIR, URDFS

TOL = 1e-12
#: FD and I^-1 may lose up to this many ulps times cond(M) (see the module docstring).
COND_EPS = 10.0
#: The normwise backward error of FD, ||M qdd - (tau - b)|| / (||M|| ||qdd|| + ||tau - b||).
BACKWARD_TOL = 1e-14
N_STATES = 3

#: URDFs that parse but that :func:`load_urdf` refuses, with the message it must give.
#: Romeo's hands are massless, mimic joints included: the coordinate RHand moves no mass.
NOT_LOADED = {
    'romeo_description/urdf/romeo.urdf':
        r"joint '[RL]Hand' moves no mass: .* \(\w*Finger21, ",
}

SKIP_REDUCED = ('Pinocchio refuses this mimic order (or, Pinocchio 2, has no mimic joints): '
                'compared with mimic=False, projected')

LOADED = [name for name in URDFS if name not in REFUSED and name not in NOT_LOADED]
LOADED.append(BUNDLED)

#: Must be among them, whole: the trees and mimic robots issue 16 names.
REQUIRED = ('panda_description/urdf/panda.urdf', 'baxter_description/urdf/baxter.urdf',
            'ur_description/urdf/ur5_robot.urdf', 'ur_description/urdf/ur10_robot.urdf',
            'tiago_description/robots/tiago.urdf', 'pr2_description/urdf/pr2.urdf',
            'talos_data/robots/talos_full_v2.urdf',
            'anymal_b_simple_description/robots/anymal.urdf', BUNDLED)


def relative_error(actual, expected, floor=1e-300) -> float:
    """Return ||actual - expected||_F / ||expected||_F."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f'shape {actual.shape} != {expected.shape}'
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), floor))


def assert_close(actual, expected, what, tol=TOL):
    err = relative_error(actual, expected)
    assert err <= tol, f'{what}: relative error {err:.3e} > {tol:.1e}'


def symmetric(upper):
    """Return the symmetric matrix whose upper triangle is that of ``upper``."""
    return np.triu(upper) + np.triu(upper, 1).T


class PinModel:
    """One Pinocchio model of a URDF, addressed by joint name."""

    def __init__(self, model, names):
        """Index ``model``'s configuration and tangent space by the joints ``names``."""
        self.model, self.data = model, model.createData()
        self.joints = [model.joints[model.getJointId(name)] for name in names]
        self.idx_v = np.array([joint.idx_v for joint in self.joints])

    def configuration(self, q):
        """Return Pinocchio's q for the joint positions ``q`` (continuous: cos, sin)."""
        config = pin.neutral(self.model)
        for joint, value in zip(self.joints, q):
            if joint.nq == 2:
                config[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
            else:
                assert joint.nq == 1, joint
                config[joint.idx_q] = value
        return config

    def tangent(self, v):
        """Return Pinocchio's tangent vector for the joint rates ``v``."""
        out = np.zeros(self.model.nv)
        out[self.idx_v] = v
        return out

    def ours(self, x):
        """Return a Pinocchio vector or matrix in the order of our joints."""
        x = np.asarray(x)
        return x[self.idx_v] if x.ndim == 1 else x[np.ix_(self.idx_v, self.idx_v)]

    def dynamics(self, q, qd, qdd, tau):
        """Return (M, ID, FD, bias) at one state, in our joint order."""
        m, d, c = self.model, self.data, self.configuration(q)
        qd, qdd, tau = self.tangent(qd), self.tangent(qdd), self.tangent(tau)
        M = symmetric(pin.crba(m, d, c))
        bias = pin.nonLinearEffects(m, d, c, qd)
        if len(getattr(m, 'mimicking_joints', ())):   # Pinocchio's aba does not take them
            qdd_fd = np.linalg.solve(M, tau - bias)
        else:
            qdd_fd = pin.aba(m, d, c, qd, tau)
        return (self.ours(M), self.ours(pin.rnea(m, d, c, qd, qdd)), self.ours(qdd_fd),
                self.ours(bias))


class Pair:
    """Our robot and Pinocchio's models of one URDF."""

    def __init__(self, name):
        """Load ``name`` whole on both sides."""
        self.name, self.path = name, _path(name)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')    # inertias read as given (PR2, HyQ, ...)
            self.robot = load_urdf(self.path)
        robot = self.robot
        gravity = robot.gravity
        try:
            model = pin.buildModelFromUrdf(self.path, mimic=True)
        except (RuntimeError, ValueError):     # a mimic joint before its leader
            model = None
        except TypeError:                      # Pinocchio 2 has no mimic joints
            model = None if robot.mimic_joints else pin.buildModelFromUrdf(self.path)
        self.reduced = None
        if model is not None:
            model.gravity.linear[:] = gravity
            self.reduced = PinModel(model, robot.joint_names)
        model = pin.buildModelFromUrdf(self.path)
        model.gravity.linear[:] = gravity
        self.full = PinModel(model, robot.body_joint_names)
        # q_bodies = G q + b from the URDF text
        mimics = _urdf_mimics(self.path)
        column = {name: k for k, name in enumerate(robot.joint_names)}
        self.G = np.zeros((robot.n_bodies, robot.n))
        self.b = np.zeros(robot.n_bodies)
        for k, name in enumerate(robot.body_joint_names):
            leader, a, b = mimics.get(name, (name, 1.0, 0.0))
            self.G[k, column[leader]], self.b[k] = a, b
        chain = robot.chain
        bounds = [np.where(np.isfinite(x), x, s * np.pi)[chain.coordinates]
                  for x, s in ((chain.lower, -1), (chain.upper, 1))]
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        n = robot.n
        self.states = [(rng.uniform(*bounds), rng.normal(size=n), rng.normal(size=n),
                        rng.normal(scale=10.0, size=n)) for _ in range(N_STATES)]


_PAIRS = {}


@pytest.fixture
def pair(request):
    if request.param not in _PAIRS:
        _PAIRS[request.param] = Pair(request.param)
    return _PAIRS[request.param]


def test_every_robot_is_compared():
    """Every URDF is compared whole or refused with the message it must give."""
    assert len(LOADED) >= 55, LOADED
    for name in REQUIRED:
        assert name in LOADED, name
    for name, match in NOT_LOADED.items():
        with warnings.catch_warnings(), pytest.raises(ValueError, match=match):
            warnings.simplefilter('ignore')
            load_urdf(str(ROBOTS_DIR / name))


def test_mimic_robots_are_reduced():
    """The mimic robots load whole with their mimic joints following their leaders."""
    expected = {'panda_description/urdf/panda.urdf': {'panda_finger_joint2'},
                'baxter_description/urdf/baxter.urdf': {'l_gripper_r_finger_joint',
                                                        'r_gripper_r_finger_joint'},
                BUNDLED: None}
    for name, mimics in expected.items():
        robot = Pair(name).robot if name not in _PAIRS else _PAIRS[name].robot
        assert robot.n < robot.n_bodies, name
        assert set(robot.mimic_joints) == (mimics or set(robot.mimic_joints)), name
        assert not set(robot.mimic_joints) & set(robot.joint_names)
        assert set(robot.joint_names) | set(robot.mimic_joints) == set(robot.body_joint_names)


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_coordinates_match_pinocchio(pair):
    """robot.n is Pinocchio's nv with mimic=True; the coordinates come in its order."""
    robot = pair.robot
    if pair.reduced is None:
        assert robot.mimic_joints, f'Pinocchio refused {pair.name}, which has no mimic joint'
        pytest.skip(SKIP_REDUCED)
    model = pair.reduced.model
    assert model.nv == robot.n
    np.testing.assert_array_equal(pair.reduced.idx_v, np.arange(robot.n))
    mimicking = {model.names[j] for j in getattr(model, 'mimicking_joints', ())}
    assert mimicking == set(robot.mimic_joints)
    assert [name for name in list(model.names)[1:] if name not in mimicking] == \
        robot.joint_names


def check_forward_dynamics(qdd, expected, M, tau_minus_bias, what):
    """FD to 1e-12 relative, or to cond(M) eps; its normwise backward error to 1e-14."""
    tol = max(TOL, COND_EPS * np.linalg.cond(M) * np.finfo(float).eps)
    assert_close(qdd, expected, what, tol)
    residual = np.linalg.norm(M @ qdd - tau_minus_bias)
    backward = residual / (np.linalg.norm(M, 2) * np.linalg.norm(qdd)
                           + np.linalg.norm(tau_minus_bias))
    assert backward <= BACKWARD_TOL, f'{what}: backward error {backward:.3e}'


def check_against(robot, q, qd, qdd, tau, M, ID, FD, bias, k):
    """Compare every algorithm of ``robot`` at one state with the reference M, ID, FD."""
    assert_close(robot.inertia_matrix(q), M, f'M, state {k}')
    assert_close(robot.inverse_dynamics(q, qd, qdd), ID, f'ID, state {k}')
    for method in ('denoc', 'cholesky'):
        check_forward_dynamics(robot.forward_dynamics(q, qd, tau, method=method), FD, M,
                               tau - bias, f'FD ({method}), state {k}')
    U, d = robot.udu(q)
    assert np.all(np.tril(U, -1) == 0.0) and np.all(np.diag(U) == 1.0), f'U, state {k}'
    assert_close(U @ np.diag(d) @ U.T, M, f'U D U^T, state {k}')
    M_inv = np.linalg.inv(M)
    tol = max(TOL, COND_EPS * np.linalg.cond(M) * np.finfo(float).eps)
    assert_close(robot.inverse_inertia_matrix(q), M_inv, f'I^-1, state {k}', tol)
    H, b = robot.composite_body(q, qd)
    assert_close(H, M, f'H, state {k}')
    assert_close(b, bias, f'b, state {k}')


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_dynamics_match_pinocchio_mimic_model(pair):
    """M, ID, FD (both methods), U D U^T, I^-1 and H, b equal Pinocchio's (mimic=True)."""
    if pair.reduced is None:
        pytest.skip(SKIP_REDUCED)
    for k, (q, qd, qdd, tau) in enumerate(pair.states):
        M, ID, FD, bias = pair.reduced.dynamics(q, qd, qdd, tau)
        check_against(pair.robot, q, qd, qdd, tau, M, ID, FD, bias, k)


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_dynamics_match_projected_pinocchio_model(pair):
    """The same against G^T M G, G^T ID of Pinocchio's model with independent joints."""
    G, b = pair.G, pair.b
    for k, (q, qd, qdd, tau) in enumerate(pair.states):
        M_full, ID_full, _, bias_full = pair.full.dynamics(G @ q + b, G @ qd, G @ qdd,
                                                           np.zeros(len(b)))
        M, ID, bias = G.T @ M_full @ G, G.T @ ID_full, G.T @ bias_full
        FD = np.linalg.solve(M, tau - bias)
        check_against(pair.robot, q, qd, qdd, tau, M, ID, FD, bias, k)


def ancestors(parent):
    """Return A with A[i, k] True when i is k or an ancestor of k (parent[i] < i)."""
    n = len(parent)
    A = np.eye(n, dtype=bool)
    for k in range(n):
        if parent[k] >= 0:
            A[:, k] |= A[:, parent[k]]
    return A


@pytest.mark.parametrize('pair', LOADED, indirect=True)
def test_udu_has_the_tree_sparsity(pair):
    """U_ik = 0 unless i is an ancestor of k, and M_ik = 0 unless one is the other's."""
    robot = pair.robot
    if robot.mimic_joints:
        pytest.skip('a mimic joint couples branches: the coordinates are not a tree')
    A = ancestors(robot.chain.parent)
    for q, _, _, _ in pair.states:
        U, _ = robot.udu(q)
        assert np.all(U[~A] == 0.0), np.argwhere((U != 0.0) & ~A)[:5]
        M = robot.inertia_matrix(q)
        assert np.all(M[~(A | A.T)] == 0.0)
    branched = ~(A | A.T)
    assert branched.any() == (len(set(robot.chain.parent)) < robot.n), pair.name


def test_tree_sparsity_is_exercised():
    """Most of the robots are branched: the sparsity test is not empty."""
    branched = 0
    for name in REQUIRED[:-1]:
        parent = (_PAIRS[name] if name in _PAIRS else Pair(name)).robot.chain.parent
        branched += len(set(parent.tolist())) < len(parent)
    assert branched >= 6


def test_continuous_joints_are_compared():
    """PR2 and TIAGo have continuous joints, (cos, sin) in Pinocchio: they are not skipped."""
    for name in ('pr2_description/urdf/pr2.urdf', 'tiago_description/robots/tiago.urdf'):
        pair = _PAIRS[name] if name in _PAIRS else Pair(name)
        assert pair.full.model.nq > pair.full.model.nv
        assert any(joint.nq == 2 for joint in pair.full.joints)
        assert re.search('continuous', pair.robot.summary())
        q, qd, qdd, _ = pair.states[0]
        zero = np.zeros(len(pair.b))
        ID = pair.full.dynamics(pair.G @ q + pair.b, pair.G @ qd, pair.G @ qdd, zero)[1]
        assert_close(pair.robot.inverse_dynamics(q, qd, qdd), pair.G.T @ ID, name)


def test_urdf_text_mimics_are_ours():
    """G from the URDF text (used above) is the robot's own mimic map, for the bundled arm."""
    pair = _PAIRS[BUNDLED] if BUNDLED in _PAIRS else Pair(BUNDLED)
    ours = pair.robot.mimic_joints
    root = ET.parse(pair.path).getroot()
    tags = {j.get('name') for j in root.findall('joint') if j.find('mimic') is not None}
    assert set(ours) == tags and tags
    q = pair.states[0][0]
    np.testing.assert_allclose(pair.robot.body_positions(q), pair.G @ q + pair.b,
                               rtol=0, atol=1e-15)
