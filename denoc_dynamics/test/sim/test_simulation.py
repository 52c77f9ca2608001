"""The ROS-free simulation: integrator order, passive physics, limits, modes, failures."""

import copy
import math
import threading

from denoc_dynamics import load_urdf, Robot
from denoc_dynamics.core.robot import FD_METHODS
from denoc_dynamics.drives import CommandOutOfRange
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.runner import RealTimeFactorMeter
from denoc_dynamics.runner import SimulationRunner
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest
from reference_physics import ReferencePhysics

ARM_POSE = np.array([0.1, 0.6, 0.2, -1.2, 0.3, 1.0, 0.1])


@pytest.fixture(scope='module')
def arm():
    return load_urdf(bundled_urdf('denoc_arm7'))


@pytest.fixture(scope='module')
def arm_no_gravity():
    return load_urdf(bundled_urdf('denoc_arm7'), gravity=(0.0, 0.0, 0.0))


@pytest.fixture(scope='module')
def pendulum():
    """planar3 swinging in a vertical plane: smooth, no damping, friction or contact."""
    return load_urdf(bundled_urdf('planar3'), gravity=(0.0, -9.81, 0.0))


def _energy(sim):
    """Return the mechanical energy T + V of the simulation's current state."""
    return float(sim.robot.kinetic_energy(sim.q, sim.qd) + sim.robot.potential_energy(sim.q))


def run(robot, rate, duration, integrator, q0, qd0=None, **params):
    sim = Simulation(robot, PhysicsParameters(physics_rate=rate, integrator=integrator,
                                              **params),
                     initial_positions=q0, initial_velocities=qd0, start_mode='running')
    steps = int(round(duration * rate))
    assert sim.advance(steps) == steps
    assert sim.failure is None
    return sim


@pytest.mark.parametrize('integrator, order', [
    ('rk4', 4), ('ab4', 4), ('semi_implicit_euler', 1)])
def test_convergence_order(pendulum, integrator, order):
    q0, qd0, duration = [-1.0, 0.5, 0.3], [0.0, 1.0, -1.0], 0.3
    reference = run(pendulum, 3200, duration, 'rk4', q0, qd0)
    x_ref = np.concatenate([reference.q, reference.qd])
    rates = (200, 400, 800) if order == 4 else (400, 800, 1600)
    errors = []
    for rate in rates:
        sim = run(pendulum, rate, duration, integrator, q0, qd0)
        errors.append(np.abs(np.concatenate([sim.q, sim.qd]) - x_ref).max())
    observed = [math.log2(errors[k] / errors[k + 1]) for k in range(len(errors) - 1)]
    assert all(order - 0.6 < p < order + 0.6 for p in observed), (errors, observed)


@pytest.mark.parametrize('integrator', ['rk4', 'semi_implicit_euler'])
def test_a_step_is_the_integrator_written_out(arm, integrator):
    """Stage by stage on x = [q, qd], with the checked Robot.forward_dynamics."""
    qd0 = np.array([0.3, -0.2, 0.4, 0.1, -0.5, 0.2, 0.6])
    sim = Simulation(arm, PhysicsParameters(integrator=integrator), initial_positions=ARM_POSE,
                     initial_velocities=qd0, start_mode='running')
    tau = 0.5 * arm.gravity_torques(ARM_POSE)
    sim.set_command(tau)
    n, h = arm.n, sim.h

    def f(x):
        q, qd = x[:n], x[n:]
        total = tau + sim.model.passive_torques(q, qd)
        return np.concatenate((qd, arm.forward_dynamics(q, qd, total)))
    x = np.concatenate((ARM_POSE, qd0))
    for _ in range(3):
        if integrator == 'rk4':
            k1 = f(x)
            k2 = f(x + 0.5 * h * k1)
            k3 = f(x + 0.5 * h * k2)
            k4 = f(x + h * k3)
            x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        else:
            qd = x[n:] + h * f(x)[n:]
            x = np.concatenate((x[:n] + h * qd, qd))
        assert sim.step()
        np.testing.assert_allclose(np.concatenate((sim.q, sim.qd)), x, rtol=0, atol=1e-13)
    assert np.array_equal(sim.applied_effort, tau)      # no velocity cut on the way


