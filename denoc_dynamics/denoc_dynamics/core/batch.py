"""
Batches of states: a parallel loop over the single-state kernels (``prange``).

A batch of S states runs in contiguous blocks, a few per thread of numba's, handed
out as threads come free; each block fills one workspace and calls the same kernel
as a single state, state after state.  There is no second, batch-only copy of any algorithm.

numba's default threading layer (workqueue) aborts when two Python threads enter a
parallel region at once, so every parallel call of the core (the batches of all
robots and of :mod:`.fixman`) holds :data:`PARALLEL_LOCK`; single states run without
it, each thread on its own workspace.
"""

import threading

import numba
import numpy as np

from .call import run
from .model import unowned, workspace_size
from .spatial import njit

#: Blocks of states per thread.  The caller hands them out one at a time
#: (``numba.parallel_chunksize(1)``), so that a thread slowed by other work on the
#: machine takes fewer of them: with one block per thread, the batch waits for the
#: slowest.
BLOCKS_PER_THREAD = 8

#: Held by every parallel call of the core, whichever robot or module makes it: numba's
#: workqueue threading layer (used where neither TBB nor OpenMP is installed) aborts the
#: process when two threads enter a parallel region at once.
PARALLEL_LOCK = threading.Lock()


@numba.njit(cache=True, parallel=True, error_model='numpy')
def evaluate(algorithm, reals, ints, Q, X1, X2, F, OUT, threads):
    """
    OUT[s] = the ``algorithm`` at state s of (Q, X1, X2, F), for every s in parallel.

    ``algorithm`` is a code of :mod:`.call`; F (S, n_bodies, 6) holds the external
    wrenches, or is None for none: then each state runs the kernel without wrench terms,
    as a single state without wrenches does (the same code, the same numbers).

    ``threads`` is numba.get_num_threads() (called in here, it would make this
    function uncacheable).
    """
    S = Q.shape[0]
    blocks = min(S, BLOCKS_PER_THREAD * threads)
    # no reference counts on the arrays that every thread reads (:func:`.model.unowned`)
    reals, ints, Q, X1, X2, F, OUT = unowned((reals, ints, Q, X1, X2, F, OUT))
    for block in numba.prange(blocks):
        _block(algorithm, reals, ints, Q, X1, X2, F, OUT, block * S // blocks,
               (block + 1) * S // blocks)


@njit
def _block(algorithm, reals, ints, Q, X1, X2, F, OUT, start, stop):
    """States start..stop-1 of :func:`evaluate`, one after the other on one workspace."""
    data = np.empty(workspace_size(ints.shape[1], Q.shape[1]))
    for s in range(start, stop):
        if F is None:                      # numba compiles one branch for each type of F
            run(algorithm, reals, ints, Q[s], X1[s], X2[s], None, data, OUT[s])
        else:
            run(algorithm, reals, ints, Q[s], X1[s], X2[s], F[s], data, OUT[s])
