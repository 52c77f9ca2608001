"""
The executor of the node executables (node_main): the dynamics node on rclpy's EventsExecutor.

The installed ``dynamics_node`` spins on ``make_executor('events')``; the DDS tests
(test_ros_dynamics_node.py, test_dynamics_launch.py) drive that executable.  Here the
same executor dispatches, in this process and over DDS, the node's joint_states
callback (joints mapped by name, a bad message rejected and counted) and a service.
A closed session has ended the middleware's participant (its threads) before the
process exits, with either executor, also for a node with an action server.  A process
whose main thread never gets back to the spin after a signal still ends, by the
shutdown deadline; a crash of a middleware thread in the teardown ends it with code 0
(one elsewhere still kills it); a closed session has put the signal wakeup back.
"""

import contextlib
import faulthandler
import gc
import importlib.util
import io
import os
import signal
import subprocess
import sys
import threading
import time

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.node_main import BACKSTOP_DUMP
from denoc_dynamics.ros.node_main import make_executor
from denoc_dynamics.ros.node_main import RosSession
from denoc_dynamics.ros.node_main import SHUTDOWN_DEADLINE
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.ros.teardown_guard import c_signal
from denoc_dynamics.ros.teardown_guard import FATAL_SIGNALS
from denoc_dynamics.ros.teardown_guard import MESSAGE
from denoc_dynamics.ros.teardown_guard import on_fatal_signal
from denoc_dynamics.ros.teardown_guard import TeardownGuard
from denoc_dynamics_interfaces.msg import JointAccelerations
from denoc_dynamics_interfaces.srv import GetInertiaMatrix
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.ros

TIMEOUT = 30.0


def _events_executor_class():
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return None
    return EventsExecutor


def test_make_executor_kinds():
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        assert isinstance(make_executor('single', context=context), SingleThreadedExecutor)
        events = make_executor('events', context=context)
        expected = 'EventsExecutor' if _events_executor_class() else 'SingleThreadedExecutor'
        assert type(events).__name__ == expected
        with pytest.raises(ValueError, match="'single' or 'events', got 'multi'"):
            make_executor('multi', context=context)
    finally:
        rclpy.try_shutdown(context=context)


def _spin_until(executor, predicate):
    end = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < end, 'timed out'
        executor.spin_once(timeout_sec=0.05)


def test_dynamics_node_on_the_events_executor():
    robot = load_urdf(bundled_urdf())
    context = rclpy.Context()
    rclpy.init(context=context)
    node = DynamicsNode(context=context, parameter_overrides=[
        Parameter('urdf_path', value=bundled_urdf())])
    peer = rclpy.create_node('events_executor_peer', context=context)
    executor = make_executor('events', context=context)
    try:
        outputs = []
        peer.create_subscription(JointAccelerations, '/dynamics_node/joint_accelerations',
                                 outputs.append, 10)
        states = peer.create_publisher(JointState, '/joint_states', qos_profile_sensor_data)
        client = peer.create_client(GetInertiaMatrix, '/dynamics_node/get_inertia_matrix')
        executor.add_node(node)
        executor.add_node(peer)

        q = np.linspace(-0.6, 0.9, robot.n)
        qd = np.linspace(0.4, -0.3, robot.n)
        order = list(reversed(range(robot.n)))  # by name, not by position
        msg = JointState(name=[robot.joint_names[i] for i in order],
                         position=q[order].tolist(), velocity=qd[order].tolist())
        msg.header.stamp.sec = 42

        def published():
            if not outputs:
                states.publish(msg)
            return bool(outputs)
        _spin_until(executor, published)
        out = outputs[0]
        assert out.header.stamp.sec == 42
        assert list(out.joint_names) == robot.joint_names
        np.testing.assert_allclose(out.acceleration,
                                   robot.forward_dynamics(q, qd, np.zeros(robot.n)),
                                   rtol=1e-12, atol=1e-12)

        accepted = node.accepted
        bad = JointState(name=msg.name, position=[float('nan')] * robot.n,
                         velocity=msg.velocity)
        bad.header.stamp.sec = 43

        def rejected():
            if node.state_rejections.counts.get('non-finite', 0) == 0:
                states.publish(bad)
            return node.state_rejections.counts.get('non-finite', 0) > 0
        _spin_until(executor, rejected)
        assert all(o.header.stamp.sec != 43 for o in outputs)
        assert node.accepted >= accepted

        _spin_until(executor, client.service_is_ready)
        request = GetInertiaMatrix.Request()
        request.state = JointState(name=robot.joint_names, position=q.tolist())
        future = client.call_async(request)
        _spin_until(executor, future.done)
        response = future.result()
        assert response.success, response.message
        np.testing.assert_allclose(np.reshape(response.inertia.data, (robot.n, robot.n)),
                                   robot.inertia_matrix(q), rtol=1e-12, atol=1e-12)
    finally:
        executor.shutdown()
        peer.destroy_node()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def signal_handlers():
    """Put back this process's SIGINT and SIGTERM handlers, which a RosSession replaces."""
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_the_spin_moves_the_start_up_objects_out_of_the_collectors_reach(signal_handlers):
    gc.unfreeze()
    try:
        with RosSession(['node_executor_test'], executor='events') as session:
            assert gc.get_freeze_count() == 0
            assert session.spin(done=lambda: True)
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def _middleware_threads():
    """Return {thread id: name} of this process's Fast DDS threads (named ``dds.*``)."""
    threads = {}
    for tid in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{tid}/comm') as stream:
                name = stream.read().strip()
        except OSError:   # ended meanwhile
            continue
        # the shared-memory watchdog is one per process, started with the first participant
        if name.startswith('dds.') and name != 'dds.shm.wdog':
            threads[int(tid)] = name
    return threads


