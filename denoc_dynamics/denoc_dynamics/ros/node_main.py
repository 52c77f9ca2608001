"""
The ``main()`` of the node executables: one owner of time and of shutdown.

:class:`RosSession` initializes rclpy *without* its signal handlers.  SIGINT and
SIGTERM only set a flag (:class:`ShutdownSignals`); :meth:`RosSession.spin` runs the
executor's callbacks (timers included: the sim node steps its physics from one) and
looks at the flag between them.  When it is set, or the caller's ``done()`` is true,
the spin returns and the session destroys the nodes (their action servers and
clients too) and shuts rclpy down, in that order, in that one place: the middleware's
participant and its threads are gone before the interpreter finalizes (nothing of
it is left to C++ static destructors at exit).  Nothing raises on a signal: a
terminal's Ctrl-C, which reaches a node of ``ros2 launch`` twice (from the terminal,
then from launch), a SIGTERM, or a signal while the nodes are still being created all
end the process with exit code 0 and no traceback.  Once the session is closed the two signals are
ignored: launch's second SIGINT may arrive while the interpreter is finalizing, after
Python has put the default action (death by the signal) back for every handler of its
own.  A third signal during the session raises KeyboardInterrupt, the ordinary way out
of a process that does not stop.  A node is destroyed no sooner than
:data:`DISCOVERY_GRACE` after it was added (a signal during start-up).

The process ends within :data:`SHUTDOWN_DEADLINE` of the first signal, whatever the
middleware does.  Python runs a signal handler only in the main thread, between two
bytecodes: a main thread held in the middleware's C++ code never runs it.  The C-level
handler writes the signal's number to a socket (``signal.set_wakeup_fd``) at once, and a
watchdog thread reading it starts the deadline: it wakes the executor (a spin held in
C++ returns and sees the request), and if the process is still there at the deadline
it prints where every thread stands (``faulthandler``) and exits with code 0 (the
shutdown was asked for; what hung is in the middleware's teardown).  A CI run saw a
dynamics_node that neither SIGINT nor launch's SIGTERM 5 s later ended (killed after
15 s); the deadline is under launch's 5 s.  A main thread held in C++ may hold the
interpreter's lock too (rclpy's ``destroy_when_not_in_use`` keeps it while Fast DDS
deletes an entity: a CI run saw sim_node wait there, as in eProsima/Fast-DDS #6193, a
deadlock of a reader's or writer's deletion); then no Python thread runs, the watchdog's
timer included.  The backstop needs no interpreter: ``faulthandler``'s own C thread
prints the stacks, and a POSIX timer of the C library (:class:`ExitTimer`) calls
``_exit(0)`` from a thread of its own; a crash of a middleware thread in the teardown
ends the process with code 0 too, after the stacks (:mod:`.teardown_guard`).  The two
signals are blocked in the main thread once the watchdog runs, so every thread started
later (the middleware's receive and event threads, numba's) inherits them blocked: the
kernel delivers them to the watchdog (or a thread started before the session), never in
the middle of a middleware thread's system call; Python still runs the handler in the
main thread.

The executor is rclpy's SingleThreadedExecutor, or its EventsExecutor (``executor=
'events'``, rclpy.experimental, written in C++; the SingleThreadedExecutor where this
rclpy has none), which dispatches a message in a fraction of the CPU time: the dynamics
node uses it.  Both run one callback at a time.  When the spin starts, the objects of
the start-up (about 10^5 with rclpy, numpy and numba) are moved out of the garbage
collector's reach (``gc.freeze``): a full collection of them took 50 to 85 ms, a pause
of every callback; what the callbacks allocate later is collected as usual.
"""

import ctypes
import faulthandler
import gc
import os
import signal
import socket
import sys
import threading
import time

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import get_default_context

from .teardown_guard import TeardownGuard

#: Longest time [s] between two looks at the shutdown flag while no callback is ready.
SHUTDOWN_POLL = 0.05

#: Longest time [s] the executor runs at shutdown to send the results of the goals
#: the nodes end (aborted, "shutting down"), and how long it runs on after the last
#: execute callback returned (the result responses go out then).
RESULT_GRACE = 1.0
RESULT_SEND_TIME = 0.1

