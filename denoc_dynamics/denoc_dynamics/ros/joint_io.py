"""
Joint-space input handling shared by the dynamics node and the sim node.

* :class:`JointStateReader` maps sensor_msgs/JointState onto the chain by joint name.
* :class:`EffortCommandReader` reads std_msgs/Float64MultiArray effort commands in the
  order of the ``joints`` parameter (the ros2_control forward_command_controller
  convention) and applies the ``command_timeout``.
* :class:`Rejections` counts rejected messages per reason and logs a throttled warning.

Both readers raise :class:`Rejected` for a message that must not be used.
"""

import copy
import math
import time
from typing import Dict, List, Optional, Sequence

import numpy as np
from rclpy.qos import HistoryPolicy
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos import qos_profile_services_default
from rclpy.qos import QoSProfile

from ..names import name_list
from ..names import repeated

#: At most one warning per reason and topic every this many seconds.
WARN_THROTTLE_SEC = 5.0

#: Requests queued per service, action service and command topic before the
#: middleware drops one: sized for bursts (40 clients calling at once, a 100 Hz goal
#: storm while a callback runs), ten times rclpy's default of 10.  A client needs it
#: too: every client of a service or action reads every answer (one response topic)
#: and keeps its own, so in a burst of 40 the other clients' answers push its own out
#: of a queue of 10 (12-19 of 40 goal requests answered, the server having answered
#: all 40; with clients' queues of 100, all 40).
REQUEST_DEPTH = 100


def with_depth(profile: QoSProfile, depth: int) -> QoSProfile:
    """
    Return a copy of the QoS ``profile`` keeping the last ``depth`` samples (KEEP_LAST).

    The history is set to KEEP_LAST whatever the base's: a depth means nothing under
    KEEP_ALL, where the middleware ignores it.  Every other policy is the base's.
    """
    profile = copy.copy(profile)
    profile.history = HistoryPolicy.KEEP_LAST
    profile.depth = depth
    return profile


REQUEST_QOS = with_depth(qos_profile_services_default, REQUEST_DEPTH)

#: joint_states as the dynamics node reads them: the sensor-data QoS (best effort,
#: volatile: a late state is never resent) with room for 0.1 s of states at 1 kHz
#: instead of its 5.  The reader's history holds what arrived and was not yet taken:
#: with 5, a pause of the node's process of more than 5 ms (the scheduler on a loaded
#: machine, a collection) dropped states; with 100 they wait and are all answered.
STATE_DEPTH = 100
STATE_QOS = with_depth(qos_profile_sensor_data, STATE_DEPTH)

#: The largest float64: |x| <= FLOAT_MAX holds exactly for a finite x (NaN compares false).
FLOAT_MAX = float(np.finfo(float).max)


class Rejected(ValueError):
    """A message that cannot be used; ``reason`` is a short key for the counters."""

    def __init__(self, reason: str, detail: str):
        """Keep the counter key ``reason`` and the human-readable ``detail``."""
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class Rejections:
    """Per-reason counters of rejected messages on one input, with throttled warnings."""

    def __init__(self, logger, what: str, clock=time.monotonic):
        """Count rejections of the input ``what`` (used in the log messages)."""
        self._logger = logger
        self.what = what
        self.counts: Dict[str, int] = {}
        self._clock = clock
        self._warned: Dict[str, float] = {}  # reason -> time of its last warning

    @property
    def total(self) -> int:
        """Return the number of rejected messages."""
        return sum(self.counts.values())

    def add(self, rejected: Rejected):
        """
        Count ``rejected`` and log a warning, at most one per reason every throttle period.

        Throttled here, not by rclpy, whose throttle is per line of code: one line
        logs every reason of every input.
        """
        reason = rejected.reason
        self.counts[reason] = self.counts.get(reason, 0) + 1
        now = self._clock()
        if now - self._warned.get(reason, -math.inf) < WARN_THROTTLE_SEC:
            return
        self._warned[reason] = now
        self._logger.warning(f'rejected {self.what} ({reason}, {self.counts[reason]} so '
                             f'far): {rejected.detail}')

    def __str__(self):
        """Return e.g. ``'3 (non-finite: 2, length: 1)'``."""
        if not self.counts:
            return '0'
        parts = ', '.join(f'{k}: {v}' for k, v in sorted(self.counts.items()))
        return f'{self.total} ({parts})'


