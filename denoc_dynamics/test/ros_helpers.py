"""
Helpers of the ROS tests: isolation, node executables as subprocesses, an rclpy client.

Every test run isolates itself (:func:`isolate`): the session (test/conftest.py) and
each launch test file reserve a ROS domain that no other process on this machine
uses, and discovery stays on localhost.  The subprocesses inherit that environment.
Their stdout and stderr go to a temporary file, shown in assertion messages
(:meth:`NodeProcess.output`).  They run with Python's fault handler on: a crash
(SIGSEGV, SIGABRT from C++ std::terminate or from glibc) prints every thread's Python
stack, and :meth:`NodeProcess.finish` makes a process that hangs print them too.
"""

import contextlib
import os
import signal
import subprocess
import tempfile
import time

from ament_index_python.packages import get_package_prefix
import domain_coordinator
import rclpy
from rclpy.executors import SingleThreadedExecutor

#: Timeout for DDS discovery, process start-up and service answers [s].
DISCOVERY_TIMEOUT = 20.0

#: The domains reserved by this process (released when it exits).
_RESERVED = contextlib.ExitStack()


def isolate(environ=os.environ):
    """
    Reserve a ROS domain for this test process and its children; return its id.

    ``domain_coordinator`` (ROS's own, as ament_cmake_ros's isolated tests use it)
    hands out an id from 1 to 100 that no other process holding one uses, and keeps it
    reserved until this process exits.  Sets ROS_DOMAIN_ID and
    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST in ``environ``.
    """
    domain = _RESERVED.enter_context(domain_coordinator.domain_id())
    environ['ROS_DOMAIN_ID'] = str(domain)
    environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    return domain


def write_temp(suffix, text):
    """Write ``text`` to a new temporary file and return its path (left for the OS)."""
    stream = tempfile.NamedTemporaryFile('w', suffix=suffix, delete=False)
    with stream:
        stream.write(text)
    return stream.name


def assert_clean_exits(test, proc_info, proc_output):
    """
    Assert that every process of a launch test exited with 0 and printed no traceback.

    For a launch_testing post-shutdown test: launch stops each node with SIGINT.
    """
    import launch_testing.asserts
    launch_testing.asserts.assertExitCodes(proc_info)  # 0 only
    for process_name in proc_info.process_names():
        text = ''.join(line.text.decode() for line in proc_output[process_name])
        test.assertNotIn('Traceback', text, process_name)


def executable(name):
    """Return the installed console script ``name`` of denoc_dynamics."""
    path = os.path.join(get_package_prefix('denoc_dynamics'), 'lib', 'denoc_dynamics', name)
    assert os.access(path, os.X_OK), f'{path} is not installed: run make build'
    return path


def ros_args(node_name=None, **params):
    """Return ``--ros-args -p name:=value ...`` for ``params`` (lists as YAML)."""
    args = ['--ros-args']
    for name, value in params.items():
        if isinstance(value, bool):
            text = 'true' if value else 'false'
        elif isinstance(value, (list, tuple)):
            text = '[' + ', '.join(repr(float(v)) if not isinstance(v, str) else v
                                   for v in value) + ']'
        else:
            text = str(value)
        args += ['-p', f'{name}:={text}']
    if node_name:
        args += ['-r', f'__node:={node_name}']
    return args


def ros2(*args, timeout=60.0, tries=5):
    """
    Run a ros2 CLI command (in this test's domain); return the CompletedProcess.

    The first command starts the ros2 daemon, whose discovery of the nodes takes a
    moment, and a daemon may briefly lose a node it knew: "not found" is retried a few
    times, any other result is returned as it is.
    """
    for _ in range(tries):
        proc = subprocess.run(('ros2',) + args, capture_output=True, text=True,
                              timeout=timeout)
        if 'not found' not in (proc.stdout + proc.stderr).lower():
            break
        time.sleep(2.0)
    return proc


def sigint_at_default():
    """
    Give a child process SIGINT at its default action (``preexec_fn`` of Popen).

    A terminal starts a foreground command so; a job started with ``&`` or ``nohup``
    inherits SIGINT ignored, and a process that keeps it so (``ros2 launch`` does)
    never stops on the SIGINT a test sends it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(predicate, timeout=DISCOVERY_TIMEOUT, period=0.05):
    """Poll ``predicate()`` until it is true; return whether it became true in time."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(period)
    return True