#: Longest time [s] from the first shutdown signal to the end of the process (launch
#: sends SIGTERM 5 s after its SIGINT, SIGKILL 10 s later).
SHUTDOWN_DEADLINE = 4.0

#: Time [s] after the deadline at which the C-level backstop prints where each thread
#: stands, and at which it ends the process (:class:`ExitTimer`).
BACKSTOP_DUMP = 0.4
BACKSTOP_EXIT = 0.6

#: Least age [s] of a node before it is destroyed.  Destroying a node within
#: milliseconds of its creation (a signal during start-up) crashed (SIGSEGV) or hung
#: inside rclpy's ``Node.destroy_node`` (``destroy_when_not_in_use``, in rmw) about
#: once in 125 processes started ten at a time on a loaded machine, presumably while
#: the middleware was still announcing the node's new entities; with this wait, none
#: in 500 under the same load.
DISCOVERY_GRACE = 1.0


class _Sigevent(ctypes.Structure):
    """``struct sigevent`` of Linux (64 bytes) with ``sigev_notify = SIGEV_THREAD``."""

    _fields_ = [('sigev_value', ctypes.c_void_p), ('sigev_signo', ctypes.c_int),
                ('sigev_notify', ctypes.c_int), ('sigev_notify_function', ctypes.c_void_p),
                ('sigev_notify_attributes', ctypes.c_void_p), ('padding', ctypes.c_int * 8)]


