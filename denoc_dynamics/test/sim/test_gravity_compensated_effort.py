"""
The gravity-compensated effort mode: the effort command is the torque on top of gravity.

On the bundled arm at a pose where gravity matters, a zero command holds every joint
within 1 mrad for 5 s (the raw mode lets the arm fall: the check can fail), on the
effort-command path and on JointState effort commands; a command on top accelerates
the arm as M^-1 tau; the sim node takes the mode as its ``effort_mode`` parameter.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.servo import EFFORT
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest

POSE = np.array([0.3, 0.7, -0.4, -1.3, 0.5, 1.1, -0.2])
CHUNK = 10   # steps of a publish period at 1 kHz / 100 Hz


@pytest.fixture(scope='module')
def arm():
    return load_urdf(bundled_urdf())


def simulation(robot, effort_mode):
    sim = Simulation(robot, PhysicsParameters(effort_mode=effort_mode),
                     initial_positions=POSE)
    sim.drives.feedforward_steps = CHUNK   # as the runner sets it
    return sim


def drift(sim, seconds, command=None):
    """Return the largest |q - q0| over ``seconds``, the command renewed every chunk."""
    worst = 0.0
    for _ in range(int(round(seconds * 1000 / CHUNK))):
        if command is not None:
            command(sim)
        assert sim.advance(CHUNK) == CHUNK and sim.failure is None, sim.failure
        worst = max(worst, np.abs(sim.q - POSE).max())
    return worst


@pytest.mark.parametrize('path', ['effort_commands', 'joint_commands'])
def test_a_zero_command_holds_the_arm_within_a_milliradian_for_5_s(arm, path):
    def zero(sim):
        if path == 'effort_commands':
            sim.set_command(np.zeros(7))
        else:
            sim.set_joint_command(np.arange(7), np.full(7, EFFORT), np.zeros(7), POSE,
                                  np.zeros(7))

    assert np.abs(arm.gravity_torques(POSE)).max() > 10.0   # gravity matters here
    sim = simulation(arm, 'gravity_compensated')
    assert drift(sim, 5.0, zero) < 1e-3
    np.testing.assert_allclose(sim.applied_effort, arm.gravity_torques(sim.q), atol=1e-6)
    raw = simulation(arm, 'raw')
    assert drift(raw, 0.5, zero) > 0.05      # the raw mode: the arm falls


def test_the_hold_survives_the_command_timeout(arm):
    sim = simulation(arm, 'gravity_compensated')
    sim.set_command(np.zeros(7))
    assert drift(sim, 2.0) < 1e-3   # command_timeout 0.5 s: no command, still held


def test_a_command_on_top_accelerates_the_arm_as_m_inverse_tau(arm):
    sim = simulation(arm, 'gravity_compensated')
    tau = np.array([0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0])
    sim.set_command(tau)
    sim.advance(1)
    np.testing.assert_allclose(sim.applied_effort, tau + arm.gravity_torques(POSE),
                               atol=1e-9)
    # the sim's own dynamics at the start (at rest: no damping, no friction)
    qdd = sim.model.acceleration(POSE, np.zeros(7), sim.applied_effort)
    np.testing.assert_allclose(qdd, np.linalg.solve(arm.inertia_matrix(POSE), tau),
                               atol=1e-9)
    assert sim.qd[3] > 0.0


def test_the_effort_limits_bound_command_plus_gravity(arm):
    sim = simulation(arm, 'gravity_compensated')
    limit = arm.joints.effort
    g = arm.gravity_torques(POSE)
    k = int(np.argmax(np.abs(g)))
    tau = np.zeros(7)
    tau[k] = np.sign(g[k]) * limit[k]      # at the limit already: gravity adds nothing
    sim.set_command(tau)
    sim.advance(1)
    assert abs(sim.applied_effort[k]) == pytest.approx(limit[k])


def test_an_unknown_effort_mode_is_refused():
    with pytest.raises(ValueError, match='effort_mode must be one of'):
        PhysicsParameters(effort_mode='gravity').check()


@pytest.mark.ros
def test_the_sim_node_takes_the_mode_as_a_parameter(context):
    from denoc_dynamics.ros.sim_node import SimNode
    from rclpy.parameter import Parameter
    from std_msgs.msg import Float64MultiArray
    node = SimNode(context=context, parameter_overrides=[
        Parameter('urdf_path', value=bundled_urdf()),
        Parameter('initial_positions', value=POSE.tolist()),
        Parameter('effort_mode', value='gravity_compensated'),
        Parameter('real_time_factor', value=0.0),
        Parameter('diagnostic_updater.period', value=0.0)])
    try:
        node._on_command(Float64MultiArray(data=[0.0] * 7))
        assert node.sim.mode == 'running'
        for _ in range(100):      # 1 s
            node._tick()
        assert np.abs(node.sim.q - POSE).max() < 1e-3
        values = {kv.key: kv.value for kv in node.diagnostics.report().status[0].values}
        assert values['effort_mode'] == 'gravity_compensated'
    finally:
        node.destroy_node()
    with pytest.raises(RuntimeError, match='effort_mode'):
        SimNode(context=context, parameter_overrides=[Parameter('effort_mode', value='x')])
