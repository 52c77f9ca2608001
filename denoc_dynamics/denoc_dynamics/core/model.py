"""
The prepared model and the workspace of the compiled algorithms (Pinocchio's Model/Data).

The kernels of the core are numba functions whose arguments are a handful of flat
float64 and int64 buffers: numba's call costs about 0.06 us per array argument, and a
tuple or a class of arrays passed from Python costs microseconds.  Inside the compiled
code the buffers are read through named views, carved in one place each:
:func:`model_arrays` gives the constant model (the body tree read from the URDF) as a
:class:`ModelArrays`, :func:`data_arrays` the workspace one state fills as a
:class:`DataArrays`.  Both are named tuples of array views, built inside the kernels
(free: numba keeps a tuple of views in registers), so that a kernel reads
``data.M_hat[k]`` and ``model.lam[i]`` as Pinocchio reads ``data.oYcrb[i]``.

A new kernel takes ``(reals, ints, ..., workspace, out)`` from Python and opens with

    model, data = model_arrays(reals, ints), data_arrays(workspace, n)

The compiled entries that Python calls take the model as one buffer,
:attr:`Model.buffer` (:func:`open_model`: reals and ints in one array, one argument
fewer), allocate the workspace themselves, and pass both on :func:`unowned` (views
that numba does not reference-count; see there), the workspace held by :func:`hold`.

Bodies i = 0..n-1 (the papers' 1..n) hang in a tree by the parent array lambda(i) < i,
-1 for the fixed base; a serial chain is lambda(i) = i - 1.
"""

from collections import namedtuple
import copy

import numba
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .spatial import njit_inline

#: Float64 entries per body of the workspace: M (36; the composite-body and the
#: articulated-body sweeps turn it into M~ or M^ in place); p, t, td, w~, psi, eta,
#: mu, y (6 each); r, e, d, O (3 each); R (9); m^, tau^, phi (1 each).
DATA_REALS = 36 + 8 * 6 + 4 * 3 + 9 + 3

#: Float64 entries per body of the model: R_tree and I_O (9 each), o_tree and c (3
#: each) and m; gravity (3) follows the bodies, then the mimic map's a and b.
MODEL_REALS = 2 * 9 + 2 * 3 + 1


#: The model's named views (:func:`model_arrays`): lambda(i) and the joint type per
#: body, joint i's frame R_tree,i, o_tree,i in body lambda(i)'s frame at q_i = 0 (its
#: axis is z), body i's mass m_i, mass centre c_i and inertia I_O,i about its joint
#: origin in body coordinates, and gravity g in the base frame.  The bodies' joint
#: positions follow the coordinates q (n <= n_bodies) as q_i = a_i q[column_i] + b_i:
#: ``column`` is the coordinate that moves body i (its own, or a mimic joint's
#: leader's), ``leader`` the leader's body (-1 for a coordinate, a = 1, b = 0).
ModelArrays = namedtuple('ModelArrays', ['lam', 'prismatic', 'R_tree', 'o_tree', 'm', 'c',
                                         'I_O', 'g', 'column', 'leader', 'a', 'b'])

#: The workspace's named views (:func:`data_arrays`), the DeNOC quantities of 000 eqs.
#: 1-22 and 002 eqs. 11-19 with body i referred to its joint origin O_i: R_i, r_i =
#: O_i - O_lambda(i), e_i, p_i, M_i, d_i = C_i - O_i, O_i, the twist t_i and its rate
#: td_i, the wrench w~_i (``w``), M~_i, M^_i, psi_i, m^_i, eta_i, mu_i, tau^_i, phi_i and
#: y_i, a wrench walked from body i towards the base (000 eqs. 22, 34, 38).  ``M``,
#: ``M_tilde`` and ``M_hat`` are one storage: the composite-body and articulated-body
#: sweeps turn each M_i into M~_i or M^_i in place.
DataArrays = namedtuple('DataArrays', ['R', 'r', 'e', 'p', 'M', 'd', 'O', 't', 'td', 'w',
                                       'M_tilde', 'M_hat', 'psi', 'm_hat', 'eta', 'mu',
                                       'tau_hat', 'phi', 'y'])


