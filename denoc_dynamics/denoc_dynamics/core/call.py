"""
The one entry of every call of the core: an algorithm's code and one state.

:func:`run` evaluates an algorithm at one state on the coordinates q (n): it maps q to
the bodies where the robot has mimic joints (:mod:`.mimic`), runs the algorithm's
kernel on this state's workspace and brings the result back to the coordinates.  A
batch runs it state after state (:mod:`.batch`), and :class:`~.robot.Robot` calls it
for one state through :func:`call_state`: compiled for the argument types a user
passes (float64 vectors, C-ordered or of any layout), it checks the lengths and that
the result is finite in the same compiled call, so that a call with good input costs
one dispatch; the calls of q alone (gravity, GIM, UDU^T, I^-1) have an entry without
the rates, :func:`call_configuration`.  The entries choose the vector or the matrix
dispatch by the type of out when numba compiles them and inline it
(:func:`run_vector_entry`, :func:`run_matrix_entry`): the kernel is their one call
(through :func:`run_bodies`, a call more, forward dynamics from Python took 0.25 us
longer on the Panda: 2.16-2.21 against 1.92-1.93 us).

Each algorithm's result is ``out`` (rows, n): one row for a vector (``rows`` 0 in
:data:`ROWS` below: the caller passes a vector (n,), which :func:`run` takes as it
is), n for a matrix, n + 1 for a matrix with a vector below it, 2 for the energies (T,
V in column 0).  A new algorithm gets a code, a row count, a line in
:func:`run_matrix` (in :func:`run_vector` for a vector), and a line in
:func:`run_mimic_rows` if mimic joints need more than mapping the state to the bodies
and the result back.
"""

import numba
from numba import types
import numpy as np

from .composite_body import composite_body
from .energy import energies, potential_energy
from .forward_dynamics import cholesky, cholesky_solve, forward_dynamics
from .forward_dynamics import forward_dynamics_cholesky
from .frames import CHECKED, MATRIX, not_finite, STATES, VECTOR
from .gim import inertia_matrix
from .gravity import gravity_torques
from .inverse_dynamics import bias_forces, inverse_dynamics
from .inverse_inertia import analytical_inverse_inertia_matrix, inverse_inertia_matrix
from .mimic import constrained_cholesky, project, to_bodies, to_coordinates
from .mimic import forward_dynamics as forward_dynamics_mimic
from .model import data_arrays, hold, mimic_arrays, model_arrays, open_model, unowned
from .model import workspace_size
from .spatial import njit, njit_inline
from .udu import eliminate, udu

#: The algorithms, by code.
(INVERSE_DYNAMICS, FORWARD_DYNAMICS, FORWARD_DYNAMICS_CHOLESKY, INERTIA_MATRIX, UDU,
 INVERSE_INERTIA, COMPOSITE_BODY, BIAS_FORCES, GRAVITY, ENERGIES,
 ANALYTICAL_INVERSE_INERTIA, POTENTIAL_ENERGY) = range(12)

#: Rows of each algorithm's result: 0 a vector (n,); 'n' (n, n); 'n+1' (n + 1, n); 2.
ROWS = {INVERSE_DYNAMICS: 0, FORWARD_DYNAMICS: 0, FORWARD_DYNAMICS_CHOLESKY: 0,
        BIAS_FORCES: 0, GRAVITY: 0, INERTIA_MATRIX: 'n', INVERSE_INERTIA: 'n',
        ANALYTICAL_INVERSE_INERTIA: 'n', UDU: 'n+1', COMPOSITE_BODY: 'n+1', ENERGIES: 2,
        POTENTIAL_ENERGY: 2}


@njit_inline
def run(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out):
    """
    Write ``algorithm`` at (q, x1, x2) on the coordinates into out; ``f_ext`` None or wrenches.

    out (rows, n), or (n,) for a vector algorithm.  x1 and x2 are the algorithm's rates
    (qd and qdd or tau; unused ones are ignored).  Inlined where it is called: a level
    of calls costs numba's reference counts of the arrays it passes.
    """
    if ints.shape[1] == q.shape[0]:
        run_bodies(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out)
    else:
        run_mimic(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out)


@njit
def run_bodies(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out):
    """
    Write ``algorithm`` at the bodies' (q, x1, x2) into out: each algorithm's kernel.

    out (n,) is a vector algorithm's result, as a vector entry passes it; (rows, n)
    any algorithm's.  numba compiles one branch of the first test for each type of out
    (``out.ndim`` of an argument is a constant to it).
    """
    if out.ndim == 1:
        run_vector(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out)
    else:
        run_matrix(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out)