@pytest.mark.parametrize('executor', ['single', 'events'])
def test_a_closed_session_has_ended_the_middleware_participant(executor, signal_handlers):
    """
    The sim node (an action server where simulation_interfaces is installed) leaves no thread.

    Left to the exit, the participant was torn down by C++ static destructors while its
    threads ran: the process aborted or hung now and then.
    """
    before = _middleware_threads()
    with RosSession(['node_executor_test', '--ros-args', '-p',
                     f'urdf_path:={bundled_urdf()}', '-p', 'status_period:=0.0'],
                    executor=executor) as session:
        node = session.add(SimNode())
        end = time.monotonic() + TIMEOUT
        session.spin(done=lambda: node.sim.t > 0.05 or time.monotonic() > end)
        assert node.sim.t > 0.05
        started = set(_middleware_threads()) - set(before)
        assert started, 'no middleware thread seen while the node ran'
        if importlib.util.find_spec('simulation_interfaces') is not None:
            assert node.waitables, 'the simulation action server is missing'
    left = {tid: name for tid, name in _middleware_threads().items() if tid in started}
    assert not left, f'threads of the participant left after close: {sorted(left.values())}'


#: A process whose main thread, after the signal, never gets back to the spin (Python
#: runs the handler inside the sleep, and the sleep goes on): as a main thread held in
#: the middleware's C++ code, which never runs the handler at all.
HELD = """
import time
from denoc_dynamics.ros.node_main import RosSession
with RosSession(['held_test']) as session:
    print('held', flush=True)
    time.sleep(60.0)
print('left the session', flush=True)
"""


