"""
Pushing the simulated arm: link wrenches, the virtual wall, F/T sensors and the observer.

References: Pinocchio's frame Jacobians, frame placements and gravity torques; statics
written out from the URDF's numbers; the wall's spring-damper law.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.computed_torque import ComputedTorque, sampled_loop
from denoc_dynamics.core.momentum_observer import MomentumObserver
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.servo import POSITION
from denoc_dynamics.sim_loads import SimulatedSensors
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
from denoc_dynamics.trajectory import check_trajectory, demo_trajectory, Trajectory
from helpers import pin, require_pinocchio
import numpy as np
import pytest

ARM = bundled_urdf('denoc_arm7.urdf')
Q0 = np.array([0.3, 0.5, -0.2, -1.2, 0.1, 0.8, 0.0])
GRAVITY = np.array([0.0, 0.0, -9.81])
FLANGE_MASS = 0.15                       # denoc_arm7.urdf, link flange
FLANGE_COM = np.array([0.0, 0.0, 0.01])


@pytest.fixture(scope='module')
def oracle():
    require_pinocchio()   # per test, never at import (helpers.py)
    model = pin.buildModelFromUrdf(ARM)
    return model, model.createData(), model.getFrameId('flange')


def _flange(oracle, q):
    """Return (R, P, J (6 x n, [v; w] at the flange origin, base axes)) from Pinocchio."""
    model, data, fid = oracle
    J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)
    placement = data.oMf[fid]
    return placement.rotation.copy(), placement.translation.copy(), J


def _held(sim):
    """Have every drive hold the current position (a position servo)."""
    n = sim.n
    sim.set_joint_command(np.arange(n), [POSITION] * n, np.zeros(n), sim.q, np.zeros(n))


@pytest.fixture
def sim():
    return Simulation(load_urdf(ARM), PhysicsParameters(), initial_positions=Q0)


def test_ft_at_rest_reads_statics(sim, oracle):
    """Hold mode, 10 N at the flange: R^T (f + m g) and the weight's moment about its origin."""
    sensors = SimulatedSensors(sim, ['flange_joint'])
    f = np.array([6.0, 0.0, -8.0])
    sim.loads.apply('flange', f, np.zeros(3), 'world')
    sim.advance(10)
    R, _, _ = _flange(oracle, sim.q)
    F = sensors.read(sim.q, sim.qd, sim.joint_torque, held=True)[0]
    np.testing.assert_allclose(F[3:], R.T @ (f + FLANGE_MASS * GRAVITY), atol=1e-12)
    np.testing.assert_allclose(F[:3], np.cross(FLANGE_COM, R.T @ (FLANGE_MASS * GRAVITY)),
                               atol=1e-12)


def test_held_arm_effort_change_is_minus_jt_f(sim, oracle):
    """A servo-held arm pushed by f at the flange settles with tau = g(q) - J^T f."""
    model, data, _ = oracle
    _held(sim)
    sim.advance(500)
    f = np.array([0.0, 10.0, -5.0])
    sim.loads.apply('flange', f, np.zeros(3), 'world')
    sim.advance(2000)
    q = sim.q
    _, _, J = _flange(oracle, q)
    expected = pin.computeGeneralizedGravity(model, data, q) - J[:3].T @ f
    assert np.abs(sim.qd).max() < 1e-6
    np.testing.assert_allclose(sim.applied_effort, expected, atol=1e-6)


def test_wrench_in_link_axes_at_a_point(sim, oracle):
    """A force in the flange's axes at a point of it: the held arm's effort is g - J^T F."""
    model, data, _ = oracle
    _held(sim)
    f_local, point = np.array([3.0, -2.0, 5.0]), np.array([0.05, 0.0, 0.02])
    sim.loads.apply('flange', f_local, np.zeros(3), 'flange', point)
    sim.advance(2500)
    q = sim.q
    R, P, J = _flange(oracle, q)
    f = R @ f_local
    moment = np.cross(R @ point, f)                      # about the flange origin
    expected = (pin.computeGeneralizedGravity(model, data, q)
                - J.T @ np.concatenate((f, moment)))
    np.testing.assert_allclose(sim.applied_effort, expected, atol=1e-6)


def test_wrench_duration_and_clear(sim):
    """A wrench for 0.05 s is gone after it; clear removes one held until cleared."""
    _held(sim)
    sim.loads.apply('link4', [0.0, 0.0, 20.0], [0.0, 0.0, 0.0], 'world', duration=0.05,
                    now=sim.t)
    sim.loads.apply('link3', [0.0, 5.0, 0.0], [0.0, 0.0, 1.0], 'world', now=sim.t)
    sim.advance(40)
    assert len(sim.loads.applied) == 2
    sim.advance(20)
    assert len(sim.loads.applied) == 1
    sim.loads.clear()
    assert sim.loads.applied == [] and not sim._physics.loads.active


