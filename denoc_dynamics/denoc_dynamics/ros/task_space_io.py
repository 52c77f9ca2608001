"""
The task space of a frame as ROS messages (denoc_dynamics_interfaces/TaskSpace).

:func:`task_space_message` fills one TaskSpace from the core's API at (q, qd): pose,
Jacobian, J qd, J-dot qd and the task-space inertia.  Used by dynamics_node's
``~/get_task_space`` service and ``~/task_space`` topic.
"""

from geometry_msgs.msg import Pose
import numpy as np

from .viewer_model import quaternions
from ..core.task_space import REFERENCES

#: The reference of an empty request field.
DEFAULT_REFERENCE = 'local_world_aligned'


def pose_message(T, pose=None) -> Pose:
    """Return (or fill) a geometry_msgs/Pose of the 4x4 pose T."""
    pose = Pose() if pose is None else pose
    w, x, y, z = quaternions(np.asarray(T)[:3, :3])[0].tolist()
    pose.position.x, pose.position.y, pose.position.z = np.asarray(T)[:3, 3].tolist()
    pose.orientation.w, pose.orientation.x = w, x
    pose.orientation.y, pose.orientation.z = y, z
    return pose


def check_reference(reference: str) -> str:
    """Return the reference ('' is the default); ValueError naming the choices."""
    reference = reference or DEFAULT_REFERENCE
    if reference not in REFERENCES:
        raise ValueError(f'reference must be one of {REFERENCES} (empty: '
                         f'{DEFAULT_REFERENCE!r}), got {reference!r}')
    return reference


def task_space_message(msg, robot, q, qd, frame, reference, rows=None, damping=0.0,
                       singular_ok=False):
    """
    Fill the TaskSpace ``msg`` of ``frame`` at (q, qd) and return it.

    ValueError for an unknown frame or reference, bad rows or damping, a frame on the
    base (no task-space inertia) and, unless ``singular_ok``, a singular J M^-1 J^T;
    with ``singular_ok`` the inertia is then left empty.
    """
    reference = check_reference(reference)
    rows = tuple(range(6)) if rows is None or len(rows) == 0 else tuple(int(r) for r in rows)
    msg.frame, msg.reference = frame, reference
    msg.header.frame_id = robot.frames[0]
    pose_message(robot.frame_placement(q, frame), msg.pose)
    msg.joint_names = robot.joint_names
    msg.jacobian = robot.frame_jacobian(q, frame, reference).ravel().tolist()
    msg.velocity = robot.frame_velocity(q, qd, frame, reference).tolist()
    msg.acceleration_bias = robot.frame_acceleration_bias(q, qd, frame, reference).tolist()
    msg.rows = list(rows)
    try:
        inertia = robot.task_space_inertia(q, frame, rows, damping)
    except ValueError as exc:
        if not (singular_ok and 'singular' in str(exc)):
            raise
        inertia = np.zeros(0)
    msg.task_space_inertia = inertia.ravel().tolist()
    return msg
