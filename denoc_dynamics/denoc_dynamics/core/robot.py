"""
The public face of the core: a robot loaded from a URDF, with the DeNOC algorithms.

Every method takes one state (q of shape (n,)) or a batch (q of shape (..., n)) and
returns the matching shapes.  One state calls a compiled kernel of the core on a
workspace of its own; a batch runs the same kernel over the states in parallel
(:mod:`.batch`).  Non-finite input, or input whose last axis is not n, raises
ValueError; finite input whose result is not finite (it overflowed: joint speeds of
1e155 rad/s, efforts of 1e308 N m) raises :class:`NonFiniteResult`, a ValueError, so
that no NaN or Inf ever comes out.

Every call goes through one entry, :meth:`Robot._call`, with the algorithm's code of
:mod:`.call` and up to three state arrays (q and its rates; unused ones are passed as
q).  One state given as float64 vectors, without external wrenches, goes straight to
the compiled :func:`.call.call_state`, which checks the
lengths and the result in the same call; anything else, or a result that did not
pass, takes :meth:`Robot._checked_call`: the full checks and their errors
(:meth:`Robot._states`), then one state by :func:`.call.run` or a batch by
:func:`.batch.evaluate`.  Both routes run the same :func:`.call.run`.

A new call (a task-space quantity, a regressor) is added in three places: its kernel
in a module of its own, taking ``(reals, ints, q, ..., workspace, out)``; a code, a
row count in :data:`.call.ROWS` and a line in :func:`.call.run_matrix` or
:func:`.call.run_vector` (and in :func:`.call.run_mimic` if mimic joints need more
than the state mapped to the bodies and the result brought back); and a method here
that returns ``self._call(code, q, x1, x2)`` with the argument names in
:data:`ARGUMENTS`.  It then has the checks, the
errors, batches and the one-state speed of every other call.  A result that is not
(rows, n), such as a frame's 6 x n Jacobian, gets its own row count.
"""

import math
import threading
from typing import Dict, NamedTuple, Optional

import numba
import numpy as np

from . import batch, call, payload
from .call import ARRAY as _ARRAY, call_state, CONFIGURATION_MATRIX_ENTRY
from .call import CONFIGURATION_VECTOR_ENTRY, entry_point, FLOAT as _FLOAT, MATRIX_ENTRY
from .call import run, VECTOR_ENTRY
from .composite_body import mass_centre_inertias
from .gim import inertia_matrix
from .kinematics import kinematics
from .mimic import bodies
from .model import data_arrays, Model, model_arrays
from .momentum import momentum_terms
from .reaction_wrench import reaction_wrenches
from .regressor import INERTIA_PAIRS, regressor, regressor_batch, regressor_checked
from .task_space import TaskSpace
from .udu import articulated_bodies
from .urdf import build_chain, build_chain_xml, Chain

#: ``method=`` of :meth:`Robot.forward_dynamics`: Saha's O(n) sweeps (the default) and
#: the composite-body GIM with Cholesky, the O(n^3) reference.
FD_METHODS = ('denoc', 'cholesky')

#: ``method=`` of :meth:`Robot.inverse_inertia_matrix`: the O(n^2) unit solves on the
#: articulated bodies (the default) and the analytical U^-T D^-1 U^-1 (000 eqs. 36-41).
INVERSE_METHODS = ('denoc', 'analytical')

#: The names of each call's state arrays, for the errors of :meth:`Robot._states`.
ARGUMENTS = {call.INVERSE_DYNAMICS: ('q', 'qd', 'qdd'), call.BIAS_FORCES: ('q', 'qd'),
             call.GRAVITY: ('q',), call.FORWARD_DYNAMICS: ('q', 'qd', 'tau'),
             call.FORWARD_DYNAMICS_CHOLESKY: ('q', 'qd', 'tau'),
             call.INERTIA_MATRIX: ('q',), call.UDU: ('q',), call.INVERSE_INERTIA: ('q',),
             call.ANALYTICAL_INVERSE_INERTIA: ('q',), call.COMPOSITE_BODY: ('q', 'qd'),
             call.ENERGIES: ('q', 'qd'), call.POTENTIAL_ENERGY: ('q',)}

#: The calls that take external wrenches.
WRENCHES = (call.INVERSE_DYNAMICS, call.BIAS_FORCES, call.FORWARD_DYNAMICS,
            call.FORWARD_DYNAMICS_CHOLESKY)


#: Joint k moves no mass when m^_k is at most this fraction of the magnitude of the
#: terms it is computed from (see :meth:`Robot._check_articulated_inertias`).
ARTICULATED_EPS = 1e-12

_REGRESSOR_ENTRY = entry_point(regressor_checked)


class NonFiniteResult(ValueError):
    """Finite input whose result overflowed to NaN or Inf (the input is too large)."""


