"""
When a goal succeeds: joint_trajectory_controller's defaults, and the bundled arm's.

The node's defaults are joint_trajectory_controller's (``constraints.<joint>.goal`` 0:
not checked, ``constraints.goal_time`` 0: wait, ``stopped_velocity_tolerance`` 0.01 on
the velocity error).  The bundled configuration (config/sim_arm.yaml, which the launch
files and denoc_sim_arm load) checks the goal, as a robot's configuration of
joint_trajectory_controller does: an arm stuck away from the goal ends
GOAL_TOLERANCE_VIOLATED ``goal_time`` after the last point, never SUCCEEDED; an arm at
the goal succeeds.  In-process, callbacks called directly (test_trajectory_controller_clock).
"""

import os

import numpy as np
import pytest
from ros_helpers import goal_of
from ros_helpers import make
from ros_helpers import NAMES
from ros_helpers import POSE
from ros_helpers import step
from ros_helpers import target
from ros_helpers import trajectory
import yaml

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

CONFIG = os.path.join(os.path.dirname(__file__), '..', '..', 'config', 'sim_arm.yaml')
T0 = 8.0   # the controller's clock when the goal starts [s]


def flat(table, prefix=''):
    """Return the nested parameter table as {dotted name: value}."""
    out = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(flat(value, f'{prefix}{key}.'))
        else:
            out[f'{prefix}{key}'] = value
    return out


def bundled_parameters():
    """Return the trajectory_controller parameters of config/sim_arm.yaml."""
    with open(CONFIG) as stream:
        config = yaml.safe_load(stream)
    return flat(config['/**/trajectory_controller']['ros__parameters'])


def run_goal(node, arm, seconds=3.0):
    """Send a 0.5 s goal of 0.1 rad per joint; the arm at ``arm(t)``; return it."""
    step(node, T0)
    msg = trajectory(NAMES, [(0.5, target(0.1))])
    handle = goal_of(msg)
    goal = node.follow(msg, 'action', handle)
    for t in np.arange(T0 + 0.01, T0 + seconds, 0.01):
        step(node, t, arm(t))
        if handle.states:
            return handle, goal, t
    return handle, goal, None


def stuck(t):
    """Return an arm that never leaves its start pose."""
    return POSE


def following(short):
    """Return an arm that follows the goal but stops ``short`` of it on every joint."""
    return lambda t: target((0.1 - short) * min(1.0, (t - T0) / 0.5))


def test_the_node_defaults_are_joint_trajectory_controllers(context, ros2_msgs):
    node = make(context)
    try:
        tolerances = node.default_tolerances
        assert np.all(tolerances.goal[:, 0] == 0.0)      # goal position: not checked
        assert np.all(tolerances.goal[:, 1] == 0.01)     # stopped_velocity_tolerance
        assert np.all(tolerances.path == 0.0)            # trajectory: not checked
        assert tolerances.goal_time == 0.0               # wait
        # so, as joint_trajectory_controller, an arm at rest away from the goal succeeds
        handle, _, _ = run_goal(node, stuck)
        assert handle.states == ['succeeded']
    finally:
        node.destroy_node()


def test_the_bundled_arm_aborts_a_goal_it_does_not_reach(context, ros2_msgs):
    from control_msgs.action import FollowJointTrajectory
    params = bundled_parameters()
    assert params['constraints.goal_time'] > 0.0
    node = make(context, **params)
    try:
        goal_tolerance = node.default_tolerances.goal[:, 0]
        assert np.all(goal_tolerance > 0.0) and np.all(goal_tolerance <= 0.02)
        handle, goal, t = run_goal(node, following(2.0 * float(goal_tolerance.max())))
        assert handle.states == ['aborted'], handle.states
        # not before goal_time after the end of the trajectory (T0 + 0.5 s)
        assert t > T0 + 0.5 + params['constraints.goal_time']
        result = goal.future.result()
        assert result.error_code == FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
        assert 'goal tolerance violated' in result.error_string
    finally:
        node.destroy_node()


def test_the_bundled_arm_succeeds_at_the_goal(context, ros2_msgs):
    node = make(context, **bundled_parameters())
    try:
        short = 0.5 * float(node.default_tolerances.goal[:, 0].min())
        handle, _, t = run_goal(node, following(short))
        assert handle.states == ['succeeded']
        assert t > T0 + 0.5 - 1e-6      # at the end, not before
    finally:
        node.destroy_node()
