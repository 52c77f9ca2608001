"""
What the launch files and ``denoc_sim_arm`` read from the URDF before starting nodes.

:func:`gripper_layout` says whether a robot has a gripper (a finger coordinate) and,
if so, the arm's joints: the effort commands of the arm's controller cover those,
the gripper controller drives the finger (sim_node's JointState commands).
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


def gripper_layout(urdf: str, gripper: str = 'auto') -> Tuple[Optional[str], List[str]]:
    """
    Return (finger joint or None, the arm's joints) of the robot in ``urdf``.

    ``gripper``: 'auto' (a gripper if a coordinate's name has 'finger' in it), 'false'
    (none), or the finger joint's name.  Without a gripper the arm's joints are []
    (the nodes' ``joints`` parameter then stays empty: every joint).
    """
    if gripper == 'false':
        return None, []
    robot = load_urdf(urdf)   # the whole tree: its coordinates, mimic joints following
    try:
        joint = finger_joint(robot, '' if gripper in ('auto', 'true') else gripper)
    except ValueError:
        if gripper == 'auto':
            return None, []
        raise
    return joint, [name for name in robot.joint_names if name != joint]
