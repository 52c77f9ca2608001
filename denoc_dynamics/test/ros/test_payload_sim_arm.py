"""
A payload end to end on the simulated arm: identified, told, and goals retimed.

sim_node and trajectory_controller run in one process, over DDS; joint_states are
recorded by a subscription as a user would.

1. 2.5 kg at an offset centre of mass is set on sim_node only (~/set_payload); the
   controller follows 10 s of an exciting trajectory (Fourier terms within the joint
   limits) without knowing it: its tracking error grows.
2. ``denoc-dynamics identify-payload`` on the recorded joint_states (efforts as
   published, URDF friction taken off) gives the mass within 1 % and the centre of
   mass within 1 mm.
3. The identified payload set on the controller (~/set_payload): the same trajectory
   is tracked under 1 mrad RMS in motion and at rest.
4. A goal feasible without payload is rejected once a heavy payload is set on both;
   the goal retimed by ~/scale_to_torque_limits is accepted and runs without the
   controller's efforts reaching the effort limits.
"""

import json

from denoc_dynamics.cli import run as cli
from denoc_dynamics.excitation import exciting_trajectory
from denoc_dynamics.recording import save_recording
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.launch_support import friction_velocity_parameters
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.ros.trajectory_controller import trajectory_msg
from denoc_dynamics.ros.trajectory_controller import TrajectoryController
from denoc_dynamics_interfaces.srv import ScaleToTorqueLimits
import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import Recorder
from sensor_msgs.msg import JointState
from test_payload_nodes import call, fast_goal, HEAVY, request
from test_trajectory_controller_in_process import POSE

pytestmark = pytest.mark.ros

MASS, COM = 2.5, [0.03, -0.02, 0.08]
RECORD, START = 10.0, 2.0        # [s] of exciting motion, and the move to its start