class Kinematics(NamedTuple):
    """
    The DeNOC quantities at one configuration, in the base frame (000 eqs. 1-15).

    Body i is referred to its joint origin O_i: ``R`` (n, 3, 3) orientations, ``e``
    (n, 3) joint axes, ``O`` joint origins, ``r`` = O_i - O_lambda(i), ``d`` = C_i - O_i,
    ``C`` mass centres, ``p`` (n, 6) = [e; 0] or [0; e], ``M`` (n, 6, 6) extended masses
    about O_i, ``I`` (n, 3, 3) inertias about C_i, ``m`` (n,) masses.  ``p_C``, ``M_C``
    and :meth:`B` give Saha's mass-centre form, for reading against paper 000.
    """

    R: np.ndarray
    e: np.ndarray
    O: np.ndarray
    r: np.ndarray
    d: np.ndarray
    C: np.ndarray
    p: np.ndarray
    M: np.ndarray
    I: np.ndarray
    m: np.ndarray
    prismatic: np.ndarray

    @property
    def p_C(self) -> np.ndarray:
        """Return p_i with the twist at C_i: [e_i; e_i x d_i] or [0; e_i] (000 eq. 12)."""
        lin = np.where(self.prismatic[:, None], self.e, np.cross(self.e, self.d))
        ang = np.where(self.prismatic[:, None], 0.0, self.e)
        return np.concatenate((ang, lin), axis=-1)

    @property
    def M_C(self) -> np.ndarray:
        """Return the extended mass M_i = [[I_i, 0], [0, m_i 1]] at C_i (000 eq. 15)."""
        M = np.zeros((len(self.m), 6, 6))
        M[:, :3, :3] = self.I
        M[:, 3:, 3:] = self.m[:, None, None] * np.eye(3)
        return M

    def B(self, i: int, j: int) -> np.ndarray:
        """Return B_ij = [[1, 0], [c_ij x, 1]], c_ij = C_j - C_i (000 eq. 11)."""
        c = self.C[j] - self.C[i]
        out = np.eye(6)
        out[3:, :3] = [[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]]
        return out


class MimicMap(NamedTuple):
    """
    How the bodies' joints follow the coordinates: q_b = G q + b (mimic joints).

    Body i moves as q_b,i = a_i q[column_i] + b_i: ``column`` (n_bodies,) is the
    coordinate that moves it (its own, or a mimic joint's leader's), ``a`` and ``b``
    the multiplier and offset (1 and 0 for a coordinate's own body), ``leader`` the
    leader's body (-1 for a coordinate).  :meth:`Robot.body_positions` applies it.
    """

    column: np.ndarray
    a: np.ndarray
    b: np.ndarray
    leader: np.ndarray

    @property
    def G(self) -> np.ndarray:
        """Return the (n_bodies, n) matrix of q_b = G q + b: a_i at row i, column column_i."""
        G = np.zeros((len(self.column), int(self.column.max()) + 1))
        G[np.arange(len(self.column)), self.column] = self.a
        return G


