"""
Batches of states for the frame kernels: a parallel loop over the single-state kernels.

As :mod:`.batch` does for the joint-space algorithms: contiguous blocks of states,
handed out one at a time, each filling one workspace and calling the same kernel as a
single state, so that a batch equals its single states to the bit.  Every kernel here
reads one frame's buffers (:func:`.frames.frame_buffers`) and returns a status, 0
when it succeeded.
"""

import numba
import numpy as np

from .batch import BLOCKS_PER_THREAD
from .frame_jacobian import frame_acceleration_bias, frame_jacobian, frame_velocity
from .frames import frame_placement
from .model import unowned, workspace_size
from .spatial import njit
from .task_space_inertia import dynamically_consistent_inverse, task_space_inertia

#: The algorithms a batch of frame kernels can run.
FRAME_PLACEMENT, FRAME_JACOBIAN, FRAME_VELOCITY, FRAME_ACCELERATION_BIAS = 0, 1, 2, 3
TASK_SPACE_INERTIA, DYNAMICALLY_CONSISTENT_INVERSE = 4, 5


@numba.njit(cache=True, parallel=True, error_model='numpy')
def evaluate(algorithm, reals, ints, frame_ints, frame_reals, rows, damping, Q, QD, OUT,
             STATUS, threads):
    """
    OUT[s], STATUS[s] = the ``algorithm`` at state s of (Q, QD), for every s in parallel.

    ``rows`` (task-space rows) and ``damping`` are passed to the kernels that take
    them; ``threads`` is numba.get_num_threads().
    """
    S = Q.shape[0]
    blocks = min(S, BLOCKS_PER_THREAD * threads)
    reals, ints, frame_ints, frame_reals, rows, Q, QD, OUT, STATUS = unowned(
        (reals, ints, frame_ints, frame_reals, rows, Q, QD, OUT, STATUS))   # shared, uncounted
    for block in numba.prange(blocks):
        _block(algorithm, reals, ints, frame_ints, frame_reals, rows, damping, Q, QD, OUT,
               STATUS, block * S // blocks, (block + 1) * S // blocks)


@njit
def _block(algorithm, reals, ints, frame_ints, frame_reals, rows, damping, Q, QD, OUT,
           STATUS, start, stop):
    """States start..stop-1 of :func:`evaluate`, one after the other on one workspace."""
    data = np.empty(workspace_size(ints.shape[1], Q.shape[1]))
    model = (reals, ints, frame_ints, frame_reals)
    for s in range(start, stop):
        if algorithm == FRAME_PLACEMENT:
            STATUS[s] = frame_placement(*model, Q[s], data, OUT[s])
        elif algorithm == FRAME_JACOBIAN:
            STATUS[s] = frame_jacobian(*model, Q[s], data, OUT[s])
        elif algorithm == FRAME_VELOCITY:
            STATUS[s] = frame_velocity(*model, Q[s], QD[s], data, OUT[s, 0])
        elif algorithm == FRAME_ACCELERATION_BIAS:
            STATUS[s] = frame_acceleration_bias(*model, Q[s], QD[s], data, OUT[s, 0])
        elif algorithm == TASK_SPACE_INERTIA:
            STATUS[s] = task_space_inertia(*model, rows, Q[s], damping, data, OUT[s])
        elif algorithm == DYNAMICALLY_CONSISTENT_INVERSE:
            STATUS[s] = dynamically_consistent_inverse(*model, rows, Q[s], damping, data,
                                                       OUT[s])
