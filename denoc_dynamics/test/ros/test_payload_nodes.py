"""
~/set_payload and ~/payload on the three nodes, and torque-feasible goals, in-process.

sim_node, dynamics_node and trajectory_controller are built in this process and their
callbacks called directly.

* Each node's model after ~/set_payload is Robot.with_payload of the model without it;
  a second payload replaces the first; ~/payload publishes the current one.
* sim_node changes the simulated payload linearly over the transition time (simulated
  seconds); the other nodes switch at once.
* Bad requests (unknown link, negative or NaN mass, NaN center of mass, non-physical
  inertia, NaN or negative transition time) are refused with the reason and counted;
  the payload stays.  The start-up parameters payload.* apply; bad ones refuse to start.
* trajectory_controller rejects a trajectory whose inverse dynamics exceed the effort
  limits (naming joint, time, torque), feasible without the payload; the retimed one
  from ~/scale_to_torque_limits is accepted; check_effort_limits false turns it off.

End to end (sim_node, in lockstep, and trajectory_controller in one executor over DDS,
joint_states recorded by a subscription as a user would):

1. 2.5 kg at an offset centre of mass is set on sim_node only (~/set_payload); the
   controller follows 10 s of an exciting trajectory (Fourier terms within the joint
   limits) without knowing it: its tracking error grows.
2. ``denoc-dynamics identify-payload`` on the recorded joint_states (efforts as
   published: link-side torques with the friction in them, nothing taken off) gives
   the mass within 1 % and the centre of mass within 1 mm.
3. The identified payload set on the controller (~/set_payload): the same trajectory
   is tracked under 1 mrad RMS in motion and at rest.
4. A goal feasible without payload is rejected once a heavy payload is set on both;
   the goal retimed by ~/scale_to_torque_limits is accepted and runs without the
   controller's efforts reaching the effort limits.
"""

import json
import math

from denoc_dynamics import load_urdf
from denoc_dynamics.cli import run as cli
from denoc_dynamics.excitation import exciting_trajectory
from denoc_dynamics.recording import save_recording
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.ros.trajectory_controller import trajectory_msg
from denoc_dynamics.ros.trajectory_controller import TrajectoryController
from denoc_dynamics.trajectory import TrajectoryPoint
from denoc_dynamics_interfaces.srv import ScaleToTorqueLimits
from denoc_dynamics_interfaces.srv import SetPayload
import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import NAMES, POSE, Recorder, step, T0
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.ros

MASS, COM = 2.5, [0.02, -0.01, 0.05]
SIX = [0.004, 0.0, 0.0, 0.005, 0.0, 0.003]          # ixx ixy ixz iyy iyz izz
INERTIA = np.diag([0.004, 0.005, 0.003])


def request(link='flange', mass=MASS, com=COM, six=SIX, transition_time=0.0):
    return SetPayload.Request(link=link, mass=float(mass), center_of_mass=list(com),
                              inertia=list(six), transition_time=float(transition_time))


def call(node, req):
    return node.payload._set_payload(req, SetPayload.Response())


def make(cls, context, **params):
    params.setdefault('urdf_path', bundled_urdf())
    if cls is TrajectoryController:
        params.setdefault('use_sim_time', True)   # the clock: ros_helpers.at
    node = cls(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])
    node.payload.publisher = Recorder()
    return node


def model_of(node):
    """Return the node's current dynamics model."""
    if isinstance(node, SimNode):
        return node.sim.robot
    if isinstance(node, TrajectoryController):
        return node.law.robot
    return node.robot


def assert_same_dynamics(robot, expected):
    q = np.linspace(-0.5, 0.7, robot.n)
    np.testing.assert_allclose(robot.inverse_dynamics(q, q, q),
                               expected.inverse_dynamics(q, q, q), rtol=1e-12, atol=1e-12)


BAD = [
    (request(link='nowhere'), "unknown link 'nowhere'"),
    (request(mass=-1.0), 'mass must be finite and >= 0'),
    (request(mass=math.nan), 'mass must be finite and >= 0'),
    (request(com=[0.0, math.nan, 0.0]), 'center of mass must be 3 finite'),
    (request(six=[0.001, 0.0, 0.0, 0.001, 0.0, 0.005]), 'triangle inequality'),
    (request(six=[-0.001, 0.0, 0.0, 0.001, 0.0, 0.001]), 'not positive'),
    (request(transition_time=math.nan), 'transition_time must be finite'),
    (request(transition_time=-1.0), 'transition_time must be finite'),
]


