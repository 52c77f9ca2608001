"""The joint drives (denoc_dynamics.servo); Simulation joint commands, stepping, resets."""

from denoc_dynamics import load_urdf
from denoc_dynamics.drives import CommandOutOfRange
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.runner import SimulationRunner
from denoc_dynamics.servo import default_gains
from denoc_dynamics.servo import EFFORT
from denoc_dynamics.servo import POSITION
from denoc_dynamics.servo import unstable_gains
from denoc_dynamics.servo import VELOCITY
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest

Q0 = np.array([0.2, 0.7, -0.3, -1.4, 0.4, 1.2, -0.5])


@pytest.fixture(scope='module')
def robot():
    return load_urdf(bundled_urdf())


def test_servo_laws_per_mode():
    """The compiled drive laws (physics.drive_efforts), one joint in each mode."""
    from denoc_dynamics import physics
    mode = np.array([EFFORT, POSITION, VELOCITY], dtype=np.int64)
    one = np.ones(3)
    joint = np.zeros((12, 3))
    joint[physics.LOWER], joint[physics.UPPER] = -10.0, 10.0
    joint[physics.KP], joint[physics.KD], joint[physics.MAX_ERROR] = 10.0, 2.0, 100.0
    joint[physics.EFFORT_LIMIT] = [1.0, 100.0, 7.0]
    drive = np.zeros((5, 3))
    drive[physics.TAU_CMD] = [0.5, 0.1, 0.2]
    drive[physics.Q_REF], drive[physics.QD_REF] = [9.0, 2.0, 3.0], [9.0, 1.0, 4.0]
    drive[physics.TAU_FF] = [9.0, 0.3, 0.4]
    tau = np.empty(3)
    physics.drive_efforts(joint, drive, mode, True, one, 0.5 * one, 0.0, tau)
    # effort: the command alone; position: PD + feedforwards; velocity: the same, limited
    assert tau.tolist() == pytest.approx([0.5, 10.0 + 1.0 + 0.3 + 0.1, 7.0])
    drive[physics.EFFORT_CMD] = [0.25, -0.5, 3.0]             # the effort path: held command
    physics.drive_efforts(joint, drive, mode, False, one, 0.5 * one, 0.0, tau)
    assert tau.tolist() == [0.25, -0.5, 3.0]


def test_default_gains_are_stable_and_an_unstable_pair_is_found():
    inertia = np.array([1.0, 0.0005])
    kp, kd = default_gains(inertia, 1e-3, 25.0, 1.0)
    omega = 2 * np.pi * 25.0
    assert kp == pytest.approx(inertia * omega ** 2) and kd == pytest.approx(2 * inertia * omega)
    assert unstable_gains(inertia, 1e-3, kp, kd).size == 0
    # the same gains at a 10 ms step (a servo at the 100 Hz command rate): unstable
    assert unstable_gains(inertia, 1e-2, kp, kd).tolist() == [0, 1]
    # a step too large for the frequency: the default is capped at w h = 0.3
    kp, kd = default_gains(inertia, 1e-2, 25.0, 1.0)
    assert kp == pytest.approx(inertia * 30.0 ** 2)


def test_a_joint_command_holds_the_pose_against_gravity(robot):
    sim = Simulation(robot, initial_positions=Q0)
    runner = SimulationRunner(sim, 100.0, 0.0)
    sim.set_joint_command([3], [POSITION], [0.0], [-1.3], [0.0])
    # the other joints hold where they were: the whole arm stays up
    for _ in range(200):
        runner.step_chunk()
    expected = Q0.copy()
    expected[3] = -1.3
    assert np.abs(sim.q - expected).max() < 1e-4
    assert np.allclose(sim.applied_effort, robot.gravity_torques(expected), atol=0.05)
    # the effort path is unchanged: an effort command takes over
    sim.set_command(np.zeros(7))
    runner.step_chunk()
    assert not sim.drives.joint_commanded and np.all(sim.applied_effort == 0.0)


@pytest.mark.parametrize('urdf', ['denoc_arm7', 'denoc_arm7_gripper'])
def test_the_held_feedforward_is_robot_bias_forces_to_the_bit(urdf):
    """The compiled step's tau_ff (physics.bias_feedforward): robot.bias_forces at its start."""
    from denoc_dynamics import physics
    arm = load_urdf(bundled_urdf(urdf))
    q0 = np.zeros(arm.n)
    q0[:7] = Q0
    sim = Simulation(arm, initial_positions=q0, start_mode='running')
    sim.drives.feedforward_steps = 4
    q_ref = q0.copy()
    q_ref[:7] += 0.05                                  # the arm moves: tau_ff changes
    sim.set_joint_command(np.arange(arm.n), [POSITION] * arm.n, np.zeros(arm.n), q_ref,
                          np.zeros(arm.n))
    tau_ff = sim._physics.drive[physics.TAU_FF]
    for steps in (4, 1, 3, 4, 4):                      # each a stretch that starts with tau_ff due
        start, q, qd = sim.steps, sim.q, sim.qd
        before = tau_ff.copy()
        sim.advance(steps)
        if start % 4 == 0:
            assert np.array_equal(tau_ff, arm.bias_forces(q, qd))
        else:                                          # held between two evaluations
            assert np.array_equal(tau_ff, before)
    assert sim.failure is None and np.all(sim.qd[:7] != 0.0)


@pytest.mark.parametrize('args, error', [
    (([0], [POSITION], [0.0], [9.0], [0.0]), CommandOutOfRange),     # beyond the limit
    (([0], [POSITION], [0.0], [np.nan], [0.0]), ValueError),
    (([0, 0], [POSITION] * 2, [0.0] * 2, [0.1] * 2, [0.0] * 2), ValueError),
    (([0], [7], [0.0], [0.1], [0.0]), ValueError),                   # no such mode
    (([0], [EFFORT], [np.inf], [0.0], [0.0]), ValueError),
])
def test_bad_joint_commands_change_nothing(robot, args, error):
    sim = Simulation(robot, initial_positions=Q0)
    with pytest.raises(error):
        sim.set_joint_command(*args)
    assert sim.mode == 'hold' and not sim.drives.joint_commanded
    assert np.all(sim.drives.mode == EFFORT)


def test_step_paused_takes_exactly_n_steps(robot):
    sim = Simulation(robot, initial_positions=Q0, start_mode='paused')
    assert sim.advance(10) == 0 and sim.steps == 0   # paused: nothing
    assert sim.step_paused(137) == 137
    assert sim.steps == 137 and sim.paused and sim.t == 137 * sim.h
    assert np.abs(sim.q - Q0).max() > 1e-5            # it fell meanwhile
    sim.set_paused(False)
    with pytest.raises(ValueError, match='not paused'):
        sim.step_paused(1)


def test_reset_time_state_and_stop(robot):
    params = PhysicsParameters()
    sim = Simulation(robot, params, initial_positions=Q0, start_mode='paused')
    sim.step_paused(300)
    q = sim.q
    sim.reset_time()
    assert sim.t == 0.0 and np.array_equal(sim.q, q) and sim.paused
    sim.step_paused(50)
    sim.reset_state()
    assert sim.t == 50 * sim.h and np.array_equal(sim.q, Q0) and sim.mode == 'hold'
    assert sim.paused
    sim.stop()
    assert sim.stopped and sim.paused and sim.t == 0.0
    sim.step_paused(1)
    assert not sim.stopped and sim.t == sim.h
