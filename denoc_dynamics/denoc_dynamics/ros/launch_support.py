"""
Whether a robot has a gripper (a finger coordinate), and if so the arm's joints.

The nodes read it from their robot (their ``gripper`` parameter): the effort commands
of the arm's controller cover the arm's joints (:func:`arm_joints`), the gripper
controller drives the finger (sim_node's JointState commands).  The launch file and
``denoc_sim_arm`` read :func:`gripper_layout` of the URDF to start the gripper
controller.
"""

from typing import List, Optional, Tuple

from .. import load_urdf


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


def gripper_finger(robot, gripper: str = 'auto') -> Optional[str]:
    """
    Return the finger coordinate of ``robot`` under the ``gripper`` setting, or None.

    ``gripper``: 'auto' (a gripper if a coordinate's name has 'finger' in it), 'false'
    (none), or the finger joint's name (ValueError if it is not a coordinate).
    """
    if gripper == 'false':
        return None
    try:
        return finger_joint(robot, '' if gripper in ('auto', 'true') else gripper)
    except ValueError:
        if gripper == 'auto':
            return None
        raise


def arm_joints(robot, gripper: str = 'auto') -> List[str]:
    """
    Return the arm's joints of ``robot``: its coordinates but the gripper's finger.

    Without a gripper (:func:`gripper_finger`), [] (the nodes' ``joints`` parameter
    then stays empty: every joint).
    """
    finger = gripper_finger(robot, gripper)
    return [] if finger is None else [name for name in robot.joint_names if name != finger]


def gripper_layout(urdf: str, gripper: str = 'auto') -> Tuple[Optional[str], List[str]]:
    """Return (finger joint or None, :func:`arm_joints`) of the robot in ``urdf``."""
    if gripper == 'false':
        return None, []
    robot = load_urdf(urdf)   # the whole tree: its coordinates, mimic joints following
    return gripper_finger(robot, gripper), arm_joints(robot, gripper)
