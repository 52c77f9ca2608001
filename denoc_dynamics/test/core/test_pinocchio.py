"""
The dynamics of the DeNOC core against Pinocchio: serial arms cut from URDFs, and whole trees.

Two kinds of case, compared by the same tests with one tolerance rule (helpers.py):
Frobenius-relative errors to 1e-12; forward dynamics and M^-1 lose digits in
proportion to the condition number of M (the iCub's is 2e7, and Pinocchio's own
``aba`` there is 3e-11 from an exact solve), so they are held to 1e-12 or 10 cond(M)
eps, whichever is larger, and FD's normwise backward error
||M qdd - (tau - b)|| / (||M|| ||qdd|| + ||tau - b||) to 1e-14.  Compared at random
states: M (``crba``), ID (``rnea``), the bias and gravity forces, FD (``aba``; both of
our methods), U D U^T, M^-1 and the composite-body H, b.

**Chains** (20 states each).  Every serial arm shipped by ``example-robot-data`` is
loaded twice from the same URDF: by :func:`denoc_dynamics.load_urdf` with a base and
tip link, and by Pinocchio.  How the Pinocchio reference is made to describe the same
chain:

* Pinocchio parses the whole URDF with a fixed base (``buildModelFromXML``); fixed
  joints become frames and their links' inertias are merged, as in our core.
* Every movable joint that is not on our base-to-tip chain (side branches such as
  grippers, heads and the other arm, links below the tip, and joints above a base link
  that is not the root) is removed with ``buildReducedModel``, which keeps it rigidly at
  its zero position, or at the position given in ``locked_positions``. This is what
  ``side_branches="lock"`` must reproduce.
* For ``side_branches="drop"`` the dropped links are instead deleted from the URDF text
  (with ``xml.etree``) before Pinocchio parses it, so their mass is gone.
* Joints are matched by name (``model.getJointId``), never by position. Pinocchio's
  continuous joints use (cos, sin) configuration coordinates; we convert.
* Gravity: Pinocchio's world frame is the URDF root link, ours is the chain's base
  link. All arms but one use the URDF root as base link, so the two frames coincide
  (Baxter's left arm, too, starts at the root and runs through the fixed torso). For
  the exception (``baxter-left-forearm-tilted-base``) the world gravity is rotated into
  the base-link frame with the base link's orientation from Pinocchio's forward
  kinematics at the locked configuration, and passed to ``load_urdf``. One arm also
  uses a tilted, non-standard gravity vector.

**Trees** (3 states each).  Each URDF is loaded with no tip by :func:`load_urdf` (a
fixed base at the URDF root, mimic joints following their leaders) and by Pinocchio
twice:

* ``pin.buildModelFromUrdf(path, mimic=True)`` (the ``mimic`` cases), which reduces
  each mimic joint to its leader as we do: its nv must equal ``robot.n`` and its
  coordinates come in the order of ``robot.joint_names``.  Where Pinocchio's ``aba``
  refuses mimic joints, FD is M^-1 (tau - ``nonLinearEffects``).  Pinocchio refuses a
  mimic joint that comes before its leader in its depth-first order (TALOS full), and
  Pinocchio 2 has no ``mimic=``; for those only the next comparison runs.
* ``pin.buildModelFromUrdf(path)`` (the ``projected`` cases), every joint independent,
  and G, b of q_bodies = G q + b read from the URDF text's ``<mimic>`` tags (not from
  our model): the constrained system is M_r = G^T M G, tau = G^T ID(G q + b, G qd,
  G qdd), g = G^T g(G q + b) and FD = M_r^-1 (tau - G^T h).

Continuous joints (PR2, TIAGo, the Kinova arm) are (cos q, sin q) in Pinocchio's
configuration; q is converted, so they are compared too.

The URDFs are located in the installed ``example-robot-data`` data directory
(:func:`denoc_dynamics.resources.example_robot_data_dir`).  Each test is skipped when
Pinocchio or the data is absent (the ``oracles`` fixture).
"""

import re
import warnings
import xml.etree.ElementTree as ET

from denoc_dynamics import load_urdf
from denoc_dynamics.core.robot import FD_METHODS
from helpers import assert_close, BACKWARD, backward_error, BUNDLED, ORACLE, pin
from helpers import ROBOTS_DIR, solve_tolerance
import numpy as np
from pin_oracle import ARMS, Case, CASES, ChainPair, get_pair, get_tree, LOADED
from pin_oracle import CASE_CACHE, NOT_LOADED, random_states, REQUIRED, SKIP_REDUCED
import pytest

pytestmark = pytest.mark.usefixtures('oracles')


@pytest.fixture(params=CASES, ids=lambda case: f'{case[0]}:{case[1]}')
def case(request) -> Case:
    """Yield each chain and each tree (two Pinocchio models), with its references."""
    if request.param not in CASE_CACHE:
        CASE_CACHE[request.param] = Case(*request.param)
    return CASE_CACHE[request.param]


# --------------------------------------------------------------------------- chains and trees

