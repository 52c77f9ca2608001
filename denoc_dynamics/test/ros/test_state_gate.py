"""StateGate: one publisher's joint states, in time order, never a stamp as the time."""

from denoc_dynamics.ros.joint_io import Rejections
from denoc_dynamics.ros.state_gate import GRAPH_PERIOD
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


def info(gid, received=None):
    """Return a message info from ``gid``, received at ``received`` [s] if given."""
    item = {'publisher_gid': {'implementation_identifier': 'rmw_fastrtps_cpp', 'data': gid}}
    if received is not None:
        item['received_timestamp'] = int(round(received * 1e9))
    return item


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


def test_a_node_held_up_is_not_a_silent_arm(gate):
    """Silence is counted between the states' arrivals, not when the node takes them."""
    assert gate.admit(state(10.0), 10.0, info(b'arm', received=100.0))
    gate.wall.t = 102.0                     # the node was held up for 2 s
    # the replay's state arrived 10 ms after the arm's last one: the arm is not silent
    assert not gate.admit(state(0.0), 12.0, info(b'bag', received=100.01))
    assert gate.admit(state(10.02), 12.0, info(b'arm', received=100.02))
    assert gate.rejections.counts == {'second publisher': 1}


def test_a_silent_arm_still_on_the_topic_is_followed_on(gate):
    """The queue may have lost the arm's states, or it is paused: it keeps the topic."""
    topic = [b'arm', b'bag']
    gate._publishers = lambda: list(topic)
    assert gate.admit(state(10.0), 10.0, info(b'arm', received=100.0))
    # the arm's states in between were overwritten in the queue (or it was paused)
    gate.wall.t = 101.5
    assert not gate.admit(state(0.0), 12.0, info(b'bag', received=101.5))
    assert gate.handovers == 0
    topic.remove(b'arm')                    # it left (restarted): a new one is followed
    gate.wall.t += GRAPH_PERIOD             # (the graph is asked once a GRAPH_PERIOD)
    assert gate.admit(state(12.1), 12.1, info(b'new arm', received=101.6))
    assert gate.handovers == 1 and 'left the topic' in gate.log.lines[-1]
    assert not gate.admit(state(0.0), 12.2, info(b'bag', received=101.7))


def test_the_graph_is_asked_once_a_period_of_the_gates_clock(gate):
    """A stranger's flood asks the graph once a GRAPH_PERIOD of ``wall``, the one clock."""
    asked = []

    def publishers():
        asked.append(gate.wall.t)
        return [b'arm', b'bag']
    gate._publishers = publishers
    assert gate.admit(state(10.0), 10.0, info(b'arm', received=100.0))
    gate.wall.t = 102.0                     # the arm silent for 2 s, still on the topic

    def stranger(wall):
        gate.wall.t = wall
        assert not gate.admit(state(0.0), 12.0, info(b'bag', received=wall))
    for wall in (102.0, 102.1, 102.0 + 0.99 * GRAPH_PERIOD):
        stranger(wall)
    assert asked == [102.0]
    stranger(102.0 + GRAPH_PERIOD)
    assert asked == [102.0, 102.0 + GRAPH_PERIOD]
    stranger(101.0)                         # the system clock was set back: asked again
    assert asked[-1] == 101.0 and len(asked) == 3
    assert gate.rejections.counts == {'second publisher': 5}


def test_the_previous_stamp_is_the_followed_publishers_own(gate):
    """previous_stamp: the state before, same publisher; None after a handover or restart."""
    assert gate.admit(state(10.0), 10.0, info(b'arm', received=100.0))
    assert (gate.previous_stamp, gate.last_stamp) == (None, 10.0)
    assert gate.admit(state(10.2), 10.2, info(b'arm', received=100.01))
    assert (gate.previous_stamp, gate.last_stamp) == (10.0, 10.2)
    # rejected states leave both as they were
    assert not gate.admit(state(50.0), 10.3, info(b'arm', received=100.02))
    assert not gate.admit(state(10.3), 10.3, info(b'gui', received=100.03))
    assert (gate.previous_stamp, gate.last_stamp) == (10.0, 10.2)
    # the arm's simulated time was reset: its stamps go back, still its own
    assert gate.admit(state(0.1), 10.4, info(b'arm', received=100.04))
    assert (gate.previous_stamp, gate.last_stamp) == (10.2, 0.1)
    # a new publisher followed: nothing of the old one's to compare with
    assert gate.admit(state(30.0), 30.0, info(b'new arm', received=102.0))
    assert gate.handovers == 1 and gate.previous_stamp is None
    assert gate.admit(state(30.01), 30.01, info(b'new arm', received=102.01))
    assert gate.previous_stamp == 30.0
    gate.restart()                          # the node's clock jumped back
    assert (gate.previous_stamp, gate.last_stamp) == (None, None)
    assert gate.admit(state(0.5), 0.5, info(b'new arm', received=102.02))
    assert (gate.previous_stamp, gate.last_stamp) == (None, 0.5)
    # in-process states are the arm's: each one's previous is the one before
    assert gate.admit(state(0.6), 0.6, None) and gate.previous_stamp == 0.5