class NodeProcess:
    """An executable started in the background; :meth:`stop` always cleans it up."""

    hung = None   # the timeout [s] :meth:`finish` waited in vain

    def __init__(self, name, args=()):
        """Start ``lib/denoc_dynamics/<name> args...``."""
        self.name = name
        self._log = tempfile.NamedTemporaryFile(prefix=f'{name}-', suffix='.log', delete=False)
        # the fault handler prints every thread's Python stack on SIGSEGV, SIGABRT,
        # SIGBUS, SIGFPE, SIGILL (until the interpreter finalizes)
        env = dict(os.environ, PYTHONUNBUFFERED='1', OPENBLAS_NUM_THREADS='1',
                   PYTHONFAULTHANDLER='1')
        self.proc = subprocess.Popen([executable(name)] + list(args), stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, preexec_fn=sigint_at_default)

    def alive(self):
        """Return True while the process runs."""
        return self.proc.poll() is None

    def output(self):
        """Return everything the process printed so far."""
        with open(self._log.name, 'r', errors='replace') as stream:
            return stream.read()

    def describe(self):
        """Return its state and whole output (stdout and stderr), for assertion messages."""
        code = self.proc.poll()
        if code is None:
            state = 'running'
        elif code < 0:
            state = f'killed by {signal.Signals(-code).name} ({code})'
        else:
            state = f'exited with {code}'
        if self.hung:
            state = f'did not exit in {self.hung:g} s; sent SIGABRT: {state}'
        return f'--- {self.name} [pid {self.proc.pid}] ({state}) output:\n{self.output()}\n---'

    def finish(self, timeout):
        """
        Wait up to ``timeout`` s for the process to exit; return its exit code.

        A process still running then is sent SIGABRT, so that its fault handler prints
        where every thread hangs (in :meth:`output`), and None is returned.
        """
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        self.hung = timeout
        self.proc.send_signal(signal.SIGABRT)
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        return None

    def send(self, *signals, gap=0.05):
        """Send ``signals`` to the process, ``gap`` seconds apart (while it runs)."""
        for k, signum in enumerate(signals):
            if k:
                time.sleep(gap)
            if self.alive():
                self.proc.send_signal(signum)

    def interrupt(self, timeout=10.0):
        """Send SIGINT (Ctrl-C) and return the exit code (None if it did not exit)."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        """Terminate (then kill) the process and remove its log."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(5.0)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(3.0)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self._log.close()
        try:
            os.unlink(self._log.name)
        except OSError:
            pass


def spin_until(executor, predicate, timeout=DISCOVERY_TIMEOUT, period=0.05):
    """
    Spin ``executor`` until ``predicate()`` is true; return whether it became true.

    ``period``: the longest one spin waits for work [s].
    """
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        executor.spin_once(timeout_sec=period)
    return True


def wait_all(executor, *conditions, timeout=DISCOVERY_TIMEOUT, detail='', period=0.05):
    """
    Spin ``executor`` (any: a RosClient's, a rig's own) until every condition holds.

    Each condition is ``(what, predicate)``; ``what`` is a string, or a callable
    returning one (read when the wait fails).  On a timeout the AssertionError names
    the conditions still false, then ``detail`` (a string, or a callable returning
    one: the processes' output).
    """
    if spin_until(executor, lambda: all(check() for _, check in conditions), timeout, period):
        return
    missing = [what() if callable(what) else what
               for what, check in conditions if not check()]
    raise AssertionError(f'after {timeout:g} s still waiting for: ' + '; '.join(missing)
                         + '\n' + (detail() if callable(detail) else detail))


class RosClient:
    """An rclpy node in its own context, spun on demand by the test."""

    def __init__(self, name):
        """Create the context, the node and a single-threaded executor."""
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_for(self, seconds):
        """Process callbacks for ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def spin_until(self, predicate, timeout=DISCOVERY_TIMEOUT):
        """Process callbacks until ``predicate()`` is true; return whether it became true."""
        return spin_until(self.executor, predicate, timeout)

    def wait_all(self, *conditions, timeout=DISCOVERY_TIMEOUT, detail=''):
        """Process callbacks until every one of ``conditions`` holds (:func:`wait_all`)."""
        wait_all(self.executor, *conditions, timeout=timeout, detail=detail)

    def collect(self, msg_type, topic, qos=10):
        """Subscribe to ``topic`` and return the list the messages are appended to."""
        messages = []
        self.node.create_subscription(msg_type, topic, messages.append, qos)
        return messages

    def call(self, client, request, timeout=DISCOVERY_TIMEOUT):
        """Call a service and return the response (AssertionError on a timeout)."""
        assert self.spin_until(client.service_is_ready, timeout), \
            f'service {client.srv_name} not available'
        future = client.call_async(request)
        assert self.spin_until(future.done, timeout), f'no answer from {client.srv_name}'
        return future.result()

    def parameters(self, node, names, timeout=DISCOVERY_TIMEOUT):
        """Return {name: value} of the parameters ``names`` of ``node`` (full name)."""
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python
        client = self.node.create_client(GetParameters, f'{node}/get_parameters')
        try:
            response = self.call(client, GetParameters.Request(names=list(names)), timeout)
        finally:
            self.node.destroy_client(client)
        return {name: parameter_value_to_python(value)
                for name, value in zip(names, response.values)}

    def close(self):
        """Destroy the node and shut the context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def matched(publisher, count=1):
    """
    Return a wait condition (:func:`wait_all`): ``count`` subscriptions matched.

    ``count``: a number, or a node: then every subscriber of the topic that the node's
    graph knows (the graph may list a subscriber before it has matched the publisher).
    A message published before discovery has matched the subscriber is lost to it (a
    volatile topic): a test that sends once waits for this first.
    """
    topic = publisher.topic_name
    if isinstance(count, int):
        wanted, which = (lambda: count), ''
    else:
        wanted, which = (lambda: count.count_subscribers(topic)), '; every one the graph knows'
    return (lambda: f'{wanted()} subscriber(s) of {topic} matched (has '
                    f'{publisher.get_subscription_count()}{which})',
            lambda: publisher.get_subscription_count() >= wanted())