@njit_inline
def run_matrix(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out):
    """Write any algorithm at the bodies' (q, x1, x2) into out (rows, n); a vector in row 0."""
    n = q.shape[0]
    if algorithm == INERTIA_MATRIX:
        inertia_matrix(reals, ints, q, workspace, out)
    elif algorithm == UDU:
        udu(reals, ints, q, workspace, out[:n], out[n])
    elif algorithm == INVERSE_INERTIA:
        inverse_inertia_matrix(reals, ints, q, workspace, out)
    elif algorithm == ANALYTICAL_INVERSE_INERTIA:
        analytical_inverse_inertia_matrix(reals, ints, q, workspace, out)
    elif algorithm == COMPOSITE_BODY:
        composite_body(reals, ints, q, x1, workspace, out[:n], out[n])
    elif algorithm == ENERGIES:
        energies(reals, ints, q, x1, workspace, out)
    elif algorithm == POTENTIAL_ENERGY:
        potential_energy(reals, ints, q, workspace, out)
    else:
        run_vector(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out[0])


@njit_inline
def run_vector(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out):
    """
    Write a vector algorithm (ROWS 0) at the bodies' (q, x1, x2) into out (n,).

    Inlined into :func:`run_bodies`, :func:`run_matrix` and :func:`run_vector_entry`.
    """
    if algorithm == INVERSE_DYNAMICS:
        inverse_dynamics(reals, ints, q, x1, x2, f_ext, workspace, out)
    elif algorithm == BIAS_FORCES:
        bias_forces(reals, ints, q, x1, f_ext, workspace, out)
    elif algorithm == GRAVITY:
        gravity_torques(reals, ints, q, workspace, out)
    elif algorithm == FORWARD_DYNAMICS:
        forward_dynamics(reals, ints, q, x1, x2, f_ext, workspace, out)
    elif algorithm == FORWARD_DYNAMICS_CHOLESKY:
        forward_dynamics_cholesky(reals, ints, q, x1, x2, f_ext, workspace, out)


@njit
def run_mimic(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out):
    """
    Write ``algorithm`` on the coordinates of a robot with mimic joints (:mod:`.mimic`).

    out (n,) or (rows, n), as :func:`run_bodies` takes it.
    """
    if out.ndim == 1:
        run_mimic_rows(algorithm, reals, ints, q, x1, x2, f_ext, workspace,
                       out.reshape((1, out.shape[0])))
    else:
        run_mimic_rows(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out)


@njit
def run_mimic_rows(algorithm, reals, ints, q, x1, x2, f_ext, workspace, out):
    """:func:`run_mimic` into out (rows, n)."""
    n, nb = q.shape[0], ints.shape[1]
    if algorithm == FORWARD_DYNAMICS:
        forward_dynamics_mimic(reals, ints, q, x1, x2, f_ext, workspace, out[0])
        return
    model, data = model_arrays(reals, ints), data_arrays(workspace, nb)
    mimic = mimic_arrays(workspace, nb, nb - n)
    if algorithm == FORWARD_DYNAMICS_CHOLESKY:
        constrained_cholesky(model, data, mimic, q, x1, x2, f_ext, np.empty((nb, nb)),
                             np.empty((n, n)), out[0])
        return
    q_b, x1_b, x2_b = np.empty(nb), np.empty(nb), np.empty(nb)
    to_bodies(model, q, q_b, True)
    to_bodies(model, x1, x1_b, False)
    to_bodies(model, x2, x2_b, False)
    matrix = (algorithm == INERTIA_MATRIX or algorithm == UDU or algorithm == INVERSE_INERTIA
              or algorithm == ANALYTICAL_INVERSE_INERTIA)
    out_b = np.zeros((nb + 1 if algorithm == COMPOSITE_BODY else nb if matrix else 2, nb))
    run_bodies(INERTIA_MATRIX if matrix else algorithm, reals, ints, q_b, x1_b, x2_b, f_ext,
               workspace, out_b)
    if algorithm == INVERSE_DYNAMICS or algorithm == BIAS_FORCES or algorithm == GRAVITY:
        to_coordinates(model, out_b[0], out[0])
    elif algorithm == ENERGIES or algorithm == POTENTIAL_ENERGY:
        out[:] = 0.0
        out[0, 0], out[1, 0] = out_b[0, 0], out_b[1, 0]
    elif algorithm == COMPOSITE_BODY:
        project(model, out_b[:nb], out[:n])
        to_coordinates(model, out_b[nb], out[n])
    elif algorithm == INERTIA_MATRIX:
        project(model, out_b, out)
    elif algorithm == UDU:
        A = np.empty((n, n))
        project(model, out_b, A)
        eliminate(A, out[:n], out[n])                           # 000 §5.1 on the numbers
    else:
        constrained_inverse(model, out_b, out)


@njit
def constrained_inverse(model, M_b, out):
    """Write out = (G^T M_b G)^-1, by Cholesky and n unit solves (the mimic joints' I^-1)."""
    n = out.shape[0]
    L, e = np.empty((n, n)), np.empty(n)
    project(model, M_b, L)
    cholesky(L)
    for j in range(n):
        e[:] = 0.0
        e[j] = 1.0
        cholesky_solve(L, e, out[j])
    for j in range(n):                                      # symmetric to the bit
        for k in range(j):
            out[j, k] = out[k, j]