class JointProperties(NamedTuple):
    """
    The URDF's joint properties per coordinate (:attr:`Robot.joints`), in the order of q.

    ``lower``, ``upper`` position limits (+-inf where there are none, continuous joints
    too), ``velocity`` and ``effort`` limits (inf where none), ``damping`` and
    ``friction`` from ``<dynamics>``, ``continuous`` and ``prismatic`` flags.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    continuous: np.ndarray
    prismatic: np.ndarray


class Robot(TaskSpace):
    """
    A fixed-base robot (a serial chain or a tree of bodies) with the DeNOC algorithms.

    The task-space methods (frames, placements, Jacobians, task-space inertia) come
    from :class:`.task_space.TaskSpace`.
    """

    def __init__(self, chain: Chain, gravity=(0.0, 0.0, -9.81)):
        """Wrap a :class:`Chain`; check that every joint moves some mass."""
        self.chain = chain
        self.gravity = np.array(gravity, dtype=float)
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            raise ValueError(f'gravity must be 3 finite numbers, got {gravity!r}')
        self.model = Model(chain, self.gravity)
        self._buffer, self._reals, self._ints = (self.model.buffer, self.model.reals,
                                                 self.model.ints)
        self._A = np.ascontiguousarray(self.model.A)
        self._nb = chain.n
        coordinates = chain.coordinates
        self._n = len(coordinates)
        arrays = model_arrays(self._reals, self._ints)
        self.mimic_map = MimicMap(arrays.column, arrays.a, arrays.b, arrays.leader)
        self._G = self._mimic = None   # G of q_bodies = G q + b, with mimic joints only
        if self._n < self._nb:
            self._G, self._mimic = self.mimic_map.G, self.mimic_map
        #: the algorithm of each ``method=`` of forward_dynamics and inverse_inertia_matrix
        self.fd_algorithms = {'denoc': call.FORWARD_DYNAMICS,
                              'cholesky': call.FORWARD_DYNAMICS_CHOLESKY}
        self._inverse_algorithms = {'denoc': call.INVERSE_INERTIA,
                                    'analytical': call.ANALYTICAL_INVERSE_INERTIA}
        n = self._n
        self._rows = {code: {0: 0, 2: 2, 'n': n, 'n+1': n + 1}[rows]
                      for code, rows in call.ROWS.items()}
        self._no_wrenches = np.zeros((self._nb, 6))       # read by the kernels, never written
        self._local = threading.local()
        self._check_articulated_inertias()
        self._init_frames()

    # --- description -------------------------------------------------------------
    @property
    def n(self) -> int:
        """Return the number of joints (degrees of freedom)."""
        return self._n

    @property
    def n_bodies(self) -> int:
        """Return the number of moving bodies: the coordinates and the mimic joints."""
        return self._nb

    @property
    def joint_names(self):
        """Return the names of the coordinates, in the order of q (no mimic joints)."""
        return list(self.chain.coordinate_names)

    @property
    def body_joint_names(self):
        """Return the names of every moving joint, mimic joints included, body order."""
        return list(self.chain.joint_names)

    @property
    def mimic_joints(self) -> Dict[str, tuple]:
        """Return {mimic joint: (leader, multiplier, offset)}: q_m = a q_leader + b."""
        c = self.chain
        return {c.joint_names[k]: (c.joint_names[c.mimic_leader[k]],
                                   float(c.mimic_multiplier[k]), float(c.mimic_offset[k]))
                for k in range(c.n) if c.mimic_leader[k] >= 0}

    @property
    def joints(self) -> 'JointProperties':
        """
        Return the URDF joint properties per coordinate, in the order of q.

        A coordinate takes its own joint's limits; with mimic joints, the damping and
        the Coulomb friction of each mimic joint m are added to its leader's as the
        power it dissipates: damping a_m^2 c_m and friction |a_m| f_m.
        """
        c, k = self.chain, self.chain.coordinates
        damping, friction = c.damping[k].astype(float), c.friction[k].astype(float)
        if self._G is not None:                   # G^T diag(c) G, G^T f for |G|
            damping = (self._G ** 2).T @ c.damping
            friction = np.abs(self._G).T @ c.friction
        return JointProperties(c.lower[k], c.upper[k], c.velocity[k], c.effort[k],
                               damping, friction, c.continuous[k].astype(bool),
                               c.prismatic[k].astype(bool))

    def body_positions(self, q) -> np.ndarray:
        """Return the positions of every moving joint (..., n_bodies): q_m = a q_l + b."""
        q = self._state(q, 'q')
        return q if self._G is None else self._to_bodies(q, True)

    def body_rates(self, qd) -> np.ndarray:
        """Return the rates of every moving joint (..., n_bodies): qd_m = a qd_l."""
        qd = self._state(qd, 'qd')
        return qd if self._G is None else self._to_bodies(qd, False)

    def summary(self) -> str:
        """Return a readable description of the robot as the model sees it."""
        c = self.chain
        reach = f'to {c.tip_link!r}' if c.tip_link else '(the whole tree)'
        lines = [f'robot {c.name!r}: {c.n} joints from {c.base_link!r} {reach}',
                 f'gravity (base frame): {self.gravity.tolist()}']
        header = f'{"#":>2} {"joint":<24}{"type":<11}{"mass [kg]":>11}  merged links'
        lines.append(header)
        for k in range(c.n):
            kind = ('prismatic' if c.prismatic[k] else
                    'continuous' if c.continuous[k] else 'revolute')
            if c.mimic_leader[k] >= 0:
                kind = f'mimic of {c.joint_names[c.mimic_leader[k]]}'
            parent = c.joint_names[c.parent[k]] if c.parent[k] >= 0 else '(base)'
            lines.append(f'{k + 1:>2} {c.joint_names[k]:<24}{kind:<11}{c.mass[k]:>11.4f}  '
                         + ', '.join(c.merged_links[k]) + f'  (parent: {parent})')
        lines.append(f'total moving mass: {c.mass.sum():.4f} kg')
        lines.append(f'static (base) links, inertia ignored for a fixed base: '
                     f'{", ".join(c.static_links)} ({c.root_mass_ignored:.4f} kg)')
        if c.locked_joints:
            locked = ', '.join(f'{k}={v:g}' for k, v in c.locked_joints.items())
            lines.append(f'locked side-branch joints: {locked}')
        if c.dropped_links:
            lines.append(f'dropped side-branch links: {", ".join(c.dropped_links)}')
        return '\n'.join(lines)

    # --- input checking ----------------------------------------------------------
    def _state(self, x, name: str) -> np.ndarray:
        if type(x) is not np.ndarray or x.dtype != np.float64:
            x = np.asarray(x, dtype=float)
        if not (x.flags.c_contiguous and x.flags.writeable):   # one compiled signature
            x = x.copy()
        if x.ndim == 0 or x.shape[-1] != self._n:
            raise ValueError(f'{name} must have shape (..., {self._n}), got {x.shape}')
        if not _all_finite(x):
            raise ValueError(f'{name} contains NaN or Inf')
        return x

    def _states(self, **arrays):
        checked = [self._state(value, name) for name, value in arrays.items()]
        shape = checked[0].shape
        if all(x.shape == shape for x in checked):
            return checked
        try:
            return np.broadcast_arrays(*checked)
        except ValueError as exc:
            shapes = {name: np.shape(value) for name, value in arrays.items()}
            raise ValueError(f'batch shapes do not broadcast: {shapes}') from exc

    def _wrenches(self, f_ext, batch_shape):
        """Return the external wrenches (..., n_bodies, 6), zeros where none are given."""
        if f_ext is None:
            return self._no_wrenches if not batch_shape else np.zeros(batch_shape + (self._nb, 6))
        f_ext = np.asarray(f_ext, dtype=float)
        if f_ext.shape[-2:] != (self._nb, 6) or not np.all(np.isfinite(f_ext)):
            raise ValueError(f'f_ext must be finite with shape (..., {self._nb}, 6) '
                             f'(one wrench per body), got {f_ext.shape}')
        return np.broadcast_to(f_ext, batch_shape + (self._nb, 6)).copy()

    def _data(self) -> np.ndarray:
        """Return this thread's workspace (each thread of an executor has its own)."""
        data = getattr(self._local, 'data', None)
        if data is None:
            data = self._local.data = self.model.data()
        return data

    # --- dynamics ----------------------------------------------------------------
    def kinematics(self, q) -> Kinematics:
        """Return the DeNOC kinematic quantities at one configuration q (000 eqs. 1-15)."""
        q = self.body_positions(q)
        if q.ndim != 1:
            raise ValueError(f'kinematics takes one configuration (n,), got {q.shape}')
        data = data_arrays(self.model.data(), self._nb)
        kinematics(model_arrays(self.model.reals, self.model.ints), data, q)
        R = np.einsum('kij,klj->kil', data.R, self.model.A)  # the URDF link frames, R_i A_i^T
        m, O, d, M = self.chain.mass, data.O, data.d, data.M
        return Kinematics(R, data.e, O, data.r, d, O + d, data.p, M,
                          mass_centre_inertias(M, d, m), m, self.chain.prismatic.astype(bool))

    def inverse_dynamics(self, q, qd, qdd, f_ext=None) -> np.ndarray:
        """
        Return the joint efforts tau = ID(q, qd, qdd) (000 eqs. 10-18).

        ``f_ext`` (..., n_bodies, 6): external wrenches [moment about C_i; force] on
        each body, in the base frame.  With mimic joints, tau = G^T ID(G q + b, G qd,
        G qdd): the efforts on the coordinates, each mimic joint's on its leader.
        """
        return self._call(call.INVERSE_DYNAMICS, q, qd, qdd, f_ext)

    def reaction_wrenches(self, q, qd, qdd, f_ext=None) -> np.ndarray:
        """
        Return w~_i (n_bodies, 6) at one state: the wrench across each joint (000 eq. 18).

        [moment about the joint origin O_i; force] in the base frame, that body
        lambda(i) exerts on everything beyond joint i (:mod:`.reaction_wrench`);
        ``f_ext`` as :meth:`inverse_dynamics` takes it.
        """
        q, qd, qdd = self._states(q=q, qd=qd, qdd=qdd)
        if q.ndim != 1:
            raise ValueError(f'reaction_wrenches takes one state (n,), got {q.shape}')
        out = np.empty((self._nb, 6))
        reaction_wrenches(self._reals, self._ints, *self._bodies(q, qd, qdd),
                          self._wrenches(f_ext, ()), self._data(), out)
        return _finite(out)

    def momentum_terms(self, q, qd):
        """
        Return (p, C^T qd, g) at one state: p = I qd, C^T qd and g(q) (:mod:`.momentum`).

        Two O(n) sweeps, no finite differences; the momentum observer's terms.
        """
        q, qd = self._states(q=q, qd=qd)
        if q.ndim != 1:
            raise ValueError(f'momentum_terms takes one state (n,), got {q.shape}')
        out = np.empty((3, self._nb))
        momentum_terms(self._reals, self._ints, *self._bodies(q, qd), self._data(), *out)
        return tuple(_finite(self._coordinates(x)) for x in out)

    def bias_forces(self, q, qd, f_ext=None) -> np.ndarray:
        """Return ID(q, qd, 0): Coriolis, centrifugal, gravity (and external) efforts."""
        return self._call(call.BIAS_FORCES, q, qd, q, f_ext)

    def gravity_torques(self, q) -> np.ndarray:
        """Return ID(q, 0, 0), the efforts that hold the robot still against gravity."""
        return self._call_configuration(call.GRAVITY, q)

    def equations_of_motion(self, q, qd, f_ext=None):
        """Return (I, b) with I qdd + b = tau: the GIM and ID(q, qd, 0)."""
        return self.inertia_matrix(q), self.bias_forces(q, qd, f_ext)

    def forward_dynamics(self, q, qd, tau, method: str = 'denoc', f_ext=None) -> np.ndarray:
        """
        Return qdd = FD(q, qd, tau).

        ``method``: ``"denoc"``, Saha's O(n) three-sweep solve (002 eqs. 14-19), the
        default; ``"cholesky"``, the composite-body GIM (000 eq. 22) and a Cholesky
        factorization, O(n^3), the reference.  With mimic joints, ``"denoc"`` adds
        a k x k system along the mimic joints' paths to hold them to their leaders,
        still O(n) (:func:`.mimic.accelerations`), and ``"cholesky"`` solves the constrained
        system G^T M G qdd = tau - G^T h; so does ``"denoc"`` where a mimic joint's
        body moves no mass (the sweeps divide by its m^_k = 0).
        """
        algorithm = self.fd_algorithms.get(method)
        if algorithm is None:
            raise ValueError(f'method must be one of {FD_METHODS}, got {method!r}')
        return self._call(algorithm, q, qd, tau, f_ext)

    def inertia_matrix(self, q) -> np.ndarray:
        """Return the GIM (..., n, n) by composite bodies (000 eq. 22); G^T M G with mimics."""
        return self._call_configuration(call.INERTIA_MATRIX, q)

    def udu(self, q):
        """
        Return (U, d): I = U diag(d) U^T by reverse Gaussian elimination (000 eqs. 32-34).

        With mimic joints, the same elimination on the numbers of G^T M G.
        """
        out = self._call_configuration(call.UDU, q)
        return _split_last_row(out)

    def articulated_inertias(self, q) -> np.ndarray:
        """
        Return m^_k (n,) at one configuration: D of I = U D U^T, in O(n) (000 eq. 33).

        m^_k is the moment of inertia about joint k of the articulated body k; all are
        positive exactly when the GIM is positive definite.
        """
        q = self._state(q, 'q')
        if q.ndim != 1:
            raise ValueError(f'articulated_inertias takes one configuration (n,), got {q.shape}')
        if self._G is not None:
            return self.udu(q)[1]
        return _finite(self._articulated_bodies(q)[0].m_hat)

    def inverse_inertia_matrix(self, q, method: str = 'denoc') -> np.ndarray:
        """
        Return I^-1 (..., n, n).

        ``method``: ``"denoc"``, n unit solves of the O(n) sweeps (002 eqs. 14-19) on
        one articulated-body sweep, all columns at once, O(n^2) (the default);
        ``"analytical"``, U^-T D^-1 U^-1 written down from the articulated bodies
        (000 eqs. 36-41), O(n^3).  With mimic joints, (G^T M G)^-1 by Cholesky.
        """
        algorithm = self._inverse_algorithms.get(method)
        if algorithm is None:
            raise ValueError(f'method must be one of {INVERSE_METHODS}, got {method!r}')
        return self._call_configuration(algorithm, q)

    def regressor(self, q, qd, qdd) -> np.ndarray:
        """
        Return Y (..., n, 10 n_bodies) with ID(q, qd, qdd) = Y pi (:mod:`.regressor`).

        pi holds each body's [m, m c (3), I_xx, I_xy, I_yy, I_xz, I_yz, I_zz], c and the
        inertia about the origin of the body's URDF link frame, in that frame: the
        columns of Pinocchio's ``computeJointTorqueRegressor`` (:meth:`parameters`).
        With mimic joints, G^T Y: the rows of the coordinates.
        """
        data = getattr(self._local, 'data', None)
        if self._G is None and data is not None and _vector(q) and \
                _vector(qd) and _vector(qdd):                                   # one state
            Y = np.empty((self._n, 10 * self._nb))
            if not _REGRESSOR_ENTRY(self._reals, self._ints, self._A, q, qd, qdd, data, Y):
                return Y
        q, qd, qdd = self._bodies(*self._states(q=q, qd=qd, qdd=qdd))
        nb = self._nb
        Y = np.empty(q.shape + (10 * nb,))
        if q.ndim == 1:
            regressor(self._reals, self._ints, self._A, q, qd, qdd, self._data(), Y)
        else:
            flat = [np.ascontiguousarray(x.reshape(-1, nb)) for x in (q, qd, qdd)]
            with batch.PARALLEL_LOCK, numba.parallel_chunksize(1):
                regressor_batch(self._reals, self._ints, self._A, *flat,
                                Y.reshape(-1, nb, 10 * nb),
                                batch.BLOCKS_PER_THREAD * numba.get_num_threads())
        return _finite(Y if self._G is None else self._G.T @ Y)

    def parameters(self) -> np.ndarray:
        """Return pi (10 n_bodies,), the inertial parameters of :meth:`regressor`."""
        c = self.chain
        h = c.mass[:, None] * c.com
        I_O = c.inertia + c.mass[:, None, None] * (
            np.einsum('ki,ki->k', c.com, c.com)[:, None, None] * np.eye(3)
            - c.com[:, :, None] * c.com[:, None, :])
        k, l = np.array(INERTIA_PAIRS).T
        return np.concatenate((c.mass[:, None], h, I_O[:, k, l]), axis=1).ravel()

    def with_payload(self, link: str, mass: float, com, inertia) -> 'Robot':
        """
        Return a new Robot with a rigid payload fixed to ``link`` (:mod:`.payload`).

        Any link of the URDF, merged ones included; ``com`` (3,) in the link's frame,
        ``inertia`` (3, 3) about the payload's mass centre in the link's frame.  Only
        one body's constants change (no re-parse).  ValueError for an unknown link, a
        negative or non-finite mass, or an inertia no rigid body has.
        """
        return payload.with_payload(self, link, mass, com, inertia)

    def identify_payload(self, link: str, q, qd, qdd, tau) -> 'payload.PayloadEstimate':
        """
        Return the payload (mass, com, inertia) on ``link`` from (N, n) samples.

        Least squares on the link's regressor columns, this robot's parameters known;
        the estimate carries ``condition`` and ``residual_rms``.  ValueError, with the
        reason, for data that cannot determine it (:func:`.payload.identify_payload`).
        """
        return payload.identify_payload(self, link, q, qd, qdd, tau)

    def composite_body(self, q, qd):
        """Return (H, b) by the composite-body method about one fixed point (paper 003)."""
        out = self._call(call.COMPOSITE_BODY, q, qd, qd)
        return _split_last_row(out)

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """Return T = qd^T I qd / 2 = sum t_i^T M_i t_i / 2, in one sweep."""
        return self._call(call.ENERGIES, q, qd, qd)[..., 0, 0]

    def potential_energy(self, q) -> np.ndarray:
        """Return V = -sum m_i g . C_i (zero at the base origin)."""
        return self._call_configuration(call.POTENTIAL_ENERGY, q)[..., 1, 0]

    # --- the one entry -----------------------------------------------------------
    def _call(self, algorithm, q, x1, x2, f_ext=None):
        """
        Return ``algorithm`` (a code of :mod:`.call`) at (q, x1, x2): every call's entry.

        One state of float64 vectors without wrenches: the compiled checked call on the
        model's buffer, without numba's dispatch (the types checked here,
        :func:`.call.entry_point`).  Otherwise, or if that call finds a length or the result
        wrong, :meth:`_checked_call`.
        """
        # _vector of q, x1 and x2 written out: three Python calls fewer (0.1 us at n = 7)
        if (f_ext is None
                and type(q) is _ARRAY and q.dtype is _FLOAT and q.ndim == 1
                and type(x1) is _ARRAY and x1.dtype is _FLOAT and x1.ndim == 1
                and type(x2) is _ARRAY and x2.dtype is _FLOAT and x2.ndim == 1):
            rows = self._rows[algorithm]
            if rows:
                out = np.empty((rows, self._n))
                if MATRIX_ENTRY(algorithm, self._buffer, q, x1, x2, out):
                    return out
            else:
                out = np.empty(self._n)
                if VECTOR_ENTRY(algorithm, self._buffer, q, x1, x2, out):
                    return out
        return self._checked_call(algorithm, q, x1, x2, f_ext)

    def _call_configuration(self, algorithm, q):
        """
        Return ``algorithm`` at q alone (gravity, GIM, UDU^T, I^-1, V): :meth:`_call` for it.

        One float64 vector: the compiled checked call without the rates (two arrays
        fewer for numba to take); otherwise :meth:`_checked_call`.
        """
        if type(q) is _ARRAY and q.dtype is _FLOAT and q.ndim == 1:  # _vector
            rows = self._rows[algorithm]
            if rows:
                out = np.empty((rows, self._n))
                if CONFIGURATION_MATRIX_ENTRY(algorithm, self._buffer, q, out):
                    return out
            else:
                out = np.empty(self._n)
                if CONFIGURATION_VECTOR_ENTRY(algorithm, self._buffer, q, out):
                    return out
        return self._checked_call(algorithm, q, q, q, None)

    def _checked_call(self, algorithm, q, x1, x2, f_ext):
        """Check the input (ValueError naming it), then run one state or a batch."""
        names = ARGUMENTS[algorithm]
        checked = list(self._states(**dict(zip(names, (q, x1, x2)))))
        q, x1, x2 = (checked + checked[:1] * 2)[:3]
        rows = self._rows[algorithm]
        if f_ext is not None and algorithm not in WRENCHES:
            raise ValueError('this call takes no external wrenches')
        if q.ndim == 1 and f_ext is None:        # checked: the compiled call cannot fail
            out = np.empty((rows, self._n) if rows else self._n)
            call_state(algorithm, self._buffer, q, x1, x2, out)
            return _finite(out)
        if q.ndim == 1:
            out = np.empty((max(rows, 1), self._n))
            run(algorithm, self._reals, self._ints, q, x1, x2, self._wrenches(f_ext, ()),
                self._data(), out)
        else:
            wrenches = None if f_ext is None else self._wrenches(f_ext, q.shape[:-1])
            out = self._batch(algorithm, q, x1, x2, wrenches, max(rows, 1))
        return _finite(out if rows else out[..., 0, :])

    # --- coordinates and bodies (mimic joints) -----------------------------------
    def _bodies(self, q, *rates):
        """Return (G q + b, G x for each rate x): every body's joint position and rates."""
        if self._G is None:
            return (q,) + rates
        return (self._to_bodies(q, True),) + tuple(self._to_bodies(x, False) for x in rates)

    def _coordinates(self, tau):
        """Return G^T tau: body efforts on the coordinates (a mimic joint's on its leader)."""
        return tau if self._G is None else tau @ self._G

    def _to_bodies(self, x, offset):
        """Return G x (+ b with ``offset``): the bodies' joint positions or rates."""
        out = np.empty(x.shape[:-1] + (self._nb,))
        bodies(self._reals, self._ints, x.reshape(-1, self._n), out.reshape(-1, self._nb),
               offset)
        return out

    def _batch(self, algorithm, q, x1, x2, f_ext, rows):
        """Run ``algorithm`` over a batch of states (:func:`.batch.evaluate`); f_ext None: none."""
        n = self._n
        shape = q.shape[:-1]
        flat = [np.ascontiguousarray(x.reshape(-1, n)) for x in (q, x1, x2)]
        if f_ext is not None:
            f_ext = f_ext.reshape(-1, self._nb, 6)
        out = np.empty((flat[0].shape[0], rows, n))
        with batch.PARALLEL_LOCK, numba.parallel_chunksize(1):    # one block at a time
            batch.evaluate(algorithm, self.model.reals, self.model.ints, *flat, f_ext, out,
                           numba.get_num_threads())
        return out.reshape(shape + (rows, n))

    def _articulated_bodies(self, q):
        """
        Return a new workspace's views after the articulated-body sweep at q (bodies).

        And sigma_k = |p_k|^T |M_k| |p_k|, taken before the sweep turns M into M^.
        """
        model = model_arrays(self.model.reals, self.model.ints)
        data = data_arrays(self.model.data(), self._nb)
        kinematics(model, data, q)
        p, M = data.p, data.M
        sigma = np.einsum('ki,kij,kj->k', np.abs(p), np.abs(M), np.abs(p))  # M, not yet M^
        with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
            articulated_bodies(model, data)
        return data, sigma

    def _check_articulated_inertias(self):
        """
        Raise ValueError for a joint that moves no mass; O(n), at q = 0, no GIM formed.

        m^_k (000 eq. 33) is zero exactly when joint k moves no mass (nothing with mass
        beyond it, an axis through a point mass, a massless link between coaxial joints);
        computed, such a zero is rounding noise.  So m^_k = p_k^T M_k p_k + sum over the
        children c of k of p_k^T B_c^T Psi_c M^_c B_c p_k (002 eq. 11) is compared with

            sigma_k = |p_k|^T |M_k| |p_k| + sum_c m^_c (|p_k|^T |B_c|^T |psi_c|)^2,

        the size of its terms (elementwise absolute values: terms that cancel count at
        their size); joint k fails when m^_k <= ARTICULATED_EPS sigma_k.  Unlike the
        composite inertia I_kk, sigma_k does not grow with the bodies beyond the children.
        """
        with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
            data, sigma = self._articulated_bodies(np.zeros(self._nb))
            r, p, psi, m_hat = data.r, data.p, data.psi, data.m_hat
            p_abs = np.abs(p)
            parent = self.model.ints[0]
            c = np.flatnonzero(parent >= 0)
            psi_abs = np.abs(psi[c])
            # |B_c^T| |psi_c| = [|psi_w| + |[r x]| |psi_v|; |psi_v|]
            r_abs = np.abs(r[c])
            moved = psi_abs.copy()
            moved[:, 0] += r_abs[:, 1] * psi_abs[:, 5] + r_abs[:, 2] * psi_abs[:, 4]
            moved[:, 1] += r_abs[:, 2] * psi_abs[:, 3] + r_abs[:, 0] * psi_abs[:, 5]
            moved[:, 2] += r_abs[:, 0] * psi_abs[:, 4] + r_abs[:, 1] * psi_abs[:, 3]
            np.add.at(sigma, parent[c],
                      m_hat[c] * np.einsum('ki,ki->k', p_abs[parent[c]], moved) ** 2)
            failed = ~(m_hat > ARTICULATED_EPS * sigma) | ~np.isfinite(sigma)
        if failed.any() and self._G is not None:
            self._check_constrained_system()     # a mimic joint's body may have no mass
            self._mimic = None                   # and FD takes G^T M G (no O(n) sweeps)
            self.fd_algorithms['denoc'] = call.FORWARD_DYNAMICS_CHOLESKY
        elif failed.any():
            # the sweep runs from the tips to the base: the last joint that fails is where
            # it starts (the joints before it inherit its 0 or NaN)
            k = int(np.flatnonzero(failed)[-1])
            raise ValueError(
                f'joint {self.chain.joint_names[k]!r} moves no mass: link '
                f'{self.chain.link_names[k]!r} and the links beyond it have no mass or '
                f'inertia that this joint can move (its articulated-body inertia '
                f'm^_{k + 1} = {m_hat[k]:.3g} against the {sigma[k]:.3g} it is computed '
                f'from); add an <inertial> to link {self.chain.link_names[k]!r} or the '
                f'links beyond it')

    def _check_constrained_system(self):
        """
        Raise ValueError for a coordinate that moves no mass, with mimic joints.

        A mimic joint's body may be massless while its leader moves mass: the body tree
        is then singular, the constrained system G^T M G (at q = 0) is not.  Coordinate
        k fails when its pivot d_k of G^T M G = U D U^T is at most ARTICULATED_EPS
        sigma_k, sigma_k = (|G|^T |M| |G|)_kk the same sum over absolute values.
        """
        M = np.empty((self._nb, self._nb))
        inertia_matrix(self._reals, self._ints, self._to_bodies(np.zeros(self._n), True),
                       self.model.data(), M)
        G_abs = np.abs(self._G)
        sigma = np.einsum('ik,ij,jk->k', G_abs, np.abs(M), G_abs)
        zero, out = np.zeros(self._n), np.empty((self._n + 1, self._n))
        call_state(call.UDU, self._buffer, zero, zero, zero, out)
        d = out[-1]
        failed = np.flatnonzero(~(d > ARTICULATED_EPS * sigma))
        if failed.size:
            k = failed[-1]                      # the elimination runs from the last row
            name = self.joint_names[k]
            link = self.chain.link_names[self.chain.coordinates[k]]
            followers = [m for m, (leader, _, _) in self.mimic_joints.items() if leader == name]
            raise ValueError(
                f'joint {name!r} moves no mass: link {link!r}, the links beyond it '
                f'and those of the joints that mimic it ({", ".join(followers)}) have '
                f'no mass or inertia that this joint can move (pivot {d[k]:.3g} '
                f'of G^T M G against the {sigma[k]:.3g} it is computed from); add an '
                f'<inertial> to link {link!r} or the links beyond it')