def test_inertia_matrix(case):
    """M(q) equals Pinocchio's CRBA."""
    for k, q, _, _, _, ref in case.each():
        assert_close(case.robot.inertia_matrix(q), ref['M'], f'M, state {k}')


def test_inverse_dynamics(case):
    """Inverse dynamics equals Pinocchio's RNEA."""
    for k, q, qd, qdd, _, ref in case.each():
        assert_close(case.robot.inverse_dynamics(q, qd, qdd), ref['ID'], f'ID, state {k}')


def test_bias_forces(case):
    """Bias forces equal Pinocchio's nonLinearEffects."""
    for k, q, qd, _, _, ref in case.each():
        assert_close(case.robot.bias_forces(q, qd), ref['bias'], f'bias forces, state {k}')


def test_gravity_torques(case):
    """Gravity torques equal Pinocchio's computeGeneralizedGravity."""
    for k, q, _, _, _, ref in case.each():
        assert_close(case.robot.gravity_torques(q), ref['gravity'],
                     f'gravity torques, state {k}')


@pytest.mark.parametrize('method', FD_METHODS)
def test_forward_dynamics(case, method):
    """FD by each method equals Pinocchio's ABA to cond(M) eps; backward error 1e-14."""
    for k, q, qd, _, tau, ref in case.each():
        qdd = case.robot.forward_dynamics(q, qd, tau, method=method)
        what = f'FD ({method}), state {k}'
        assert_close(qdd, ref['FD'], what, solve_tolerance(ref['M']))
        backward = backward_error(ref['M'], qdd, tau - ref['bias'])
        assert backward <= BACKWARD, f'{what}: backward error {backward:.3e}'


def test_udu(case):
    """U diag(d) U^T equals Pinocchio's M, with U unit upper triangular."""
    for k, q, _, _, _, ref in case.each():
        U, d = case.robot.udu(q)
        U, d = np.asarray(U), np.asarray(d)
        assert np.array_equal(np.tril(U, -1), np.zeros_like(U)), f'U not upper, state {k}'
        assert np.array_equal(np.diag(U), np.ones(case.robot.n)), f'diag(U) != 1, state {k}'
        assert_close(U @ np.diag(d) @ U.T, ref['M'], f'U D U^T, state {k}')


def test_inverse_inertia_matrix(case):
    """M(q)^-1 equals Pinocchio's (computeMinverse, or the inverse of its M)."""
    for k, q, _, _, _, ref in case.each():
        assert_close(case.robot.inverse_inertia_matrix(q), ref['M^-1'], f'M^-1, state {k}',
                     solve_tolerance(ref['M']))


def test_composite_body(case):
    """The composite-body H and b (003) equal Pinocchio's CRBA and nonLinearEffects."""
    for k, q, qd, _, _, ref in case.each():
        H, b = case.robot.composite_body(q, qd)
        assert_close(H, ref['M'], f'H, state {k}')
        assert_close(b, ref['bias'], f'b, state {k}')


# --------------------------------------------------------------------------- chains

@pytest.fixture(params=[arm.name for arm in ARMS])
def loaded(request) -> ChainPair:
    """Yield each arm's pair, whatever its joints."""
    return get_pair(request.param)


def test_chain_joints(loaded):
    """The chain's coordinates are the expected joints, in path order, as in Pinocchio."""
    assert loaded.names == list(loaded.arm.joints)
    assert loaded.robot.n == len(loaded.arm.joints)
    assert set(list(loaded.model.names)[1:]) == set(loaded.names)
    assert loaded.model.nv == loaded.robot.n


def test_batched_calls_equal_looped_calls():
    """Calls on a (4, 5, n) batch of states equal single calls, state by state."""
    pair = get_pair('panda-fingers-locked')
    robot, n = pair.robot, pair.robot.n
    q, qd, qdd, tau = random_states(np.random.default_rng(7), pair.lower, pair.upper,
                                    shape=(4, 5))
    batched = {
        'inertia_matrix': robot.inertia_matrix(q),
        'inverse_dynamics': robot.inverse_dynamics(q, qd, qdd),
        'bias_forces': robot.bias_forces(q, qd),
        'gravity_torques': robot.gravity_torques(q),
        'forward_dynamics denoc': robot.forward_dynamics(q, qd, tau, method='denoc'),
        'forward_dynamics cholesky': robot.forward_dynamics(q, qd, tau, method='cholesky'),
        'udu U': robot.udu(q)[0],
        'udu d': robot.udu(q)[1],
        'inverse_inertia_matrix': robot.inverse_inertia_matrix(q),
    }
    for name, value in batched.items():
        expected_shape = (4, 5, n, n) if name.endswith(('matrix', 'U')) else (4, 5, n)
        assert np.shape(value) == expected_shape, f'{name}: shape {np.shape(value)}'
    for i, j in np.ndindex(4, 5):
        single = {
            'inertia_matrix': robot.inertia_matrix(q[i, j]),
            'inverse_dynamics': robot.inverse_dynamics(q[i, j], qd[i, j], qdd[i, j]),
            'bias_forces': robot.bias_forces(q[i, j], qd[i, j]),
            'gravity_torques': robot.gravity_torques(q[i, j]),
            'forward_dynamics denoc': robot.forward_dynamics(q[i, j], qd[i, j], tau[i, j],
                                                             method='denoc'),
            'forward_dynamics cholesky': robot.forward_dynamics(q[i, j], qd[i, j],
                                                                tau[i, j],
                                                                method='cholesky'),
            'udu U': robot.udu(q[i, j])[0],
            'udu d': robot.udu(q[i, j])[1],
            'inverse_inertia_matrix': robot.inverse_inertia_matrix(q[i, j]),
        }
        for name, value in single.items():
            assert_close(np.asarray(batched[name])[i, j], value,
                         f'{name}, batch index {(i, j)}')