class Arm:
    """sim_node, trajectory_controller and a joint_states recorder in one executor."""

    def __init__(self, context):
        common = [Parameter('urdf_path', value=bundled_urdf())]
        self.sim = SimNode(context=context, parameter_overrides=common + [
            Parameter('publish_clock', value=True), Parameter('real_time_factor', value=1.0)])
        names, velocities = (self.sim.sim.robot.joint_names, self.sim.sim.friction_velocity)
        self.friction_velocity = velocities
        self.controller = TrajectoryController(context=context, parameter_overrides=common + [
            Parameter(k, value=v) for k, v in friction_velocity_parameters(
                names, velocities).items()])
        self.sim.payload.publisher = self.controller.payload.publisher = Recorder()
        self.names = names
        self.states = []
        self.controller.create_subscription(JointState, 'joint_states', self.states.append,
                                            qos_profile_sensor_data)
        self.efforts = []
        publish = self.controller.effort_pub.publish

        def record_effort(msg):
            self.efforts.append(np.array(msg.data))
            publish(msg)
        self.controller.effort_pub.publish = record_effort
        self.executor = SingleThreadedExecutor(context=context)
        for node in (self.sim, self.controller):
            self.executor.add_node(node)

    def t(self):
        s = self.states[-1].header.stamp if self.states else None
        return None if s is None else s.sec + 1e-9 * s.nanosec

    def spin_until(self, predicate, timeout=120.0):
        import time
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, 'timed out'
            self.executor.spin_once(timeout_sec=0.05)

    def run(self, points, rest=1.5):
        """Follow ``points`` from now; return the states (t, q, qd, effort) and the reference."""
        assert self.controller.follow(trajectory_msg(self.names, points)) is True
        start = self.controller.trajectory_start
        end = self.controller.trajectory.end_time
        trajectory = self.controller.trajectory
        first = len(self.states)
        self.spin_until(lambda: self.t() is not None and self.t() >= end + rest)
        rows = [(s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec, s.position[:7],
                 s.velocity[:7], s.effort[:7]) for s in self.states[first:]]
        t, q, qd, tau = (np.array(x) for x in zip(*rows))
        reference = np.array([trajectory.sample(x)[0] for x in t])
        return start, end, t, q, qd, tau, reference

    def close(self):
        self.executor.shutdown()
        self.sim.destroy_node()
        self.controller.destroy_node()


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def test_identify_track_and_retime_on_the_simulated_arm(context, tmp_path):
    arm = Arm(context)
    try:
        arm.spin_until(lambda: arm.controller.trajectory is not None and len(arm.states) > 10)
        robot = arm.controller.law.robot
        joints = robot.joints
        fourier = exciting_trajectory(joints.lower, joints.upper, joints.velocity, period=5.0,
                                      seed=3, centre=np.array(POSE), max_amplitude=0.5,
                                      max_accel=2.0)
        points = fourier.points(RECORD, 0.05, start=START)
        # 1. the payload in the sim only
        assert call(arm.sim, request(mass=MASS, com=COM)).success
        start, end, t, q, qd, tau, reference = arm.run(points)
        moving = (t >= start + START) & (t <= end)
        unknown_rms = rms(reference[moving] - q[moving])
        # 2. identify from the recorded joint_states, through the CLI
        window = (t >= start + START) & (t <= end)
        path = str(tmp_path / 'recording.npz')
        save_recording(path, arm.names, t[window], q[window], qd[window], tau[window])
        fv = ','.join(f'{v:.17g}' for v in arm.friction_velocity)
        out = json.loads(cli(['identify-payload', '--link', 'flange', '--friction-velocity',
                              fv, path, '--json']))
        print(f'unknown payload: tracking RMS {unknown_rms * 1e3:.3f} mrad; identified '
              f'{out["mass"]:.4f} kg at {out["com"]} (condition {out["condition"]:.3g}, '
              f'residual {out["residual_rms"]:.3g} N m, {out["samples"]} samples)')
        assert abs(out['mass'] - MASS) < 0.01 * MASS, out
        assert np.abs(np.subtract(out['com'], COM)).max() < 1e-3, out
        # 3. the identified payload on the controller: tracking is back
        six = np.array(out['inertia'])[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
        six = np.where(np.isfinite(six), six, 0.0)
        assert call(arm.controller, request(mass=out['mass'], com=out['com'],
                                            six=[float(x) for x in six])).success or \
            call(arm.controller, request(mass=out['mass'], com=out['com'],
                                         six=[1e-3, 0, 0, 1e-3, 0, 1e-3])).success
        start, end, t, q, qd, tau, reference = arm.run(points)
        moving = (t >= start + START) & (t <= end)
        resting = t > end + 0.5
        known_rms, rest_rms = rms(reference[moving] - q[moving]), rms(reference[resting]
                                                                      - q[resting])
        print(f'known payload: tracking RMS {known_rms * 1e3:.3f} mrad in motion, '
              f'{rest_rms * 1e3:.3f} mrad at rest')
        assert known_rms < 1e-3 and rest_rms < 1e-3
        assert unknown_rms > 2.0 * known_rms
        # 4. a heavy payload: a goal feasible without it is rejected, the retimed one runs
        msg = fast_goal(arm.controller.trajectory.sample(arm.t())[0])
        goal = np.array(msg.points[-1].positions)
        for node in (arm.sim, arm.controller):
            assert call(node, request(**HEAVY)).success
        arm.controller.rejections.counts.clear()
        assert arm.controller.follow(msg) is False
        assert arm.controller.rejections.counts == {'effort limit': 1}
        response = arm.controller._scale_to_torque_limits(
            ScaleToTorqueLimits.Request(trajectory=msg), ScaleToTorqueLimits.Response())
        assert response.success and response.scale > 1.0, response.message
        first = len(arm.efforts)
        assert arm.controller.follow(response.trajectory) is True
        end = arm.controller.trajectory.end_time
        arm.spin_until(lambda: arm.t() >= end + 1.0)
        efforts = np.array(arm.efforts[first:])
        margin = np.abs(efforts).max(axis=0) / joints.effort
        print(f'retimed {response.scale:.3f}x: largest effort {margin.max():.3f} of its limit')
        assert margin.max() < 1.0
        np.testing.assert_allclose(arm.states[-1].position[:7], goal, atol=5e-3)
    finally:
        arm.close()