def _vector(x) -> bool:
    """
    Return True if ``x`` is a float64 vector, as the compiled entries take one.

    The entries are called without numba's dispatch (:func:`.call.entry_point`), which
    would type their arguments: a caller checks them with this first.  Written out
    where a call's cost counts (0.03 us a call): :meth:`Robot._call`,
    :meth:`Robot._call_configuration` and :meth:`.TaskSpace.frame_jacobian`.
    """
    return type(x) is _ARRAY and x.dtype is _FLOAT and x.ndim == 1


def _split_last_row(out):
    """Return (out[..., :-1, :], out[..., -1, :]); one state's by plain slices (faster)."""
    if out.ndim == 2:
        return out[:-1], out[-1]
    return out[..., :-1, :], out[..., -1, :]


def _all_finite(x) -> bool:
    """Return True if ``x`` holds no NaN or Inf: one reduction, element-wise only if needed."""
    # the sum of squares overflows for finite values above 1e154: then look closer
    return math.isfinite(np.vdot(x, x)) or bool(np.isfinite(x).all())


def _finite(result):
    """Return ``result`` (an array); NonFiniteResult if it is not finite."""
    if not _all_finite(result):
        raise NonFiniteResult(
            'the result is not finite (NaN or Inf): the input overflowed the '
            'floating-point range; joint positions, velocities, accelerations or '
            'efforts this large are not physical')
    return result


