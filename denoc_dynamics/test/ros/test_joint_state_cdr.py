"""
The CDR reader and writer of dynamics_node (joint_state_cdr.py) against rclpy's own.

rclpy's ``serialize_message`` / ``deserialize_message`` (Fast DDS's type support) are
the reference: random and edge-case JointStates serialized by rclpy are read back
field by field; big-endian samples come from an encoder written here from the CDR
rules (struct, no alignment tables shared with the module) and are checked against
rclpy's reading of the same bytes first.  The writer's bytes are read by rclpy.
Then dynamics_node fed serialized samples is compared with the node fed the same
states as messages: the same outputs, the same rejections.
"""

import math
import random
import struct

from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.joint_state_cdr import CdrError
from denoc_dynamics.ros.joint_state_cdr import JointStateCdrReader
from denoc_dynamics.ros.joint_state_cdr import JointValuesCdrWriter
from denoc_dynamics.ros.joint_state_cdr import read_joint_state_bytes
from denoc_dynamics_interfaces.msg import JointAccelerations
import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message
from rclpy.serialization import serialize_message
from ros_helpers import Recorder
from sensor_msgs.msg import JointState

pytestmark = [pytest.mark.ros, pytest.mark.filterwarnings('ignore::RuntimeWarning')]

NAME_CHARS = 'abcdefghijklmnopqrstuvwxyz_0123456789/'


def random_state(rng, n=None, counts=None):
    """Return a random JointState: names of 0-9 characters (every alignment), values."""
    n = rng.randint(0, 9) if n is None else n
    names = [''.join(rng.choice(NAME_CHARS) for _ in range(rng.randint(0, 9)))
             for _ in range(n)]
    if rng.random() < 0.2 and names:
        names[0] = 'gelenk_\u00e4\u00df'     # two-byte UTF-8 characters
    counts = counts or [rng.choice((n, n, 0, rng.randint(0, 9))) for _ in range(3)]
    msg = JointState(name=names)
    msg.header.stamp.sec = rng.randint(-2**31, 2**31 - 1)
    msg.header.stamp.nanosec = rng.randint(0, 999_999_999)
    msg.header.frame_id = ''.join(rng.choice(NAME_CHARS) for _ in range(rng.randint(0, 7)))
    special = [math.inf, -math.inf, math.nan, -0.0, 5e-324, 1.7976931348623157e308]
    values = [rng.uniform(-1e3, 1e3) for _ in range(30)] + special
    msg.position = [rng.choice(values) for _ in range(counts[0])]
    msg.velocity = [rng.choice(values) for _ in range(counts[1])]
    msg.effort = [rng.choice(values) for _ in range(counts[2])]
    return msg


def assert_same_state(view, msg):
    assert (view.header.stamp.sec, view.header.stamp.nanosec) == (
        msg.header.stamp.sec, msg.header.stamp.nanosec)
    assert view.header.frame_id == msg.header.frame_id
    assert list(view.name) == list(msg.name)
    for field in ('position', 'velocity', 'effort'):
        got, want = getattr(view, field), np.asarray(getattr(msg, field), dtype=float)
        if isinstance(got, np.ndarray):           # the module's views
            assert got.dtype == np.float64 and got.dtype.isnative, field
        got = np.asarray(got, dtype=float)
        # bit for bit: NaN, -0.0 and subnormals included
        assert got.tobytes() == want.tobytes(), field


def cdr_encode(msg, big_endian):
    """
    Serialize a JointState by the CDR rules (independent of the module under test).

    Alignment is counted from the first byte after the 4-byte encapsulation header.
    """
    order = '>' if big_endian else '<'
    out = bytearray(b'\x00\x00\x00\x00' if big_endian else b'\x00\x01\x00\x00')

    def align(size):
        while (len(out) - 4) % size:
            out.append(0xAB)         # padding need not be zero (Fast DDS leaves garbage)

    def put(fmt, *values):
        align(struct.calcsize(order + fmt[0]))
        out.extend(struct.pack(order + fmt, *values))

    def string(text):
        raw = text.encode('utf-8') + b'\x00'
        put('I', len(raw))
        out.extend(raw)

    put('i', msg.header.stamp.sec)
    put('I', msg.header.stamp.nanosec)
    string(msg.header.frame_id)
    put('I', len(msg.name))
    for name in msg.name:
        string(name)
    for values in (msg.position, msg.velocity, msg.effort):
        put('I', len(values))
        for value in values:
            put('d', value)
    return bytes(out)