def test_rk4_conserves_energy_without_dissipation(pendulum):
    sim = run(pendulum, 1000, 0.0, 'rk4', [-1.0, 0.5, 0.3], [0.0, 1.0, -1.0])
    e0 = _energy(sim)
    sim.advance(500)
    assert abs(_energy(sim) - e0) < 1e-6 * max(1.0, abs(e0))


@pytest.mark.parametrize('integrator', ['rk4', 'semi_implicit_euler'])
def test_damping_and_friction_dissipate_energy(arm_no_gravity, integrator):
    # No gravity and no command: T + V = T only falls through damping and friction.
    sim = Simulation(arm_no_gravity, PhysicsParameters(integrator=integrator),
                     initial_positions=ARM_POSE, initial_velocities=[0.5] * 7,
                     start_mode='running')
    energies = [_energy(sim)]
    for _ in range(50):
        sim.advance(10)
        energies.append(_energy(sim))
    assert sim.failure is None
    assert np.all(np.diff(energies) < 0.0)
    assert energies[-1] < 0.5 * energies[0]

    # Without damping and friction the same motion keeps its energy (RK4).
    sim.model.damping[:] = 0.0
    sim.model.friction[:] = 0.0
    if integrator == 'rk4':
        sim.reset()
        sim.set_command(np.zeros(7))
        e0 = _energy(sim)
        sim.advance(300)
        assert abs(_energy(sim) - e0) < 1e-6 * e0


def test_limit_stop_holds_without_exploding(arm):
    sim = Simulation(arm, initial_positions=ARM_POSE, start_mode='running',
                     params=PhysicsParameters(command_timeout=0.0))
    # Push joint2 and joint7 into their upper limits with their full effort.
    sim.set_command([0.0, 1e3, 0.0, 0.0, 0.0, 0.0, 1e3])
    upper = arm.chain.upper
    peaks = np.full(7, -np.inf)
    for _ in range(200):  # 2 s
        sim.advance(10)
        peaks = np.maximum(peaks, sim.q)
    assert sim.failure is None
    assert np.all(np.isfinite(sim.q))
    assert np.all(np.abs(sim.qd[[1, 6]]) < 1e-2), 'joints 2 and 7 should rest in the stop'
    assert np.all(np.abs(sim.qd) < 10.0)
    penetration = sim.q - upper
    assert 0.0 < penetration[1] < 0.02  # heavy joint: stiff stop
    assert 0.0 < penetration[6] < 0.4   # joint7: tiny inertia, 12 Nm effort
    assert peaks[1] - upper[1] < 0.05
    assert peaks[6] - upper[6] < 0.6
    # and it comes back out when the push stops
    sim.set_command(np.zeros(7))
    sim.advance(500)
    assert sim.q[6] <= upper[6] + 1e-9


def test_effort_clamp(arm):
    sim = Simulation(arm, initial_positions=ARM_POSE, start_mode='running')
    sim.set_command([1e3, -1e3, 50.0, -50.0, 100.0, -5.0, 0.0])
    assert np.array_equal(sim.drives.command(sim.steps),
                          [87.0, -87.0, 50.0, -50.0, 12.0, -5.0, 0.0])
    sim.step()
    assert np.array_equal(sim.applied_effort, sim.drives.command(sim.steps))
    for bad in ([1.0] * 6, [np.nan] + [0.0] * 6, [np.inf] * 7):
        with pytest.raises(ValueError):
            sim.set_command(bad)


