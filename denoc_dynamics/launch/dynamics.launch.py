"""
Launch the dynamics node alone, next to a real (or another simulated) robot.

Launch arguments:
  namespace        namespace of the node, and so of its relative topics and services:
                   joint_states, effort_commands, robot_description, ~/... (default: none)
  urdf             URDF file; empty (default): the model comes from the relative
                   robot_description topic (robot_state_publisher publishes it), i.e.
                   /<namespace>/robot_description
  use_sim_time     run on /clock (default false)
  params_file      YAML parameters (default: config/sim_arm.yaml of this package; its
                   dynamics_node section applies)
  joint_states     topic of the robot's sensor_msgs/JointState (default joint_states)
  effort_commands  topic of the effort commands, std_msgs/Float64MultiArray, e.g.
                   /effort_controller/commands (default effort_commands)

The launch arguments take precedence over params_file (see sim_arm.launch.py).

Run it with:
  ros2 launch denoc_dynamics dynamics.launch.py effort_commands:=/effort_controller/commands
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('denoc_dynamics')
    return LaunchDescription([
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='namespace of the node and of its relative topics and services'),
        DeclareLaunchArgument(
            'urdf', default_value='',
            description='URDF file; empty: wait for the (relative) robot_description topic'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=['true', 'false'],
            description='run on the /clock topic'),
        DeclareLaunchArgument(
            'params_file', default_value=PathJoinSubstitution([share, 'config', 'sim_arm.yaml']),
            description='YAML parameters (the dynamics_node section applies)'),
        DeclareLaunchArgument(
            'joint_states', default_value='joint_states',
            description='joint state topic of the robot'),
        DeclareLaunchArgument(
            'effort_commands', default_value='effort_commands',
            description='effort command topic (std_msgs/Float64MultiArray)'),
        Node(
            package='denoc_dynamics', executable='dynamics_node', name='dynamics_node',
            namespace=LaunchConfiguration('namespace'), output='screen',
            parameters=[LaunchConfiguration('params_file'), {
                'urdf_path': LaunchConfiguration('urdf'),
                'use_sim_time': LaunchConfiguration('use_sim_time'),
            }],
            remappings=[
                ('joint_states', LaunchConfiguration('joint_states')),
                ('effort_commands', LaunchConfiguration('effort_commands')),
            ]),
    ])