#: The mimic joints' part of the workspace (:func:`mimic_arrays`), after the bodies':
#: the bodies' q_b, qd_b, a third rate x_b, efforts tau_b and accelerations qdd_b, and
#: per mimic joint j the column j of Z = U^-1 C^T (n_bodies x c, :mod:`.mimic`), the
#: row j of S = C M^-1 C^T (its Cholesky factor after a solve) and the constraint
#: effort lambda_j.
MimicArrays = namedtuple('MimicArrays', ['q_b', 'qd_b', 'x_b', 'tau_b', 'qdd_b', 'Z', 'S',
                                         'lam'])


@njit_inline
def workspace_size(n_bodies, n):
    """Return the float64 entries of one state's workspace: n_bodies bodies, n coordinates."""
    k = n_bodies - n
    return DATA_REALS * n_bodies + 5 * n_bodies + k * (n_bodies + k + 1)


class Model:
    """
    The constant arrays of a body tree (Pinocchio's Model), flat for the kernels.

    ``reals`` holds each body's constants (see :func:`model_arrays`), gravity and the
    mimic map; ``ints`` (4, n) holds lambda(i), the joint type (1 prismatic, 0
    revolute), the column of each body's coordinate and its leader body (mimic joints).
    Both are views of one ``buffer`` (:func:`model_views`), which the compiled entries
    take: a change written into ``reals`` (a payload) is the entries' too.

    Each body's constants are written in a frame whose z axis is its joint's axis, as
    in the Denavit-Hartenberg frames of Saha's papers: body i's URDF frame is turned
    by ``A[i]`` (A_i z = a_i), so that the joint rotation is a turn about z and e_i is
    the third column of R_i.  Quantities in base components do not depend on this
    choice; the orientation of the URDF link frame is R_i A_i^T.
    """

    def __init__(self, chain, gravity):
        """Lay out ``chain``'s per-body arrays and ``gravity`` (base frame)."""
        n = chain.n
        self.n = n
        self.buffer = np.zeros(model_size(n))
        self.reals, self.ints = model_views(self.buffer)
        parent = getattr(chain, 'parent', np.arange(n) - 1)
        self.ints[0] = parent
        self.ints[1] = chain.prismatic
        arrays = model_arrays(self.reals, self.ints)
        leader = np.asarray(getattr(chain, 'mimic_leader', np.full(n, -1)), dtype=np.int64)
        column = np.cumsum(leader < 0) - 1                 # the coordinate of each body
        arrays.leader[:] = leader
        arrays.column[:] = np.where(leader < 0, column, column[leader])
        arrays.a[:] = np.where(leader < 0, 1.0, getattr(chain, 'mimic_multiplier', 1.0))
        arrays.b[:] = np.where(leader < 0, 0.0, getattr(chain, 'mimic_offset', 0.0))
        R_tree, o_tree, m, c_body, I_O = (arrays.R_tree, arrays.o_tree, arrays.m, arrays.c,
                                          arrays.I_O)
        self.A = A = np.array([_z_to_axis(a) for a in chain.axis]).reshape(n, 3, 3)
        A_parent = np.array([A[k] if k >= 0 else np.eye(3) for k in parent]).reshape(n, 3, 3)
        R_tree[:] = np.einsum('kji,kjl,klm->kim', A_parent, chain.X_tree[:, :3, :3], A)
        o_tree[:] = np.einsum('kji,kj->ki', A_parent, chain.X_tree[:, :3, 3])
        m[:], c_body[:], I_O[:] = body_constants(A, chain.mass, chain.com, chain.inertia)
        arrays.g[:] = gravity

    def data(self) -> np.ndarray:
        """Return a new workspace for one state (Pinocchio's Data)."""
        return np.zeros(workspace_size(self.n, self.n - int(np.sum(self.ints[3] >= 0))))

    def copy(self) -> 'Model':
        """Return a copy with its own buffer (a payload changes one body's constants)."""
        new = copy.copy(self)
        new.buffer = self.buffer.copy()
        new.reals, new.ints = model_views(new.buffer)
        return new


