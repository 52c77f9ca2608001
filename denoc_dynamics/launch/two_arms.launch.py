"""
Launch two simulated arms in one ROS graph, in the namespaces arm1 and arm2.

Each is sim_arm.launch.py in its own namespace: its own sim_node, dynamics_node and
trajectory_controller, with topics, services and the FollowJointTrajectory action
under /arm1 and /arm2 (/arm1/trajectory_controller/follow_joint_trajectory, ...).
Neither publishes /clock: both run on the wall clock.

Launch arguments:
  urdf          URDF file of both arms (default: the bundled denoc_arm7)
  params_file   YAML parameters of both (default: config/sim_arm.yaml of this package;
                a section /arm1/trajectory_controller applies to one arm only)

Run it with:
  ros2 launch denoc_dynamics two_arms.launch.py
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

NAMESPACES = ('arm1', 'arm2')


def generate_launch_description():
    share = FindPackageShare('denoc_dynamics')
    # one source per arm: a source loads its launch description once, and launch runs
    # an action only once
    arms = []
    for namespace in NAMESPACES:
        source = PythonLaunchDescriptionSource(
            PathJoinSubstitution([share, 'launch', 'sim_arm.launch.py']))
        arguments = {'namespace': namespace, 'use_sim_time': 'false',
                     'urdf': LaunchConfiguration('urdf'),
                     'params_file': LaunchConfiguration('params_file')}
        arms.append(IncludeLaunchDescription(source, launch_arguments=arguments.items()))
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value=PathJoinSubstitution([share, 'urdf', 'denoc_arm7.urdf']),
            description='URDF file of both simulated arms'),
        DeclareLaunchArgument(
            'params_file', default_value=PathJoinSubstitution([share, 'config', 'sim_arm.yaml']),
            description='YAML parameters of both arms'),
    ] + arms)