def test_drives_keep_joints_within_their_velocity_limits(arm_no_gravity):
    # Full effort on joints 1 and 7 (87 and 12 N m), the others idle: unlimited, the
    # light wrist would pass its 2.61 rad/s within a step (12 N m on about 5e-4 kg m^2).
    robot = arm_no_gravity
    sim = Simulation(robot, PhysicsParameters(command_timeout=0.0),
                     initial_positions=[-2.5, 0.0, 0.0, -1.0, 0.0, 1.0, -2.5],
                     start_mode='running')
    v_max = robot.chain.velocity
    command = np.array([87.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0])
    sim.set_command(command)
    peak = np.zeros(7)
    for _ in range(400):  # 0.4 s: joint 7 covers about 1 rad of its 5.5, joint 1 less
        sim.step()
        peak = np.maximum(peak, np.abs(sim.qd))
        assert np.all(sim.applied_effort * command >= 0.0), 'the drive never brakes'
        assert np.all(np.abs(sim.applied_effort) <= np.abs(command))
    assert sim.failure is None
    # within 0.1 %: the cut is decided on the step's Euler prediction, RK4 ends O(h^2) off
    assert peak[0] <= v_max[0] * 1.001 and peak[6] <= v_max[6] * 1.001, peak
    # at the limit, each joint cruises at it (the drive makes up for damping and friction)
    assert sim.qd[0] == pytest.approx(v_max[0], rel=1e-3)
    assert sim.qd[6] == pytest.approx(v_max[6], rel=1e-3)
    assert 0.0 < sim.applied_effort[6] < 0.5 * command[6]

    # an effort against the motion passes in full (as long as it does not reverse the
    # joint past the limit within the step)
    brake = np.array([-20.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.5])
    sim.set_command(brake)
    sim.step()
    assert np.array_equal(sim.applied_effort, brake)


def test_a_drive_pushing_against_a_stop_gives_its_full_effort(arm):
    # joint 7 pressed into its upper stop: it does not move, so nothing is cut
    sim = Simulation(arm, PhysicsParameters(command_timeout=0.0), initial_positions=ARM_POSE,
                     start_mode='running')
    command = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0])
    sim.set_command(command + arm.gravity_torques(ARM_POSE) * [1, 1, 1, 1, 1, 1, 0])
    sim.advance(3000)
    assert sim.failure is None
    assert sim.q[6] > arm.chain.upper[6] and abs(sim.qd[6]) < 1e-3
    assert sim.applied_effort[6] == 12.0


def _unlimited(robot):
    """Return ``robot`` without effort and velocity limits."""
    chain = copy.deepcopy(robot.chain)
    chain.effort[:] = np.inf
    chain.velocity[:] = np.inf
    return Robot(chain, gravity=robot.gravity)


def test_an_absurd_effort_command_is_refused(arm):
    sim = Simulation(_unlimited(arm), initial_positions=ARM_POSE, start_mode='running')
    sim.advance(10)
    for tau in (1e308, 1e12):
        with pytest.raises(CommandOutOfRange, match='joint1'):
            sim.set_command(np.full(7, tau))
    # the previous (zero) command still holds and the simulation runs on, finite
    assert np.array_equal(sim.drives.command(sim.steps), np.zeros(7))
    assert sim.advance(100) == 100 and sim.failure is None
    assert np.all(np.isfinite(sim.qd))
    # below the bound, the command is taken as it is, unclamped
    tau = 0.5 * sim.model.effort_bound
    sim.set_command(tau)
    assert np.array_equal(sim.drives.command(sim.steps), tau)


