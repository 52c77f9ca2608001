"""
One parameter table per node: declared, described and validated once.

As joint_trajectory_controller declares its parameters in one YAML file
(``joint_trajectory_controller_parameters.yaml``: name, type, default value,
description, ``validation`` such as ``gt_eq<>`` or ``one_of<>``, and ``__map_joints``
for a value per joint), each node here has one :class:`ParameterTable` of
:class:`Param` entries, made of :class:`~denoc_dynamics.settings.Setting` rules:

* :meth:`ParameterTable.declare` declares every entry with its descriptor (type,
  description, range, the rule in words, read-only), checks each value by its rule and
  returns the values by name (:class:`Values`); a value that breaks its rule stops the
  node with a RuntimeError naming it (``run_node`` prints it in one line, exit code 1).
* An entry named ``prefix.__map_joints.key`` stands for one parameter per joint,
  ``prefix.<joint>.key``, declared by :meth:`ParameterTable.declare_joints` once the
  robot's joints are known (with per-joint defaults, such as gains computed from the
  model); a value already declared (the model reloaded) is kept.
* :meth:`ParameterTable.on_set` checks a runtime change (``ros2 param set``) by the same
  rules before rclpy accepts it, then asks the node's own ``hook`` (which may refuse it
  with a reason); read-only entries are refused by rclpy itself.

The node's tables are at the end of this module: the shared parts (the robot model
source, the effort-command interface) and one table per node.
"""

import re
from typing import Callable, Dict, NamedTuple, Optional, Sequence

import numpy as np
from rcl_interfaces.msg import FloatingPointRange
from rcl_interfaces.msg import IntegerRange
from rcl_interfaces.msg import ParameterDescriptor
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter

from .joint_commands import INTERFACES
from ..core.momentum_observer import HOLDS
from ..gain_ramp import RAMP_TIME
from ..settings import field_settings, Setting
from ..sim_settings import PhysicsParameters, START_MODE
from ..trajectory import START_TOLERANCE

#: The name part of a per-joint entry, as in joint_trajectory_controller's YAML.
JOINTS = '__map_joints'

DOUBLE, INTEGER, BOOL, STRING = (Parameter.Type.DOUBLE, Parameter.Type.INTEGER,
                                 Parameter.Type.BOOL, Parameter.Type.STRING)
DOUBLES, STRINGS = Parameter.Type.DOUBLE_ARRAY, Parameter.Type.STRING_ARRAY


class Param(NamedTuple):
    """One entry of a table: ``name``, rclpy type ``ptype``, its :class:`Setting`, read-only."""

    name: str
    ptype: Parameter.Type
    setting: Setting
    read_only: bool = True

    @property
    def per_joint(self) -> bool:
        """Return True for a ``prefix.__map_joints.key`` entry (one parameter per joint)."""
        return JOINTS in self.name.split('.')

    def joint_name(self, joint: str) -> str:
        """Return the parameter name of ``joint`` for a per-joint entry."""
        return '.'.join(joint if part == JOINTS else part for part in self.name.split('.'))

    def descriptor(self, joint: Optional[str] = None) -> ParameterDescriptor:
        """Return the descriptor: type, description, range, rule in words, read-only."""
        s = self.setting
        description = s.description.format(joint=joint) if joint else s.description
        descriptor = ParameterDescriptor(
            type=self.ptype.value, description=description, read_only=self.read_only,
            additional_constraints=s.constraints())
        low = s.ge if s.ge is not None else s.gt
        if low is not None or s.le is not None:
            if self.ptype == DOUBLE:
                descriptor.floating_point_range = [FloatingPointRange(
                    from_value=float(low if low is not None else -1e300),
                    to_value=float(s.le if s.le is not None else 1e300), step=0.0)]
            elif self.ptype == INTEGER:
                descriptor.integer_range = [IntegerRange(
                    from_value=int(low if low is not None else -2 ** 62),
                    to_value=int(s.le if s.le is not None else 2 ** 62), step=0)]
        return descriptor


