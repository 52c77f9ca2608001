"""
Task space on the :class:`~.robot.Robot` API: frames, their placements and Jacobians.

Every URDF link is a frame (:mod:`.frames`), the links merged into their bodies by
fixed joints included.  The methods take one state (q of shape (n,)) or a batch
(..., n) as the rest of the API does, run one compiled kernel per state (a batch in
parallel, :mod:`.frame_batch`) and check their input and results the same way.  One
float64 state goes straight to a kernel compiled for it, which checks it (as
``Robot.forward_dynamics`` does); anything else takes the full checks first.

Conventions (Pinocchio's, and KDL's row order): a Jacobian or a velocity is
[linear; angular].  ``reference`` is

* ``'local_world_aligned'`` (default): the velocity of the frame's origin and the
  angular velocity, in base-frame axes;
* ``'local'``: the same two vectors in the frame's own axes;
* ``'world'``: the spatial velocity in base-frame axes, its linear part the velocity
  of the body point that is at the base origin now.
"""

import numba
import numpy as np

from . import frame_batch
from . import robot as _robot     # its checks (robot.py imports this module first)
from .batch import PARALLEL_LOCK
from .call import ARRAY as _ARRAY, entry_point, FLOAT as _FLOAT
from .frame_jacobian import frame_acceleration_bias, frame_acceleration_bias_checked
from .frame_jacobian import frame_jacobian, frame_jacobian_checked
from .frame_jacobian import frame_velocity, frame_velocity_checked
from .frames import frame_buffer, frame_buffers, frame_placement, frame_placement_checked
from .task_space_inertia import dynamically_consistent_inverse, task_space_inertia
from .task_space_inertia import task_space_inertia_checked

#: ``reference=`` of the frame methods, in the order of the kernels' codes.
REFERENCES = ('local', 'local_world_aligned', 'world')

_ALL_ROWS = np.arange(6, dtype=np.int64)
#: The checked kernels' compiled functions (:func:`.call.entry_point`): their callers
#: check the types.
_JACOBIAN_ENTRY, _PLACEMENT_ENTRY = (entry_point(frame_jacobian_checked),
                                     entry_point(frame_placement_checked))
_VELOCITY_ENTRY, _BIAS_ENTRY = (entry_point(frame_velocity_checked),
                                entry_point(frame_acceleration_bias_checked))
_INERTIA_ENTRY = entry_point(task_space_inertia_checked)
_ROW_NAMES = ('linear x', 'linear y', 'linear z', 'angular x', 'angular y', 'angular z')


