"""
Joint commands as sensor_msgs/JointState: the topic interface of topic_based_ros2_control.

ros2_control's ``joint_state_topic_hardware_interface/JointStateTopicSystem`` (and Isaac
Sim's ROS bridge) drive a simulator with JointState messages: the joints by name, and
per joint a position, a velocity or an effort, whichever command interfaces the joint
has.  :class:`JointCommandReader` turns such a message into the per-joint drive modes of
:mod:`denoc_dynamics.servo`:

* position (with a velocity, if one is given, as the velocity reference): position servo;
* velocity alone: velocity servo;
* effort alone: joint torque; with a position or a velocity, an effort feedforward.

Each of ``position``, ``velocity``, ``effort`` is empty, has one entry per name, or
(JointStateTopicSystem's layout for joints with different interfaces) one entry per
named joint that has this command interface in the ``command_interfaces.<joint>``
parameter, in the order of the names.  An unknown or repeated joint, a NaN or Inf, or
an array of any other length rejects the whole message (:class:`Rejected`).
"""

from typing import Dict, Sequence

import numpy as np

from .joint_io import Rejected
from ..names import name_list
from ..names import repeated
from ..servo import EFFORT
from ..servo import POSITION
from ..servo import VELOCITY

#: The command interfaces, in the order of :attr:`JointCommand` fields.
INTERFACES = ('position', 'velocity', 'effort')


class JointCommandReader:
    """Read JointState commands for the chain joints ``joint_names`` (chain order)."""

    def __init__(self, joint_names: Sequence[str],
                 interfaces: Dict[str, Sequence[str]] = None):
        """``interfaces``: the command interfaces per joint, for the compact layout."""
        self.joint_names = list(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.interfaces = {name: tuple(v) for name, v in (interfaces or {}).items()}
        bad = {name: v for name, v in self.interfaces.items()
               if name not in self._index or not set(v) <= set(INTERFACES)}
        if bad:
            raise ValueError(f'command_interfaces: unknown joints or interfaces {bad} '
                             f'(joints {self.joint_names}, interfaces {list(INTERFACES)})')

    def read(self, msg):
        """
        Return (joints, mode, tau, q_ref, qd_ref) of a JointState command, or raise Rejected.

        ``joints`` are chain indices; the other arrays have one entry per joint of
        ``joints``: the ones the message gives a value for, in the message's order.
        """
        names = list(msg.name)
        count = len(names)
        if count == 0:
            raise Rejected('empty', 'the joint command names no joint')
        unknown = [name for name in names if name not in self._index]
        if unknown:
            raise Rejected('unknown joint', f'unknown joint(s) {name_list(unknown)} (this '
                                            f'arm has {name_list(self.joint_names)})')
        if len(set(names)) < count:
            raise Rejected('duplicate joint', f'joint(s) {name_list(repeated(names))} named '
                                              'more than once')
        given = np.zeros((len(INTERFACES), count), dtype=bool)
        values = np.zeros((len(INTERFACES), count))
        for k, field in enumerate(INTERFACES):
            array = getattr(msg, field)
            if len(array) == 0:
                continue
            if len(array) == count:
                where = np.arange(count)
            else:
                where = [i for i, name in enumerate(names)
                         if field in self.interfaces.get(name, ())]
                if len(array) != len(where):
                    layout = (f' or {len(where)} for the named joints with a {field} '
                              'command interface (command_interfaces parameter)'
                              if self.interfaces else '')
                    raise Rejected('length', f'{len(array)} {field} entries for {count} '
                                             f'names{layout}')
            values[k, where] = array
            given[k, where] = True
        if not np.all(np.isfinite(values)):
            raise Rejected('non-finite', 'the joint command contains NaN or Inf')
        commanded = np.flatnonzero(given.any(axis=0))
        if commanded.size == 0:
            raise Rejected('empty', 'the joint command has no position, velocity or effort')
        position, velocity, effort = given[:, commanded]
        mode = np.where(position, POSITION, np.where(velocity, VELOCITY, EFFORT))
        joints = np.array([self._index[names[i]] for i in commanded], dtype=np.int64)
        q_ref, qd_ref, tau = values[:, commanded]
        return joints, mode, tau, q_ref, qd_ref
