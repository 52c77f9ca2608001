"""
Each node's parameters come from its one table (denoc_dynamics.ros.parameters).

In-process: every parameter a node declares (its parts' too: payload, diagnostics, the
observer, the F/T sensors and wall) is an entry of the node's table, described, with
the table's read-only flag; every entry that is not per joint is declared; a value
that breaks an entry's rule stops the node with an error naming the parameter;
per-joint entries are declared per joint once the model is loaded.
"""

from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros import parameters as tables
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.gripper_controller import GripperController
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.ros.trajectory_controller import TrajectoryController
import pytest
from rclpy.exceptions import ParameterException
from rclpy.parameter import Parameter

pytestmark = pytest.mark.ros

NODES = {'sim_node': (SimNode, tables.SIM_NODE),
         'dynamics_node': (DynamicsNode, tables.DYNAMICS_NODE),
         'trajectory_controller': (TrajectoryController, tables.TRAJECTORY_CONTROLLER),
         'gripper_controller': (GripperController, tables.GRIPPER_CONTROLLER)}

#: Declared by rclpy itself, not by the node.
RCLPY = {'use_sim_time', 'start_type_description_service'}


def build(context, cls, **params):
    return cls(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])


@pytest.mark.parametrize('name', sorted(NODES))
def test_every_parameter_is_an_entry_of_the_nodes_table(context, name):
    cls, table = NODES[name]
    urdf = bundled_urdf('denoc_arm7_gripper') if cls is GripperController else bundled_urdf()
    node = build(context, cls, urdf_path=urdf)
    try:
        declared = set(node._parameters) - RCLPY
        fixed = {entry.name for entry in table.entries.values() if not entry.per_joint}
        assert fixed <= declared, fixed - declared
        per_joint = declared - fixed
        if any(entry.per_joint for entry in table.entries.values()):
            assert per_joint, 'no per-joint parameter declared after the model load'
        for parameter in sorted(declared):
            entry = table.entry(parameter)
            assert entry is not None, f'{parameter} is not in the table of {name}'
            descriptor = node.describe_parameter(parameter)
            assert descriptor.description, parameter
            assert descriptor.read_only == entry.read_only, parameter
            assert descriptor.type == entry.ptype.value, parameter
    finally:
        node.destroy_node()


@pytest.mark.parametrize('name, parameter, value', [
    ('sim_node', 'effort_mode', 'bogus'),
    ('sim_node', 'physics_rate', 0.0),
    ('sim_node', 'start_mode', 'later'),
    ('sim_node', 'payload.mass', -1.0),
    ('dynamics_node', 'external_torque_gain', 0.0),
    ('dynamics_node', 'external_torque_hold', 'trapezoid'),
    ('dynamics_node', 'fd_method', 'aba'),
    ('trajectory_controller', 'constraints.start_tolerance', -0.1),
    ('gripper_controller', 'kp', -1.0),
    ('gripper_controller', 'diagnostic_updater.period', -1.0)])
def test_a_value_that_breaks_its_rule_stops_the_node_naming_it(context, name, parameter,
                                                               value):
    cls, table = NODES[name]
    assert table.entry(parameter) is not None
    # the table's rule (RuntimeError), or the descriptor's range (rclpy's exception)
    with pytest.raises((RuntimeError, ParameterException)) as error:
        build(context, cls, **{parameter: value})
    assert parameter in str(error.value)


def test_per_joint_entries_follow_the_model_and_the_gains_stay_settable(context):
    node = build(context, TrajectoryController, urdf_path=bundled_urdf(),
                 **{'gains.joint3.kp': 400.0})
    try:
        assert node.get_parameter('gains.joint3.kp').value == 400.0
        assert node.get_parameter('gains.joint1.kp').value == 225.0
        for joint in node.law.robot.joint_names:
            assert not node.describe_parameter(f'gains.{joint}.kd').read_only
            assert node.describe_parameter(f'constraints.{joint}.goal').read_only
        refused = node.set_parameters([Parameter('gains.joint3.kp', value=float('nan'))])[0]
        assert not refused.successful and refused.reason
        assert node.get_parameter('gains.joint3.kp').value == 400.0
    finally:
        node.destroy_node()
