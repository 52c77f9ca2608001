"""
Energy conservation: torque-free RK4 runs with gravity on the 7-DOF arm.

With no damping and no torque, T + V must stay constant.  Two checks:

* 1 s at 1 kHz of the arm swinging about its hanging pose (gravity along +z, so the
  upright zero pose of ``denoc_arm7`` hangs): the relative drift stays <= 1e-8;
* the arm falling freely from a random pose whips its light wrist to tens of rad/s,
  and RK4 at 1 kHz then drifts by about 1e-6.  That drift must be the integrator's
  alone: halving the step must divide it by about 2^4 = 16.  A wrong velocity term
  in the dynamics would leave a drift that does not vanish with the step.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest


def rk4_energy_drift(robot, q, qd, method, steps=1000, h=1e-3):
    zero = np.zeros(robot.n)

    def f(x):
        return np.concatenate((x[robot.n:], robot.forward_dynamics(
            x[:robot.n], x[robot.n:], zero, method=method)))

    def energy(x):
        return robot.kinetic_energy(x[:robot.n], x[robot.n:]) + robot.potential_energy(x[:robot.n])

    x = np.concatenate((q, qd))
    E0 = energy(x)
    scale = robot.kinetic_energy(q, qd) + abs(robot.potential_energy(q)) + 1.0
    worst = 0.0
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        worst = max(worst, abs(energy(x) - E0) / scale)
    return worst, x


@pytest.mark.parametrize('method, seed',
                         [('denoc', 0), ('cholesky', 1)])
def test_torque_free_rk4_conserves_energy(method, seed):
    robot = load_urdf(bundled_urdf('denoc_arm7'), gravity=(0.0, 0.0, 9.81))
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-0.5, 0.5, robot.n)
    qd0 = rng.uniform(-0.5, 0.5, robot.n)
    drift, x = rk4_energy_drift(robot, q0, qd0, method)
    assert np.abs(x[:robot.n] - q0).max() > 0.5, 'the arm should have swung under gravity'
    assert drift <= 1e-8, f'relative energy drift {drift:.3e}'


def test_energy_drift_is_fourth_order_integration_error():
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    rng = np.random.default_rng(0)
    q0 = rng.uniform(-1.0, 1.0, robot.n)
    qd0 = rng.uniform(-0.5, 0.5, robot.n)
    coarse, x = rk4_energy_drift(robot, q0, qd0, 'denoc', steps=500, h=2e-3)
    fine, _ = rk4_energy_drift(robot, q0, qd0, 'denoc', steps=1000, h=1e-3)
    assert np.abs(x[robot.n:]).max() > 10.0, 'the wrist should whip'
    assert 10.0 < coarse / fine < 24.0, (coarse, fine)


def _tree_with_mimic_joints():
    """Return a random tree of 8 bodies, 2 of them mimic joints (a seed that has them)."""
    from denoc_dynamics.sample_urdfs import random_tree_urdf
    robot = load_urdf(random_tree_urdf(np.random.default_rng(0), 8, fixed=0.2, mimic=0.3))
    assert robot.mimic_joints and len(set(robot.chain.parent.tolist())) < robot.n_bodies
    return robot


@pytest.mark.parametrize('name', ['denoc_arm7_gripper', 'random tree'])
@pytest.mark.parametrize('method', ['denoc', 'cholesky'])
def test_torque_free_tree_with_mimic_joints_conserves_energy(name, method):
    """A branched robot whose mimic joints follow their leaders keeps T + V, to 4th order."""
    if name == 'random tree':
        robot = _tree_with_mimic_joints()
    else:
        robot = load_urdf(bundled_urdf(name), gravity=(0.0, 0.0, 9.81))
        assert robot.mimic_joints
    rng = np.random.default_rng(5)
    q0 = rng.uniform(-0.5, 0.5, robot.n)
    qd0 = rng.uniform(-0.5, 0.5, robot.n)
    coarse, _ = rk4_energy_drift(robot, q0, qd0, method, steps=250, h=2e-3)
    fine, x = rk4_energy_drift(robot, q0, qd0, method, steps=500, h=1e-3)
    assert np.abs(x[:robot.n] - q0).max() > 0.2, 'the tree should have moved'
    assert fine <= 1e-8, f'relative energy drift {fine:.3e}'
    assert 10.0 < coarse / fine < 24.0, (coarse, fine)