@pytest.mark.parametrize('seed', range(4))
def test_random_states_serialized_by_rclpy_read_the_same(seed):
    rng = random.Random(seed)
    reader = JointStateCdrReader()
    for _ in range(250):
        msg = random_state(rng)
        assert_same_state(reader.read(serialize_message(msg)), msg)


def test_edge_cases_empty_names_and_arrays_and_odd_lengths():
    reader = JointStateCdrReader()
    cases = [JointState(),
             JointState(name=['a']),
             JointState(name=['a', 'bb'], position=[1.0, 2.0]),               # no velocity
             JointState(name=['abc'], position=[], velocity=[1.0], effort=[]),
             JointState(name=['', ''], position=[0.5, 0.25], velocity=[0.0, 1.0],
                        effort=[3.0, 4.0]),                                  # empty names
             JointState(name=['abcd'] * 3, effort=[1.0])]                    # lengths differ
    cases[3].header.frame_id = 'ab'
    for msg in cases:
        assert_same_state(reader.read(serialize_message(msg)), msg)


@pytest.mark.parametrize('big_endian', [False, True])
def test_states_encoded_here_by_the_cdr_rules_read_as_rclpy_reads_them(big_endian):
    rng = random.Random(7)
    reader = JointStateCdrReader()
    for _ in range(200):
        msg = random_state(rng)
        data = cdr_encode(msg, big_endian)
        # the encoder is right: rclpy (Fast CDR) reads its bytes as the message
        assert_same_state(deserialize_message(data, JointState), msg)
        assert_same_state(reader.read(data), msg)


def test_the_names_kept_from_the_last_state_are_used_only_for_the_same_bytes():
    reader = JointStateCdrReader()
    a = JointState(name=['joint1', 'joint2'], position=[1.0, 2.0], velocity=[3.0, 4.0])
    assert reader.read(serialize_message(a)).name == ('joint1', 'joint2')
    b = JointState(name=['joint1', 'joint2', 'joint3'], position=[1.0, 2.0, 3.0])
    b.header.frame_id = 'world'                 # the names start elsewhere
    assert_same_state(reader.read(serialize_message(b)), b)
    c = JointState(name=['joint1', 'joint2'], position=[5.0, 6.0])
    c.header.frame_id = 'longer_frame'
    assert_same_state(reader.read(serialize_message(c)), c)
    # the same name bytes, then more: the count differs, so the kept names do not apply
    d = JointState(name=['joint1', 'joint2x'], position=[5.0, 6.0])
    assert_same_state(reader.read(serialize_message(d)), d)
    big = cdr_encode(a, big_endian=True)       # another byte order: its own names
    assert_same_state(reader.read(big), a)
    assert_same_state(reader.read(serialize_message(a)), a)


def test_truncated_and_foreign_samples_raise_cdr_error():
    reader = JointStateCdrReader()
    msg = JointState(name=['joint1', 'joint2'], position=[1.0, 2.0], velocity=[3.0, 4.0],
                     effort=[5.0, 6.0])
    data = cdr_encode(msg, big_endian=False)
    for cut in (0, 3, 10, 20, 30, len(data) - 1):
        with pytest.raises(CdrError):
            reader.read(data[:cut])
    with pytest.raises(CdrError, match='not XCDR1'):
        reader.read(b'\x00\x07' + data[2:])      # XCDR2 little-endian
    huge = bytearray(data)
    huge[20:24] = struct.pack('<I', 10**9)      # a name sequence of 10^9 strings
    with pytest.raises(CdrError):
        reader.read(bytes(huge))


def test_what_the_reader_does_not_take_goes_to_rclpy():
    class Refusing:

        def read(self, data):
            raise CdrError('refused')

    msg = JointState(name=['joint1'], position=[1.0], velocity=[2.0])
    got = read_joint_state_bytes(Refusing(), serialize_message(msg))
    assert isinstance(got, JointState) and got == msg
    view = read_joint_state_bytes(JointStateCdrReader(), serialize_message(msg))
    assert_same_state(view, msg)


