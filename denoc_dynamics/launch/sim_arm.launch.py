"""
Launch the simulated arm: sim_node, dynamics_node, trajectory_controller (+ rsp, rviz2).

Launch arguments:
  namespace     namespace of the nodes, and so of their relative topics and services:
                joint_states, effort_commands, robot_description, ~/... (default: none);
                /clock stays global
  urdf          URDF file (default: the bundled denoc_arm7)
  use_sim_time  true: sim_node publishes /clock and the other nodes run on it (default false)
  integrator    rk4 | ab4 | semi_implicit_euler (default rk4)
  use_rsp       true: also start robot_state_publisher (default false)
  rviz          true: also start rviz2 with config/denoc_arm.rviz (and
                robot_state_publisher, which its TF needs; default false)
  params_file   YAML parameters (default: config/sim_arm.yaml of this package)

The dynamics node and the trajectory controller read the sim node's own copy of the
joint states, ``robot_joint_states`` in the namespace (published by nothing else;
``joint_states`` is for everyone), and each keeps to the first publisher it hears
there: a GUI, a bag replay or a second arm cannot steer them.

The launch arguments take precedence over params_file: each node is given its
namespace, so launch_ros writes them under the node's full name, after the file.
The trajectory controller compensates the simulated arm's friction model
(``simulated_friction`` in params_file: sim_node's regularization of the URDF
friction, raised on light joints for its integrator), from the same URDF, params_file
and integrator.

Run it with:
  ros2 launch denoc_dynamics sim_arm.launch.py use_rsp:=true use_sim_time:=true
"""

from denoc_dynamics.simulation import INTEGRATORS
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import FileContent
from launch.substitutions import LaunchConfiguration
from launch.substitutions import OrSubstitution
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

#: The dynamics node and the controller follow the sim node's own copy of its joint
#: states (robot_joint_states, published by nothing else), not joint_states, which a
#: GUI, a bag or another arm without a namespace may publish too.
OWN_STATES = ('joint_states', 'robot_joint_states')


def generate_launch_description():
    share = FindPackageShare('denoc_dynamics')
    namespace = LaunchConfiguration('namespace')
    urdf = LaunchConfiguration('urdf')
    use_sim_time = LaunchConfiguration('use_sim_time')
    params_file = LaunchConfiguration('params_file')
    rviz = LaunchConfiguration('rviz')
    return LaunchDescription([
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='namespace of the nodes and of their relative topics and services'),
        DeclareLaunchArgument(
            'urdf', default_value=PathJoinSubstitution([share, 'urdf', 'denoc_arm7.urdf']),
            description='URDF file of the simulated arm'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=['true', 'false'],
            description='publish /clock from the simulation and run the other nodes on it'),
        DeclareLaunchArgument(
            'integrator', default_value='rk4', choices=list(INTEGRATORS),
            description='integrator of the simulation'),
        DeclareLaunchArgument(
            'use_rsp', default_value='false', choices=['true', 'false'],
            description='also start robot_state_publisher (TF of the simulated arm)'),
        DeclareLaunchArgument(
            'rviz', default_value='false', choices=['true', 'false'],
            description='also start rviz2 with config/denoc_arm.rviz (and '
                        'robot_state_publisher)'),
        DeclareLaunchArgument(
            'params_file', default_value=PathJoinSubstitution([share, 'config', 'sim_arm.yaml']),
            description='YAML parameters of sim_node and dynamics_node'),
        Node(
            package='denoc_dynamics', executable='sim_node', name='sim_node',
            namespace=namespace, output='screen',
            parameters=[params_file, {
                'urdf_path': urdf,
                'integrator': LaunchConfiguration('integrator'),
                # the simulation is the clock: it never runs on /clock itself
                'publish_clock': use_sim_time,
            }]),
        Node(
            package='denoc_dynamics', executable='dynamics_node', name='dynamics_node',
            namespace=namespace, output='screen', remappings=[OWN_STATES],
            parameters=[params_file, {'urdf_path': urdf, 'use_sim_time': use_sim_time}]),
        Node(
            package='denoc_dynamics', executable='trajectory_controller',
            name='trajectory_controller', namespace=namespace, output='screen',
            remappings=[OWN_STATES],
            parameters=[params_file, {
                'urdf_path': urdf, 'use_sim_time': use_sim_time,
                # the friction model of the simulated arm follows its integrator
                'integrator': LaunchConfiguration('integrator')}]),
        Node(
            package='robot_state_publisher', executable='robot_state_publisher',
            name='robot_state_publisher', namespace=namespace, output='screen',
            condition=IfCondition(OrSubstitution(LaunchConfiguration('use_rsp'), rviz)),
            parameters=[{
                # value_type=str: launch_ros must not parse the XML as YAML
                'robot_description': ParameterValue(FileContent(urdf), value_type=str),
                'use_sim_time': use_sim_time,
            }]),
        Node(
            package='rviz2', executable='rviz2', name='rviz2', namespace=namespace,
            output='screen', condition=IfCondition(rviz),
            arguments=['-d', PathJoinSubstitution([share, 'config', 'denoc_arm.rviz'])],
            parameters=[{'use_sim_time': use_sim_time}]),
    ])
