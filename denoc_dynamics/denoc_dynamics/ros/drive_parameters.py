"""
The sim node's per-joint drive parameters: servo gains and command interfaces.

``servo.<joint>.kp`` and ``servo.<joint>.kd``, whose defaults are the model's
(:func:`denoc_dynamics.servo.default_gains` on each joint's effective inertia), set at
run time through :class:`.runtime_gains.RuntimeGains` (ramped in, refused if unstable
at the physics rate: :func:`denoc_dynamics.servo.unstable_gains`), and
``command_interfaces.<joint>``, the layout of the JointState commands
(:mod:`.joint_commands`), declared once the robot's joints are known.
"""

from functools import partial

from .joint_commands import JointCommandReader
from .parameters import JOINTS
from .parameters import SIM_NODE
from ..gain_ramp import GainRamp
from ..servo import unstable_gains

#: The per-joint entries of SIM_NODE.
SERVO_KP, SERVO_KD = f'servo.{JOINTS}.kp', f'servo.{JOINTS}.kd'
INTERFACES = f'command_interfaces.{JOINTS}'


def declare_drive_parameters(node, gains, sim, joints) -> JointCommandReader:
    """
    Declare the drive parameters of ``joints`` on ``node`` and set them on ``sim``.

    ``gains``: the node's :class:`.runtime_gains.RuntimeGains` of ``servo``, attached
    to ``sim``'s drives.  Return the reader of the JointState commands; RuntimeError
    on a bad value.
    """
    gains.ramp = None   # the model's own gains until they are attached
    drives = sim.drives
    values = SIM_NODE.declare_joints(node, joints, {SERVO_KP: drives.kp, SERVO_KD: drives.kd})
    interfaces = {joint: list(v) for joint, v in zip(joints, values[INTERFACES]) if v}
    try:
        drives.set_servo_gains(values[SERVO_KP], values[SERVO_KD])
        reader = JointCommandReader(joints, interfaces)
    except ValueError as exc:
        raise RuntimeError(str(exc)) from exc
    for i in unstable_gains(sim.model.inertia, sim.h, drives.kp, drives.kd):
        node.get_logger().warning(_unstable(sim, i, drives.kp, drives.kd))
    gains.attach(joints, GainRamp({'kp': drives.kp.copy(), 'kd': drives.kd.copy()}),
                 partial(_refusal, sim))
    return reader


def _refusal(sim, key, i, gains):
    """Return why the servo gains ``gains`` of joint ``i`` cannot be set, or None."""
    if i in unstable_gains(sim.model.inertia, sim.h, gains['kp'], gains['kd']):
        return _unstable(sim, i, gains['kp'], gains['kd'])
    return None


def _unstable(sim, i, kp, kd) -> str:
    return (f'servo gains of {sim.robot.joint_names[i]} (kp {kp[i]:g}, kd {kd[i]:g}) are '
            f'unstable at {sim.params.physics_rate:g} Hz on its smallest effective '
            f'inertia {sim.model.inertia[i]:.3g}')
