"""
Launch the simulated arm: sim_node, dynamics_node, trajectory_controller (+ rsp).

Launch arguments:
  urdf          URDF file (default: the bundled denoc_arm7)
  use_sim_time  true: sim_node publishes /clock and the other nodes use it (default false)
  integrator    rk4 | ab4 | semi_implicit_euler (default rk4)
  use_rsp       true: also start robot_state_publisher (default false)
  rviz          true: also start rviz2 with config/denoc_arm.rviz (and
                robot_state_publisher, which its TF needs; default false)
  params_file   YAML parameters (default: config/sim_arm.yaml of this package)

Run it with:
  ros2 launch denoc_dynamics sim_arm.launch.py use_rsp:=true use_sim_time:=true
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def _is_true(value):
    return value.strip().lower() in ('true', '1', 'yes', 'on')


def _nodes(context):
    urdf = LaunchConfiguration('urdf').perform(context)
    with open(urdf, 'r', encoding='utf-8') as stream:
        # value_type=str: launch_ros must not parse the XML as YAML
        robot_description = ParameterValue(stream.read(), value_type=str)
    use_sim_time = _is_true(LaunchConfiguration('use_sim_time').perform(context))
    integrator = LaunchConfiguration('integrator').perform(context)
    params_file = LaunchConfiguration('params_file').perform(context)
    nodes = [
        Node(
            package='denoc_dynamics', executable='sim_node', name='sim_node',
            output='screen',
            parameters=[params_file, {
                'robot_description': robot_description,
                'integrator': integrator,
                # the simulation is the clock: it never runs on /clock itself
                'publish_clock': use_sim_time,
            }]),
        Node(
            package='denoc_dynamics', executable='dynamics_node', name='dynamics_node',
            output='screen',
            parameters=[params_file, {
                'robot_description': robot_description,
                'use_sim_time': use_sim_time,
            }]),
        Node(
            package='denoc_dynamics', executable='trajectory_controller',
            name='trajectory_controller', output='screen',
            parameters=[params_file, {
                'robot_description': robot_description,
                'use_sim_time': use_sim_time,
            }]),
    ]
    rviz = _is_true(LaunchConfiguration('rviz').perform(context))
    if rviz:
        nodes.append(Node(
            package='rviz2', executable='rviz2', name='rviz2', output='screen',
            arguments=['-d', os.path.join(get_package_share_directory('denoc_dynamics'),
                                          'config', 'denoc_arm.rviz')],
            parameters=[{'use_sim_time': use_sim_time}]))
    if rviz or _is_true(LaunchConfiguration('use_rsp').perform(context)):
        nodes.append(Node(
            package='robot_state_publisher', executable='robot_state_publisher',
            name='robot_state_publisher', output='screen',
            parameters=[{'robot_description': robot_description,
                         'use_sim_time': use_sim_time}]))
    return nodes


def generate_launch_description():
    share = get_package_share_directory('denoc_dynamics')
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value=os.path.join(share, 'urdf', 'denoc_arm7.urdf'),
            description='URDF file of the simulated arm'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=['true', 'false'],
            description='publish /clock from the simulation and run the other nodes on it'),
        DeclareLaunchArgument(
            'integrator', default_value='rk4',
            choices=['rk4', 'ab4', 'semi_implicit_euler'],
            description='integrator of the simulation'),
        DeclareLaunchArgument(
            'use_rsp', default_value='false', choices=['true', 'false'],
            description='also start robot_state_publisher (TF of the simulated arm)'),
        DeclareLaunchArgument(
            'rviz', default_value='false', choices=['true', 'false'],
            description='also start rviz2 with config/denoc_arm.rviz (and '
                        'robot_state_publisher)'),
        DeclareLaunchArgument(
            'params_file', default_value=os.path.join(share, 'config', 'sim_arm.yaml'),
            description='YAML parameters of sim_node and dynamics_node'),
        OpaqueFunction(function=_nodes),
    ])