def _signatures(rates):
    """
    Return an entry's signatures for the state's arrays: q and ``rates`` more (qd, qdd).

    A vector out, then a matrix out; for each, C-ordered states (the usual input),
    then states of any layout.  A call of q alone has no rates.  numba's
    dispatcher finds an exact match at once; any other float64 vector (read only,
    strided) converts to the any-layout signature, which takes microseconds longer.
    """
    return [types.boolean(types.int64, VECTOR, *(state,) * (1 + rates), out)
            for out in (VECTOR, MATRIX) for state in STATES]


@njit_inline
def run_vector_entry(algorithm, reals, ints, q, x1, x2, workspace, out):
    """:func:`run` without wrenches into out (n,), the vector algorithms' kernels inlined."""
    if ints.shape[1] == q.shape[0]:
        run_vector(algorithm, reals, ints, q, x1, x2, None, workspace, out)
    else:
        run_mimic(algorithm, reals, ints, q, x1, x2, None, workspace, out)


@njit_inline
def run_matrix_entry(algorithm, reals, ints, q, x1, x2, workspace, out):
    """:func:`run` without wrenches into out (rows, n), the kernels' dispatch inlined."""
    if ints.shape[1] == q.shape[0]:
        run_matrix(algorithm, reals, ints, q, x1, x2, None, workspace, out)
    else:
        run_mimic(algorithm, reals, ints, q, x1, x2, None, workspace, out)


@njit_inline
def open_entry(model, n):
    """
    Return (reals, ints, workspace) of an entry's call: the model's buffer opened.

    The buffer's views on :func:`.model.unowned` (:func:`.model.open_model`) and a
    workspace for n coordinates allocated here (a few hundred bytes at n = 7: cheaper
    than passing a thread's own from Python).  The entry runs the kernels on an
    unowned view of it and returns its result through :func:`.model.hold`.
    """
    reals, ints = open_model(model)
    return reals, ints, np.empty(workspace_size(ints.shape[1], n))


@numba.njit(_signatures(2), **CHECKED)
def call_state(algorithm, model, q, x1, x2, out):
    """
    :func:`run` at one state without external wrenches, out (n,) or (rows, n); True if good.

    ``model`` the model's buffer (:attr:`.model.Model.buffer`).  False, with nothing
    else done, if q, x1 or x2 is not of length n; False after the run if out is not
    finite.  The caller's full checks then say why.
    """
    n = out.shape[-1]
    if q.shape[0] != n or x1.shape[0] != n or x2.shape[0] != n:
        return False
    reals, ints, owned = open_entry(model, n)
    if out.ndim == 1:          # a constant of each signature: numba compiles one branch
        run_vector_entry(algorithm, reals, ints, q, x1, x2, unowned(owned), out)
    else:
        run_matrix_entry(algorithm, reals, ints, q, x1, x2, unowned(owned), out)
    return hold(owned, not not_finite(out))


@numba.njit(_signatures(0), **CHECKED)
def call_configuration(algorithm, model, q, out):
    """
    :func:`call_state` for an algorithm of q alone (gravity, GIM, UDU^T, I^-1, V).

    Two arrays fewer to pass than with the rates: numba's call costs about 30 ns per
    array argument.
    """
    n = out.shape[-1]
    if q.shape[0] != n:
        return False
    reals, ints, owned = open_entry(model, n)
    if out.ndim == 1:          # as in call_state
        run_vector_entry(algorithm, reals, ints, q, q, q, unowned(owned), out)
    else:
        run_matrix_entry(algorithm, reals, ints, q, q, q, unowned(owned), out)
    return hold(owned, not not_finite(out))


def entry_point(dispatcher, out=None):
    """
    Return the compiled function of ``dispatcher``'s last signature (any layout), or itself.

    ``out``: the last signature whose result argument (the last) is of this type.

    numba's dispatch types every argument to choose a signature, a third of a call at
    n = 7; a caller that has checked the types itself (the states float64 vectors, its
    own C-ordered buffers) calls the compiled function of the any-layout signature
    directly, which takes every float64 vector.  Without the JIT (NUMBA_DISABLE_JIT)
    the dispatcher is the Python function itself.
    """
    if not hasattr(dispatcher, 'get_overload'):
        return dispatcher
    signatures = [args for args in dispatcher.signatures if out is None or args[-1] == out]
    return dispatcher.get_overload(signatures[-1])


#: The value types that the entries take without numba's typing: a caller that has
#: checked ``type(x) is ARRAY and x.dtype is FLOAT and x.ndim == 1`` for each state
#: (:func:`.robot._vector`, written out where a call's cost counts) calls them.
ARRAY, FLOAT = np.ndarray, np.dtype(np.float64)

#: The entries' compiled functions, for callers that check the types (:func:`entry_point`).
VECTOR_ENTRY, MATRIX_ENTRY = entry_point(call_state, VECTOR), entry_point(call_state, MATRIX)
CONFIGURATION_VECTOR_ENTRY = entry_point(call_configuration, VECTOR)
CONFIGURATION_MATRIX_ENTRY = entry_point(call_configuration, MATRIX)