def test_hold_pause_reset_and_command_timeout(arm):
    sim = Simulation(arm, initial_positions=ARM_POSE,
                     params=PhysicsParameters(command_timeout=0.05))
    assert sim.mode == 'hold'
    sim.advance(100)  # time runs, the state is frozen
    assert sim.t == pytest.approx(0.1)
    assert np.array_equal(sim.q, ARM_POSE) and np.array_equal(sim.qd, np.zeros(7))

    g = arm.gravity_torques(ARM_POSE)
    sim.set_command(g)  # leaves hold mode
    assert sim.mode == 'running'
    sim.advance(40)
    assert np.abs(sim.q - ARM_POSE).max() < 1e-6
    assert np.array_equal(sim.applied_effort, g)
    sim.advance(60)  # 0.1 s after the command: timed out, zero torque, falling
    assert np.array_equal(sim.applied_effort, np.zeros(7))
    assert np.abs(sim.q - ARM_POSE).max() > 1e-3

    sim.set_paused(True)
    t, q = sim.t, sim.q
    assert sim.advance(100) == 0
    assert sim.t == t and np.array_equal(sim.q, q)
    sim.set_paused(False)
    assert sim.advance(10) == 10

    assert sim.reset() == 'reset to the initial state (hold mode)'
    assert sim.mode == 'hold' and sim.t == 0.0 and np.array_equal(sim.q, ARM_POSE)

    paused = Simulation(arm, initial_positions=ARM_POSE, start_mode='paused')
    assert paused.advance(10) == 0
    paused.set_paused(False)
    paused.advance(100)
    assert np.abs(paused.q - ARM_POSE).max() > 1e-4  # 'paused' resumes running


