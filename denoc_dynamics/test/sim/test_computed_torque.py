"""Computed torque against inverse dynamics, and the closed loop on the simulated arm."""

from denoc_dynamics import load_urdf
from denoc_dynamics.computed_torque import ComputedTorque
from denoc_dynamics.computed_torque import PDGravity
from denoc_dynamics.computed_torque import sampled_loop
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import random_chain_urdf
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
from denoc_dynamics.trajectory import check_trajectory
from denoc_dynamics.trajectory import demo_trajectory
from denoc_dynamics.trajectory import Trajectory
import numpy as np
import pytest

POSE = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])   # config/sim_arm.yaml
KP, KD = 225.0, 30.0                                     # config/sim_arm.yaml


@pytest.fixture(scope='module')
def arm():
    return load_urdf(bundled_urdf('denoc_arm7'))


def random_states(robot, rng, count=10):
    for _ in range(count):
        q = rng.uniform(-1.0, 1.0, robot.n)
        yield q, rng.normal(size=robot.n), rng.normal(size=robot.n)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_zero_error_gives_the_inverse_dynamics(seed):
    # M(q) qdd + b(q, qd) by the composite-body GIM against the recursive ID
    rng = np.random.default_rng(seed)
    robot = load_urdf(random_chain_urdf(rng, 6))   # no effort limits: nothing clamped
    law = ComputedTorque(robot, kp=rng.uniform(1, 500, robot.n), kd=rng.uniform(1, 50, robot.n),
                         friction_compensation=False)
    for q, qd, qdd in random_states(robot, rng):
        np.testing.assert_allclose(law(q, qd, q, qd, qdd), robot.inverse_dynamics(q, qd, qdd),
                                   rtol=1e-10, atol=1e-10)


def test_error_feedback_acts_through_the_inertia_matrix():
    rng = np.random.default_rng(3)
    robot = load_urdf(random_chain_urdf(rng, 5))
    kp, kd = rng.uniform(1, 500, robot.n), rng.uniform(1, 50, robot.n)
    law = ComputedTorque(robot, kp, kd, friction_compensation=False)
    for q, qd, qdd in random_states(robot, rng):
        e, e_dot = 0.1 * rng.normal(size=robot.n), rng.normal(size=robot.n)
        expected = robot.inverse_dynamics(q, qd, qdd + kd * e_dot + kp * e)
        np.testing.assert_allclose(law(q, qd, q + e, qd + e_dot, qdd), expected,
                                   rtol=1e-10, atol=1e-10)


def test_friction_compensation_cancels_the_simulated_friction(arm):
    sim = Simulation(arm, PhysicsParameters(), initial_positions=POSE)
    with_friction = ComputedTorque(arm, 400.0, 40.0, friction_velocity=sim.model.friction_velocity)
    without = ComputedTorque(arm, 400.0, 40.0, friction_compensation=False)
    rng = np.random.default_rng(4)
    for _ in range(10):
        q = POSE + 0.2 * rng.normal(size=arm.n)   # inside the limits: no stop torque
        qd = 0.3 * rng.normal(size=arm.n)
        # at zero error the feedforward at the desired velocity is the arm's friction
        difference = with_friction(q, qd, q, qd, 0 * q) - without(q, qd, q, qd, 0 * q)
        np.testing.assert_allclose(difference, -sim.model.passive_torques(q, qd), rtol=1e-12)
        assert np.abs(difference).max() > 0.05


def test_efforts_are_clamped_to_the_urdf_limits(arm):
    law = ComputedTorque(arm, 1e6, 1e3)
    tau = law(POSE, np.zeros(arm.n), POSE + 0.5, np.zeros(arm.n), np.zeros(arm.n))
    np.testing.assert_allclose(np.abs(tau), arm.chain.effort)
    assert np.all(np.isfinite(arm.chain.effort))


def test_bad_gains_are_refused(arm):
    with pytest.raises(ValueError, match='kp'):
        ComputedTorque(arm, [1.0] * 3, 1.0)
    with pytest.raises(ValueError, match='kd'):
        ComputedTorque(arm, 1.0, -1.0)
    with pytest.raises(ValueError, match='friction_velocity'):
        ComputedTorque(arm, 1.0, 1.0, friction_velocity=0.0)


def track(robot, law_class, rate, duration, delay=0):
    """RMS and max error of the default arm on the demo trajectory (sampled at rate)."""
    sim = Simulation(robot, PhysicsParameters(physics_rate=1000.0, command_timeout=0.0),
                     initial_positions=POSE, start_mode='running')
    chain = robot.chain
    checked = check_trajectory(robot.joint_names, chain.lower, chain.upper, robot.joint_names,
                               demo_trajectory(chain.lower, chain.upper, POSE))
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, (POSE, 0 * POSE, 0 * POSE))
    if law_class is ComputedTorque:
        law = ComputedTorque(robot, KP, KD, friction_velocity=sim.model.friction_velocity)
    else:
        law = PDGravity(robot, KP, KD, POSE)
    errors = sampled_loop(sim, law, trajectory, rate, duration, delay)
    return np.sqrt(np.mean(errors ** 2)), np.abs(errors).max()