def _finite_array(values, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if not np.isfinite(array).all():    # the method: np.all's dispatch costs as much
        raise Rejected('non-finite', f'{what} contains NaN or Inf')
    return array


class JointStateReader:
    """
    Map joint states onto the chain by name; names not in the chain are ignored.

    :meth:`read` (topic input) requires a position and a velocity for every name;
    :meth:`read_request` (service input) lets velocity and effort be empty (zero).
    A chain joint named twice, a NaN/Inf, or a joint speed above ``max_velocity``
    rejects the message.
    """

    _CACHE_SIZE = 16

    def __init__(self, joint_names: Sequence[str], max_velocity: float = math.inf):
        """Read states of the chain joints ``joint_names`` (chain order)."""
        self.joint_names = list(joint_names)
        self.n = len(self.joint_names)
        self.max_velocity = max_velocity
        self._chain_index = {name: i for i, name in enumerate(self.joint_names)}
        self._cache: Dict[tuple, np.ndarray] = {}
        #: the bound of |value| per row of :meth:`read` (position, velocity, effort)
        self._bounds = np.array([[FLOAT_MAX], [min(max_velocity, FLOAT_MAX)], [FLOAT_MAX]])

    def selection(self, names: Sequence[str]) -> np.ndarray:
        """Return, for each chain joint, its index in ``names``; Rejected if one is missing."""
        key = tuple(names)
        selection = self._cache.get(key)
        if selection is None:
            where = {name: i for i, name in enumerate(key)}
            missing = [name for name in self.joint_names if name not in where]
            if missing:
                raise Rejected('missing joint', 'no entry for chain joint(s) '
                                                f'{name_list(missing)}')
            if len(where) < len(key):
                twice = [name for name in repeated(key) if name in self._chain_index]
                if twice:
                    raise Rejected('duplicate joint', f'chain joint(s) {name_list(twice)} '
                                                      'named more than once')
            selection = np.array([where[name] for name in self.joint_names], dtype=int)
            if len(self._cache) >= self._CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = selection
        return selection

    def rows(self, names: Sequence[str]) -> np.ndarray:
        """Return the chain index of each of ``names``, -1 for a name not in the chain."""
        return np.array([self._chain_index.get(name, -1) for name in names], dtype=int)

    def unknown(self, names: Sequence[str]) -> List[str]:
        """Return the names that are not chain joints."""
        return [name for name in names if name not in self._chain_index]

    def read(self, msg, effort: bool = False):
        """
        Return (q, qd) in chain order from a JointState message, or raise Rejected.

        ``effort``: return (q, qd, tau), tau the efforts in chain order, or the
        :class:`Rejected` that says why the message's efforts cannot be used (none, not
        one per name, a NaN/Inf) while its positions and velocities can.  Only the chain
        joints must be finite (other joints are ignored altogether): one comparison,
        |value| <= its row's bound (the largest float; ``max_velocity`` for the
        velocities), checks the rows together; a failure is then told apart.
        """
        count = len(msg.name)
        position, velocity = msg.position, msg.velocity
        if len(position) != count or len(velocity) != count:
            raise Rejected('length', f'{len(position)} positions and '
                                     f'{len(velocity)} velocities for {count} names')
        selection = self.selection(msg.name)
        unusable = self._effort_unusable(msg.effort, count) if effort else None
        rows = ((position, velocity) if not effort or unusable is not None
                else (position, velocity, msg.effort))
        values = np.array(rows).take(selection, axis=1)
        if not (np.abs(values) <= self._bounds[:len(rows)]).all():
            unusable = self._out_of_bounds(values)
        if not effort:
            return values[0], values[1]
        return values[0], values[1], values[2] if unusable is None else unusable

    @staticmethod
    def _effort_unusable(values, count: int) -> Optional[Rejected]:
        """Return why the efforts of a state with ``count`` names are unusable, or None."""
        if len(values) == 0:
            return Rejected('no effort', 'the joint state has no effort (measured torques) '
                                         'for the external torque estimate')
        if len(values) != count:
            return Rejected('length', f'{len(values)} effort entries for {count} names')
        return None

    def _out_of_bounds(self, values: np.ndarray) -> Rejected:
        """
        Tell apart the failure of :meth:`read`'s bound check.

        Raise Rejected for a non-finite position or velocity, or a speed above
        ``max_velocity``; otherwise the efforts (third row) are not finite: return
        their Rejected.
        """
        for row, field in enumerate(('position', 'velocity')):
            if not np.isfinite(values[row]).all():
                raise Rejected('non-finite', f'{field} contains NaN or Inf')
        self._speed_checked(values[1])
        return Rejected('non-finite', 'effort contains NaN or Inf')

    def _speed_checked(self, qd: np.ndarray) -> np.ndarray:
        """Return ``qd``; Rejected if a joint moves faster than ``max_velocity``."""
        if qd.size and np.abs(qd).max() > self.max_velocity:
            k = int(np.argmax(np.abs(qd)))
            raise Rejected('out of range', f'joint {self.joint_names[k]!r} velocity '
                                           f'{qd[k]:.6g} exceeds max_velocity '
                                           f'{self.max_velocity:g}')
        return qd

    def read_request(self, msg, need_velocity=True, need_effort=True):
        """
        Return (q, qd, tau) in chain order from a service's JointState.

        Empty velocity or effort arrays mean zero.  Raise Rejected on a length mismatch,
        a missing or duplicate chain joint, a non-finite value or a joint speed above
        ``max_velocity``.
        """
        count = len(msg.name)
        if count == 0:
            raise Rejected('empty', 'the joint state has no names')
        arrays = [('position', msg.position, True), ('velocity', msg.velocity, need_velocity),
                  ('effort', msg.effort, need_effort)]
        out = []
        selection = self.selection(msg.name)
        for field, values, used in arrays:
            if not used or (field != 'position' and len(values) == 0):
                out.append(np.zeros(self.n))
                continue
            if len(values) != count:
                raise Rejected('length', f'{len(values)} {field} entries for {count} names')
            out.append(_finite_array(np.asarray(values)[selection], field))
        out[1] = self._speed_checked(out[1])
        return tuple(out)


def read_joint_state(reader: Optional['JointStateReader'], msg, rejections: Rejections,
                     effort: bool = False):
    """
    Return (q, qd) of a JointState by ``reader``, or None once the rejection is counted.

    ``effort``: (q, qd, tau) as :meth:`JointStateReader.read` gives them.

    ``reader`` is None while the node has no robot model: the message is then
    rejected as ``no model``.
    """
    if reader is None:
        rejections.add(Rejected('no model', 'no robot model yet'))
        return None
    try:
        return reader.read(msg, effort)
    except Rejected as exc:
        rejections.add(exc)
        return None


class EffortCommandReader:
    """
    Effort commands (std_msgs/Float64MultiArray) in the order of the ``joints`` parameter.

    Chain joints missing from ``joints`` get zero effort; entries of ``joints`` that are
    not chain joints are accepted and dropped (their names are in :attr:`ignored`).
    """

    def __init__(self, chain_joint_names: Sequence[str], joints: Sequence[str] = ()):
        """Map ``joints`` (empty: the chain order) onto the chain."""
        chain_joint_names = list(chain_joint_names)
        self.n = len(chain_joint_names)
        self.joints = list(joints) if joints else list(chain_joint_names)
        index = {name: i for i, name in enumerate(chain_joint_names)}
        self._source = np.array([i for i, name in enumerate(self.joints) if name in index],
                                dtype=int)
        self._target = np.array([index[name] for name in self.joints if name in index],
                                dtype=int)
        self.ignored = [name for name in self.joints if name not in index]
        #: The chain joints the commands cover, if not all (None: all of them).
        self.covered = (None if len(set(self._target.tolist())) == self.n
                        else np.unique(self._target))

    def read(self, msg) -> np.ndarray:
        """Return the effort in chain order, or raise Rejected."""
        if len(msg.data) != len(self.joints):
            raise Rejected('length', f'{len(msg.data)} efforts for {len(self.joints)} joints '
                                     f'{self.joints}')
        data = _finite_array(msg.data, 'effort command')
        tau = np.zeros(self.n)
        tau[self._target] = data[self._source]
        return tau