def test_wall_press_reads_the_wall_force(sim, oracle):
    """Pressing the flange into a plane: the wall's spring-damper force, read by the F/T."""
    sensors = SimulatedSensors(sim, ['flange_joint'])
    _, P, J = _flange(oracle, sim.q)
    k, c = 2e4, 100.0
    sim.loads.set_walls([(P, [0.0, 0.0, 1.0], k, c)])
    sim.loads.set_contact_points([('flange', (0.0, 0.0, 0.0))])
    q_ref = sim.q + np.linalg.pinv(J[:3]) @ [0.0, 0.0, -0.01]     # 1 cm into the wall
    n = sim.n
    sim.set_joint_command(np.arange(n), [POSITION] * n, np.zeros(n), q_ref, np.zeros(n))
    sim.advance(2000)
    q, qd = sim.q, sim.qd
    R, P_now, J = _flange(oracle, q)
    [(link, force)] = sim.loads.wall_wrenches(q, qd)
    depth = P[2] - P_now[2]
    speed = (J[:3] @ qd)[2]
    assert link == 'flange' and depth > 1e-4
    np.testing.assert_allclose(force, [0.0, 0.0, k * depth - c * speed], atol=1e-9)
    F = sensors.read(q, qd, sim.joint_torque)[0]
    np.testing.assert_allclose(F[3:], R.T @ (force + FLANGE_MASS * GRAVITY), rtol=1e-3,
                               atol=1e-3)


def test_wall_never_pulls(sim, oracle):
    """Out of the wall, or leaving it fast, the wall pushes nothing."""
    _, P, _ = _flange(oracle, sim.q)
    sim.loads.set_walls([(P - [0.0, 0.0, 0.01], [0.0, 0.0, 1.0], 1e4, 10.0)])
    sim.loads.set_contact_points([('flange', (0.0, 0.0, 0.0))])
    assert np.all(sim.loads.wall_wrenches(sim.q, sim.qd)[0][1] == 0.0)


@pytest.mark.parametrize('kwargs, match', [
    ({'link': 'no_such_link'}, 'unknown link'),
    ({'link': 'base_link'}, 'does not move'),
    ({'force': [np.nan, 0.0, 0.0]}, 'finite'),
    ({'force': [1e9, 0.0, 0.0]}, 'beyond'),
    ({'torque': [0.0, 0.0, 1e9]}, 'beyond'),
    ({'point': [1e3, 0.0, 0.0]}, 'm from'),
    ({'reference_frame': 'nowhere'}, 'unknown link'),
    ({'duration': -1.0}, 'duration'),
])
def test_bad_wrenches_are_refused(sim, kwargs, match):
    """Unknown links and frames, a base link, NaN and absurd values: ValueError, nothing set."""
    request = {'link': 'flange', 'force': [1.0, 0.0, 0.0], 'torque': [0.0, 0.0, 0.0],
               'reference_frame': 'world', 'point': [0.0, 0.0, 0.0], 'duration': 0.0}
    request.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sim.loads.apply(**request)
    assert sim.loads.applied == []


@pytest.mark.parametrize('plane, match', [
    (([0, 0, 0], [0, 0, 0], 1e4, 10.0), 'normal is zero'),
    (([0, 0, np.nan], [0, 0, 1], 1e4, 10.0), 'finite'),
    (([0, 0, 0], [0, 0, 1], -1.0, 10.0), 'stiffness'),
    (([0, 0, 0], [0, 0, 1], 1e4, 1e9), 'damping'),
])
def test_bad_walls_are_refused(sim, plane, match):
    """A zero normal, NaN, negative or absurd gains: ValueError naming the plane."""
    with pytest.raises(ValueError, match=match):
        sim.loads.set_walls([plane])


def test_observer_on_the_simulation(oracle):
    """
    Fed the simulation's states and joint torques at 1 kHz, the observer feels a push.

    First the arm follows a servo-driven motion with nothing pushing: the estimate
    stays below 0.05 N m RMS (friction and damping do not read as contact: the joint
    torques are link-side).  Then, held, it is pushed: the estimate is within 1 % of
    J^T f 0.1 s after the push, and under 2 % of it 0.1 s after the clear.
    """
    robot = load_urdf(ARM)
    sim = Simulation(robot, PhysicsParameters(), initial_positions=Q0)
    observer = MomentumObserver(robot, 100.0)
    n = sim.n
    f = np.array([0.0, 0.0, -15.0])
    residuals, states = [], []
    for step in range(1200):
        t = sim.t
        if step < 400:
            sim.set_joint_command(np.arange(n), [POSITION] * n, np.zeros(n),
                                  Q0 + 0.2 * np.sin(2.0 * t) * np.ones(n),
                                  0.4 * np.cos(2.0 * t) * np.ones(n))
        elif step == 400:
            _held(sim)
        if step == 600:
            sim.loads.apply('flange', f, np.zeros(3), 'world', now=t)
        if step == 900:
            sim.loads.clear()
        sim.advance(1)
        residuals.append(observer.update(sim.q, sim.qd, sim.joint_torque,
                                         sim.h if step else 0.0).copy())
        states.append(sim.q)
    r = np.array(residuals)
    assert np.sqrt(np.mean(r[100:400] ** 2, axis=0)).max() < 0.05
    push = np.array([_flange(oracle, states[k])[2][:3].T @ f for k in range(700, 900)])
    size = np.abs(push).max()
    assert size > 1.0
    assert np.abs(r[700:900] - push).max() < 0.01 * size
    assert np.abs(r[1000:]).max() < 0.02 * size


