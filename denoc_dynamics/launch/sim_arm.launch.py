"""
Launch the simulated arm: sim_node, dynamics_node, trajectory_controller (+ rsp, rviz2).

With a gripper (a finger coordinate in the URDF, e.g. the bundled denoc_arm7_gripper),
also gripper_controller (GripperCommand, ParallelGripperCommand): the other nodes,
given the ``gripper`` argument, leave the finger out of their joints (the effort
commands that the trajectory controller sends cover the arm's joints), and the
gripper controller drives the finger.

Launch arguments:
  namespace     namespace of the nodes, and so of their relative topics and services:
                joint_states, effort_commands, robot_description, ~/... (default: none);
                /clock stays global
  urdf          URDF file (default: the bundled denoc_arm7)
  use_sim_time  true: sim_node publishes /clock and the other nodes run on it (default false)
  integrator    rk4 | ab4 | semi_implicit_euler (default rk4)
  use_rsp       true: also start robot_state_publisher (default false); sim_node then
                leaves /tf and /tf_static to it (otherwise it publishes them itself,
                with the frame prefix '<namespace>/' in a namespace)
  rviz          true: also start rviz2 with config/denoc_arm.rviz (and
                robot_state_publisher; default false)
  params_file   YAML parameters (default: config/sim_arm.yaml of this package)
  payload_link, payload_mass, payload_com, payload_inertia
                one start-up payload for all three nodes (their payload.* parameters):
                the link (default none), mass [kg], center of mass "[x, y, z]" [m] in the
                link frame, inertia "[ixx, ixy, ixz, iyy, iyz, izz]" [kg m^2] about it;
                ~/set_payload changes it at run time
  gripper       auto (a gripper controller if a joint's name has 'finger' in it), false,
                or the finger joint's name (default auto)

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

from typing import List

from denoc_dynamics.ros.launch_support import gripper_layout
from denoc_dynamics.sim_settings import INTEGRATORS
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitution import Substitution
from launch.substitutions import FileContent
from launch.substitutions import LaunchConfiguration
from launch.substitutions import NotSubstitution
from launch.substitutions import OrSubstitution
from launch.substitutions import PathJoinSubstitution
from launch.substitutions import PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

#: The launch arguments of the payload: (name, parameter, type, default, description).
PAYLOAD_ARGUMENTS = (
    ('payload_link', 'payload.link', str, '', 'link the payload is fixed to (empty: none)'),
    ('payload_mass', 'payload.mass', float, '0.0', 'payload mass [kg]'),
    ('payload_com', 'payload.center_of_mass', List[float], '[0.0, 0.0, 0.0]',
     'payload center of mass [m] in the link frame'),
    ('payload_inertia', 'payload.inertia', List[float], '[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]',
     'payload inertia [kg m^2] about its center of mass, link frame: '
     '[ixx, ixy, ixz, iyy, iyz, izz]'),
)


def payload_parameters():
    """Return the payload.* parameters of the three nodes, from the launch arguments."""
    return {parameter: ParameterValue(LaunchConfiguration(name), value_type=kind)
            for name, parameter, kind, _, _ in PAYLOAD_ARGUMENTS}


#: The dynamics node and the controller follow the sim node's own copy of its joint
#: states (robot_joint_states, published by nothing else), not joint_states, which a
#: GUI, a bag or another arm without a namespace may publish too.
OWN_STATES = ('joint_states', 'robot_joint_states')


class GripperJoint(Substitution):
    """The finger joint of the URDF under the gripper argument (gripper_layout), or ''."""

    def __init__(self, urdf, gripper):
        """Read the URDF ``urdf`` under ``gripper`` (launch configurations) when performed."""
        super().__init__()
        self.urdf, self.gripper = urdf, gripper

    def perform(self, context):
        """Return the finger joint's name, or '' without a gripper."""
        finger, _ = gripper_layout(self.urdf.perform(context), self.gripper.perform(context))
        return finger or ''


def generate_launch_description():
    share = FindPackageShare('denoc_dynamics')
    namespace = LaunchConfiguration('namespace')
    urdf = LaunchConfiguration('urdf')
    use_sim_time = LaunchConfiguration('use_sim_time')
    rviz = LaunchConfiguration('rviz')
    rsp = OrSubstitution(LaunchConfiguration('use_rsp'), rviz)
    gripper = LaunchConfiguration('gripper')
    finger = GripperJoint(urdf, gripper)
    params_file = LaunchConfiguration('params_file')
    integrator = LaunchConfiguration('integrator')
    # robot_state_publisher's frame_prefix for a namespaced arm: '<namespace>/'
    frame_prefix = PythonExpression(["'", namespace, "/' if '", namespace, "' else ''"])
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=description)
          for name, _, _, default, description in PAYLOAD_ARGUMENTS),
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
        DeclareLaunchArgument(
            'gripper', default_value='auto',
            description="auto: a gripper controller if a joint's name has 'finger' in it; "
                        "false: none; or the finger joint's name"),
        Node(
            package='denoc_dynamics', executable='sim_node', name='sim_node',
            namespace=namespace, output='screen',
            parameters=[params_file, {
                'urdf_path': urdf,
                'integrator': integrator,
                # with a gripper, the effort commands cover the arm's joints
                'gripper': ParameterValue(gripper, value_type=str),
                # the simulation is the clock: it never runs on /clock itself
                'publish_clock': use_sim_time,
                # TF from the simulation, unless robot_state_publisher runs
                'publish_tf': NotSubstitution(rsp),
                # robot_state_publisher's frame_prefix for a namespaced arm
                'frame_prefix': ParameterValue(frame_prefix, value_type=str),
            }, payload_parameters()]),
        Node(
            package='denoc_dynamics', executable='dynamics_node', name='dynamics_node',
            namespace=namespace, output='screen', remappings=[OWN_STATES],
            parameters=[params_file, {'urdf_path': urdf, 'use_sim_time': use_sim_time,
                                      'gripper': ParameterValue(gripper, value_type=str)},
                        payload_parameters()]),
        Node(
            package='denoc_dynamics', executable='trajectory_controller',
            name='trajectory_controller', namespace=namespace, output='screen',
            remappings=[OWN_STATES],
            parameters=[params_file, {
                'urdf_path': urdf, 'use_sim_time': use_sim_time,
                'gripper': ParameterValue(gripper, value_type=str),
                # the friction model of the simulated arm follows its integrator
                'integrator': integrator}, payload_parameters()]),
        Node(
            package='denoc_dynamics', executable='gripper_controller',
            name='gripper_controller', namespace=namespace, output='screen',
            remappings=[OWN_STATES],
            condition=IfCondition(PythonExpression(["'", finger, "' != ''"])),
            parameters=[params_file, {'urdf_path': urdf, 'use_sim_time': use_sim_time,
                                      'joint': ParameterValue(finger, value_type=str)}]),
        Node(
            package='robot_state_publisher', executable='robot_state_publisher',
            name='robot_state_publisher', namespace=namespace, output='screen',
            condition=IfCondition(rsp),
            parameters=[{
                'frame_prefix': ParameterValue(frame_prefix, value_type=str),
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