def param(name, ptype, default, description, read_only=True, **rule) -> Param:
    """Return a :class:`Param`; ``rule``: ``gt``, ``ge``, ``le``, ``choices``, ``finite``."""
    return Param(name, ptype, Setting(default, description, **rule), read_only)


class Values(dict):
    """Parameter values by name; names without a dot also as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class ParameterTable:
    """The parameters of one node (see the module docstring)."""

    def __init__(self, *entries):
        """Make a table of :class:`Param` entries and of other tables' entries."""
        self.entries: Dict[str, Param] = {}
        for entry in entries:
            for p in (entry.entries.values() if isinstance(entry, ParameterTable) else [entry]):
                self.entries[p.name] = p
        self._patterns = [(re.compile('^' + r'\.'.join(
            '(.+)' if part == JOINTS else re.escape(part) for part in p.name.split('.')) + '$'),
            p) for p in self.entries.values() if p.per_joint]

    def declare(self, node) -> Values:
        """Declare the entries that are not per joint; return their checked values."""
        return Values((p.name, _declare(node, p, p.name, p.setting.default))
                      for p in self.entries.values() if not p.per_joint)

    def declare_joints(self, node, joints: Sequence[str],
                       defaults: Optional[Dict[str, Sequence]] = None) -> Dict[str, list]:
        """
        Declare every per-joint entry for ``joints``; return {entry name: [value per joint]}.

        ``defaults`` maps an entry name to one default per joint (else the table's).
        """
        values = {}
        for p in self.entries.values():
            if not p.per_joint:
                continue
            given = (defaults or {}).get(p.name)
            values[p.name] = [
                _declare(node, p, p.joint_name(joint),
                         p.setting.default if given is None else _plain(given[i]), joint)
                for i, joint in enumerate(joints)]
        return values

    def entry(self, name: str) -> Optional[Param]:
        """Return the entry that parameter ``name`` belongs to (per-joint ones too)."""
        if name in self.entries:
            return self.entries[name]
        for pattern, p in self._patterns:
            if pattern.match(name):
                return p
        return None

    def check(self, parameters) -> Optional[str]:
        """Return why one of ``parameters`` (rclpy Parameters) breaks its rule, or None."""
        for parameter in parameters:
            p = self.entry(parameter.name)
            problem = p.setting.problem(parameter.value) if p is not None else None
            if problem is not None:
                return f'{parameter.name} {problem}'
        return None

    def on_set(self, node, hook: Optional[Callable[[list], Optional[str]]] = None):
        """
        Check every runtime change of ``node``'s parameters by the table, then by ``hook``.

        ``hook(parameters)`` runs only when the table accepts the change; it returns
        None to accept it, or the reason it refuses it.
        """
        def callback(parameters):
            reason = self.check(parameters)
            if reason is None and hook is not None:
                reason = hook(parameters)
            return SetParametersResult(successful=reason is None, reason=reason or '')
        node.add_on_set_parameters_callback(callback)


def _plain(value):
    """Return a numpy scalar as the Python number rclpy takes."""
    return value.item() if isinstance(value, np.generic) else value


def _declare(node, p: Param, name: str, default, joint=None, constraints=''):
    """Declare ``name`` of entry ``p`` (once) and return its value, checked by its rule."""
    if not node.has_parameter(name):
        descriptor = p.descriptor(joint)
        if constraints:
            descriptor.additional_constraints = constraints
        if isinstance(default, (list, tuple)) and len(default) == 0:
            node.declare_parameter(name, p.ptype, descriptor)   # rclpy: an empty list is untyped
        else:
            node.declare_parameter(name, default, descriptor)
    result = value(node, name, default)
    problem = p.setting.problem(result)
    if problem is not None:
        raise RuntimeError(f'{name} {problem}')
    return result


