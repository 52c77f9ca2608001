"""
The public face of the core: a robot loaded from a URDF, with the DeNOC algorithms.

Every method takes one state (q of shape (n,)) or a batch (q of shape (..., n)) and
returns the matching shapes.  One state calls a compiled kernel of the core on this
thread's workspace; a batch runs the same kernel over the states in parallel
(:mod:`.batch`).  Non-finite input, or input whose last axis is not n, raises
ValueError; finite input whose result is not finite (it overflowed: joint speeds of
1e155 rad/s, efforts of 1e308 N m) raises :class:`NonFiniteResult`, a ValueError, so
that no NaN or Inf ever comes out.
"""

import math
import threading
from typing import Dict, NamedTuple, Optional

import numba
import numpy as np

from . import batch
from .composite_body import composite_body, mass_centre_inertias
from .forward_dynamics import (forward_dynamics, forward_dynamics_checked,
                               forward_dynamics_cholesky, forward_dynamics_mimic,
                               forward_dynamics_mimic_checked)
from .gim import inertia_matrix
from .inverse_dynamics import inverse_dynamics
from .inverse_inertia import inverse_inertia_matrix
from .kinematics import kinematics
from .model import data_arrays, Model, model_arrays
from .momentum import momentum_terms
from .reaction_wrench import reaction_wrenches
from .udu import articulated_bodies, udu
from .urdf import build_chain, build_chain_xml, Chain

#: ``method=`` of :meth:`Robot.forward_dynamics`: Saha's O(n) sweeps (the default) and
#: the composite-body GIM with Cholesky, the O(n^3) reference.
FD_METHODS = ('denoc', 'cholesky')

#: Joint k moves no mass when m^_k is at most this fraction of the magnitude of the
#: terms it is computed from (see :meth:`Robot._check_articulated_inertias`).
ARTICULATED_EPS = 1e-12


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


