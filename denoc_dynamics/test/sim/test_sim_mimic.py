"""
The simulated gripper arm integrates the core's O(n) forward dynamics with mimic joints.

The simulation's physics (denoc_dynamics.physics) calls the core's one forward
dynamics for mimic joints (one pair of sweeps and the mimic joints' k x k system), its
velocity limits the same factors; ``fd_method='cholesky'`` is the reference, G^T M G
by Cholesky.  Over 2 s of driven motion, with the drives' velocity limits and the
stops engaged, the two runs agree to round-off, and the start-up line says which
one runs.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest

ROBOT = load_urdf(bundled_urdf('denoc_arm7_gripper'))


def _middle(robot):
    j = robot.joints
    return np.where(np.isfinite(j.lower), 0.5 * (j.lower + j.upper), 0.0)


def test_the_start_up_line_says_the_gripper_arm_runs_the_sweeps():
    assert ROBOT.n < ROBOT.n_bodies
    line = Simulation(ROBOT).model.describe()
    assert "Saha's O(n) forward dynamics" in line and 'mimic' in line
    reference = Simulation(ROBOT, PhysicsParameters(fd_method='cholesky')).model.describe()
    assert 'Cholesky' in reference and "Saha's" not in reference


@pytest.mark.parametrize('integrator', ['rk4', 'ab4'])
def test_the_gripper_arm_matches_the_cholesky_reference_over_2_s(integrator):
    q0 = _middle(ROBOT)
    sims = [Simulation(ROBOT, PhysicsParameters(integrator=integrator, fd_method=method,
                                                command_timeout=0.0),
                       initial_positions=q0, start_mode='running')
            for method in ('denoc', 'cholesky')]
    signs = (-1.0) ** np.arange(ROBOT.n)
    for sim in sims:
        sim.set_command(0.3 * signs * sim.model.effort_limit)
        assert sim.advance(1000) == 1000 and sim.failure is None
        sim.set_command(-signs * sim.model.effort_limit)       # full effort: limits engage
        assert sim.advance(1000) == 1000 and sim.failure is None
    assert np.abs(sims[0].q - q0).max() > 0.1
    np.testing.assert_allclose(sims[0].q, sims[1].q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sims[0].qd, sims[1].qd, rtol=0, atol=1e-8)