def declare(node, name, ptype, default, description, read_only=False,
            min_value=None, max_value=None, additional_constraints=''):
    """
    Declare one parameter outside a table and return its value.

    For parameters a node adds at run time; a node's fixed parameters belong in its
    table.  ``min_value`` / ``max_value`` are inclusive bounds.
    """
    entry = param(name, ptype, default, description, read_only, ge=min_value, le=max_value)
    return _declare(node, entry, name, default, constraints=additional_constraints)


def value(node, name, default=None):
    """Return a declared parameter's value, or ``default`` if it is uninitialized."""
    try:
        result = node.get_parameter(name).value
    except ParameterUninitializedException:
        return default
    return default if result is None else result


# --------------------------------------------------------------------------- the tables

#: Default of ``max_dof``: far above any arm (a humanoid with hands has about 50 joints),
#: low enough that a description sent on the topic cannot keep a node busy for long.
MAX_DOF = 1000

_PHYSICS = field_settings(PhysicsParameters)

#: Where a node's URDF comes from (robot_model.DescriptionSource).
DESCRIPTION = ParameterTable(
    param('robot_description', STRING, '',
          'URDF XML of the robot; if empty, urdf_path is used'),
    param('urdf_path', STRING, '',
          'URDF file, used when robot_description is empty; if both are empty the model '
          'comes from the robot_description topic'))

#: The dynamics model built from it (robot_model.RobotModelSource).
ROBOT_MODEL = ParameterTable(
    DESCRIPTION,
    param('base_link', STRING, '', 'first (fixed) link of the model; empty: the URDF root'),
    param('tip_link', STRING, '',
          'last link of a chain from base_link; empty: the whole tree below base_link, '
          'mimic joints following their leaders'),
    param('gravity', DOUBLES, [0.0, 0.0, -9.81],
          'gravity vector [m/s^2] in the base_link frame (3 numbers)', finite=True),
    param('side_branches', STRING, 'lock',
          "with a tip_link, links off the base-tip path: 'lock' (rigid at zero) or 'drop' "
          '(ignored)', choices=('lock', 'drop')),
    param('max_dof', INTEGER, MAX_DOF,
          'largest number of joints accepted from a robot description (topic or '
          'parameter); a larger one is refused and the current model kept', ge=1))

#: A gripper beside the arm: the finger is left out of an empty ``joints``.
GRIPPER = param(
    'gripper', STRING, 'false',
    "the robot's gripper, driven by gripper_controller through JointState commands: "
    "'auto' (a coordinate whose name has finger in it), the finger joint's name, or "
    "'false' (none); with a gripper, an empty joints lists the other coordinates")

#: The effort-command interface of the dynamics node and the sim node.
EFFORT_COMMANDS = ParameterTable(
    param('joints', STRINGS, [],
          'joint order of the effort_commands array (ros2_control forward_command_controller '
          'convention); empty: the chain order (without the finger of a gripper)',
          unique=True),
    GRIPPER,
    Param('command_timeout', DOUBLE, _PHYSICS['command_timeout']))

#: The start pose, which the passive-physics budget samples too (denoc_dynamics.passive).
INITIAL_POSITIONS = param(
    'initial_positions', DOUBLES, [],
    'initial joint positions in the order of the coordinates; fewer (a pose of the arm, '
    'used with its gripper): the rest start at 0 or their nearest limit', finite=True)

#: What decides the simulated arm's friction model (denoc_dynamics.passive).
PASSIVE_PHYSICS = ('physics_rate', 'integrator', 'friction_velocity', 'limit_stop_frequency',
                   'limit_stop_damping_ratio')

#: /diagnostics of every node (diagnostics.Diagnostics).
DIAGNOSTICS = ParameterTable(
    param('diagnostic_updater.period', DOUBLE, 1.0,
          'publish /diagnostics every this many seconds (wall time); 0: never', ge=0.0))