# --------------------------------------------------------------------------- trees

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
        robot = get_tree(name).robot
        assert robot.n < robot.n_bodies, name
        assert set(robot.mimic_joints) == (mimics or set(robot.mimic_joints)), name
        assert not set(robot.mimic_joints) & set(robot.joint_names)
        assert set(robot.joint_names) | set(robot.mimic_joints) == set(robot.body_joint_names)


@pytest.mark.parametrize('name', LOADED)
def test_coordinates_match_pinocchio(name):
    """robot.n is Pinocchio's nv with mimic=True; the coordinates come in its order."""
    pair = get_tree(name)
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


def ancestors(parent):
    """Return A with A[i, k] True when i is k or an ancestor of k (parent[i] < i)."""
    n = len(parent)
    A = np.eye(n, dtype=bool)
    for k in range(n):
        if parent[k] >= 0:
            A[:, k] |= A[:, parent[k]]
    return A


@pytest.mark.parametrize('name', LOADED)
def test_udu_has_the_tree_sparsity(name):
    """U_ik = 0 unless i is an ancestor of k, and M_ik = 0 unless one is the other's."""
    pair = get_tree(name)
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
        parent = get_tree(name).robot.chain.parent
        branched += len(set(parent.tolist())) < len(parent)
    assert branched >= 6


def test_continuous_joints_are_compared():
    """PR2 and TIAGo have continuous joints, (cos, sin) in Pinocchio: they are not skipped."""
    for name in ('pr2_description/urdf/pr2.urdf', 'tiago_description/robots/tiago.urdf'):
        pair = get_tree(name)
        assert pair.full.model.nq > pair.full.model.nv
        assert any(joint.nq == 2 for joint in pair.full.joints)
        assert re.search('continuous', pair.robot.summary())
        q, qd, qdd, _ = pair.states[0]
        zero = np.zeros(len(pair.b))
        ID = pair.full.dynamics(pair.G @ q + pair.b, pair.G @ qd, pair.G @ qdd, zero)[1]
        assert_close(pair.robot.inverse_dynamics(q, qd, qdd), pair.G.T @ ID, name, ORACLE)


def test_urdf_text_mimics_are_ours():
    """G from the URDF text (used above) is the robot's own mimic map, for the bundled arm."""
    pair = get_tree(BUNDLED)
    ours = pair.robot.mimic_joints
    root = ET.parse(pair.path).getroot()
    tags = {j.get('name') for j in root.findall('joint') if j.find('mimic') is not None}
    assert set(ours) == tags and tags
    q = pair.states[0][0]
    np.testing.assert_allclose(pair.robot.body_positions(q), pair.G @ q + pair.b,
                               rtol=0, atol=1e-15)


# --------------------------------------------------------------------------- regressor

def pinocchio_regressor(pair, q, qd, qdd):
    """Return Pinocchio's regressor of the independent-joint model, in our order, G^T Y."""
    full, G, b = pair.full, pair.G, pair.b
    m, d = full.model, full.data
    Y = pin.computeJointTorqueRegressor(m, d, full.configuration(G @ q + b),
                                        full.tangent(G @ qd), full.tangent(G @ qdd))
    ids = [m.getJointId(name) for name in pair.robot.body_joint_names]
    columns = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in ids])
    return G.T @ np.asarray(Y)[np.ix_(full.idx_v, columns)]


def pinocchio_parameters(pair):
    """Return pi of Pinocchio's model (its inertias, fixed links merged), in our body order."""
    m = pair.full.model
    return np.concatenate([np.asarray(m.inertias[m.getJointId(name)].toDynamicParameters())
                           for name in pair.robot.body_joint_names])


@pytest.mark.parametrize('name', LOADED)
def test_regressor_matches_pinocchio(name):
    """Y = Pinocchio's Y (projected on the coordinates) and Y pi = ID."""
    pair = get_tree(name)
    robot = pair.robot
    pi = pinocchio_parameters(pair)
    np.testing.assert_allclose(robot.parameters(), pi, rtol=1e-12, atol=1e-14)
    for k, (q, qd, qdd, _) in enumerate(pair.states):
        Y = robot.regressor(q, qd, qdd)
        assert Y.shape == (robot.n, 10 * robot.n_bodies)
        assert_close(Y, pinocchio_regressor(pair, q, qd, qdd), f'Y, state {k}')
        assert_close(Y @ pi, robot.inverse_dynamics(q, qd, qdd), f'Y pi, state {k}', 1e-11)