def model_size(n_bodies):
    """Return the float64 entries of a model's buffer: reals, then ints bit for bit."""
    return (MODEL_REALS + 2 + 4) * n_bodies + 3


def model_views(buffer):
    """
    Return (reals, ints (4, n_bodies)) of a model's buffer, views: :class:`Model`'s.

    The buffer is the reals, then the ints bit for bit; its length fixes n_bodies
    (:func:`model_size`).  Compiled code reads it with :func:`open_model`.
    """
    n = (buffer.shape[0] - 3) // (MODEL_REALS + 6)
    split = (MODEL_REALS + 2) * n + 3
    return buffer[:split], buffer[split:].view(np.int64).reshape(4, n)


def body_constants(A, mass, com, inertia):
    """
    Return (m, c, I_O) in the turned body frames of :class:`Model` (one body or (n, ...)).

    ``com`` and ``inertia`` (about the mass centre) are in the URDF link frames; the body
    frame is turned by A (A z = the joint axis), and I_O = I_C + m ([c]x^T [c]x) is the
    inertia about the joint origin (parallel axes).
    """
    c = np.einsum('...ji,...j->...i', A, com)
    I_C = np.einsum('...ji,...jl,...lm->...im', A, inertia, A)
    cc = np.einsum('...i,...i->...', c, c)[..., None, None] * np.eye(3)
    mass = np.asarray(mass, dtype=float)
    return mass, c, I_C + mass[..., None, None] * (cc - c[..., :, None] * c[..., None, :])


@njit_inline
def _blocks(buffer, start, count, n, size):
    """
    Return ``count`` blocks of n matrices size x size from buffer[start:] (no copy).

    A view made by ``as_strided`` (a few instructions; numba's ``reshape`` calls a
    helper of about 20 ns, which every kernel call would pay a dozen times).
    """
    b = buffer.itemsize
    return as_strided(buffer[start:], shape=(count, n, size, size),
                      strides=(n * size * size * b, size * size * b, size * b, b))


@njit_inline
def _vectors(buffer, start, count, n, size):
    """Return ``count`` blocks of n vectors of ``size`` from buffer[start:], (count, n, size)."""
    b = buffer.itemsize
    return as_strided(buffer[start:], shape=(count, n, size), strides=(n * size * b, size * b, b))


@njit_inline
def model_arrays(reals, ints):
    """Return the model's :class:`ModelArrays` (every view C-ordered, none a copy)."""
    n = ints.shape[1]
    m3 = _blocks(reals, 0, 2, n, 3)
    v3 = _vectors(reals, 18 * n, 2, n, 3)
    return ModelArrays(lam=ints[0], prismatic=ints[1], R_tree=m3[0], o_tree=v3[0],
                       m=reals[24 * n:25 * n], c=v3[1], I_O=m3[1], g=reals[25 * n:25 * n + 3],
                       column=ints[2], leader=ints[3], a=reals[25 * n + 3:26 * n + 3],
                       b=reals[26 * n + 3:27 * n + 3])


def _z_to_axis(a) -> np.ndarray:
    """
    Return a rotation A with A z = a, for a unit axis a: the columns x, y, a.

    x is the unit vector along the coordinate axis least aligned with a, made
    perpendicular to it, so that A is exact (a permutation with signs) when a is a
    coordinate axis.
    """
    a = np.asarray(a, dtype=float)
    x = np.zeros(3)
    x[np.argmin(np.abs(a))] = 1.0
    x -= (x @ a) * a
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(a, x), a])