#: The start-up payload of the sim, the dynamics node and the controller
#: (payload_service.PayloadService).
PAYLOAD = ParameterTable(
    param('payload.link', STRING, '',
          'link the start-up payload is fixed to; empty: no payload'),
    param('payload.mass', DOUBLE, 0.0, 'mass [kg] of the start-up payload', ge=0.0),
    param('payload.center_of_mass', DOUBLES, [0.0, 0.0, 0.0],
          'its center of mass [m] in the link frame'),
    param('payload.inertia', DOUBLES, [0.0] * 6,
          'its inertia [kg m^2] about the center of mass, link frame: '
          'ixx ixy ixz iyy iyz izz'))

#: The sim node's F/T sensors and virtual wall (sim_contact.SimContact).
SIM_CONTACT = ParameterTable(
    param('ft_sensors', STRINGS, [],
          'fixed joints with a simulated force/torque sensor; each publishes '
          '~/ft/<joint> (WrenchStamped in its child link frame)'),
    param('ft_bias', DOUBLES, [],
          'bias added to every F/T reading: 6 numbers, torque then force; empty: none'),
    param('ft_noise', DOUBLES, [],
          'standard deviation of the Gaussian noise of the F/T readings: 6 numbers, '
          'torque then force; empty: none'),
    param('wall_planes', DOUBLES, [],
          'virtual wall planes, 8 numbers each: a point (3) and the outward normal (3) '
          'in the base frame [m], stiffness [N/m], damping [N s/m]'),
    param('wall_links', STRINGS, [],
          "links whose origins the wall pushes; empty: the chain's last link"))

#: The dynamics node's momentum observer (external_torques.ExternalTorques).
OBSERVER = ParameterTable(
    param('estimate_external_torques', BOOL, False,
          'estimate the external joint torques from joint_states (effort: the measured '
          'link-side torques) by the momentum observer; publishes ~/external_torques, '
          '~/external_wrench and ~/contact'),
    param('external_torque_gain', DOUBLE, 100.0,
          'observer gain K [1/s]: the estimate follows the external torques with a '
          'time constant of 1/K', ge=1e-6),
    param('external_torque_hold', STRING, 'zero_order',
          "how joint_states' efforts moved between two states: 'zero_order' (each "
          "state's effort acted since the state before: drives holding a command per "
          "state, as sim_node's) or 'first_order' (straight between the states: torques "
          'that change continuously)', choices=HOLDS),
    param('external_wrench_frame', STRING, '',
          "the link whose origin ~/external_wrench refers to; empty: the chain's last "
          'link'),
    param('external_wrench_singular_value', DOUBLE, 0.05,
          "below this smallest singular value of the frame's Jacobian, the wrench's "
          'least squares are damped', ge=0.0),
    param('contact_threshold', DOUBLES, [2.0],
          '|external torque| [N m or N] above which ~/contact is true: one value for '
          'every joint, or one per joint'))

#: What a runtime gain's description adds (runtime_gains.RuntimeGains).
RUNTIME = f'; settable at runtime: ramped in over {RAMP_TIME:g} s, refused if negative'

