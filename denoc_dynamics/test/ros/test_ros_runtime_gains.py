"""
Gains that change at runtime: the sim's servo gains and the controller's gains.

In-process (``ros2 param set`` on a running sim_node: test_runtime_gains_launch.py): a
held joint's position error under a constant effort follows the new gain (e = d / kp),
bad values (negative, NaN, unstable at the physics rate) are refused and the old gains
kept, and the effort moves in without a jump (the ramp of :mod:`denoc_dynamics.gain_ramp`);
the same for the trajectory controller's gains.
"""

from denoc_dynamics.gain_ramp import GainRamp
from denoc_dynamics.gain_ramp import RAMP_TIME
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.servo import POSITION
import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_helpers import make
from ros_helpers import POSE
from ros_helpers import Recorder
from ros_helpers import step
from ros_helpers import T0

pytestmark = pytest.mark.ros


def test_the_ramp_moves_linearly_and_restarts_from_where_it_is():
    ramp = GainRamp({'kp': [100.0, 10.0], 'kd': [1.0, 1.0]}, duration=1.0)
    assert not ramp.at(0.0)
    ramp.change('kp', 0, 200.0)
    assert ramp.ramping and ramp.at(5.0)      # the ramp starts at the first time seen
    assert ramp.values['kp'].tolist() == [100.0, 10.0]
    ramp.at(5.5)
    assert ramp.values['kp'].tolist() == [150.0, 10.0]
    ramp.change('kp', 1, 20.0)                # a new ramp, from where the gains are
    ramp.at(6.0)
    assert ramp.values['kp'].tolist() == [150.0, 10.0]
    ramp.at(6.5)
    assert ramp.values['kp'].tolist() == [175.0, 15.0]
    ramp.at(7.0)
    assert ramp.values['kp'].tolist() == [200.0, 20.0] and not ramp.ramping
    assert ramp.values['kd'].tolist() == [1.0, 1.0]


def sim_node(context, **params):
    return SimNode(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])


def run(node, seconds, efforts=None):
    """Tick the node's physics ``seconds`` of simulated time; keep joint1's efforts."""
    for _ in range(int(round(seconds * node.params.publish_rate))):
        node._tick()
        if efforts is not None:
            efforts.append(node.sim.applied_effort[0])


def test_a_servo_gain_set_at_runtime_takes_effect_without_a_jump(context):
    node = sim_node(context, urdf_path=bundled_urdf(), real_time_factor=0.0,
                    start_mode='running', initial_positions=POSE,
                    **{'diagnostic_updater.period': 0.0})
    try:
        sim = node.sim
        kp0, kd0 = sim.drives.kp.copy(), sim.drives.kd.copy()
        d = 5.0      # a constant effort on joint1 (a vertical axis): error d / kp
        sim.set_joint_command(np.arange(7), np.full(7, POSITION),
                              np.array([d] + [0.0] * 6), np.array(POSE), np.zeros(7))
        run(node, 1.0)
        e0 = sim.q[0] - POSE[0]
        assert e0 == pytest.approx(d / kp0[0], rel=0.02)

        kp1 = kp0[0] / 4.0
        efforts = []
        result = node.set_parameters([Parameter('servo.joint1.kp', value=kp1)])[0]
        assert result.successful, result.reason
        assert node.get_parameter('servo.joint1.kp').value == kp1
        # an integer is the double it means (as `ros2 param set ... 100` sends it)
        result = node.set_parameters([Parameter('servo.joint2.kd', value=int(kd0[1]) + 1)])
        assert result[0].successful, result[0].reason
        assert node.get_parameter('servo.joint2.kd').value == float(int(kd0[1]) + 1)
        run(node, 3.0, efforts)
        assert sim.drives.kp[0] == kp1 and sim.drives.kd[0] == kd0[0]
        assert sim.q[0] - POSE[0] == pytest.approx(d / kp1, rel=0.02)
        np.testing.assert_array_equal(sim.drives.kp[1:], kp0[1:])
        assert sim.drives.kd[1] == float(int(kd0[1]) + 1)
        # switched at once, the effort would jump by (kp1 - kp0) e0 = 3/4 d
        jump = abs((kp1 - kp0[0]) * e0)
        steps = np.abs(np.diff([efforts[0]] + efforts))
        assert steps.max() < 0.15 * jump, (steps.max(), jump)
    finally:
        node.destroy_node()


@pytest.mark.parametrize('value, reason', [
    (-1.0, 'out of range'), (float('nan'), 'out of range'), (1e12, 'unstable')])
def test_a_bad_servo_gain_is_refused_with_a_reason_and_the_old_kept(context, value, reason):
    node = sim_node(context, urdf_path=bundled_urdf(), real_time_factor=0.0,
                    **{'diagnostic_updater.period': 0.0})
    try:
        kp0 = node.sim.drives.kp.copy()
        result = node.set_parameters([Parameter('servo.joint1.kp', value=value)])[0]
        assert not result.successful
        assert reason in result.reason, result.reason
        assert node.get_parameter('servo.joint1.kp').value == kp0[0]
        run(node, 2 * RAMP_TIME)
        np.testing.assert_array_equal(node.sim.drives.kp, kp0)
        # one bad value among good ones: none of them is applied
        results = node.set_parameters_atomically([
            Parameter('servo.joint2.kp', value=1.0), Parameter('servo.joint1.kd', value=-2.0)])
        assert not results.successful
        run(node, 2 * RAMP_TIME)
        np.testing.assert_array_equal(node.sim.drives.kp, kp0)
    finally:
        node.destroy_node()


def test_a_controller_gain_set_at_runtime_ramps_in(context):
    node = make(context, **{'diagnostic_updater.period': 0.0})
    node.effort_pub = Recorder(copy=lambda msg: list(msg.data))
    try:
        step(node, T0, POSE)                               # it holds this pose
        off = np.array(POSE) + [0.0, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0]
        for k in range(1, 11):
            step(node, T0 + 0.01 * k, off)
        before = np.array(node.effort_pub.messages[-1])
        result = node.set_parameters([Parameter('gains.joint2.kp', value=900.0)])[0]
        assert result.successful, result.reason
        for k in range(11, 61):
            step(node, T0 + 0.01 * k, off)
        after = np.array(node.effort_pub.messages[-1])
        assert node.law.kp[1] == 900.0 and node.law.kp[0] == 225.0
        efforts = np.array(node.effort_pub.messages[10:])
        change = np.abs(after - before).max()
        assert change > 1.0, (before, after)     # joint2's error 0.01 rad: M (675 / s^2) e
        assert np.abs(np.diff(efforts, axis=0)).max() < 0.1 * change
        for bad in (-1.0, float('inf')):
            result = node.set_parameters([Parameter('gains.joint2.kd', value=bad)])[0]
            assert not result.successful and result.reason, result
        assert node.get_parameter('gains.joint2.kd').value == 30.0
        # the per-joint tolerances stay read-only
        result = node.set_parameters([Parameter('constraints.joint2.goal', value=0.1)])[0]
        assert not result.successful
    finally:
        node.destroy_node()
