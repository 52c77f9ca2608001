"""
The joint-torque regressor Y(q, qd, qdd): tau = Y pi.

* Against Pinocchio's ``computeJointTorqueRegressor`` on every fixed-base robot of
  example-robot-data: in test_pinocchio.py (test_regressor_matches_pinocchio).
* Y pi = ID at random states, prismatic and mimic joints included.
* A batch equals its single states to the bit.
"""

import warnings

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest


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