class TaskSpace:
    """
    The frame methods of :class:`~.robot.Robot`.

    A mixin: it reads the robot's chain, model, input checks and workspace.
    :meth:`_init_frames` sets up its tables.
    """

    def _init_frames(self):
        """
        Index the frames; their buffers are made at first use, per reference.

        After the robot's checks: the task-space sweeps divide by every body's m^_k,
        which a mimic joint's body may have zero (``_mimic`` None, a dense solve then).
        """
        self._sweeps = self._G is None or self._mimic is not None
        self._frame_index = self.chain.frame_index
        self._frame_buffers = {}          # (frame, reference) -> (frame_ints, frame_reals)
        self._checked_frames = {}         # (frame, reference) -> their frame_buffer
        self._row_sets = {None: _ALL_ROWS}    # rows as given -> checked int64 array

    @property
    def frames(self):
        """Return the names of every URDF link, merged fixed links included."""
        return list(self.chain.frame_names)

    def _frame(self, frame, reference='local_world_aligned'):
        """Return the buffers of ``frame`` (a link name); ValueError if either is unknown."""
        buffers = self._frame_buffers.get((frame, reference)) if isinstance(frame, str) and \
            isinstance(reference, str) else None
        if buffers is not None:
            return buffers
        f = self._frame_index.get(frame) if isinstance(frame, str) else None
        if f is None:
            names = self.chain.frame_names
            listed = ', '.join(repr(x) for x in names[:40]) + (', ...' if len(names) > 40
                                                               else '')
            raise ValueError(f'unknown frame {frame!r}: the frames of robot '
                             f'{self.chain.name!r} are its links: {listed}')
        if not isinstance(reference, str) or reference not in REFERENCES:
            raise ValueError(f'reference must be one of {REFERENCES}, got {reference!r}')
        buffers = frame_buffers(self.chain, self.model.A, f, REFERENCES.index(reference))
        self._frame_buffers[frame, reference] = buffers
        # from now on a float64 state of this frame goes straight to the checked kernel
        self._checked_frames[frame, reference] = frame_buffer(buffers)   # (_fast)
        return buffers

    def _frame_kernel(self, algorithm, kernel, buffers, q, shape, qd=None, rows=None,
                      damping=0.0):
        """
        Run a frame kernel at every state of q (..., n); return (out (..., *shape), status).

        The kernel's arguments after the frame's buffers: (q), (q, qd) or (rows, q,
        damping), as given; status 0 where it succeeded (an array for a batch).
        """
        reals, ints = self.model.reals, self.model.ints
        if q.ndim == 1:
            out = np.empty(shape)
            if rows is not None:
                status = kernel(reals, ints, *buffers, rows, q, damping, self._data(), out)
            elif qd is not None:
                status = kernel(reals, ints, *buffers, q, qd, self._data(), out)
            else:
                status = kernel(reals, ints, *buffers, q, self._data(), out)
            return out, status
        batch_shape = q.shape[:-1]
        Q = np.ascontiguousarray(q.reshape(-1, self.n))
        QD = Q if qd is None else np.ascontiguousarray(qd.reshape(-1, self.n))
        out = np.empty((Q.shape[0],) + (shape if len(shape) == 2 else (1,) + shape))
        status = np.zeros(Q.shape[0], dtype=np.int64)
        with PARALLEL_LOCK, numba.parallel_chunksize(1):
            frame_batch.evaluate(algorithm, reals, ints, *buffers,
                                 _ALL_ROWS if rows is None else rows, damping, Q, QD, out,
                                 status, numba.get_num_threads())
        return out.reshape(batch_shape + shape), status.reshape(batch_shape)

    def _fast(self, checked, frame, reference, shape, q, qd, *args):
        """
        Return the checked kernel's result at one float64 state, or None.

        ``args`` are the kernel's arguments between the frame's buffer
        (:func:`.frames.frame_buffer`) and out, among them the state q (and qd; q
        again for a call of q alone).  None (the caller's full checks take over) for
        anything the kernel does not take as it is: a frame not yet used, an unknown
        frame or reference, a batch, other types, bad values.
        """
        try:
            buffer = self._checked_frames.get((frame, reference))
        except TypeError:          # an unhashable frame or reference: the full checks say so
            return None
        if (buffer is None                           # _vector of q and qd written out
                or not (type(q) is _ARRAY and q.dtype is _FLOAT and q.ndim == 1)
                or not (type(qd) is _ARRAY and qd.dtype is _FLOAT and qd.ndim == 1)):
            return None
        out = np.empty(shape)
        return out if checked(self._buffer, buffer, *args, out) == 0 else None

    def frame_placement(self, q, frame) -> np.ndarray:
        """
        Return the pose (..., 4, 4) of link ``frame`` in the base frame at q.

        Any URDF link: a body's own link, a link merged into it by fixed joints
        (``flange``, ``tool0``), or one fixed to the base (constant).
        """
        out = self._fast(_PLACEMENT_ENTRY, frame, 'local_world_aligned', (4, 4), q, q, q)
        if out is not None:
            return out
        buffers = self._frame(frame)
        q = self._state(q, 'q')
        return _robot._finite(self._frame_kernel(frame_batch.FRAME_PLACEMENT, frame_placement,
                                                 buffers, q, (4, 4))[0])

    def frame_jacobian(self, q, frame, reference='local_world_aligned') -> np.ndarray:
        """
        Return the Jacobian (..., 6, n) of link ``frame`` at q, rows [linear; angular].

        For the frame's origin; ``reference`` ``'local_world_aligned'`` (default),
        ``'local'`` or ``'world'`` with Pinocchio's meanings (see the module).  Columns
        are the n coordinates, each mimic joint's column added to its leader's times
        its multiplier (J G).  A frame on the base has J = 0.
        """
        if type(q) is _ARRAY and q.dtype is _FLOAT and q.ndim == 1:  # _fast and _vector
            try:                                      # written out: the most frequent call
                buffer = self._checked_frames.get((frame, reference))
            except TypeError:      # an unhashable frame or reference: the full checks say so
                buffer = None
            if buffer is not None:
                J = np.empty((6, self._n))
                if not _JACOBIAN_ENTRY(self._buffer, buffer, q, J):
                    return J
        buffers = self._frame(frame, reference)
        q = self._state(q, 'q')
        return _robot._finite(self._frame_kernel(frame_batch.FRAME_JACOBIAN, frame_jacobian,
                                                 buffers, q, (6, self.n))[0])

    def frame_velocity(self, q, qd, frame, reference='local_world_aligned') -> np.ndarray:
        """Return the velocity J qd (..., 6) of link ``frame``, [linear; angular]."""
        out = self._fast(_VELOCITY_ENTRY, frame, reference, (6,), q, qd, q, qd)
        if out is not None:
            return out
        buffers = self._frame(frame, reference)
        q, qd = self._states(q=q, qd=qd)
        return _robot._finite(self._frame_kernel(frame_batch.FRAME_VELOCITY, frame_velocity,
                                                 buffers, q, (6,), qd)[0])

    def frame_acceleration_bias(self, q, qd, frame,
                                reference='local_world_aligned') -> np.ndarray:
        """
        Return J-dot qd (..., 6): the classical acceleration of ``frame`` at qdd = 0.

        Pinocchio's ``getFrameClassicalAcceleration`` at qdd = 0, [linear; angular]:
        in ``'local_world_aligned'`` the acceleration of the frame's origin and the
        angular acceleration, d(J qd)/dt of that Jacobian; in ``'local'`` the same in
        the frame's axes; in ``'world'`` the classical acceleration of the body point
        at the base origin.  The acceleration at any qdd is J qdd plus this.
        """
        out = self._fast(_BIAS_ENTRY, frame, reference, (6,), q, qd, q, qd)
        if out is not None:
            return out
        buffers = self._frame(frame, reference)
        q, qd = self._states(q=q, qd=qd)
        return _robot._finite(self._frame_kernel(
            frame_batch.FRAME_ACCELERATION_BIAS, frame_acceleration_bias, buffers, q, (6,),
            qd)[0])

    def _task_rows(self, frame, rows, damping):
        """Return (buffers, rows as int64, damping), checked; ValueError naming the frame."""
        buffers = self._frame(frame)
        if buffers[0][2] == 0:
            raise ValueError(f'frame {frame!r} is fixed to the base: its Jacobian is zero and '
                             'it has no task-space inertia')
        checked = self._row_sets.get(rows) if isinstance(rows, (tuple, type(None))) else None
        if checked is None:
            try:
                checked = np.array(rows, dtype=np.int64, ndmin=1)
            except (TypeError, ValueError, OverflowError):
                checked = None
            if checked is None or checked.ndim != 1 or not checked.size or \
                    np.any(checked < 0) or np.any(checked > 5) or \
                    len(set(checked.tolist())) != checked.size:
                raise ValueError('rows must be distinct row indices 0-5 of the Jacobian '
                                 '([linear; angular]), e.g. (0, 1, 2) for the position')
            if isinstance(rows, tuple):
                self._row_sets[rows] = checked
        try:
            damping = float(damping)
        except (TypeError, ValueError):
            damping = np.nan
        if not 0.0 <= damping < np.inf:
            raise ValueError(f'damping must be a finite number >= 0, got {damping!r}')
        return buffers, checked, damping

    def _task_space(self, algorithm, kernel, q, frame, rows, damping, shape):
        """Run a task-space kernel; ValueError naming the frame where J I^-1 J^T is singular."""
        buffers, rows, damping = self._task_rows(frame, rows, damping)
        q = self._state(q, 'q')
        shape = shape(len(rows))
        if not self._sweeps:
            return self._task_space_dense(algorithm, q, frame, rows, damping)
        out, status = self._frame_kernel(algorithm, kernel, buffers, q, shape, rows=rows,
                                         damping=damping)
        if np.any(status):
            bad = np.flatnonzero(np.ravel(status))[0]
            row = int(rows[int(np.ravel(status)[bad]) - 1])
            index = tuple(int(i) for i in np.unravel_index(bad, np.shape(status)))
            where = f' (state {index} of the batch)' \
                if np.ndim(status) else ''
            raise ValueError(
                f'frame {frame!r}: J I^-1 J^T is singular at this configuration{where}: '
                f'Jacobian row {row} ({_ROW_NAMES[row]}) depends on the rows before it '
                f'(a kinematic singularity, or fewer joints than rows); pass damping > 0 '
                f'for the damped inverse (J I^-1 J^T + damping 1)^-1, or fewer rows')
        return _robot._finite(out)

    def _task_space_dense(self, algorithm, q, frame, rows, damping):
        """
        Lambda or J-bar from G^T I G, dense: mimic joints whose bodies move no mass.

        The O(n k) sweeps divide by such a body's m^_k = 0 (as the O(n) FD does).
        """
        J = self.frame_jacobian(q, frame)[..., rows, :]
        M = self.inertia_matrix(q)
        M_inv_Jt = np.linalg.solve(M, np.swapaxes(J, -1, -2))
        A = J @ M_inv_Jt + damping * np.eye(len(rows))
        Lam = np.linalg.inv(A)
        Lam = 0.5 * (Lam + np.swapaxes(Lam, -1, -2))
        if algorithm == frame_batch.TASK_SPACE_INERTIA:
            return _robot._finite(Lam)
        return _robot._finite(M_inv_Jt @ Lam)

    def task_space_inertia(self, q, frame, rows=None, damping=0.0) -> np.ndarray:
        """
        Return Lambda (..., k, k) = (J I^-1 J^T)^-1, the task-space inertia of ``frame``.

        J: the ``rows`` (default all six; e.g. ``(0, 1, 2)`` for the position only) of
        the ``'local_world_aligned'`` Jacobian, I the GIM (G^T I G with mimic joints).
        O(n k) from Saha's I = U D U^T, never forming I or I^-1
        (:mod:`.task_space_inertia`).  Where J I^-1 J^T is singular (a kinematic
        singularity, fewer joints than rows, a frame on the base) ValueError names the
        frame; ``damping`` epsilon > 0 gives the damped (J I^-1 J^T + epsilon 1)^-1.
        """
        checked = self._row_sets.get(rows) if isinstance(rows, (tuple, type(None))) else None
        if checked is not None and type(damping) is float and 0.0 <= damping < np.inf and \
                self._sweeps:
            k = checked.shape[0]
            out = self._fast(_INERTIA_ENTRY, frame, 'local_world_aligned', (k, k), q, q,
                             checked, q, damping)
            if out is not None:
                return out
        return self._task_space(frame_batch.TASK_SPACE_INERTIA, task_space_inertia, q, frame,
                                rows, damping, lambda k: (k, k))

    def dynamically_consistent_inverse(self, q, frame, rows=None, damping=0.0) -> np.ndarray:
        """
        Return J-bar (..., n, k) = I^-1 J^T Lambda, Khatib's dynamically consistent inverse.

        J, ``rows`` and ``damping`` as :meth:`task_space_inertia`; J J-bar = 1 (without
        damping).  A task force F maps to the torques J^T F; 1 - J^T J-bar^T projects
        torques into its null space.
        """
        return self._task_space(frame_batch.DYNAMICALLY_CONSISTENT_INVERSE,
                                dynamically_consistent_inverse, q, frame, rows, damping,
                                lambda k: (self.n, k))