class _Timespec(ctypes.Structure):
    _fields_ = [('tv_sec', ctypes.c_long), ('tv_nsec', ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [('it_interval', _Timespec), ('it_value', _Timespec)]


class ExitTimer:
    """
    End the process with ``_exit(code)`` after ``delay`` [s], without the interpreter.

    A POSIX timer (``timer_create``, ``SIGEV_THREAD``): at expiry the C library starts
    a thread that calls its notify function with the timer's value as the argument,
    here ``_exit`` with ``code``.  No Python runs, so the interpreter's lock, which a
    main thread held in a C++ call may keep, does not matter.  Where the C library has
    no such timer (not Linux), :attr:`armed` is False and nothing happens; the caller
    falls back to ``faulthandler`` (exit code 1).  :meth:`cancel` deletes the timer.
    """

    SIGEV_THREAD = 2
    CLOCK_MONOTONIC = 1

    def __init__(self, delay: float, code: int = 0):
        """Arm the timer (or leave :attr:`armed` False where it cannot be)."""
        self.armed = False
        self._timer = ctypes.c_void_p()
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self._delete = libc.timer_delete
            exit_address = ctypes.cast(libc._exit, ctypes.c_void_p).value
            event = _Sigevent(sigev_value=code, sigev_signo=0, sigev_notify=self.SIGEV_THREAD,
                              sigev_notify_function=exit_address)
            if libc.timer_create(self.CLOCK_MONOTONIC, ctypes.byref(event),
                                 ctypes.byref(self._timer)) != 0:
                return
            seconds = int(delay)
            expiry = _Itimerspec(it_value=_Timespec(seconds, int((delay - seconds) * 1e9)))
            if libc.timer_settime(self._timer, 0, ctypes.byref(expiry), None) != 0:
                self._delete(self._timer)
                return
        except (AttributeError, OSError):   # no timer_create in this C library
            return
        self.armed = True

    def cancel(self):
        """Delete the timer if it is armed."""
        if self.armed:
            self.armed = False
            self._delete(self._timer)


class ShutdownSignals:
    """
    SIGINT and SIGTERM set :attr:`received` (the signal names) instead of raising.

    A watchdog thread learns of each signal from the C-level handler (the wakeup
    socket) even while the main thread is held in C++: it sets :attr:`noticed`, calls
    :attr:`wake` (the executor's) and ends the process at ``deadline`` [s] if it is
    still running then.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, deadline: float = SHUTDOWN_DEADLINE):
        """Install the handlers (main thread only; elsewhere signals stay as they are)."""
        self.received = []
        self.noticed = threading.Event()
        self.deadline = deadline
        self.wake = None
        self._timer = None
        self._exit_timer = None
        self._wakeup = None
        self._closing = threading.Lock()   # the watchdog arms, ignore() disarms: never both
        self._closed = False
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in self.SIGNALS:
            signal.signal(signum, self._on_signal)
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        self._wakeup = (reader, writer, signal.set_wakeup_fd(writer.fileno(),
                                                             warn_on_full_buffer=False))
        threading.Thread(target=self._watch, args=(reader,), name='shutdown watchdog',
                         daemon=True).start()
        # the threads started from here on (the middleware's, numba's) inherit the signals
        # blocked: they reach the watchdog, never a middleware thread in a system call
        signal.pthread_sigmask(signal.SIG_BLOCK, self.SIGNALS)

    @property
    def requested(self) -> bool:
        """Return True once a shutdown signal arrived."""
        return bool(self.received) or self.noticed.is_set()

    def ignore(self):
        """Ignore further signals and stop the watchdog (main thread only): the end is near."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in self.SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, self.SIGNALS)
        if self._wakeup is not None:
            reader, writer, previous = self._wakeup
            self._wakeup = None
            signal.set_wakeup_fd(previous)
            writer.close()   # the watchdog's recv returns b'': it ends
            reader.close()
        with self._closing:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._exit_timer.cancel()
                faulthandler.cancel_dump_traceback_later()

    def _on_signal(self, signum, frame):
        self.received.append(signal.Signals(signum).name)
        if len(self.received) >= 3:
            raise KeyboardInterrupt(f'{len(self.received)} shutdown signals')

    def _watch(self, reader):
        """Wait for a shutdown signal's byte on the wakeup socket, then start the deadline."""
        numbers = {int(signum) for signum in self.SIGNALS}
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:
                return
            if numbers.intersection(data):
                break
        self.noticed.set()
        with self._closing:
            if self._closed:   # the session closed meanwhile
                return
            self._timer = threading.Timer(self.deadline, self._overdue)
            self._timer.daemon = True
            self._timer.start()
            # the C-level backstop, should no Python thread get the interpreter in time
            # (a main thread held in C++ with the interpreter's lock): the stacks, then
            # _exit(0); faulthandler's exit (code 1) where the C library has no timer
            self._exit_timer = ExitTimer(self.deadline + BACKSTOP_EXIT)
            faulthandler.dump_traceback_later(self.deadline + BACKSTOP_DUMP,
                                              exit=not self._exit_timer.armed)
        wake = self.wake
        if wake is not None:
            try:
                wake()
            except Exception:   # the executor may be shut down already
                pass

    def _overdue(self):
        print(f'shutdown: the process has not ended {self.deadline:g} s after the signal; '
              'where each thread stands:', file=sys.stderr, flush=True)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(0)


def make_executor(kind='single', context=None):
    """
    Return a new executor: rclpy's SingleThreadedExecutor, or ``'events'`` its EventsExecutor.

    rclpy's EventsExecutor is experimental (since Jazzy); without it ``'events'`` gives
    the SingleThreadedExecutor.  ``context``: rclpy's default context if None.
    """
    if kind not in ('single', 'events'):
        raise ValueError(f"executor must be 'single' or 'events', got {kind!r}")
    if kind == 'events':
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


class RosSession:
    """
    rclpy, an executor (:func:`make_executor`) and the nodes, from init to shutdown.

    Use it as a context manager: ``with RosSession(args) as session:``, then
    :meth:`add` the nodes and :meth:`spin`.  On leaving, the nodes are destroyed in
    reverse order and rclpy is shut down, whatever happened.

    ``executor='events'``: run the callbacks on rclpy's EventsExecutor where this
    rclpy has it (``rclpy.experimental``, Jazzy on), else on a SingleThreadedExecutor.
    Both run every callback in this thread; the EventsExecutor queues the middleware's
    events instead of rebuilding a wait set in Python before each callback, which
    costs about a millisecond with the entities of the composed simulated arm.
    """

    def __init__(self, args=None, executor='single'):
        """Install the signal handlers first, then initialize rclpy with ``args``."""
        self.signals = ShutdownSignals()
        self.nodes = []
        self._last_added = -DISCOVERY_GRACE
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        self.context = get_default_context()
        self.executor = make_executor(executor)
        self.signals.wake = self.executor.wake

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False

    def add(self, node):
        """Add ``node`` to the executor (and to the nodes destroyed at the end); return it."""
        self.nodes.append(node)
        self.executor.add_node(node)
        self._last_added = time.monotonic()
        return node

    def spin(self, done=None):
        """Run the callbacks until a shutdown signal or ``done()``; return True if done."""
        executor = self.executor
        if gc.get_freeze_count() == 0:
            gc.collect()
            gc.freeze()
        while not self.signals.requested:
            if done is not None and done():
                return True
            executor.spin_once(timeout_sec=SHUTDOWN_POLL)
        return False

    def end_goals(self, why: str = 'shutting down'):
        """
        Give every goal the nodes accepted its final result (aborted, ``why``).

        Each node with an ``end_goals(why)`` method ends its goals; the executor then
        runs until their execute callbacks have returned (the nodes' ``executing``
        counts) and the results are sent, for at most :data:`RESULT_GRACE`.
        """
        ended = sum(node.end_goals(why) for node in self.nodes if hasattr(node, 'end_goals'))
        if not ended:
            return
        deadline = time.monotonic() + RESULT_GRACE
        settled = None
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)
            if any(getattr(node, 'executing', 0) for node in self.nodes):
                continue
            settled = settled or time.monotonic()
            if time.monotonic() - settled > RESULT_SEND_TIME:
                break

    def close(self):
        """
        End the goals, destroy the nodes (last added first), shut rclpy down.

        In this order, all in this thread, whose spin has returned (no callback runs):
        the executor is shut down (no wait set holds an entity); each node's action
        servers and clients are destroyed (:func:`destroy_node`), then the node; rclpy
        is shut down and its context finalized.  The middleware's participant and its
        threads end with the last node, before the interpreter finalizes.  From the
        executor's shutdown on, a fatal signal (a middleware thread's crash in the
        teardown) ends the process with code 0 after the stacks (:class:`TeardownGuard`).
        """
        try:
            self.end_goals()
            young = self._last_added + DISCOVERY_GRACE - time.monotonic()
            if young > 0.0:
                time.sleep(young)
            with TeardownGuard():   # a crash of the middleware's threads from here: code 0
                self.executor.shutdown()
                while self.nodes:
                    destroy_node(self.nodes.pop())
                rclpy.try_shutdown()
                self.context.destroy()   # rcl_context_fini, now rather than by a collector
        finally:
            self.signals.ignore()


def destroy_node(node):
    """
    Destroy ``node``, then its action servers and clients (rclpy's waitables).

    rclpy's ``Node.destroy_node`` leaves the node's waitables alone, and an action
    server or client holds the rcl node: the node, and with it the middleware's
    participant (Fast DDS: about 15 threads), would then live on until the action
    server is collected.  The start-up objects never are (``gc.freeze``), so the
    participant was left to the C++ static destructors at exit, which tear it down
    while its threads still run: now and then the process aborted (SIGABRT, nothing
    printed) or hung instead of exiting, which is, we believe, what a CI run saw of
    sim_node about once in 300 SIGINTs (not reproduced here; a process now ends its
    participant in :meth:`RosSession.close`: test_node_executor.py).  The node goes
    first: its own ``destroy_node`` stops the threads it started (the viewer's, which
    may send a goal), and its waitables keep the rcl node they need until they go.
    """
    waitables = list(node.waitables)
    node.destroy_node()
    for waitable in waitables:
        destroy = getattr(waitable, 'destroy', None)
        if destroy is not None:
            destroy()


def run_node(node_class, name, args=None, executor='single'):
    """
    Run one node on ``executor`` (:func:`make_executor`) until SIGINT or SIGTERM.

    Return the exit code.

    A RuntimeError or a ParameterException (a parameter of the wrong type or out of
    its range) raised while the node is constructed (a bad parameter or URDF) is
    printed in one line and gives exit code 1; a shutdown signal gives 0.
    """
    with RosSession(args, executor) as session:
        try:
            session.add(node_class())
        except (RuntimeError, ParameterException) as exc:
            print(f'{name}: {exc}', file=sys.stderr)
            return 1
        session.spin()
    return 0
