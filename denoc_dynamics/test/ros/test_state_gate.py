"""StateGate: one publisher's joint states, in time order, never a stamp as the time."""

from denoc_dynamics.ros.joint_io import Rejections
from denoc_dynamics.ros.state_gate import StateGate
import pytest
from sensor_msgs.msg import JointState


class Log:
    """Stands in for a logger: keeps the lines."""

    def __init__(self):
        self.lines = []

    def warning(self, text):
        self.lines.append(text)

    info = warning


class Wall:
    """A wall clock the test sets."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def state(stamp):
    msg = JointState()
    msg.header.stamp.sec = int(stamp)
    msg.header.stamp.nanosec = int(round((stamp % 1.0) * 1e9))
    return msg


def info(gid):
    return {'publisher_gid': {'implementation_identifier': 'rmw_fastrtps_cpp', 'data': gid}}


@pytest.fixture
def gate():
    wall = Wall()
    log = Log()
    gate = StateGate(Rejections(log, 'joint state', clock=wall), wall=wall, logger=log)
    gate.wall, gate.log = wall, log
    return gate


def test_one_publisher_is_followed_until_it_falls_silent(gate):
    assert gate.admit(state(10.0), 10.0, info(b'arm'))
    gate.wall.t = 0.5
    assert not gate.admit(state(10.01), 10.01, info(b'gui'))
    assert gate.rejections.counts == {'second publisher': 1}
    assert 'second publisher' in gate.log.lines[-1]
    # the arm's own stamps may go back: its simulated time was reset
    assert gate.admit(state(0.0), 10.02, info(b'arm'))
    gate.wall.t = 2.0                       # the arm silent for 1.5 s: a new one is followed
    assert gate.admit(state(10.5), 10.5, info(b'restarted arm'))
    assert 'following a new one' in gate.log.lines[-1]
    gate.wall.t = 2.1
    assert not gate.admit(state(10.6), 10.6, info(b'arm'))


def test_without_publisher_ids_time_order_and_the_publisher_count_decide(gate):
    assert gate.admit(state(10.0), 10.0, {})
    gate.wall.t = 0.1
    assert not gate.admit(state(9.0), 10.1, {})                 # a replay
    assert not gate.admit(state(10.2 + 0.6), 10.2, {})          # from the future
    assert gate.admit(state(10.2 + 0.4), 10.2, {})              # within MAX_STAMP_LEAD
    gate.check_graph(2)
    assert not gate.admit(state(10.7), 10.7, {})
    assert gate.rejections.counts == {'stamp back in time': 1, 'stamp from the future': 1,
                                      'second publisher': 1}
    gate.check_graph(1)
    gate.wall.t = 1.5                       # nothing admitted for 1.4 s: order restarts
    assert gate.admit(state(1.0), 11.0, {})
    gate.restart()                          # the node's own clock jumped back
    assert gate.admit(state(0.5), 0.5, {})


def test_the_processes_own_simulation_is_always_admitted(gate):
    gate.check_graph(3)
    assert gate.admit(state(5.0), 0.0, None) and gate.admit(state(1.0), 0.0, None)
    assert gate.rejections.total == 0
