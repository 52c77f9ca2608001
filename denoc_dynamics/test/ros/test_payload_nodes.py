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
"""

import math

from denoc_dynamics import load_urdf
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
from rclpy.parameter import Parameter
from ros_helpers import Recorder
from test_trajectory_controller_in_process import joint_state, NAMES, POSE, T0

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
        k = base.chain.link_poses['flange'][0]
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
        node._on_joint_state(joint_state(T0))
        assert node.follow(fast_goal()) is True           # feasible without a payload
        node._on_joint_state(joint_state(T0 + 0.01))
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
            n._on_joint_state(joint_state(T0))
        assert node.follow(fast_goal()) is False
        assert off.follow(fast_goal()) is True
        with pytest.raises(TrajectoryError, match=r'joint joint\d needs -?[\d.]+ N m at '
                                                  r't = [\d.]+ s from now, beyond its effort '
                                                  r'limit 12; [\d.]+ times slower passes'):
            check_efforts(off.law.robot, off.trajectory, T0)
    finally:
        node.destroy_node()
        off.destroy_node()