SIM_NODE = ParameterTable(
    ROBOT_MODEL, EFFORT_COMMANDS, DIAGNOSTICS, PAYLOAD, SIM_CONTACT,
    *(Param(name, STRING if isinstance(s.default, str) else DOUBLE, s)
      for name, s in _PHYSICS.items() if name not in ('command_timeout', 'divergence_velocity')),
    param('publish_rate', DOUBLE, 100.0,
          'joint_states (and /clock) publishing rate [Hz of simulated time]', ge=1e-3),
    param('real_time_factor', DOUBLE, 1.0,
          'simulated seconds per wall second; 0: as fast as possible', ge=0.0),
    param('publish_clock', BOOL, False,
          'publish the simulated time on /clock (and stamp joint_states with it)'),
    param('lockstep', BOOL, False,
          'simulate the next publish period only once a command (effort_commands or '
          'the joint commands) answered the last joint state: a controller in the '
          "simulator's loop, never a period late under load (the real-time factor "
          'drops instead)'),
    param('lockstep_timeout', DOUBLE, 0.1,
          'lockstep: wall seconds to wait for the command before simulating on without '
          'it (counted)', gt=0.0),
    Param('start_mode', STRING, START_MODE), INITIAL_POSITIONS,
    param('joint_commands_topic', STRING, 'robot_joint_commands',
          'JointState commands (topic_based_ros2_control JointStateTopicSystem)'),
    param('joint_states_topic', STRING, 'robot_joint_states',
          'joint states also published here, best effort (JointStateTopicSystem); empty: '
          'not published'),
    param('publish_tf', BOOL, True,
          "publish /tf and /tf_static of the arm's links as robot_state_publisher does "
          '(false where robot_state_publisher runs)'),
    param('frame_prefix', STRING, '',
          "prefix of the TF frame names (robot_state_publisher's frame_prefix), e.g. "
          "'arm1/' for a namespaced arm"),
    param('status_period', DOUBLE, 5.0,
          'log the real-time factor every this many seconds; 0: never', ge=0.0),
    param(f'servo.{JOINTS}.kp', DOUBLE, 0.0,
          'kp [N m/rad] of the position and velocity servos of {joint} (default: from '
          'servo_frequency and servo_damping_ratio)' + RUNTIME + ' or unstable at the '
          'physics rate', read_only=False, ge=0.0, finite=True),
    param(f'servo.{JOINTS}.kd', DOUBLE, 0.0,
          'kd [N m s/rad] of the position and velocity servos of {joint} (default: from '
          'servo_frequency and servo_damping_ratio)' + RUNTIME + ' or unstable at the '
          'physics rate', read_only=False, ge=0.0, finite=True),
    param(f'command_interfaces.{JOINTS}', STRINGS, [],
          "command interfaces of {joint} in JointStateTopicSystem's compact layout (its "
          '<ros2_control> block): position, velocity, effort; empty: arrays with one entry '
          'per name only', choices=INTERFACES, unique=True))

