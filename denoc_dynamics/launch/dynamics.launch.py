"""
Launch the dynamics node alone, next to a real (or another simulated) robot.

Launch arguments:
  urdf             URDF file; empty (default): the model comes from the
                   robot_description topic (robot_state_publisher publishes it)
  use_sim_time     run on /clock (default false)
  params_file      YAML parameters (default: config/sim_arm.yaml of this package; its
                   dynamics_node section applies)
  joint_states     topic of the robot's sensor_msgs/JointState (default joint_states)
  effort_commands  topic of the effort commands, std_msgs/Float64MultiArray, e.g.
                   /effort_controller/commands (default effort_commands)

Run it with:
  ros2 launch denoc_dynamics dynamics.launch.py effort_commands:=/effort_controller/commands
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def _nodes(context):
    urdf = LaunchConfiguration('urdf').perform(context)
    overrides = {
        'use_sim_time': LaunchConfiguration('use_sim_time').perform(context).strip().lower()
        in ('true', '1', 'yes', 'on'),
    }
    if urdf:
        with open(urdf, 'r', encoding='utf-8') as stream:
            # value_type=str: launch_ros must not parse the XML as YAML
            overrides['robot_description'] = ParameterValue(stream.read(), value_type=str)
    return [Node(
        package='denoc_dynamics', executable='dynamics_node', name='dynamics_node',
        output='screen',
        parameters=[LaunchConfiguration('params_file').perform(context), overrides],
        remappings=[
            ('joint_states', LaunchConfiguration('joint_states').perform(context)),
            ('effort_commands', LaunchConfiguration('effort_commands').perform(context)),
        ])]


def generate_launch_description():
    share = get_package_share_directory('denoc_dynamics')
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value='',
            description='URDF file; empty: wait for the robot_description topic'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=['true', 'false'],
            description='run on the /clock topic'),
        DeclareLaunchArgument(
            'params_file', default_value=os.path.join(share, 'config', 'sim_arm.yaml'),
            description='YAML parameters (the dynamics_node section applies)'),
        DeclareLaunchArgument(
            'joint_states', default_value='joint_states',
            description='joint state topic of the robot'),
        DeclareLaunchArgument(
            'effort_commands', default_value='effort_commands',
            description='effort command topic (std_msgs/Float64MultiArray)'),
        OpaqueFunction(function=_nodes),
    ])
