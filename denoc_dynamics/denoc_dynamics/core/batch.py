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

from .composite_body import composite_body
from .forward_dynamics import forward_dynamics, forward_dynamics_cholesky
from .gim import inertia_matrix
from .inverse_dynamics import inverse_dynamics
from .inverse_inertia import inverse_inertia_matrix
from .model import DATA_REALS
from .spatial import njit
from .udu import udu

#: The algorithms a batch can run, and the rows of each state's output (n: one
#: (n, n) matrix; n + 1: a matrix and a vector below it; 1: a vector).
INVERSE_DYNAMICS, FORWARD_DYNAMICS, FORWARD_DYNAMICS_CHOLESKY, INERTIA_MATRIX = 0, 1, 2, 3
UDU, INVERSE_INERTIA, COMPOSITE_BODY = 4, 5, 6

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

    F (S, n, 6) holds the external wrenches (zeros for none).

    ``threads`` is numba.get_num_threads() (called in here, it would make this
    function uncacheable).
    """
    S = Q.shape[0]
    blocks = min(S, BLOCKS_PER_THREAD * threads)
    for block in numba.prange(blocks):
        _block(algorithm, reals, ints, Q, X1, X2, F, OUT, block * S // blocks,
               (block + 1) * S // blocks)


@njit
def _block(algorithm, reals, ints, Q, X1, X2, F, OUT, start, stop):
    """States start..stop-1 of :func:`evaluate`, one after the other on one workspace."""
    n = Q.shape[1]
    data = np.empty(DATA_REALS * n)
    for s in range(start, stop):
        f = F[s]
        if algorithm == INVERSE_DYNAMICS:
            inverse_dynamics(reals, ints, Q[s], X1[s], X2[s], f, data, OUT[s, 0])
        elif algorithm == FORWARD_DYNAMICS:
            forward_dynamics(reals, ints, Q[s], X1[s], X2[s], f, data, OUT[s, 0])
        elif algorithm == FORWARD_DYNAMICS_CHOLESKY:
            forward_dynamics_cholesky(reals, ints, Q[s], X1[s], X2[s], f, data, OUT[s, 0])
        elif algorithm == INERTIA_MATRIX:
            inertia_matrix(reals, ints, Q[s], data, OUT[s])
        elif algorithm == UDU:
            udu(reals, ints, Q[s], data, OUT[s, :n], OUT[s, n])
        elif algorithm == INVERSE_INERTIA:
            inverse_inertia_matrix(reals, ints, Q[s], data, OUT[s])
        elif algorithm == COMPOSITE_BODY:
            composite_body(reals, ints, Q[s], X1[s], data, OUT[s, :n], OUT[s, n])