def _signal_when(script, ready):
    """Run ``script``, SIGINT it once it printed the line ``ready``; (code, seconds, out, err)."""
    proc = subprocess.Popen(
        [sys.executable, '-c', script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline() == ready + '\n', proc.stderr.read()
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=SHUTDOWN_DEADLINE + 30.0)
        elapsed = time.monotonic() - start
        out, err = proc.communicate()
    finally:
        proc.kill()
    return code, elapsed, out, err


def test_a_process_held_after_the_signal_ends_by_the_deadline():
    code, elapsed, out, err = _signal_when(HELD, 'held')
    assert code == 0, err
    assert elapsed >= SHUTDOWN_DEADLINE - 0.2, f'ended after {elapsed:.2f} s: {err}'
    assert 'left the session' not in out
    assert f'has not ended {SHUTDOWN_DEADLINE:g} s after the signal' in err, err
    assert 'time.sleep' in err or 'line 6' in err, err   # where the main thread stood


#: A process whose teardown is held with the interpreter's lock, as the CI saw sim_node
#: held in rclpy's ``destroy_when_not_in_use`` while Fast DDS deleted an entity (a C call
#: through ``ctypes.PyDLL`` keeps the lock the same way): no Python thread runs then,
#: the watchdog's timer neither.
HELD_WITH_THE_LOCK = """
import ctypes
import rclpy.node
from denoc_dynamics.ros import node_main
node_main.destroy_node = lambda node: ctypes.PyDLL(None).sleep(60)
with node_main.RosSession(['held_test']) as session:
    session.add(rclpy.node.Node('held_test'))
    print('spinning', flush=True)
    session.spin()
print('left the session', flush=True)
"""


def test_a_process_held_with_the_interpreters_lock_ends_by_the_backstop_with_code_0():
    code, elapsed, out, err = _signal_when(HELD_WITH_THE_LOCK, 'spinning')
    assert code == 0, err
    # after the deadline and the stacks (the exit is due at SHUTDOWN_DEADLINE +
    # BACKSTOP_EXIT, under launch's 5 s; the upper bound leaves room for a loaded machine)
    assert SHUTDOWN_DEADLINE + BACKSTOP_DUMP - 0.1 <= elapsed < SHUTDOWN_DEADLINE + 3.0, (
        f'{elapsed:.2f} s: {err}')
    assert 'left the session' not in out
    assert 'has not ended' not in err, err   # the Python timer did not run: the lock is held
    assert 'in <lambda>' in err, err   # faulthandler's C thread: where the main thread stood


#: A process whose middleware crashes in the teardown, as a thread of Fast DDS did in a
#: CI run (sim_node killed by SIGSEGV while its main thread was in rclpy's
#: ``ActionServer.destroy``): a thread other than the main one faults or aborts while
#: the nodes are destroyed (``teardown``), or, for the contrast, in a timer's callback
#: (``callback``), where nothing of the shutdown has begun.
CRASHING = """
import ctypes, os, sys, threading
import rclpy.node
from denoc_dynamics.ros import node_main
crash = {'SIGSEGV': lambda: ctypes.string_at(0), 'SIGABRT': os.abort}[sys.argv[1]]
def crash_in_a_thread(*ignored):
    thread = threading.Thread(target=crash, name='a middleware thread')
    thread.start()
    thread.join()
if sys.argv[2] == 'teardown':
    node_main.destroy_node = crash_in_a_thread
with node_main.RosSession(['crash_test']) as session:
    node = session.add(rclpy.node.Node('crash_test'))
    if sys.argv[2] == 'callback':
        node.create_timer(0.05, crash_in_a_thread)
    session.spin(done=lambda: sys.argv[2] == 'teardown')
print('left the session', flush=True)
"""


def _crash(kind, where):
    env = dict(os.environ, PYTHONFAULTHANDLER='1')
    proc = subprocess.run([sys.executable, '-c', CRASHING, kind, where], env=env, text=True,
                          capture_output=True, timeout=SHUTDOWN_DEADLINE + 60.0)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize('kind', ['SIGSEGV', 'SIGABRT'])
def test_a_crash_of_a_middleware_thread_in_the_teardown_ends_with_code_0(kind):
    code, out, err = _crash(kind, 'teardown')
    assert code == 0, err
    assert MESSAGE.decode() in err, err
    assert err.index('Fatal Python error') < err.index(MESSAGE.decode()), err   # stacks first
    assert "'a middleware thread'" in err or 'in crash_in_a_thread' in err, err
    assert 'left the session' not in out


@pytest.mark.parametrize('kind', ['SIGSEGV', 'SIGABRT'])
def test_a_crash_outside_the_teardown_is_not_hidden(kind):
    code, out, err = _crash(kind, 'callback')
    assert code == -getattr(signal, kind), err
    assert MESSAGE.decode() not in err, err
    assert 'Fatal Python error' in err, err


def _c_handlers():
    """Each fatal signal's handler in the C library (Python's getsignal sees only its own)."""
    handlers = {}
    for signum in FATAL_SIGNALS:
        handlers[signum] = c_signal(signum, None)
        c_signal(signum, handlers[signum])
    return handlers


def test_the_teardown_guard_installs_its_handler_and_puts_back_the_previous():
    was_enabled = faulthandler.is_enabled()
    faulthandler.disable()
    try:
        before = _c_handlers()
        with TeardownGuard() as guard:
            assert guard.armed
            assert set(_c_handlers().values()) == {on_fatal_signal.address}
        assert not guard.armed
        assert _c_handlers() == before
        # faulthandler stays in front (its own handler is what the C library sees), also
        # under a sys.stderr without a file descriptor (a test's capture)
        faulthandler.enable(file=sys.__stderr__)
        with_faulthandler = _c_handlers()
        with contextlib.redirect_stderr(io.StringIO()), TeardownGuard() as guard:
            assert guard.armed
            assert faulthandler.is_enabled()
            assert _c_handlers() == with_faulthandler
        assert faulthandler.is_enabled()
        assert _c_handlers() == with_faulthandler
    finally:
        faulthandler.disable()
        if was_enabled:
            faulthandler.enable(file=sys.__stderr__, all_threads=True)


def test_the_exit_timer_is_cancelled_before_it_fires():
    code = subprocess.call([sys.executable, '-c', (
        'import time, sys\n'
        'from denoc_dynamics.ros.node_main import ExitTimer\n'
        'timer = ExitTimer(0.3, code=7)\n'
        'assert timer.armed\n'
        'timer.cancel()\n'
        'time.sleep(0.6)\n'
        'sys.exit(3)\n')])
    assert code == 3
    fired = subprocess.call([sys.executable, '-c', (
        'import time, sys\n'
        'from denoc_dynamics.ros.node_main import ExitTimer\n'
        'timer = ExitTimer(0.3, code=7)\n'
        'time.sleep(5.0)\n'
        'sys.exit(3)\n')])
    assert fired == 7


def test_a_closed_session_puts_the_signal_wakeup_back(signal_handlers):
    previous = signal.set_wakeup_fd(-1)
    assert previous == -1, 'a wakeup fd was set before the session'
    with RosSession(['node_executor_test'], executor='events') as session:
        wakeup = signal.set_wakeup_fd(-1)
        signal.set_wakeup_fd(wakeup)
        assert wakeup != -1
        assert any(t.name == 'shutdown watchdog' for t in threading.enumerate())
        assert session.spin(done=lambda: True)
    assert signal.set_wakeup_fd(-1) == -1
    end = time.monotonic() + 5.0
    while any(t.name == 'shutdown watchdog' for t in threading.enumerate()):
        assert time.monotonic() < end, 'the watchdog thread is still running'
        time.sleep(0.01)