TRAJECTORY_CONTROLLER = ParameterTable(
    ROBOT_MODEL, DIAGNOSTICS, PAYLOAD,
    param('joints', STRINGS, [],
          "joint order of the effort_commands array (must match the arm's); empty: the "
          'chain order (without the finger of a gripper)', unique=True),
    GRIPPER,
    param('kp', DOUBLE, 225.0,
          'position gain K_p [1/s^2] of every joint without gains.<joint>.kp '
          '(K_p = omega^2: natural frequency omega of the error)', ge=0.0),
    param('kd', DOUBLE, 30.0,
          'velocity gain K_d [1/s] of every joint without gains.<joint>.kd '
          '(K_d = 2 omega: critical damping)', ge=0.0),
    param('friction_compensation', BOOL, True,
          'add the URDF joint friction (<dynamics damping friction>) at the desired '
          'velocity plus friction_feedback times the position error'),
    param('friction_velocity', DOUBLE, 0.05,
          'regularization v_eps [rad/s] of the Coulomb friction friction*tanh(qd/v_eps) '
          'of every joint without gains.<joint>.friction_velocity', ge=1e-9),
    param('simulated_friction', BOOL, False,
          "raise each joint's friction_velocity where a simulated arm's integrator needs it, "
          'as sim_node does (denoc_dynamics.passive), from the settings both nodes are '
          'given: physics_rate, integrator, limit_stop_frequency, limit_stop_damping_ratio, '
          'initial_positions'),
    *(Param(name, STRING if name == 'integrator' else DOUBLE, _PHYSICS[name])
      for name in PASSIVE_PHYSICS if name != 'friction_velocity'),
    INITIAL_POSITIONS,
    param('friction_feedback', DOUBLE, 15.0,
          'lambda [1/s]: the friction compensation is evaluated at qd_d + lambda (q_d - q), '
          'which brings light joints with much friction to rest on the goal; 0: at qd_d',
          ge=0.0),
    param('friction_scale', DOUBLE, 1.0,
          'factor on the URDF damping and friction in the compensation (1: as the URDF '
          'says)', ge=0.0),
    param('allow_partial_joints_goal', BOOL, False,
          'accept trajectories and goals for a subset of the joints (the others hold), as '
          'joint_trajectory_controller'),
    param('joint_state_timeout', DOUBLE, 2.0,
          'a trajectory or goal received before the first joint state waits this long [s] '
          'for one, then starts from it; later it is rejected', ge=0.0),
    param('max_points', INTEGER, 5000, 'trajectories with more points are rejected', ge=1),
    param('max_duration', DOUBLE, 3600.0,
          'trajectories with a time_from_start later than this [s] are rejected', ge=0.0),
    param('constraints.stopped_velocity_tolerance', DOUBLE, 0.01,
          'a goal succeeds only with every joint slower than this [rad/s] (0: no check)',
          ge=0.0),
    param('constraints.goal_time', DOUBLE, 0.0,
          'time [s] after the last point to get within the goal tolerances before the goal '
          'aborts; 0: no limit', ge=0.0),
    param('constraints.start_tolerance', DOUBLE, START_TOLERANCE,
          'largest jump [rad, m] of the reference at the start of a trajectory (a first '
          'point at time 0, or a late start); a larger one is rejected', ge=0.0),
    param('check_effort_limits', BOOL, True,
          'reject trajectories and goals whose inverse dynamics (with the current '
          'payload), sampled along the interpolation, exceed the URDF <limit effort>'),
    param(f'gains.{JOINTS}.kp', DOUBLE, 225.0, 'kp [1/s^2] of joint {joint}' + RUNTIME,
          read_only=False, ge=0.0, finite=True),
    param(f'gains.{JOINTS}.kd', DOUBLE, 30.0, 'kd [1/s] of joint {joint}' + RUNTIME,
          read_only=False, ge=0.0, finite=True),
    param(f'gains.{JOINTS}.friction_velocity', DOUBLE, 0.05,
          'friction_velocity [rad/s] of joint {joint}', ge=1e-9),
    param(f'constraints.{JOINTS}.trajectory', DOUBLE, 0.0,
          'trajectory [rad, largest error while moving; 0: no limit] of joint {joint}',
          ge=0.0),
    param(f'constraints.{JOINTS}.goal', DOUBLE, 0.0,
          'goal [rad, largest error at the goal; 0: no limit] of joint {joint}', ge=0.0))

DYNAMICS_NODE = ParameterTable(
    ROBOT_MODEL, EFFORT_COMMANDS, DIAGNOSTICS, PAYLOAD, OBSERVER,
    param('inertia_every_n', INTEGER, 10,
          'publish ~/inertia_matrix every this many accepted joint states; 0: never', ge=0),
    param('publish_gravity_torques', BOOL, False,
          'publish ~/gravity_torques (JointState effort field) for every accepted state'),
    param('publish_bias_forces', BOOL, False,
          'publish ~/bias_forces (Coriolis + centrifugal + gravity, JointState effort '
          'field) for every accepted state'),
    Param('fd_method', STRING, _PHYSICS['fd_method']),
    param('max_velocity', DOUBLE, PhysicsParameters.divergence_velocity,
          'joint states (topic and services) with a joint speed above this [rad/s, m/s] '
          'are rejected; the default is the speed at which sim_node declares divergence',
          ge=0.0),
    param('task_space_frame', STRING, '',
          'publish ~/task_space (pose, Jacobian, J qd, J-dot qd, task-space inertia; '
          "local_world_aligned) of this link for every accepted joint state; '': off"),
    param('diagnostics_period', DOUBLE, 10.0,
          'log the message counters every this many seconds when they changed; 0: never',
          ge=0.0))

