"""
What the launch files compute before they start the nodes (no rclpy in here).

:func:`controller_friction_parameters` gives the trajectory controller the friction
model of the simulated arm it drives: sim_node raises the regularization velocity
v_eps of a joint's Coulomb friction ``friction * tanh(qd / v_eps)`` where its
integrator needs it (:class:`denoc_dynamics.simulation.Simulation`: 0.21 rad/s
instead of 0.05 on denoc_arm7's wrist), and a controller that compensates the
friction with another v_eps leaves that joint tens of mrad off its goal.  The values
come from the same :class:`~denoc_dynamics.simulation.Simulation` that sim_node
builds, from the same URDF and the same parameters file, so they cannot drift apart;
``denoc_sim_arm`` passes its sim's own values the same way.

:func:`gripper_layout` says whether a robot has a gripper (a finger coordinate) and,
if so, the arm's joints: the effort commands of the arm's controller cover those,
the gripper controller drives the finger (sim_node's JointState commands).
"""

from typing import Dict, List, Optional, Tuple

import yaml

from .. import load_urdf
from ..simulation import leading_pose
from ..simulation import PhysicsParameters
from ..simulation import Simulation

#: The sim_node parameters that decide its friction model, with their types.
PHYSICS_KEYS = {'physics_rate': float, 'integrator': str, 'friction_velocity': float,
                'limit_stop_frequency': float, 'limit_stop_damping_ratio': float}


def node_parameters(params_file: Optional[str], node: str, namespace: str = '') -> Dict:
    """
    Return the parameters a ROS parameters file gives node ``node`` in ``namespace``.

    The sections that apply, in order (a later one wins): ``/**``, ``/**/<node>``,
    ``<node>`` and ``/<namespace>/<node>``; nested keys are joined with dots.
    """
    if not params_file:
        return {}
    with open(params_file, 'r') as stream:
        document = yaml.safe_load(stream) or {}
    full = '/' + '/'.join(part for part in (namespace.strip('/'), node) if part)
    result = {}
    for key in ('/**', f'/**/{node}', node, full.lstrip('/'), full):
        section = document.get(key)
        if isinstance(section, dict):
            _flatten(section.get('ros__parameters', {}) or {}, '', result)
    return result


def _flatten(tree, prefix, out):
    for key, value in tree.items():
        if isinstance(value, dict):
            _flatten(value, f'{prefix}{key}.', out)
        else:
            out[f'{prefix}{key}'] = value


def simulated_friction_velocity(urdf: str, sim_parameters: Dict):
    """Return (joint names, v_eps per joint) of the Simulation sim_node would build."""
    robot = load_urdf(urdf, gravity=tuple(sim_parameters.get('gravity', (0.0, 0.0, -9.81))),
                      side_branches=sim_parameters.get('side_branches', 'lock'))
    physics = PhysicsParameters(**{key: kind(sim_parameters[key])
                                   for key, kind in PHYSICS_KEYS.items()
                                   if key in sim_parameters})
    initial = leading_pose(robot, sim_parameters.get('initial_positions'))
    sim = Simulation(robot, physics, initial_positions=initial)
    return robot.joint_names, sim.friction_velocity


def controller_friction_parameters(urdf: str, params_file: Optional[str],
                                   namespace: str = '', **overrides) -> Dict[str, float]:
    """
    Return ``gains.<joint>.friction_velocity`` of the simulated arm, for the controller.

    ``overrides`` are sim_node parameters given by the launch file after the
    parameters file (the ``integrator`` launch argument).
    """
    sim_parameters = node_parameters(params_file, 'sim_node', namespace)
    sim_parameters.update(overrides)
    names, velocities = simulated_friction_velocity(urdf, sim_parameters)
    return friction_velocity_parameters(names, velocities)


def friction_velocity_parameters(joint_names, velocities) -> Dict[str, float]:
    """Return the controller parameters ``gains.<joint>.friction_velocity`` of ``velocities``."""
    return {f'gains.{name}.friction_velocity': float(v)
            for name, v in zip(joint_names, velocities)}


def finger_joint(robot, name: str = '') -> str:
    """
    Return the finger coordinate of ``robot``: ``name``, else the first '*finger*' joint.

    ValueError if there is none, or ``name`` is not a coordinate.
    """
    names = list(robot.joint_names)
    if name:
        if name not in names:
            raise ValueError(f'the gripper joint {name!r} is not a coordinate of the robot '
                             f'(mimic joints follow theirs): {names}')
        return name
    for joint in names:
        if 'finger' in joint:
            return joint
    raise ValueError(f'no finger joint among {names}: set the joint parameter')


def gripper_layout(urdf: str, gripper: str = 'auto',
                   sim_parameters: Optional[Dict] = None) -> Tuple[Optional[str], List[str]]:
    """
    Return (finger joint or None, the arm's joints) of the robot in ``urdf``.

    ``gripper``: 'auto' (a gripper if a coordinate's name has 'finger' in it), 'false'
    (none), or the finger joint's name.  Without a gripper the arm's joints are []
    (the nodes' ``joints`` parameter then stays empty: every joint).
    """
    if gripper == 'false':
        return None, []
    sim_parameters = sim_parameters or {}
    robot = load_urdf(urdf, gravity=tuple(sim_parameters.get('gravity', (0.0, 0.0, -9.81))),
                      side_branches=sim_parameters.get('side_branches', 'lock'))
    try:
        joint = finger_joint(robot, '' if gripper in ('auto', 'true') else gripper)
    except ValueError:
        if gripper == 'auto':
            return None, []
        raise
    return joint, [name for name in robot.joint_names if name != joint]