@pytest.mark.parametrize('cls', [SimNode, DynamicsNode, TrajectoryController])
def test_set_payload_attaches_replaces_and_refuses_bad_input(context, cls):
    node = make(cls, context)
    try:
        base = load_urdf(bundled_urdf())
        response = call(node, request())
        assert response.success, response.message
        assert_same_dynamics(model_of(node), base.with_payload('flange', MASS, COM, INERTIA))
        msg = node.payload.publisher.messages[-1]
        assert msg.link == 'flange' and msg.mass == MASS and list(msg.inertia) == SIX
        # a second payload replaces the first, on another link
        assert call(node, request(link='link7', mass=1.0)).success
        assert_same_dynamics(model_of(node), base.with_payload('link7', 1.0, COM, INERTIA))
        assert node.payload.current.link == 'link7'
        for req, match in BAD:
            response = call(node, req)
            assert not response.success and match in response.message, response.message
            assert_same_dynamics(model_of(node), base.with_payload('link7', 1.0, COM, INERTIA))
        assert node.payload.rejections.total == len(BAD)
        assert call(node, request(link='', mass=0.5)).success   # empty: the tip link
        assert node.payload.current.link == 'flange'
        assert_same_dynamics(model_of(node), base.with_payload('flange', 0.5, COM, INERTIA))
        assert call(node, request(mass=0.0)).success        # removed
        assert_same_dynamics(model_of(node), base)
    finally:
        node.destroy_node()


def test_sim_payload_changes_over_the_transition_time(context):
    node = make(SimNode, context)
    try:
        base = load_urdf(bundled_urdf())
        k = base.chain.link_frame('flange')[0]
        assert call(node, request(transition_time=2.0)).success
        masses = []
        for _ in range(3):
            masses.append(node.sim.robot.chain.mass[k])
            node.sim.advance(1000)         # 1 s of simulated time (hold mode: time only)
            node._advance_payload() if node._transition else None
        np.testing.assert_allclose(np.array(masses) - base.chain.mass[k],
                                   [0.0, 0.5 * MASS, MASS], rtol=1e-12, atol=1e-12)
        assert node._transition is None
        assert_same_dynamics(node.sim.robot, base.with_payload('flange', MASS, COM, INERTIA))
        # the model without payload is untouched
        assert_same_dynamics(node._unloaded, base)
    finally:
        node.destroy_node()


@pytest.mark.parametrize('cls', [SimNode, DynamicsNode, TrajectoryController])
def test_start_up_payload_parameters(context, cls):
    node = make(cls, context, **{'payload.link': 'flange', 'payload.mass': MASS,
                                 'payload.center_of_mass': COM, 'payload.inertia': SIX})
    try:
        base = load_urdf(bundled_urdf())
        assert_same_dynamics(model_of(node), base.with_payload('flange', MASS, COM, INERTIA))
    finally:
        node.destroy_node()
    with pytest.raises(RuntimeError, match='payload parameters: unknown link'):
        make(cls, context, **{'payload.link': 'nowhere', 'payload.mass': 1.0})


#: A heavy payload: 4 kg on a long bar (0.95 m), 5 cm off the flange.
HEAVY = {'mass': 4.0, 'com': [0.0, 0.0, 0.05], 'six': [0.3, 0.0, 0.0, 0.3, 0.0, 0.05]}
HEAVY_PARAMETERS = {'payload.link': 'flange', 'payload.mass': 4.0,
                    'payload.center_of_mass': [0.0, 0.0, 0.05],
                    'payload.inertia': [0.3, 0.0, 0.0, 0.3, 0.0, 0.05]}


def fast_goal(start=POSE):
    """Return a 0.4 s quintic move from rest to rest: within the limits without a payload."""
    goal = [q + d for q, d in zip(start, [0.0, 0.2, 0.0, -0.2, 0.4, 0.4, 0.4])]
    zero = [0.0] * 7
    return trajectory_msg(NAMES, [TrajectoryPoint(0.4, goal, zero, zero)])


