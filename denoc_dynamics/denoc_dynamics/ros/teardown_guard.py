"""
A fatal signal in the middleware's teardown ends the process with code 0.

A node process shuts down in :meth:`denoc_dynamics.ros.node_main.RosSession.close`:
the goals are ended and their results sent, then the nodes are destroyed, and with the
last one the middleware's participant (Fast DDS: its receive, event and discovery
threads).  That teardown races with the participant's own threads, upstream: a CI run
saw sim_node killed by SIGSEGV in a thread of the middleware (no Python frame of its
own) while its main thread was in rclpy's ``ActionServer.destroy``, about once in a few
hundred processes signalled ten at a time on two loaded cores; another saw the same
call hang (eProsima/Fast-DDS #6193; races of entity deletion with the participant's
threads: ros2/rmw_fastrtps #555 and #717).  Nothing of the node's work is left then, and
the shutdown was asked for: the process should end as a teardown that hangs ends
(node_main's deadline), with code 0, not be reported by launch as "died".

:class:`TeardownGuard`, armed for the teardown only, points SIGSEGV, SIGBUS and SIGABRT
(a memory fault, or ``std::terminate``'s abort in a middleware thread) at
:func:`on_fatal_signal`, a C function compiled by numba (``cfunc``) that writes one line
to stderr and calls the C library's ``_exit(0)``; both are async-signal-safe, and no
Python runs (the crashed thread may be any thread, and the main thread may hold the
interpreter's lock).  Where ``faulthandler`` is enabled it is enabled again after the
handler is installed, so it prints every thread's stack first and then calls the
handler it found.  Outside the teardown (a fault in a callback) a fatal signal kills the
process as before.
"""

import ctypes
import faulthandler
import signal
import sys

from numba import cfunc
from numba import types
import numpy as np

#: The signals of a crash in a middleware thread: a memory fault, or an abort.
FATAL_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT)

#: What the handler writes to stderr (fd 2) before ``_exit(0)``.
MESSAGE = (b'shutdown: a fatal signal in the middleware while the nodes were being destroyed '
           b'(their work was done); exit code 0\n')

#: The message's bytes, a constant of the compiled handler.
_TEXT = np.frombuffer(MESSAGE, dtype=np.uint8)

#: The C library's ``_exit`` and ``write`` (the buffer's address as an integer).
_exit = types.ExternalFunction('_exit', types.void(types.intc))
_write = types.ExternalFunction('write', types.intp(types.intc, types.uintp, types.uintp))


@cfunc(types.void(types.intc), cache=True)
def on_fatal_signal(signum):
    """Signal handler of the teardown (``void handler(int)``): the line, then ``_exit(0)``."""
    _write(2, _TEXT.ctypes.data, _TEXT.size)
    _exit(0)


def _c_signal():
    """Return the C library's ``signal(signum, handler)`` -> previous, or None without it."""
    try:
        install = ctypes.CDLL(None).signal
    except (AttributeError, OSError):
        return None
    install.restype = ctypes.c_void_p
    install.argtypes = (ctypes.c_int, ctypes.c_void_p)
    return install


#: The C library's ``signal`` (handlers as addresses; None: SIG_DFL), or None.
c_signal = _c_signal()


class TeardownGuard:
    """
    While armed, a fatal signal (:data:`FATAL_SIGNALS`) ends the process with code 0.

    Use it as a context manager around the teardown.  :meth:`arm` flushes Python's
    stdout and stderr (``_exit`` drops their buffers) and installs
    :func:`on_fatal_signal` with the C library's ``signal``; :meth:`disarm` puts the
    previous handlers back.  ``faulthandler``, if enabled, stays in front of the handler
    (its stacks first), enabled again on the process's stderr (``sys.__stderr__``: its
    Python API cannot tell which file it had).  :attr:`armed` is False where the C
    library has no ``signal``.
    """

    def __init__(self):
        """Do nothing yet: :meth:`arm` installs the handler."""
        self.armed = False
        self._previous = {}
        self._faulthandler = False

    def __enter__(self):
        self.arm()
        return self

    def __exit__(self, *exc_info):
        self.disarm()
        return False

    def arm(self):
        """Point the fatal signals at :func:`on_fatal_signal` (faulthandler's stacks first)."""
        if self.armed or c_signal is None:
            return
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        self._faulthandler = faulthandler.is_enabled()
        if self._faulthandler:
            faulthandler.disable()   # puts back what was there before it
        for signum in FATAL_SIGNALS:
            self._previous[signum] = c_signal(signum, on_fatal_signal.address)
        if self._faulthandler:
            _enable_faulthandler()   # it calls on_fatal_signal after its dump
        self.armed = True

    def disarm(self):
        """Put back the handlers that were there before :meth:`arm`."""
        if not self.armed:
            return
        self.armed = False
        if self._faulthandler:
            faulthandler.disable()
        for signum, previous in self._previous.items():
            c_signal(signum, previous)
        self._previous.clear()
        if self._faulthandler:
            _enable_faulthandler()


def _enable_faulthandler():
    """Enable faulthandler on the process's stderr (``sys.__stderr__``), if it has one."""
    try:
        faulthandler.enable(file=sys.__stderr__, all_threads=True)
    except (AttributeError, ValueError, OSError, RuntimeError):   # no file descriptor
        pass