def load_urdf(path_or_xml, base_link: Optional[str] = None, tip_link: Optional[str] = None,
              gravity=(0.0, 0.0, -9.81), side_branches: str = 'lock',
              locked_positions: Optional[Dict[str, float]] = None,
              max_dof: Optional[int] = None) -> Robot:
    """
    Load a URDF file or XML (str or bytes) as a :class:`Robot`.

    A str is XML when it starts with ``<`` (after a byte-order mark and white space),
    else a file path; bytes are XML.  ``base_link`` defaults to the URDF root.  Without
    ``tip_link`` the whole tree below ``base_link`` is loaded: every movable joint is a
    body, fixed joints are merged, and mimic joints follow their leaders.  With
    ``tip_link``, the chain from base to tip; ``side_branches``: ``"lock"`` keeps links
    off that path rigidly at ``locked_positions`` (default 0), ``"drop"`` discards them.
    ``gravity`` is in the base-link frame.  A chain of
    more than ``max_dof`` joints raises ValueError before the model is built.
    """
    chain = build_chain(path_or_xml, base_link=base_link, tip_link=tip_link,
                        side_branches=side_branches, locked_positions=locked_positions)
    return _robot(chain, gravity, max_dof)


def load_urdf_xml(xml, base_link: Optional[str] = None, tip_link: Optional[str] = None,
                  gravity=(0.0, 0.0, -9.81), side_branches: str = 'lock',
                  locked_positions: Optional[Dict[str, float]] = None,
                  max_dof: Optional[int] = None) -> Robot:
    """
    Load URDF XML (str or bytes) as a :class:`Robot`; never open a file.

    For text from outside, such as a robot_description topic or parameter: anything
    that is not XML, a file path included, raises ValueError.  Options as
    :func:`load_urdf`.
    """
    chain = build_chain_xml(xml, base_link=base_link, tip_link=tip_link,
                            side_branches=side_branches, locked_positions=locked_positions)
    return _robot(chain, gravity, max_dof)


def _robot(chain, gravity, max_dof):
    """Return the Robot of ``chain``; ValueError if it has more than ``max_dof`` joints."""
    if max_dof is not None and chain.n > max_dof:
        reach = f'{chain.base_link!r} -> {chain.tip_link!r}' if chain.tip_link else (
            f'below {chain.base_link!r}')
        raise ValueError(f'the robot {reach} has {chain.n} joints, more than max_dof = {max_dof}')
    return Robot(chain, gravity=gravity)