GRIPPER_CONTROLLER = ParameterTable(
    ROBOT_MODEL, DIAGNOSTICS,
    param('joint', STRING, '',
          'the finger coordinate (a prismatic joint); empty: the first joint whose name '
          'has finger in it'),
    param('max_effort', DOUBLE, 0.0,
          'force limit [N] of goals whose max_effort is 0; 0: the URDF effort limit',
          ge=0.0),
    param('kp', DOUBLE, 300.0, 'position gain [N/m] of the finger drive', ge=0.0),
    param('ki', DOUBLE, 1500.0,
          'integral gain [N/(m s)] of the finger drive: a blocked finger presses with '
          'its force limit', ge=0.0),
    param('kd', DOUBLE, 0.0,
          'velocity gain [N s/m] of the finger drive (the finger damping adds to it)',
          ge=0.0),
    param('goal_tolerance', DOUBLE, 0.0005,
          'a goal is reached once the finger rests within this [m] of it', ge=0.0),
    param('stopped_velocity', DOUBLE, 0.001, 'the finger rests when slower than this [m/s]',
          ge=0.0),
    param('stall_time', DOUBLE, 0.2,
          'resting short of the goal at the force limit this long [s] is a stall', ge=0.0),
    param('allow_stalling', BOOL, True,
          'a stalled goal (a grasp) succeeds with stalled = true; false: it aborts'),
    param('joint_commands_topic', STRING, 'robot_joint_commands',
          "the arm's JointState commands (sim_node's)"))

#: The arm_viewer's control panel: the nodes it drives and how it draws.
PANEL = ParameterTable(
    param('sim_node', STRING, 'sim_node', "the simulator node, relative to the viewer's "
          'namespace (Play, Pause, Step, Reset, ~/link_wrench, ~/ft/*)'),
    param('trajectory_controller', STRING, 'trajectory_controller',
          'the trajectory controller the joint sliders send moves to (relative)'),
    param('dynamics_node', STRING, 'dynamics_node',
          'the node whose ~/external_torques and ~/external_wrench are shown'),
    param('gripper_action', STRING, 'gripper_controller/gripper_cmd',
          'the GripperCommand action of the gripper buttons (relative)'),
    param('joint_commands_topic', STRING, 'robot_joint_commands',
          'JointState position commands of the sliders when no controller listens'),
    param('move_time', DOUBLE, 2.0, 'initial duration of a slider move [s]', ge=0.1),
    param('drag_link', STRING, '', "the link the drag handle pushes; '': the tip"),
    param('drag_stiffness', DOUBLE, 200.0, 'spring constant of the drag handle [N/m]',
          ge=0.0),
    param('drag_max_force', DOUBLE, 100.0, 'largest drag force [N]', ge=0.0),
    param('arrow_scale', DOUBLE, 0.01, 'length of the wrench arrows [m per N, N m]', ge=0.0),
    param('gripper_effort', DOUBLE, 0.0, 'max_effort of the gripper goals [N]; 0: no limit',
          ge=0.0),
    param('plot_window', DOUBLE, 10.0, 'time span of the live plots [s]', ge=1.0, le=600.0),
    param('plot_directory', STRING, '.', 'where Save PNG writes the plots'))

ARM_VIEWER = ParameterTable(
    DESCRIPTION, DIAGNOSTICS, PANEL,
    param('port', INTEGER, 8080,
          'TCP port of the web page; 0: any free port; if busy, the next free one',
          ge=0, le=65535),
    param('viewer_host', STRING, '127.0.0.1',
          "address the web server listens on; '0.0.0.0' to be reachable from other "
          'machines (who opens the page drives the arm)'),
    param('update_rate', DOUBLE, 30.0, 'most scene updates per second sent to the browser '
          '[Hz]', ge=1.0, le=1000.0),
    param('max_dof', INTEGER, MAX_DOF,
          'largest number of joints (fixed ones included) of a robot description the view '
          'draws; a larger one is refused and the robot shown kept', ge=1),
    param('mesh_directories', STRINGS, [],
          'directories below which file:// and absolute mesh paths may be opened, besides '
          "the directory of urdf_path; package:// meshes are read from their package's "
          'share directory only'))
