"""
``ros2 param set`` on a running sim_node: a servo gain changes, -1 is refused.

Needs the ros2 CLI (the launch stack); the in-process checks of the gains are in
test_ros_runtime_gains.py.
"""

import subprocess

from denoc_dynamics.resources import bundled_urdf
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros2 as ros2_cli
from ros_helpers import ros_args
from ros_helpers import wait_for

pytestmark = pytest.mark.ros


def ros2(*args):
    """Run a ros2 CLI command (:func:`ros_helpers.ros2`); return its stdout and stderr."""
    proc = ros2_cli(*args, timeout=30.0)
    return proc.stdout + proc.stderr


def test_ros2_param_set_changes_a_servo_gain_and_refuses_minus_one():
    proc = NodeProcess('sim_node', ros_args(urdf_path=bundled_urdf()))
    try:
        # under a load of 8-15 on 2 cores a node took over 30 s to load its model
        assert wait_for(lambda: 'robot model from' in proc.output(), timeout=180.0), \
            'sim_node did not load its model:\n' + proc.describe()
        out = ros2('param', 'set', '/sim_node', 'servo.joint1.kp', '100')
        assert 'Set parameter successful' in out, out + proc.describe()
        out = ros2('param', 'get', '/sim_node', 'servo.joint1.kp')
        assert '100.0' in out, out
        out = ros2('param', 'set', '/sim_node', 'servo.joint1.kp', '-1')
        assert 'Setting parameter failed' in out and 'out of range' in out, out
        out = ros2('param', 'get', '/sim_node', 'servo.joint1.kp')
        assert '100.0' in out, out
        assert proc.alive(), proc.describe()
    finally:
        proc.stop()
        subprocess.run(['ros2', 'daemon', 'stop'], capture_output=True, timeout=30.0)
