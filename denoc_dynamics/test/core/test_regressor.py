"""
The joint-torque regressor Y(q, qd, qdd): tau = Y pi.

* On every fixed-base robot of example-robot-data, loaded whole, Y equals Pinocchio's
  ``computeJointTorqueRegressor`` of the model with independent joints, projected on
  the coordinates (G^T Y(G q + b, G qd, G qdd)) and its column blocks put in our body
  order: the same parameters, about the same URDF link frames.
* Robot.parameters() equals Pinocchio's inertias' dynamic parameters, and Y pi = ID at
  random states.
* A batch equals its single states to the bit.
"""

import warnings

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from helpers import assert_close, pin
import numpy as np
import pytest
from test_pinocchio import get_tree, LOADED


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


@pytest.mark.usefixtures('oracles')
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


@pytest.mark.parametrize('name', ['denoc_arm7', 'denoc_arm7_gripper'])
def test_regressor_times_parameters_is_inverse_dynamics(name):
    """Y pi = ID at random states, prismatic and mimic joints included."""
    robot = load_urdf(bundled_urdf(name))
    rng = np.random.default_rng(7)
    pi = robot.parameters()
    for _ in range(20):
        q, qd, qdd = rng.normal(size=(3, robot.n)) * [[1.0], [2.0], [5.0]]
        tau = robot.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(robot.regressor(q, qd, qdd) @ pi, tau,
                                   rtol=1e-12, atol=1e-12 * np.abs(tau).max())


def test_regressor_batch_equals_single_states():
    """A batch (..., n) gives each state's Y to the bit; shapes broadcast as ID's do."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot = load_urdf(bundled_urdf('denoc_arm7_gripper'))
    rng = np.random.default_rng(3)
    Q, QD, QDD = rng.normal(size=(3, 4, 9, robot.n))
    Y = robot.regressor(Q, QD, QDD)
    assert Y.shape == (4, 9, robot.n, 10 * robot.n_bodies)
    for s in np.ndindex(4, 9):
        assert np.array_equal(Y[s], robot.regressor(Q[s], QD[s], QDD[s])), s
    assert np.array_equal(robot.regressor(Q, QD[0, 0], QDD)[1, 2],
                          robot.regressor(Q[1, 2], QD[0, 0], QDD[1, 2]))


def test_regressor_bad_input():
    """Non-finite or misshapen states raise ValueError naming the argument."""
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    z = np.zeros(robot.n)
    with pytest.raises(ValueError, match='qd contains NaN'):
        robot.regressor(z, np.full(robot.n, np.nan), z)
    with pytest.raises(ValueError, match='qdd must have shape'):
        robot.regressor(z, z, np.zeros(robot.n + 1))