def test_initial_positions_are_checked(arm):
    with pytest.raises(ValueError, match='limits'):
        Simulation(arm, initial_positions=[0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        Simulation(arm, initial_positions=[0.0, 0.0])
    with pytest.raises(ValueError):
        Simulation(arm, PhysicsParameters(integrator='euler'))
    with pytest.raises(ValueError):
        Simulation(arm, start_mode='fast')


def test_fd_method_is_checked_at_construction(arm):
    # before: accepted, then every step failed on "the dynamics failed on a non-finite
    # or invalid state"
    with pytest.raises(ValueError, match="fd_method must be one of .'denoc', 'cholesky'"):
        PhysicsParameters(fd_method='foo').check()
    with pytest.raises(ValueError, match='fd_method'):
        Simulation(arm, PhysicsParameters(fd_method='foo'))
    for method in FD_METHODS:
        sim = Simulation(arm, PhysicsParameters(fd_method=method), start_mode='running')
        sim.advance(5)
        assert sim.failure is None, method


class _NanAfter:
    """A robot stand-in whose forward dynamics turns NaN after some calls."""

    def __init__(self, robot, calls):
        self._robot = robot
        self._calls = calls

    def __getattr__(self, name):
        return getattr(self._robot, name)

    def forward_dynamics(self, q, qd, tau, method='denoc'):
        self._calls -= 1
        qdd = self._robot.forward_dynamics(q, qd, tau, method)
        return qdd * np.nan if self._calls < 0 else qdd


@pytest.mark.parametrize('integrator', ['rk4', 'ab4', 'semi_implicit_euler'])
def test_non_finite_state_stops_the_simulation(pendulum, integrator):
    q0 = [-1.0, 0.5, 0.3]
    sim = Simulation(_NanAfter(pendulum, 40), PhysicsParameters(integrator=integrator),
                     initial_positions=q0, start_mode='running', physics=ReferencePhysics)
    sim.advance(100)
    assert sim.failure is not None and 'non-finite' in sim.failure
    assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
    t, q = sim.t, sim.q
    assert sim.advance(10) == 0 and sim.t == t and np.array_equal(sim.q, q)
    message = sim.reset()
    assert 'failed' in message and 'non-finite' in message
    assert sim.failure is None and np.array_equal(sim.q, q0)


def test_ab4_instability_is_warned_about_and_caught(arm):
    # ten times the URDF damping on joint7's tiny inertia is beyond AB4's stability at 1 kHz
    chain = copy.deepcopy(arm.chain)
    chain.damping[6] *= 10.0
    stiff = Robot(chain, gravity=arm.gravity)
    sim = Simulation(stiff, PhysicsParameters(integrator='ab4'), initial_positions=ARM_POSE,
                     start_mode='running')
    assert any('joint7' in w for w in sim.model.stability_warnings())
    with np.errstate(all='ignore'):
        sim.advance(1000)
    assert sim.failure is not None and 'diverged' in sim.failure
    assert np.all(np.abs(sim.qd) <= sim.params.divergence_velocity)


@pytest.mark.parametrize('integrator', ['rk4', 'ab4', 'semi_implicit_euler'])
def test_every_integrator_is_stable_on_the_default_arm(arm, integrator):
    sim = Simulation(arm, PhysicsParameters(integrator=integrator), initial_positions=ARM_POSE,
                     start_mode='running')
    assert sim.model.stability_warnings() == []
    sim.advance(2000)
    assert sim.failure is None
    assert np.abs(sim.q - ARM_POSE).max() > 0.1, 'the arm should fall under gravity'


class _ManualClock(threading.Event):
    """A wall clock that moves only when the runner waits on it (no timing in the test)."""

    def __init__(self):
        super().__init__()
        self.now = 0.0

    def __call__(self):
        return self.now

    def wait(self, timeout=None):
        self.now += timeout
        return self.is_set()


def test_runner_paces_publishes_and_measures(arm):
    sim = Simulation(arm, initial_positions=ARM_POSE, start_mode='running')
    published = []
    clock = _ManualClock()
    runner = SimulationRunner(sim, publish_rate=100.0, real_time_factor=4.0,
                              on_publish=published.append, clock=clock)
    runner.run(clock, duration=0.4)
    assert sim.t == pytest.approx(0.4)
    assert len(published) == 40
    assert [s.t for s in published] == pytest.approx([0.01 * (k + 1) for k in range(40)])
    # 0.4 s of simulated time at a real-time factor of 4: the chunks are due at
    # 0.0025, 0.005, ... 0.1 s of wall time, and the run ends with the last one
    assert clock.now == pytest.approx(0.1)
    assert runner.meter.overall == pytest.approx(4.0)


def test_unpaced_runner_steps_one_chunk_per_tick(arm):
    """
    At real_time_factor 0 each tick steps one publish period and returns at once.

    The callbacks between two ticks (a controller's commands) then act every period
    of simulated time; a tick that ran on for several chunks made a computed-torque
    loop through the sim node's executor 3 to 4 periods late, and the arm swung
    against its velocity limits (the headless benchmark of denoc_sim_arm).
    The clock here stands still, so a tick bounded by wall time would run on.
    """
    sim = Simulation(arm, initial_positions=ARM_POSE, start_mode='running')
    published = []
    runner = SimulationRunner(sim, publish_rate=100.0, real_time_factor=0.0,
                              on_publish=published.append, clock=lambda: 0.0)
    for k in range(1, 4):
        assert runner.tick(duration=1.0) == 0.0
        assert sim.steps == 10 * k and len(published) == k
    runner.run(threading.Event(), duration=0.05)
    assert sim.t == pytest.approx(0.05) and len(published) == 5


def test_real_time_factor_meter():
    meter = RealTimeFactorMeter(window=1.0)
    assert math.isnan(meter.rtf)
    for k in range(30):
        meter.update(sim_time=0.2 * k, wall_time=0.1 * k)
    assert meter.rtf == pytest.approx(2.0)
    assert meter.overall == pytest.approx(2.0)


def test_a_pose_of_the_arm_serves_the_arm_with_its_gripper():
    """sim_node and denoc_sim_arm start the gripper arm from the arm's configured pose."""
    from denoc_dynamics.sim_settings import leading_pose
    gripper = load_urdf(bundled_urdf('denoc_arm7_gripper'))
    pose = leading_pose(gripper, ARM_POSE)
    assert pose.shape == (gripper.n,) and np.array_equal(pose[:7], ARM_POSE)
    assert pose[7] == 0.0                          # the finger closed, within its limits
    sim = Simulation(gripper, initial_positions=pose, start_mode='running')
    assert sim.advance(20) == 20 and sim.failure is None
    assert np.array_equal(leading_pose(gripper, [0.0] * 9), [0.0] * 9)   # refused later
