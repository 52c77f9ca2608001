"""
Hard stops: no joint gets more than STOP_BOUND (0.01 rad, m) past a position limit.

Each joint of both bundled arms is driven by its own drive at full effort into each of
its stops, from 1 rad (the finger: its whole stroke) before it, so that it arrives at
its velocity limit, while the other drives hold their positions; then every drive at
full effort at once (all one way, and alternating); then limp joints (drives off)
falling into their stops under gravity, faster than their velocity limits, with one
drive at full effort or none.  The peak beyond the limit over the impact and the push
that follows stays within the bound (docs/bad-input.md, "Hard stops"); before the
stops were stiffened the same runs reached 0.27 rad (denoc_arm7's joint7).  The limp
falls hold it through the inelastic impact of a joint faster than v_max
(denoc_dynamics.stop_impact); with the spring-damper alone they reached 0.026 rad
(joint2 arriving at 4.4 v_max).
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.passive import STOP_BOUND
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.servo import EFFORT, POSITION
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest

ARMS = {name: load_urdf(bundled_urdf(name)) for name in ('denoc_arm7', 'denoc_arm7_gripper')}


def beyond(robot, q):
    """Return how far each coordinate of ``q`` is past its limits (0 within them)."""
    return np.maximum(np.maximum(q - robot.joints.upper, robot.joints.lower - q), 0.0)


def start_pose(robot, joint, sign):
    """Return the middle of the limits, with ``joint`` 1 rad (at most its range) off its stop."""
    lower, upper = robot.joints.lower, robot.joints.upper
    q = np.where(np.isfinite(lower), 0.5 * (lower + upper), 0.0)
    limit = upper[joint] if sign > 0 else lower[joint]
    q[joint] = limit - sign * min(1.0, upper[joint] - lower[joint])
    return q


@pytest.mark.parametrize('name', sorted(ARMS))
def test_each_drive_at_full_effort_stays_within_the_bound(name, integrator='rk4'):
    robot = ARMS[name]
    n, effort, v_max = robot.n, robot.joints.effort, robot.joints.velocity
    worst = {}
    for joint in range(n):
        for sign in (-1.0, 1.0):
            q0 = start_pose(robot, joint, sign)
            sim = Simulation(robot, PhysicsParameters(integrator=integrator), q0,
                             start_mode='running')
            modes = np.full(n, POSITION)
            modes[joint] = EFFORT
            tau = np.zeros(n)
            tau[joint] = sign * effort[joint]
            sim.set_joint_command(np.arange(n), modes, tau, q0, np.zeros(n))
            peak = arrival = 0.0
            for _ in range(1500):                  # 1.5 s: the impact, then the push
                sim.advance(1)
                peak = max(peak, beyond(robot, sim.q)[joint])
                if peak == 0.0:
                    arrival = abs(sim.qd[joint])
            assert sim.failure is None
            assert arrival > 0.9 * v_max[joint], (robot.joint_names[joint], arrival)
            assert peak > 0.0, 'the joint reached its stop'
            assert abs(sim.qd[joint]) < 1e-3, 'and rests in it'
            worst[robot.joint_names[joint], sign] = peak
    assert max(worst.values()) <= STOP_BOUND, {k: v for k, v in worst.items()
                                               if v > STOP_BOUND}


@pytest.mark.parametrize('integrator', ['rk4', 'ab4', 'semi_implicit_euler'])
@pytest.mark.parametrize('name', sorted(ARMS))
def test_every_drive_at_full_effort_stays_within_the_bound(name, integrator):
    # the other integrators have smaller stability budgets at the same step: their
    # stops are as stiff as that allows, and hold (measured: docs/bad-input.md)
    bound = {'rk4': STOP_BOUND, 'semi_implicit_euler': 0.05, 'ab4': 0.6}[integrator]
    robot = ARMS[name]
    lower, upper = robot.joints.lower, robot.joints.upper
    q0 = np.where(np.isfinite(lower), 0.5 * (lower + upper), 0.0)
    for signs in (np.ones(robot.n), -np.ones(robot.n), (-1.0) ** np.arange(robot.n)):
        sim = Simulation(robot, PhysicsParameters(integrator=integrator, command_timeout=0.0),
                         q0, start_mode='running')
        sim.set_command(signs * 1e12)              # clamped to the URDF efforts
        peak = np.zeros(robot.n)
        for _ in range(2000):                      # 2 s: every joint into a stop
            sim.advance(1)
            peak = np.maximum(peak, beyond(robot, sim.q))
        assert sim.failure is None
        assert np.count_nonzero(peak) >= robot.n - 1     # (the finger may start there)
        assert peak.max() <= bound, dict(zip(robot.joint_names, peak))


@pytest.mark.parametrize('name', sorted(ARMS))
def test_limp_joints_falling_into_their_stops_stay_within_the_bound(name):
    robot = ARMS[name]
    n, v_max = robot.n, robot.joints.velocity
    lower, upper = robot.joints.lower, robot.joints.upper
    q0 = np.where(np.isfinite(lower), 0.5 * (lower + upper), 0.0)
    worst, fastest = {}, 0.0
    for driven, sign in [(None, 0.0)] + [(j, s) for j in range(n) for s in (-1.0, 1.0)]:
        sim = Simulation(robot, PhysicsParameters(command_timeout=0.0), q0,
                         start_mode='running')
        tau = np.zeros(n)                          # 0: the drive is off, the joint limp
        if driven is not None:
            tau[driven] = sign * robot.joints.effort[driven]
        sim.set_command(tau)
        peak = np.zeros(n)
        for _ in range(2500):                      # 2.5 s: the fall, the impacts, at rest
            before = beyond(robot, sim.q) == 0.0
            speed = np.abs(sim.qd)
            sim.advance(1)
            past = beyond(robot, sim.q)
            arriving = before & (past > 0.0)
            fastest = max(fastest, (speed / v_max)[arriving].max(initial=0.0))
            peak = np.maximum(peak, past)
        assert sim.failure is None
        worst[driven, sign] = peak.max(), robot.joint_names[int(peak.argmax())]
    assert fastest > 1.5, 'limp joints arrive faster than their drives would take them'
    assert max(v[0] for v in worst.values()) <= STOP_BOUND, {
        k: v for k, v in worst.items() if v[0] > STOP_BOUND}


def test_a_drive_at_full_effort_presses_its_joint_at_most_the_set_deflection():
    # k >= effort / STOP_DEFLECTION wherever the integrator's budget allows (RK4 at
    # 1 kHz: all but the lightest joints), and the rest of the bound is for the impact
    from denoc_dynamics.passive import STOP_DEFLECTION
    for robot in ARMS.values():
        sim = Simulation(robot)
        static = robot.joints.effort / sim.model.stop_stiffness
        at_budget = np.isclose(sim.model.stop_omega, sim.model.stop_omega.max())
        assert np.all((static <= STOP_DEFLECTION * (1.0 + 1e-9)) | at_budget), static
        assert np.all(static < 0.6 * STOP_BOUND), static
        assert np.count_nonzero(static <= STOP_DEFLECTION * (1.0 + 1e-9)) >= 4


@pytest.mark.parametrize('name', sorted(ARMS))
def test_an_impact_faster_than_v_max_is_an_impulse_on_the_hitting_joint(name):
    # M dqd = e_i p (the other joints move as a rigid arm does), and the joint leaves
    # the impact at max(v_max, gap / h): it reaches the limit at the step's end
    from denoc_dynamics.physics import Physics, stop_impacts
    from denoc_dynamics.sim_model import SimModel
    robot = ARMS[name]
    params = PhysicsParameters()
    h = 1.0 / params.physics_rate
    upper, v_max = robot.joints.upper, robot.joints.velocity
    rng = np.random.default_rng(1)
    for joint, gap, speed in [(1, 0.001, 4.0), (1, 0.004, 6.0), (3, -0.002, 3.0),
                              (5, 0.0, 2.0)]:
        q = start_pose(robot, joint, 1.0)
        q[joint] = upper[joint] - gap
        qd = rng.uniform(-0.5, 0.5, robot.n)
        qd[joint] = speed * v_max[joint]
        physics = Physics(robot)
        SimModel(robot, params, physics, q)
        after = qd.copy()
        assert stop_impacts(physics.buffers, q, after, h)
        assert after[joint] == pytest.approx(max(v_max[joint], gap / h), rel=1e-12)
        p = robot.inertia_matrix(q) @ (after - qd)
        assert p[joint] < 0.0
        np.testing.assert_allclose(np.delete(p, joint), 0.0, atol=1e-9 * abs(p[joint]))
    # within IMPACT_SPEED v_max, or not reaching the limit within the step: untouched
    q = start_pose(robot, 1, 1.0)
    for gap, speed in [(0.001, 1.04 * v_max[1]), (0.011, 10.0)]:
        q[1] = upper[1] - gap
        qd = np.zeros(robot.n)
        qd[1] = speed
        physics = Physics(robot)
        SimModel(robot, params, physics, q)
        assert not stop_impacts(physics.buffers, q, qd, h)
        assert qd[1] == speed
