"""
Which joint states a node follows: its own arm's, in time order, from one publisher.

A node that acts on ``joint_states`` (the trajectory controller, the dynamics node)
must not be steered by whoever else publishes on the topic: a second arm on the same
domain without a namespace, joint_state_publisher's GUI, a replayed bag.
joint_trajectory_controller reads only the state interfaces it owns; over a topic,
:class:`StateGate` keeps to the same rule as far as a topic allows:

* **one publisher**: the first publisher heard is followed (its GID, from the
  message info of the subscription).  States from any other publisher are rejected
  ('second publisher') until the followed one has been silent for ``handover``
  seconds (it restarted, or was replaced) and, where the node says which publishers
  the topic has (``publishers``), has left the topic: then the next publisher heard
  is followed, a line says so and :attr:`StateGate.handovers` counts it (the nodes
  report it in their diagnostics beside the rejections).  Silence is counted between
  the times the middleware received the states (the message info's
  ``received_timestamp``), not when the node got round to them: a node whose
  executor was held up for a second finds the arm's states and a stranger's side by
  side in its queue, and the arm's last ones may have been overwritten there; a
  paused simulation is silent but still on the topic.  Where the executor gives no
  message info (rclpy's EventsExecutor), :meth:`StateGate.check_graph` counts the
  publishers on the topic instead, and every state is rejected while there are two
  or more.
* **time order**: a state stamped more than ``max_lead`` seconds after the node's
  own clock is rejected ('stamp from the future'); where publishers cannot be told
  apart, so is one stamped before the previous accepted one ('stamp back in time':
  a replayed bag, a second arm started earlier), unless no state was admitted for
  ``handover`` seconds.  The followed publisher's stamps may go back (its simulated
  time was reset).  The stamp is checked, never used as the time: the node runs on
  its own clock (ROS time; the simulated time of ``/clock`` under
  ``use_sim_time``).  When that clock jumps back (a simulation reset or stopped),
  :meth:`StateGate.restart` forgets the previous stamp.

After each admitted state, :attr:`StateGate.previous_stamp` is the stamp of the state
admitted before it from the same publisher, or None where there is none to compare
with (the first state, the first after a new publisher was followed or after
:meth:`StateGate.restart`): a node bounds how far the arm moved between the two by
the stamps' advance (the trajectory controller's arm-jump check), never by the
stamps of two publishers or of two times.

The gate has one clock, ``wall`` (the system clock, as the middleware's
``received_timestamp``): it times the arrivals where the message info has none, and
the questions to the graph, at most one a ``GRAPH_PERIOD``.

States handed over in-process by the node's own simulation (``info`` None) are the
arm's by construction and always admitted.

Every rejection is counted and logged, throttled (:class:`~.joint_io.Rejections`).
"""

import time

from .joint_io import Rejected
from .ros_time import seconds

#: A state stamped more than this [s] after the node's clock is rejected: /clock and
#: joint_states of one simulated step may arrive in either order (one publish period).
MAX_STAMP_LEAD = 0.5

#: The followed publisher must be silent this long [s, wall] before another is followed.
PUBLISHER_HANDOVER = 1.0

#: The graph is asked at most this often [s] whether the followed publisher is there.
GRAPH_PERIOD = 0.25


def publisher_of(info):
    """Return the publisher GID (bytes) of a subscription's message info, or None."""
    if not info:
        return None
    gid = info.get('publisher_gid')
    if not gid:
        return None
    return bytes(gid.get('data', b'')) or None


def received_at(info, wall: float) -> float:
    """Return when the middleware received a message [s], from its info; else ``wall``."""
    received = info.get('received_timestamp') if info else None
    return 1e-9 * received if received else wall


