"""
sensor_msgs/JointState read from, and joint values written to, their serialized bytes (CDR).

dynamics_node takes ``joint_states`` as the middleware's serialized sample
(``create_subscription(..., raw=True)``) and sends its joint-space outputs as bytes
(rclpy's ``Publisher.publish`` takes bytes): rclpy's conversion of a JointState sample
into a Python message and of an output message back into CDR was about half of the
node's time per state.  The readers and writers here know the two layouts they need
and nothing else; every other encoding is left to rclpy (:func:`read_joint_state_bytes`
falls back to ``rclpy.serialization.deserialize_message``).

The encoding (OMG DDS-XTypes 1.3, section 7.4.3, "XCDR version 1", the plain CDR of
CORBA's GIOP; what Fast DDS and the other ROS 2 middlewares write for ROS messages):

* a 4-byte encapsulation header: the representation identifier, two bytes, big-endian
  on the wire (``00 00``: CDR big-endian, ``00 01``: CDR little-endian), then two
  option bytes (ignored on reading; zero on writing);
* then the message's fields in order, each primitive in the byte order of the
  identifier and aligned to its own size (1, 2, 4 or 8 bytes), counted from the first
  byte after the header, with zero padding before it;
* a string: a uint32 length that counts the terminating NUL, the UTF-8 bytes, the NUL
  (no alignment of its own beyond the length's 4);
* a sequence (``float64[]``, ``string[]``): a uint32 element count, then the elements
  (a float64 sequence's first element aligned to 8; an empty one has no padding);
* a nested message (``std_msgs/Header``: ``builtin_interfaces/Time stamp`` = int32 sec,
  uint32 nanosec; ``string frame_id``) is its fields in place.

sensor_msgs/JointState is ``header, string[] name, float64[] position, float64[]
velocity, float64[] effort``; denoc_dynamics_interfaces/JointAccelerations is
``header, string[] joint_names, float64[] acceleration``.  A sample may carry padding
after its last field (Fast DDS pads to a multiple of 4); it is ignored.
"""

import struct
import sys
from typing import Dict, Optional, Sequence, Tuple

from builtin_interfaces.msg import Time
import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

#: The representation identifiers of XCDR1 (plain CDR) -> byte order of the struct module.
BYTE_ORDERS = {b'\x00\x00': '>', b'\x00\x01': '<'}
#: This machine's identifier, used for writing.
NATIVE_ID = b'\x00\x01' if sys.byteorder == 'little' else b'\x00\x00'
HEADER_SIZE = 4    # the encapsulation header; alignment counts from its end

_UINT32 = {order: struct.Struct(order + 'I') for order in BYTE_ORDERS.values()}
_STAMP = {order: struct.Struct(order + 'iI') for order in BYTE_ORDERS.values()}
_FLOAT64 = {order: np.dtype(order + 'f8') for order in BYTE_ORDERS.values()}
_EMPTY = np.empty(0)
_EMPTY.flags.writeable = False


class CdrError(ValueError):
    """Bytes that are not a JointState in XCDR1 as this module reads it."""


class Header:
    """The ``header`` of a :class:`JointStateView`: ``stamp`` (builtin_interfaces/Time)."""

    __slots__ = ('stamp', 'frame_id')

    def __init__(self, stamp, frame_id: str):
        self.stamp = stamp
        self.frame_id = frame_id


class JointStateView:
    """
    A JointState as the readers of :mod:`.joint_io` use it, from serialized bytes.

    ``header.stamp`` is a builtin_interfaces/Time, ``name`` a tuple of str,
    ``position``, ``velocity`` and ``effort`` read-only float64 arrays (native order).
    """

    __slots__ = ('header', 'name', 'position', 'velocity', 'effort')

    def __init__(self, header, name, position, velocity, effort):
        self.header = header
        self.name = name
        self.position = position
        self.velocity = velocity
        self.effort = effort


def _aligned(offset: int, size: int) -> int:
    """Return ``offset`` (absolute) moved up to a multiple of ``size`` past the header."""
    return offset + (-(offset - HEADER_SIZE)) % size


def _string(data: bytes, offset: int, uint32) -> Tuple[str, int]:
    """Return the string at ``offset`` (4-aligned) and the offset after it."""
    (length,) = uint32.unpack_from(data, offset)
    offset += 4
    end = offset + length
    if end > len(data):
        raise CdrError(f'string of {length} bytes at offset {offset} runs past the '
                       f'{len(data)}-byte sample')
    if length == 0:                   # no NUL: tolerated as the empty string
        return '', end
    if data[end - 1] != 0:
        raise CdrError(f'string at offset {offset} is not NUL-terminated')
    try:
        return data[offset:end - 1].decode('utf-8'), end
    except UnicodeDecodeError as exc:
        raise CdrError(f'string at offset {offset} is not UTF-8: {exc}') from None