@njit_inline
def data_arrays(data, n):
    """Return the workspace's :class:`DataArrays` (every view C-ordered, none a copy)."""
    M = _blocks(data, 0, 1, n, 6)[0]
    v6 = _vectors(data, 36 * n, 8, n, 6)
    v3 = _vectors(data, 84 * n, 4, n, 3)
    R = _blocks(data, 96 * n, 1, n, 3)[0]
    s = _vectors(data, 105 * n, 1, 3, n)[0]
    return DataArrays(R=R, r=v3[0], e=v3[1], p=v6[0], M=M, d=v3[2], O=v3[3], t=v6[1],
                      td=v6[2], w=v6[3], M_tilde=M, M_hat=M, psi=v6[4], m_hat=s[0],
                      eta=v6[5], mu=v6[6], tau_hat=s[1], phi=s[2], y=v6[7])


@njit_inline
def mimic_arrays(workspace, n_bodies, k):
    """Return the :class:`MimicArrays` of a workspace, for k mimic joints (none a copy)."""
    start = DATA_REALS * n_bodies
    v = _vectors(workspace, start, 1, 5, n_bodies)[0]
    start += 5 * n_bodies
    Z = _vectors(workspace, start, 1, n_bodies, k)[0]
    start += k * n_bodies
    S = _vectors(workspace, start, 1, k, k)[0]
    start += k * k
    return MimicArrays(q_b=v[0], qd_b=v[1], x_b=v[2], tau_b=v[3], qdd_b=v[4], Z=Z, S=S,
                       lam=workspace[start:start + k])


def _unowned_value(context, builder, typ, value):
    """Return ``value`` of numba type ``typ`` with every array's owner set to none."""
    if isinstance(typ, types.Array):
        array = context.make_array(typ)(context, builder, value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(typ, types.BaseTuple):
        for k, item in enumerate(typ):
            value = builder.insert_value(
                value, _unowned_value(context, builder, item, builder.extract_value(value, k)),
                k)
    return value


if numba.config.DISABLE_JIT:
    def unowned(x):
        """Return x (without the JIT there are no reference counts to save)."""
        return x
else:
    @intrinsic
    def unowned(typingctx, x):
        """
        Return x with no owner: an array (or each array of a tuple) over the same memory.

        numba counts references to every array by its owner (a meminfo: the buffer
        that Python passed, or one numba allocated), and each count is an atomic add
        or subtract on that owner (``lock incq``), for every view made and every array
        handed to a function that is not inlined.  The kernels' many views of one
        workspace then pay the same owner's count over and over: in the mimic joints'
        forward dynamics (:func:`.mimic.forward_dynamics`, the gripper arm) these counts
        took more than half the kernel's time (2.68 against 1.25 us), and in a batch
        the threads' counts on one shared owner contend.  A view without an owner has
        nothing to count (numba's count then tests for none and skips).

        Only for memory that outlives every use of the result: the arguments of a
        compiled entry (their caller holds them until it returns), never an array
        allocated in compiled code (numba frees it after its last use) and never a
        result handed back to Python.  Types are unchanged; anything else (None, a
        number) is returned as it is.
        """
        def codegen(context, builder, signature, args):
            return _unowned_value(context, builder, signature.args[0], args[0])
        return x(x), codegen


@njit_inline
def open_model(buffer):
    """
    Return (reals, ints) of a model's buffer (:func:`model_views`) on :func:`unowned`.

    For the compiled entries, whose argument the buffer is: one array to pass from
    Python instead of two (numba's call costs about 30 ns per array).
    """
    buffer = unowned(buffer)
    n = (buffer.shape[0] - 3) // (MODEL_REALS + 6)
    split = (MODEL_REALS + 2) * n + 3
    return buffer[:split], _vectors(buffer[split:].view(np.int64), 0, 1, 4, n)[0]


if numba.config.DISABLE_JIT:
    def hold(owned, value):
        """Return value (without the JIT nothing is freed early)."""
        return value
else:
    @intrinsic
    def hold(typingctx, owned, value):
        """
        Return ``value``, a use of the array ``owned``, which numba frees after its last use.

        A compiled entry that allocates a workspace and runs the kernels on an
        :func:`unowned` view of it returns its result through this, so that the
        workspace lives until the kernels are done.
        """
        def codegen(context, builder, signature, args):
            return args[1]
        return value(owned, value), codegen