def stamp(sec, nanosec=0):
    """Return a builtin_interfaces/Time."""
    from builtin_interfaces.msg import Time
    return Time(sec=sec, nanosec=nanosec)


# --- nodes built in this process (their rclpy context: the ``context`` fixture of conftest.py)
class Recorder:
    """
    Stands in for a publisher: keeps what is published (``copy`` of it, if given).

    A message published serialized (the nodes' :class:`.joint_state_cdr.Serialized`
    bytes, which know their type) is kept as the message rclpy reads from the bytes.
    """

    def __init__(self, copy=None, subscribers=1):
        self.messages = []
        self._copy = copy
        self.subscribers = subscribers   # what get_subscription_count() answers

    def publish(self, msg):
        msg_type = getattr(msg, 'msg_type', None)
        if isinstance(msg, bytes) and msg_type is not None:
            from rclpy.serialization import deserialize_message
            msg = deserialize_message(msg, msg_type)
        self.messages.append(msg if self._copy is None else self._copy(msg))

    def get_subscription_count(self):
        return self.subscribers


# --- the trajectory controller built in this process (its tests in ros/)
POSE = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0]
NAMES = [f'joint{k}' for k in range(1, 8)]
T0 = 1000.0   # the controller's clock [s] (and the joint states' stamps)


def make(context, **params):
    """Return a TrajectoryController on the bundled arm in this process (effort to a Recorder)."""
    from denoc_dynamics.resources import bundled_urdf
    from denoc_dynamics.ros.trajectory_controller import TrajectoryController
    from rclpy.parameter import Parameter
    params.setdefault('urdf_path', bundled_urdf())
    params.setdefault('use_sim_time', True)   # the clock: set by at() below
    node = TrajectoryController(context=context, parameter_overrides=[
        Parameter(name, value=value) for name, value in params.items()])
    node.effort_pub = Recorder()
    return node


def joint_state(t, q=POSE):
    """Return a JointState of the bundled arm stamped ``t``."""
    from sensor_msgs.msg import JointState
    msg = JointState(name=NAMES, position=[float(x) for x in q], velocity=[0.0] * 7)
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t % 1.0) * 1e9))
    return msg


def at(node, t):
    """Set the controller's clock (ROS time, as /clock would) to ``t`` [s]."""
    from rclpy.clock_type import ClockType
    from rclpy.time import Time
    node.get_clock().set_ros_time_override(Time(nanoseconds=int(round(t * 1e9)),
                                                clock_type=ClockType.ROS_TIME))


#: The message info of the arm's own joint_states publisher (its GID).
ARM = {'publisher_gid': {'implementation_identifier': 'rmw_fastrtps_cpp', 'data': b'arm'}}


def step(node, t, q=POSE, stamp=None, info=ARM):
    """One control step: the clock at ``t``, then a joint state (stamped ``t``)."""
    at(node, t)
    node.on_joint_state(joint_state(t if stamp is None else stamp, q), info)


def trajectory(names, points, stamp=0.0):
    """Return a JointTrajectory through ``points`` = [(time, positions)]."""
    import math

    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec = int(stamp)
    for t, positions in points:
        point = JointTrajectoryPoint(positions=[float(x) for x in positions])
        point.time_from_start = Duration(sec=math.floor(t),
                                         nanosec=int(round((t % 1.0) * 1e9)))
        msg.points.append(point)
    return msg


def target(offset=0.1):
    """Return the bundled arm's pose POSE shifted by ``offset`` on every joint."""
    return [q + offset for q in POSE]


class FakeGoalHandle:
    """Stands in for rclpy's ServerGoalHandle: records what the controller does with it."""

    def __init__(self, goal):
        self.request = goal
        self.is_cancel_requested = False
        self.states = []
        self.feedback = []

    def publish_feedback(self, msg):
        self.feedback.append(msg)

    def succeed(self):
        self.states.append('succeeded')

    def abort(self):
        self.states.append('aborted')

    def canceled(self):
        self.states.append('canceled')


def goal_of(msg, **fields):
    """Return a FakeGoalHandle of a FollowJointTrajectory goal of ``msg``."""
    from control_msgs.action import FollowJointTrajectory
    return FakeGoalHandle(FollowJointTrajectory.Goal(trajectory=msg, **fields))