def test_goals_beyond_the_effort_limits_are_rejected_and_retimed(context):
    node = make(TrajectoryController, context)
    try:
        step(node, T0)
        assert node.follow(fast_goal()) is True           # feasible without a payload
        step(node, T0 + 0.01)
        assert call(node, request(**HEAVY)).success
        node.rejections.counts.clear()
        assert node.follow(fast_goal()) is False
        assert node.rejections.counts == {'effort limit': 1}
        response = node._scale_to_torque_limits(
            ScaleToTorqueLimits.Request(trajectory=fast_goal()), ScaleToTorqueLimits.Response())
        assert response.success and response.scale > 1.0, response.message
        t = response.trajectory.points[-1].time_from_start
        assert t.sec + 1e-9 * t.nanosec == pytest.approx(0.4 * response.scale)
        assert node.follow(response.trajectory) is True
        # and the retimed goal's inverse dynamics stay within the limits along it
        robot, limit = node.law.robot, node.law.robot.joints.effort
        times = np.linspace(node.trajectory.times[0], node.trajectory.end_time, 400)
        q, qd, qdd = (np.array(x) for x in zip(*(node.trajectory.sample(s) for s in times)))
        assert np.all(np.abs(robot.inverse_dynamics(q, qd, qdd)) <= limit * (1 + 1e-9))
    finally:
        node.destroy_node()


def test_effort_check_names_joint_time_and_torque_and_can_be_turned_off(context):
    from denoc_dynamics.torque_limits import check_efforts
    from denoc_dynamics.trajectory import TrajectoryError
    node = make(TrajectoryController, context, **HEAVY_PARAMETERS)
    off = make(TrajectoryController, context, check_effort_limits=False, **HEAVY_PARAMETERS)
    try:
        for n in (node, off):
            step(n, T0)
        assert node.follow(fast_goal()) is False
        assert off.follow(fast_goal()) is True
        with pytest.raises(TrajectoryError, match=r'joint joint\d needs -?[\d.]+ N m at '
                                                  r't = [\d.]+ s from now, beyond its effort '
                                                  r'limit 12; [\d.]+ times slower passes'):
            check_efforts(off.law.robot, off.trajectory, T0)
    finally:
        node.destroy_node()
        off.destroy_node()


# --- end to end on the simulated arm -------------------------------------------
E2E_MASS, E2E_COM = 2.5, [0.03, -0.02, 0.08]
RECORD, START = 10.0, 2.0        # [s] of exciting motion, and the move to its start


class Arm:
    """sim_node, trajectory_controller and a joint_states recorder in one executor."""

    def __init__(self, context):
        common = [Parameter('urdf_path', value=bundled_urdf())]
        # lockstep: every period simulated on the command that answers the state before
        # it, as with a controller manager inside the simulator; without it, a loaded
        # machine delays the command past the next period now and then (in 83 to 359 of
        # 1350 periods measured with two helpers building beside it), and the tracking
        # error measured grows with that count, not with the model's accuracy
        self.sim = SimNode(context=context, parameter_overrides=common + [
            Parameter('publish_clock', value=True), Parameter('real_time_factor', value=1.0),
            Parameter('lockstep', value=True)])
        names, velocities = (self.sim.sim.robot.joint_names,
                             self.sim.sim.model.friction_velocity)
        self.friction_velocity = velocities
        # the controller compensates the simulated arm's friction model (same physics)
        self.controller = TrajectoryController(context=context, parameter_overrides=common + [
            Parameter('use_sim_time', value=True), Parameter('simulated_friction', value=True)])
        # the very regularization the simulated arm integrates with
        np.testing.assert_array_equal(self.controller.law.friction_velocity, velocities)
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
        assert call(arm.sim, request(mass=E2E_MASS, com=E2E_COM)).success
        start, end, t, q, qd, tau, reference = arm.run(points)
        moving = (t >= start + START) & (t <= end)
        unknown_rms = rms(reference[moving] - q[moving])
        # 2. identify from the recorded joint_states, through the CLI
        window = (t >= start + START) & (t <= end)
        path = str(tmp_path / 'recording.npz')
        save_recording(path, arm.names, t[window], q[window], qd[window], tau[window])
        # the efforts are link-side torques (tau_J: the sim's friction is in them), the
        # CLI's default: nothing taken off
        out = json.loads(cli(['identify-payload', '--link', 'flange', path, '--json']))
        print(f'unknown payload: tracking RMS {unknown_rms * 1e3:.3f} mrad; identified '
              f'{out["mass"]:.4f} kg at {out["com"]} (condition {out["condition"]:.3g}, '
              f'residual {out["residual_rms"]:.3g} N m, {out["samples"]} samples)')
        assert abs(out['mass'] - E2E_MASS) < 0.01 * E2E_MASS, out
        assert np.abs(np.subtract(out['com'], E2E_COM)).max() < 1e-3, out
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
              f'{rest_rms * 1e3:.3f} mrad at rest; periods without their command: '
              f'{arm.sim.runner.lockstep_misses}')
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