class JointStateCdrReader:
    """
    Read sensor_msgs/JointState samples in XCDR1 (module docstring) into views.

    The names of a topic's states are the same from one state to the next: the bytes of
    the last name sequence read are kept per byte order, and a sample whose bytes at
    that place are the same gets the same names without decoding them (parsing the same
    bytes from an offset of the same alignment gives the same strings and ends at the
    same place).
    """

    def __init__(self):
        """Start with no names seen."""
        self._names: Dict[str, Tuple[bytes, tuple]] = {}   # order -> (bytes, names)

    def read(self, data: bytes) -> JointStateView:
        """Return the JointState of ``data``; CdrError if it is not XCDR1 or malformed."""
        try:
            return self._read(data)
        except struct.error as exc:
            raise CdrError(f'sample of {len(data)} bytes ends early: {exc}') from None

    def _read(self, data: bytes) -> JointStateView:
        order = BYTE_ORDERS.get(bytes(data[:2]))
        if order is None or len(data) < HEADER_SIZE:
            raise CdrError(f'encapsulation {bytes(data[:2]).hex()} is not XCDR1 '
                           '(00 00 or 00 01)')
        uint32 = _UINT32[order]
        sec, nanosec = _STAMP[order].unpack_from(data, HEADER_SIZE)
        frame_id, offset = _string(data, HEADER_SIZE + 8, uint32)
        offset = _aligned(offset, 4)
        names, offset = self._name_sequence(data, offset, order)
        arrays = []
        dtype, size = _FLOAT64[order], len(data)
        for _ in range(3):            # position, velocity, effort
            offset += -offset % 4     # _aligned(offset, 4): the header is 4 bytes
            (count,) = uint32.unpack_from(data, offset)
            offset += 4
            if count:
                offset += (HEADER_SIZE - offset) % 8    # _aligned(offset, 8)
                end = offset + 8 * count
                if end > size:
                    raise CdrError(f'{count} float64 at offset {offset} run past the '
                                   f'{size}-byte sample')
                values = np.frombuffer(data, dtype, count, offset)
                if not dtype.isnative:
                    values = values.astype(float)   # the kernels take native order
                offset = end
            else:
                values = _EMPTY
            arrays.append(values)
        return JointStateView(Header(Time(sec=sec, nanosec=nanosec), frame_id), names,
                              *arrays)

    def _name_sequence(self, data: bytes, offset: int, order: str) -> Tuple[tuple, int]:
        """Return the names at ``offset`` (4-aligned) and the offset after them."""
        known = self._names.get(order)
        if known is not None and data.startswith(known[0], offset):
            return known[1], offset + len(known[0])
        uint32 = _UINT32[order]
        (count,) = uint32.unpack_from(data, offset)
        if 4 * count > len(data) - offset:
            raise CdrError(f'{count} names in a {len(data)}-byte sample')
        start, offset = offset, offset + 4
        names = []
        for _ in range(count):
            name, offset = _string(data, _aligned(offset, 4), uint32)
            names.append(name)
        names = tuple(names)
        self._names[order] = (bytes(data[start:offset]), names)
        return names, offset


def read_joint_state_bytes(reader: JointStateCdrReader, data: bytes):
    """
    Return the JointState of the serialized sample ``data``: a view, or an rclpy message.

    XCDR1 is read by ``reader``; anything else (another encapsulation, bytes the reader
    does not take) is handed to rclpy's ``deserialize_message``, whose error (a
    RuntimeError or ValueError) the caller gets if that fails too.
    """
    try:
        return reader.read(data)
    except CdrError:
        return deserialize_message(data, JointState)


class Serialized(bytes):
    """A serialized message (bytes for rclpy's ``publish``) that knows its ``msg_type``."""

    msg_type = None


class JointValuesCdrWriter:
    """
    Write a message ``header, string[] names, float64[] x empty_before, float64[] values``.

    That is denoc_dynamics_interfaces/JointAccelerations (``empty_before`` 0) and a
    sensor_msgs/JointState with only efforts (``empty_before`` 2: position and
    velocity empty), in XCDR1 of this machine's byte order (module docstring).
    Everything up to the values but the stamp is the same for every message: it is
    written once.  :meth:`serialize` returns a :class:`Serialized` of ``msg_type``.
    """

    def __init__(self, msg_type, names: Sequence[str], empty_before: int = 0,
                 frame_id: str = ''):
        """Prepare the bytes of ``msg_type`` for the joints ``names``."""
        order = '<' if NATIVE_ID == b'\x00\x01' else '>'
        self._serialized = type('Serialized' + msg_type.__name__, (Serialized,),
                                {'msg_type': msg_type, '__slots__': ()})
        self.n = len(names)
        uint32 = _UINT32[order]
        self._stamp = _STAMP[order]
        body = bytearray()           # from the end of the stamp (offset 12)

        def pad(size):        # alignment counts from the stamp's first byte
            body.extend(bytes(-(8 + len(body)) % size))

        def string(text):
            raw = text.encode('utf-8') + b'\x00'
            pad(4)
            body.extend(uint32.pack(len(raw)))
            body.extend(raw)

        string(frame_id)
        pad(4)
        body.extend(uint32.pack(len(names)))
        for name in names:
            string(name)
        for _ in range(empty_before):
            pad(4)
            body.extend(uint32.pack(0))
        pad(4)
        body.extend(uint32.pack(self.n))
        if self.n:
            pad(8)
        self._middle = bytes(body)

    def serialize(self, stamp, values: Optional[np.ndarray]) -> Serialized:
        """Return the message stamped ``stamp`` (Time) with ``values`` (n float64)."""
        values = np.ascontiguousarray(values, dtype=float)
        if values.shape != (self.n,):
            raise ValueError(f'{values.shape} values for {self.n} joints')
        head = NATIVE_ID + b'\x00\x00' + self._stamp.pack(stamp.sec, stamp.nanosec)
        return self._serialized(head + self._middle + values.tobytes())