@pytest.mark.parametrize('n', [0, 1, 2, 7, 9])
def test_written_outputs_are_read_by_rclpy_as_the_messages(n):
    rng = random.Random(n)
    names = [''.join(rng.choice(NAME_CHARS) for _ in range(rng.randint(0, 9)))
             for _ in range(n)]
    acc = JointValuesCdrWriter(JointAccelerations, names)
    efforts = JointValuesCdrWriter(JointState, names, empty_before=2)
    for _ in range(20):
        values = np.array([rng.uniform(-1e3, 1e3) for _ in range(n)])
        stamp = random_state(rng, 0).header.stamp
        data = acc.serialize(stamp, values)
        assert data.msg_type is JointAccelerations
        want = JointAccelerations(joint_names=names, acceleration=values.tolist())
        want.header.stamp = stamp
        assert deserialize_message(data, JointAccelerations) == want
        data = efforts.serialize(stamp, values)
        want = JointState(name=names, effort=values.tolist())
        want.header.stamp = stamp
        assert deserialize_message(data, JointState) == want
    with pytest.raises(ValueError):
        acc.serialize(stamp, np.zeros(n + 1))


# --- dynamics_node: serialized samples and messages give the same outputs ------------
def make_node(context, name):
    node = DynamicsNode(name, context=context, parameter_overrides=[
        Parameter('urdf_path', value=bundled_urdf()),
        Parameter('estimate_external_torques', value=True),
        Parameter('publish_gravity_torques', value=True),
        Parameter('publish_bias_forces', value=True),
        Parameter('diagnostics_period', value=0.0)])
    node.acc_pub, node.gravity_pub, node.bias_pub = Recorder(), Recorder(), Recorder()
    node.external.pubs = (Recorder(),) + node.external.pubs[1:]
    return node


def test_dynamics_node_reads_serialized_states_as_it_reads_messages(context):
    by_message, by_bytes = make_node(context, 'by_message'), make_node(context, 'by_bytes')
    try:
        names = list(by_message.robot.joint_names)
        rng = np.random.default_rng(3)
        t0 = by_message.get_clock().now().nanoseconds * 1e-9 - 5.0
        states = []
        for k in range(60):
            order = rng.permutation(7) if k % 3 else np.arange(7)   # any order
            msg = JointState(name=[names[i] for i in order])
            msg.position = rng.uniform(-1.0, 1.0, 7).tolist()
            msg.velocity = rng.uniform(-1.0, 1.0, 7).tolist()
            msg.effort = rng.uniform(-5.0, 5.0, 7).tolist()
            sec, nanosec = divmod(int((t0 + 0.001 * k) * 1e9), 10**9)
            msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
            if k % 10 == 4:                    # a foreign joint: ignored
                msg.name.append('gripper_finger')
                for field in ('position', 'velocity', 'effort'):
                    getattr(msg, field).append(0.01)
            bad = k % 10
            if bad == 1:
                msg.position[2] = math.nan
            elif bad == 2:
                msg.velocity = msg.velocity[:6]
            elif bad == 3:
                msg.name[3] = 'joint99'        # a chain joint missing
            elif bad == 5:
                msg.effort = []                # no effort: the observer refuses it
            elif bad == 6:
                msg.name[5] = msg.name[4]      # a chain joint named twice
            elif bad == 7:
                msg.velocity[1] = 1e9          # faster than max_velocity
            states.append(msg)
        for msg in states:
            by_message._on_joint_state(msg, {})
            by_bytes._on_joint_state_bytes(serialize_message(msg))
        by_bytes._on_joint_state_bytes(b'\x00\x07\x00\x00garbage')
        counts = dict(by_message.state_rejections.counts)
        assert by_message.accepted > 20 and len(counts) >= 5
        assert by_bytes.accepted == by_message.accepted
        counts['malformed'] = 1
        assert by_bytes.state_rejections.counts == counts
        for attr in ('acc_pub', 'gravity_pub', 'bias_pub'):
            got, want = getattr(by_bytes, attr).messages, getattr(by_message, attr).messages
            assert len(got) == len(want) == by_message.accepted
            assert got == want, attr
        torques = [node.external.pubs[0].messages for node in (by_message, by_bytes)]
        assert len(torques[0]) > 10 and torques[0] == torques[1]
        assert by_bytes.latest_state[0] == by_message.latest_state[0]
    finally:
        by_message.destroy_node()
        by_bytes.destroy_node()