def test_closed_loop_tracks_far_better_than_pd_plus_gravity(arm):
    # the first half of the demo (6 s), at 100 Hz as config/sim_arm.yaml publishes
    rms, peak = track(arm, ComputedTorque, 100.0, 6.0)
    rms_pd, peak_pd = track(arm, PDGravity, 100.0, 6.0)
    assert rms <= 1e-3, f'computed torque: RMS {rms * 1e3:.3f} mrad'
    assert rms_pd >= 10.0 * rms, f'RMS {rms * 1e3:.3f} mrad vs PD+g {rms_pd * 1e3:.3f} mrad'
    assert peak < peak_pd


def test_default_gains_stay_stable_with_late_commands(arm):
    # over DDS on a loaded machine a command can miss a physics chunk or three;
    # K_p = 400, K_d = 40 went unstable at 3 periods late (0.1 rad RMS, 0.6 rad peaks)
    rms, peak = track(arm, ComputedTorque, 100.0, 6.0, delay=3)
    assert rms < 0.01 and peak < 0.1, f'RMS {rms * 1e3:.2f} mrad, peak {peak * 1e3:.1f} mrad'


def test_sampled_loop_needs_a_whole_number_of_steps(arm):
    sim = Simulation(arm, PhysicsParameters(physics_rate=1000.0), initial_positions=POSE)
    with pytest.raises(ValueError, match='multiple'):
        sampled_loop(sim, PDGravity(arm, 1.0, 1.0, POSE), Trajectory.hold(0.0, POSE), 300.0,
                     1.0)


def test_a_wrong_friction_model_does_not_destabilize_the_hold(arm):
    # The sim regularizes joint7's friction over 0.21 rad/s (its integrator needs it),
    # the controller assumes 0.05: compensating the friction at the measured velocity
    # made a negative damping there that dwarfed K_d M and joint7 wandered by 0.25 rad.
    sim = Simulation(arm, PhysicsParameters(physics_rate=1000.0, command_timeout=0.0),
                     initial_positions=POSE, initial_velocities=[0.0] * 6 + [0.02],
                     start_mode='running')
    assert sim.model.friction_velocity[6] > 0.1
    law = ComputedTorque(arm, 400.0, 40.0, friction_velocity=0.05)
    errors = sampled_loop(sim, law, Trajectory.hold(0.0, POSE), 100.0, 3.0)
    assert np.abs(errors[-100:]).max() < 1e-4


def rest_error(robot, scale, feedback, duration=3.0, delay=0):
    """Largest joint error 1 s after the end of a 10-point quintic move, friction x scale."""
    from denoc_dynamics.trajectory import TrajectoryPoint
    sim = Simulation(robot, PhysicsParameters(physics_rate=1000.0, command_timeout=0.0),
                     initial_positions=POSE, start_mode='running')
    target = POSE + np.array([0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3])
    points = []
    for k in range(1, 11):
        s = k / 10.0
        blend = 10.0 * s ** 3 - 15.0 * s ** 4 + 6.0 * s ** 5
        points.append(TrajectoryPoint(duration * s, POSE + blend * (target - POSE)))
    chain = robot.chain
    checked = check_trajectory(robot.joint_names, chain.lower, chain.upper, robot.joint_names,
                               points)
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, (POSE, 0 * POSE, 0 * POSE))
    law = ComputedTorque(robot, KP, KD, friction_velocity=sim.model.friction_velocity,
                         friction_feedback=feedback, friction_scale=scale)
    errors = sampled_loop(sim, law, trajectory, 100.0, duration + 1.0 + 0.01, delay)
    return np.abs(errors[-1]).max()


@pytest.mark.parametrize('scale', [0.5, 1.0, 1.5])
def test_the_arm_rests_on_its_goal_with_a_friction_model_off_by_half(arm, scale):
    # within 1 mrad 1 s after the last point, the friction model x0.5 or x1.5
    assert rest_error(arm, scale, 15.0) < 1e-3
    assert rest_error(arm, scale, 15.0, delay=1) < 1e-3


def test_without_friction_feedback_a_wrong_friction_model_leaves_the_arm_off(arm):
    # the same move with the compensation at the desired velocity only: tens of mrad
    assert rest_error(arm, 0.5, 0.0) > 0.01
    assert rest_error(arm, 1.5, 0.0) > 0.01


def test_friction_feedback_and_scale_are_checked(arm):
    with pytest.raises(ValueError, match='friction_scale'):
        ComputedTorque(arm, 1.0, 1.0, friction_scale=-1.0)
    with pytest.raises(ValueError, match='friction_feedback'):
        ComputedTorque(arm, 1.0, 1.0, friction_feedback=[1.0, 2.0])