class StateGate:
    """Admit the joint states of one publisher, in time order (module docstring)."""

    def __init__(self, rejections, max_lead: float = MAX_STAMP_LEAD,
                 handover: float = PUBLISHER_HANDOVER, wall=time.time, logger=None,
                 publishers=None):
        """
        Count and log rejections in ``rejections`` (a :class:`~.joint_io.Rejections`).

        ``publishers``: a callable returning the GIDs (bytes) of the topic's publishers
        (the node's graph), or None: then silence alone hands the topic over.
        ``wall``: the gate's one clock [s]: the states' arrival where the message info
        has no ``received_timestamp`` (the system clock, as the middleware's), and when
        the graph was last asked (:meth:`_still_on_topic`).
        """
        self.rejections = rejections
        self.max_lead = float(max_lead)
        self.handover = float(handover)
        self._wall = wall
        self._logger = logger
        self._publishers = publishers
        self.publisher = None          # GID of the followed publisher
        self.handovers = 0             # publishers followed after the first
        self.last_stamp = None         # stamp [s] of the latest admitted state
        self.previous_stamp = None     # the one before it, same publisher (module docstring)
        self._heard = -float('inf')    # arrival [s] of the latest admitted state
        self.publishers_on_topic = 1   # from check_graph, where there is no message info
        self._graph = None             # (followed GID, when asked, still on the topic)

    def restart(self):
        """Forget the previous stamps: the node's clock jumped back (a reset)."""
        self.last_stamp = self.previous_stamp = None

    def check_graph(self, count: int):
        """Record how many publishers the topic has (used without message info)."""
        self.publishers_on_topic = int(count)

    def admit(self, msg, now: float, info=None) -> bool:
        """
        Return True if the state ``msg`` is to be used at the node's time ``now`` [s].

        ``info`` is the subscription's message info ({} where the executor gives
        none); None when the process hands over its own simulation's states
        (denoc_sim_arm): those are the arm's by construction and always admitted.
        """
        stamp = seconds(msg.header.stamp)
        if info is None:
            return self._admitted(stamp, self.last_stamp)
        gid = publisher_of(info)
        wall = received_at(info, self._wall())
        silent = wall - self._heard >= self.handover
        previous = self.last_stamp     # None after a handover: another publisher's
        ordered = True                 # checked for a stamp back in time
        if gid is not None and gid == self.publisher:
            # the followed publisher: its stamps may restart (its simulated time was
            # reset); a second publisher is what the GID tells apart
            ordered = False
        elif gid is not None and self.publisher is not None:
            if not silent or self._still_on_topic():
                return self._reject('second publisher', 'joint states from a second '
                                    'publisher on the topic, while another one is followed '
                                    '(another arm on this domain, a GUI, a bag replay? '
                                    'give each arm its own namespace)')
            if self._logger is not None:
                self._logger.info('joint states: the followed publisher was silent for '
                                  f'{wall - self._heard:.1f} s and left the topic; '
                                  'following a new one')
            previous = None
            self.handovers += 1
        elif gid is None and self.publishers_on_topic > 1:
            return self._reject('second publisher', f'{self.publishers_on_topic} publishers '
                                'on the topic and no way to tell them apart (give each arm '
                                'its own namespace)')
        elif gid is None and silent:
            previous = None            # the order restarts: perhaps another publisher
        if ordered and previous is not None and stamp < previous and not silent:
            return self._reject('stamp back in time', f'stamp {stamp:.3f} s is before the '
                                f"previous state's {previous:.3f} s (a bag replay, a "
                                'second publisher?)')
        if stamp > now + self.max_lead:
            return self._reject('stamp from the future', f'stamp {stamp:.3f} s is '
                                f"{stamp - now:.3f} s ahead of this node's clock (more than "
                                f'{self.max_lead:g} s)')
        if gid is not None:
            self.publisher = gid
        self._heard = wall
        return self._admitted(stamp, previous)

    def _admitted(self, stamp, previous) -> bool:
        """Keep the stamps of an admitted state and the one before it; return True."""
        self.previous_stamp, self.last_stamp = previous, stamp
        return True

    def _still_on_topic(self) -> bool:
        """Return True if the followed publisher is among the topic's publishers."""
        if self._publishers is None:
            return False
        asked = self._wall()    # a stranger's flood asks the graph once a GRAPH_PERIOD
        if (self._graph is None or self._graph[0] != self.publisher
                or not 0.0 <= asked - self._graph[1] < GRAPH_PERIOD):   # (or wall set back)
            present = self.publisher in {bytes(gid) for gid in self._publishers()}
            self._graph = (self.publisher, asked, present)
        return self._graph[2]

    def _reject(self, reason, detail) -> bool:
        self.rejections.add(Rejected(reason, detail))
        return False