class Robot:
    """A fixed-base robot (a serial chain or a tree of bodies) with the DeNOC algorithms."""

    def __init__(self, chain: Chain, gravity=(0.0, 0.0, -9.81)):
        """Wrap a :class:`Chain`; check that every joint moves some mass."""
        self.chain = chain
        self.gravity = np.array(gravity, dtype=float)
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            raise ValueError(f'gravity must be 3 finite numbers, got {gravity!r}')
        self.model = Model(chain, self.gravity)
        self._reals, self._ints = self.model.reals, self.model.ints
        self._nb = chain.n
        coordinates = chain.coordinates
        self._n = len(coordinates)
        self._G = self._mimic = None   # q_bodies = G q + offset, with mimic joints only
        if self._n < self._nb:
            column = np.empty(self._nb, dtype=np.int64)
            column[coordinates] = np.arange(self._n)
            leader = np.where(chain.mimic_leader < 0, np.arange(self._nb), chain.mimic_leader)
            self._G = np.zeros((self._nb, self._n))
            self._G[np.arange(self._nb), column[leader]] = np.where(
                chain.mimic_leader < 0, 1.0, chain.mimic_multiplier)
            self._offset = np.where(chain.mimic_leader < 0, 0.0, chain.mimic_offset)
            self._mimic = (np.asarray(coordinates, dtype=np.int64),
                           np.asarray(chain.mimic_leader, dtype=np.int64),
                           self._G[np.arange(self._nb), column[leader]].copy(), self._offset)
        self._fd_kernels = {'denoc': (batch.FORWARD_DYNAMICS, forward_dynamics),
                            'cholesky': (batch.FORWARD_DYNAMICS_CHOLESKY,
                                         forward_dynamics_cholesky)}
        self._no_wrenches = np.zeros((self._nb, 6))       # read by the kernels, never written
        self._local = threading.local()
        self._check_articulated_inertias()

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
        if self._G is not None:
            damping = (self._G ** 2).T @ c.damping
            friction = np.abs(self._G).T @ c.friction
        return JointProperties(c.lower[k], c.upper[k], c.velocity[k], c.effort[k],
                               damping, friction, c.continuous[k].astype(bool),
                               c.prismatic[k].astype(bool))

    def body_positions(self, q) -> np.ndarray:
        """Return the positions of every moving joint (..., n_bodies): q_m = a q_l + b."""
        return self._bodies(self._state(q, 'q'))[0]

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
        try:
            return self._local.data
        except AttributeError:
            self._local.data = self.model.data()
            return self._local.data

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
        q, qd, qdd = self._states(q=q, qd=qd, qdd=qdd)
        return self._coordinates(self._vector(batch.INVERSE_DYNAMICS, inverse_dynamics,
                                              *self._bodies(q, qd, qdd), f_ext))

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
        q, qd = self._states(q=q, qd=qd)
        return self.inverse_dynamics(q, qd, np.zeros(q.shape), f_ext)

    def gravity_torques(self, q) -> np.ndarray:
        """Return ID(q, 0, 0), the efforts that hold the robot still against gravity."""
        q = self._state(q, 'q')
        return self.inverse_dynamics(q, np.zeros(q.shape), np.zeros(q.shape))

    def equations_of_motion(self, q, qd, f_ext=None):
        """Return (I, b) with I qdd + b = tau: the GIM and ID(q, qd, 0)."""
        return self.inertia_matrix(q), self.bias_forces(q, qd, f_ext)

    def forward_dynamics(self, q, qd, tau, method: str = 'denoc', f_ext=None) -> np.ndarray:
        """
        Return qdd = FD(q, qd, tau).

        ``method``: ``"denoc"``, Saha's O(n) three-sweep solve (002 eqs. 14-19), the
        default; ``"cholesky"``, the composite-body GIM (000 eq. 22) and a Cholesky
        factorization, O(n^3), the reference.  With mimic joints, ``"denoc"`` adds
        one solve per mimic joint to hold it to its leader, still O(n)
        (:func:`.forward_dynamics.forward_dynamics_mimic`), and ``"cholesky"`` solves
        the constrained system G^T M G qdd = tau - G^T h; so does ``"denoc"`` where a
        mimic joint's body moves no mass (the sweeps divide by its m^_k = 0).
        """
        if method == 'denoc' and f_ext is None:
            qdd = np.empty(self._n)           # one state, as the kernel takes it: no copies
            try:                              # (no workspace yet in this thread: below)
                if self._G is None:
                    status = forward_dynamics_checked(self._reals, self._ints, q, qd, tau,
                                                      self._local.data, qdd)
                elif self._mimic is not None:
                    status = forward_dynamics_mimic_checked(
                        self._reals, self._ints, *self._mimic, q, qd, tau, self._local.data,
                        qdd)
                else:
                    status = -1
            except (TypeError, AttributeError):     # not float64 vectors: checked below
                status = -1
            if status == 0:
                return qdd
        kernel = self._fd_kernels.get(method)
        if kernel is None:
            raise ValueError(f'method must be one of {FD_METHODS}, got {method!r}')
        q, qd, tau = self._states(q=q, qd=qd, tau=tau)
        if self._G is None:
            return self._vector(kernel[0], kernel[1], q, qd, tau, f_ext)
        if method == 'denoc' and self._mimic is not None:
            f_ext = self._wrenches(f_ext, q.shape[:-1])
            qdd = np.empty(q.shape)
            for s in np.ndindex(q.shape[:-1]):
                forward_dynamics_mimic(self.model.reals, self.model.ints, *self._mimic, q[s],
                                       qd[s], tau[s], f_ext[s], self._data(), qdd[s])
            return _finite(qdd)
        M, b = self.equations_of_motion(q, qd, f_ext)
        return _finite(_cholesky_solve(M, tau - b))

    def inertia_matrix(self, q) -> np.ndarray:
        """Return the GIM (..., n, n) by composite bodies (000 eq. 22); G^T M G with mimics."""
        q = self._state(q, 'q')
        return self._projected(self._matrix(batch.INERTIA_MATRIX, inertia_matrix,
                                            self._bodies(q)[0], 0))

    def udu(self, q):
        """
        Return (U, d): I = U diag(d) U^T by reverse Gaussian elimination (000 eqs. 32-34).

        With mimic joints, the same elimination on the numbers of G^T M G.
        """
        q = self._state(q, 'q')
        if self._G is not None:
            U, d = _udu_numeric(self.inertia_matrix(q))
            return U, _finite(d)
        out = self._matrix(batch.UDU, udu, q, 1)
        return out[..., :-1, :], out[..., -1, :]

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

    def inverse_inertia_matrix(self, q) -> np.ndarray:
        """
        Return I^-1 = U^-T D^-1 U^-1, analytically (000 eqs. 36-41).

        With mimic joints, (G^T M G)^-1 from its numeric U D U^T.
        """
        q = self._state(q, 'q')
        if self._G is not None:
            U, d = self.udu(q)
            U_inv = np.linalg.inv(U)
            return _finite(np.swapaxes(U_inv, -1, -2) @ (U_inv / d[..., :, None]))
        return self._matrix(batch.INVERSE_INERTIA, inverse_inertia_matrix, q, 0)

    def composite_body(self, q, qd):
        """Return (H, b) by the composite-body method about one fixed point (paper 003)."""
        q, qd = self._states(q=q, qd=qd)
        q_b, qd_b = self._bodies(q, qd)
        out = self._matrix(batch.COMPOSITE_BODY, composite_body, q_b, 1, qd_b)
        return self._projected(out[..., :-1, :]), self._coordinates(out[..., -1, :])

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """Return T = qd^T I qd / 2."""
        q, qd = self._states(q=q, qd=qd)
        return _finite(0.5 * np.einsum('...i,...ij,...j->...', qd, self.inertia_matrix(q), qd))

    def potential_energy(self, q) -> np.ndarray:
        """Return V = -sum m_i g . C_i (zero at the base origin)."""
        q = self._state(q, 'q')
        C = np.array([self.kinematics(x).C for x in q.reshape(-1, self._n)])
        V = -np.einsum('i,sij,j->s', self.chain.mass, C, self.gravity)
        return _finite(V.reshape(q.shape[:-1]))

    # --- coordinates and bodies (mimic joints) -----------------------------------
    def _bodies(self, q, *rates):
        """Return (G q + b, G x for each rate x): every body's joint position and rates."""
        if self._G is None:
            return (q,) + rates
        return (q @ self._G.T + self._offset,) + tuple(x @ self._G.T for x in rates)

    def _coordinates(self, tau):
        """Return G^T tau: body efforts on the coordinates (a mimic joint's on its leader)."""
        return tau if self._G is None else tau @ self._G

    def _projected(self, M):
        """Return G^T M G."""
        return M if self._G is None else self._G.T @ M @ self._G

    # --- the kernels, one state or a batch ---------------------------------------
    def _vector(self, algorithm, kernel, q, x1, x2, f_ext):
        """Return the vector result of ``kernel`` (tau or qdd) at each state of the bodies."""
        f_ext = self._wrenches(f_ext, q.shape[:-1])
        if q.ndim == 1:
            out = np.empty(self._nb)
            kernel(self.model.reals, self.model.ints, q, x1, x2, f_ext, self._data(), out)
            return _finite(out)
        return _finite(self._batch(algorithm, q, x1, x2, f_ext, 1)[..., 0, :])

    def _matrix(self, algorithm, kernel, q, extra_rows, qd=None):
        """Return the (n_bodies + extra_rows, n_bodies) result of ``kernel`` at each state."""
        n = self._nb
        if q.ndim == 1:
            out = np.empty((n + extra_rows, n))
            if extra_rows:
                args = (q,) if qd is None else (q, qd)
                kernel(self.model.reals, self.model.ints, *args, self._data(), out[:n], out[n])
            else:
                kernel(self.model.reals, self.model.ints, q, self._data(), out)
            return _finite(out)
        return _finite(self._batch(algorithm, q, q if qd is None else qd, q,
                                   np.zeros(q.shape + (6,)), n + extra_rows))

    def _batch(self, algorithm, q, x1, x2, f_ext, rows):
        """Run ``algorithm`` over a batch of states (:func:`.batch.evaluate`)."""
        n = self._nb
        shape = q.shape[:-1]
        flat = [np.ascontiguousarray(x.reshape(-1, n)) for x in (q, x1, x2)]
        f_ext = f_ext.reshape(-1, n, 6)
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
        M = self._matrix(batch.INERTIA_MATRIX, inertia_matrix, self._offset.copy(), 0)
        G_abs = np.abs(self._G)
        sigma = np.einsum('ik,ij,jk->k', G_abs, np.abs(M), G_abs)
        with np.errstate(all='ignore'):
            d = _udu_numeric(self._projected(M))[1]
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


def _cholesky_solve(M, b):
    """Return x with M x = b for symmetric positive definite M (..., n, n), by Cholesky."""
    L = np.linalg.cholesky(M)
    y = np.linalg.solve(L, b[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]


def _udu_numeric(I):
    """Return (U, d) with I = U diag(d) U^T by elimination from the last row (000 §5.1)."""
    A = np.array(I, dtype=float)
    n = A.shape[-1]
    U = np.zeros_like(A)
    d = np.zeros(A.shape[:-1])
    for k in range(n - 1, -1, -1):
        d[..., k] = A[..., k, k]
        U[..., :k + 1, k] = A[..., :k + 1, k] / d[..., k, None]
        A[..., :k, :k] -= U[..., :k, k, None] * A[..., None, k, :k]
    return U, d


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