#: The launch layout: joint states and the controller's effort commands at 100 Hz,
#: computed torque with the gains of config/sim_arm.yaml, the demo from its pose.
RATE, KP, KD = 100.0, 225.0, 30.0
POSE = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])


def _controlled(robot, trajectory, duration, observers, events=()):
    """
    Run computed torque at RATE on a new simulation; feed the observers each state.

    ``events``: (time, action(sim)) pairs run at the first sample at or after the
    time.  Returns the sample times, positions and each observer's residuals.
    """
    sim = Simulation(robot, PhysicsParameters(command_timeout=0.0), initial_positions=POSE,
                     start_mode='running')
    law = ComputedTorque(robot, KP, KD, friction_velocity=sim.model.friction_velocity)
    pending = sorted(events, key=lambda event: event[0])
    times, states, residuals = [], [], []

    def observe(sim):
        dt = sim.t - times[-1] if times else 0.0
        times.append(sim.t)
        states.append(sim.q)
        residuals.append([o.update(sim.q, sim.qd, sim.joint_torque, dt).copy()
                          for o in observers])
        while pending and sim.t >= pending[0][0] - 1e-9:
            pending.pop(0)[1](sim)

    sampled_loop(sim, law, trajectory, RATE, duration, observe=observe)
    return np.array(times), np.array(states), np.array(residuals).transpose(1, 0, 2)


def test_observer_on_the_demo_at_the_controllers_rate():
    """
    The demo at 100 Hz, nothing pushing: below 0.05 N m RMS with the zero-order hold.

    The controller's commands are held from one joint state to the next, which the
    zero-order hold integrates exactly; the first-order hold (the trapezoid on the
    efforts) lags each change of the command by half a period, several times more.
    """
    robot = load_urdf(ARM)
    chain = robot.chain
    checked = check_trajectory(robot.joint_names, chain.lower, chain.upper, robot.joint_names,
                               demo_trajectory(chain.lower, chain.upper, POSE, 12.0))
    zero = np.zeros(robot.n)
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, (POSE, zero, zero))
    held, linear = (MomentumObserver(robot, 100.0, hold)
                    for hold in ('zero_order', 'first_order'))
    _, states, (r_held, r_linear) = _controlled(robot, trajectory, 12.0, [held, linear])
    assert np.ptp(states, axis=0).min() > 0.3                  # every joint moved
    rms_held = np.sqrt(np.mean(r_held ** 2, axis=0))
    rms_linear = np.sqrt(np.mean(r_linear ** 2, axis=0))
    assert rms_held.max() < 0.05, rms_held
    assert np.abs(r_held).max() < 2.0                          # contact_threshold: never
    assert rms_linear.max() > 5.0 * rms_held.max(), (rms_linear, rms_held)


def test_observer_feels_a_push_at_the_controllers_rate(oracle):
    """
    Held by computed torque at 100 Hz and pushed at the flange: J^T f within 1 % after 0.1 s.

    And under 2 % of it 0.1 s after the push ends (issue's timing at the joint-state
    rate of the launch layout).
    """
    robot = load_urdf(ARM)
    f = np.array([5.0, -8.0, -12.0])
    events = [(0.5, lambda sim: sim.loads.apply('flange', f, np.zeros(3), 'world', now=sim.t)),
              (1.2, lambda sim: sim.loads.clear())]
    times, states, (r,) = _controlled(robot, Trajectory.hold(0.0, POSE), 1.6,
                                      [MomentumObserver(robot, 100.0)], events)
    pushed = (times >= 0.6 - 1e-9) & (times < 1.2 - 1e-9)
    push = np.array([_flange(oracle, q)[2][:3].T @ f for q in states[pushed]])
    size = np.abs(push).max()
    assert size > 1.0
    assert np.abs(states[pushed] - POSE).max() > 1e-3           # the push moved the arm
    assert np.abs(r[pushed] - push).max() < 0.01 * size
    assert np.abs(r[times >= 1.3 - 1e-9]).max() < 0.02 * size
    assert np.abs(r[times < 0.5 - 1e-9]).max() < 0.01 * size


@pytest.mark.parametrize('hold', ['', 'trapezoid', 'ZERO_ORDER', None])
def test_observer_bad_hold(hold):
    """A hold that is not one of HOLDS is refused, naming them."""
    with pytest.raises(ValueError, match='zero_order'):
        MomentumObserver(load_urdf(ARM), 100.0, hold)
