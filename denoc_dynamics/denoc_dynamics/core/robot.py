"""
The public face of the core: a serial robot loaded from a URDF.

Every method takes one state (q of shape (n,)) or a batch (q of shape (..., n)) and
returns the matching shapes; both go through the same code.  Non-finite input, or
input whose last axis is not n, raises ValueError; finite input whose result is not
finite (it overflowed: joint speeds of 1e155 rad/s, efforts of 1e308 N m) raises
:class:`NonFiniteResult`, a ValueError, so that no NaN or Inf ever comes out.
"""

from functools import partial
import math
from typing import Dict, Optional

import numpy as np

from . import composite_body
from .denoc_matrices import bias_vector, equations_of_motion, mass_terms
from .forward_dynamics import cholesky_solve, solve_cholesky, solve_denoc
from .gim import inertia_matrix
from .inverse_dynamics import base_acceleration, inverse_dynamics
from .inverse_inertia import inverse_inertia_matrix
from .kinematics import JointMotionBasis, Kinematics
from .spatial import dot, matvec
from .udu import articulated_bodies, udu
from .urdf import build_chain, build_chain_xml, Chain

#: ``method="auto"`` solves one state by the GIM and Cholesky (fewer, larger numpy
#: calls) for chains shorter than this, and by the O(n) DeNOC sweeps otherwise.
#: A batch of states always takes the DeNOC sweeps, which vectorize over the states
#: (Cholesky runs LAPACK once per state).  The crossover, n ~ 886 on the 2-core
#: reference machine, is measured by ``benchmarks/bench_scaling.py`` (see the
#: README's performance section).
AUTO_DENOC_MIN_DOF = 886

#: Below this many joints, ``method="auto"`` solves one state with the DeNOC matrices
#: formed explicitly (``"dense"``, :mod:`.denoc_matrices`): O(n^3) arithmetic in a
#: few numpy calls, against the composite bodies' O(n^2) in more calls.  The
#: crossover, n ~ 29 on the 2-core reference machine, is measured by
#: ``benchmarks/bench_scaling.py``.
AUTO_DENSE_MAX_DOF = 30

#: Batched calls run over blocks of this many states, so that each block's arrays
#: stay in the processor's cache (forward dynamics of 10,000 Panda states: about
#: 1.4x faster than one pass; the results are the same, state by state).
CHUNK_STATES = 128

#: Joint k moves no mass when m^_k is at most this fraction of the magnitude of the
#: terms it is computed from (see :meth:`Robot._check_articulated_inertias`).
ARTICULATED_EPS = 1e-12

FD_METHODS = ('auto', 'denoc', 'cholesky', 'dense')


class NonFiniteResult(ValueError):
    """Finite input whose result overflowed to NaN or Inf (the input is too large)."""


class Robot:
    """A fixed-base serial chain with the DeNOC dynamics algorithms."""

    def __init__(self, chain: Chain, gravity=(0.0, 0.0, -9.81)):
        """Wrap a :class:`Chain`; check that every joint moves some mass."""
        self.chain = chain
        self.gravity = np.asarray(gravity, dtype=float)
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            raise ValueError(f'gravity must be 3 finite numbers, got {gravity!r}')
        self._td0 = base_acceleration(self.gravity)
        self._basis = JointMotionBasis(chain)
        self._check_articulated_inertias()

    # --- description -------------------------------------------------------------
    @property
    def n(self) -> int:
        """Return the number of joints (degrees of freedom)."""
        return self.chain.n

    @property
    def joint_names(self):
        """Return the chain's joint names in path order."""
        return list(self.chain.joint_names)

    def summary(self) -> str:
        """Return a readable description of the chain as the model sees it."""
        c = self.chain
        lines = [f'robot {c.name!r}: {c.n} joints from {c.base_link!r} to {c.tip_link!r}',
                 f'gravity (base frame): {self.gravity.tolist()}']
        header = f'{"#":>2} {"joint":<24}{"type":<11}{"mass [kg]":>11}  merged links'
        lines.append(header)
        for k in range(c.n):
            kind = ('prismatic' if c.prismatic[k] else
                    'continuous' if c.continuous[k] else 'revolute')
            lines.append(f'{k + 1:>2} {c.joint_names[k]:<24}{kind:<11}{c.mass[k]:>11.4f}  '
                         + ', '.join(c.merged_links[k]))
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
        if x.ndim == 0 or x.shape[-1] != self.n:
            raise ValueError(f'{name} must have shape (..., {self.n}), got {x.shape}')
        if not _all_finite(x):
            raise ValueError(f'{name} contains NaN or Inf')
        return x

    def _states(self, **arrays):
        n = self.chain.n
        checked = [value if type(value) is np.ndarray and value.dtype == np.float64
                   and value.ndim and value.shape[-1] == n else self._state(value, name)
                   for name, value in arrays.items()]
        # one reduction catches NaN and Inf in any of them; only then look closer
        if not math.isfinite(sum(map(np.vdot, checked, checked))):
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
        if f_ext is None:
            return None
        f_ext = np.asarray(f_ext, dtype=float)
        if f_ext.shape[-2:] != (self.n, 6) or not np.all(np.isfinite(f_ext)):
            raise ValueError(f'f_ext must be finite with shape (..., {self.n}, 6), '
                             f'got {f_ext.shape}')
        return np.broadcast_to(f_ext, batch_shape + (self.n, 6))

    def kinematics(self, q) -> Kinematics:
        """Return the DeNOC kinematic quantities at q (000 eqs. 1-15)."""
        return Kinematics(self.chain, self._basis, self._state(q, 'q'))

    # --- dynamics ----------------------------------------------------------------
    def inertia_matrix(self, q) -> np.ndarray:
        """Return the GIM (..., n, n) by composite bodies (000 eq. 22)."""
        return self._blockwise(inertia_matrix, self._state(q, 'q'))

    def inverse_dynamics(self, q, qd, qdd, f_ext=None) -> np.ndarray:
        """
        Return the joint efforts tau = ID(q, qd, qdd) (000 eqs. 10-18).

        ``f_ext`` (..., n, 6): external wrenches [moment about C_i; force] on each
        body, in the base frame.
        """
        q, qd, qdd = self._states(q=q, qd=qd, qdd=qdd)
        f_ext = self._wrenches(f_ext, q.shape[:-1])
        return self._blockwise(self._inverse_dynamics, q, qd, qdd, f_ext)

    def _inverse_dynamics(self, kin, qd, qdd, f_ext):
        return inverse_dynamics(kin, qd, qdd, self._td0, f_ext)

    def bias_forces(self, q, qd, f_ext=None) -> np.ndarray:
        """Return ID(q, qd, 0): Coriolis, centrifugal, gravity (and external) efforts."""
        q, qd = self._states(q=q, qd=qd)
        f_ext = self._wrenches(f_ext, q.shape[:-1])
        return self._blockwise(self._inverse_dynamics, q, qd, None, f_ext)

    def equations_of_motion(self, q, qd, f_ext=None):
        """
        Return (I, b) with I qdd + b = tau: the GIM and ID(q, qd, 0) in one call.

        The DeNOC matrices formed explicitly: I = N^T M N, b = N^T w* (000 eq. 18,
        :mod:`.denoc_matrices`); what a computed-torque law needs, for the price of
        about one of the two.  ``f_ext`` as in :meth:`inverse_dynamics`.
        """
        q, qd = self._states(q=q, qd=qd)
        f_ext = self._wrenches(f_ext, q.shape[:-1])
        return self._blockwise(self._equations_of_motion, q, qd, f_ext)

    def _equations_of_motion(self, kin, qd, f_ext):
        return equations_of_motion(kin, qd, self._td0, f_ext)

    def gravity_torques(self, q) -> np.ndarray:
        """Return ID(q, 0, 0), the efforts that hold the chain still against gravity."""
        q = self._state(q, 'q')
        return self._blockwise(self._inverse_dynamics, q, np.zeros_like(q), None, None)

    def forward_dynamics(self, q, qd, tau, method: str = 'auto', f_ext=None) -> np.ndarray:
        """
        Return qdd = FD(q, qd, tau).

        ``method``: ``"denoc"``, the O(n) three-sweep solve (002 eqs. 14-19);
        ``"cholesky"``, the composite-body GIM (000 eq. 22) and Cholesky, O(n^3);
        ``"dense"``, the DeNOC matrices formed explicitly, I = N^T M N and the bias
        N^T w* (000 eq. 18), and Cholesky, O(n^3) in the fewest numpy calls;
        ``"auto"`` picks the fastest for this chain length and batch
        (:data:`AUTO_DENSE_MAX_DOF`, :data:`AUTO_DENOC_MIN_DOF`).
        """
        q, qd, tau = self._states(q=q, qd=qd, tau=tau)
        algorithm = self._fd_algorithm(method, batched=q.ndim > 1)
        return self._blockwise(algorithm, q, qd, tau, self._wrenches(f_ext, q.shape[:-1]))

    def forward_dynamics_kernel(self, method: str = 'auto') -> 'ForwardDynamicsKernel':
        """Return the :class:`ForwardDynamicsKernel` of ``method`` (chosen once)."""
        return ForwardDynamicsKernel(self, method)

    def _fd_algorithm(self, method, batched):
        """Return algorithm(kin, qd, tau, f_ext) -> qdd for ``method`` ("auto" resolved)."""
        if method not in FD_METHODS:
            raise ValueError(f'method must be one of {FD_METHODS}, got {method!r}')
        if method == 'auto':
            method = ('denoc' if batched or self.n >= AUTO_DENOC_MIN_DOF else
                      'dense' if self.n < AUTO_DENSE_MAX_DOF else 'cholesky')
        if method == 'dense':
            return self._forward_dynamics_dense
        return partial(self._forward_dynamics,
                       solve_denoc if method == 'denoc' else solve_cholesky)

    def _forward_dynamics(self, solve, kin, qd, tau, f_ext):
        phi = tau - inverse_dynamics(kin, qd, None, self._td0, f_ext)
        return solve(kin, phi)

    def _forward_dynamics_dense(self, kin, qd, tau, f_ext, mass=None):
        """Solve I qdd = tau - b by Cholesky; ``mass``: (N, M N, I) at kin, if known."""
        N, M_N, I = mass_terms(kin) if mass is None else mass
        return cholesky_solve(I, tau - bias_vector(kin, N, M_N, qd, self._td0, f_ext))

    def udu(self, q):
        """Return (U, d): I = U diag(d) U^T by reverse Gaussian elimination (000 eqs. 32-35)."""
        return self._blockwise(udu, self._state(q, 'q'))

    def inverse_inertia_matrix(self, q) -> np.ndarray:
        """Return I^-1 = U^-T D^-1 U^-1, analytically (000 eqs. 36-41)."""
        return self._blockwise(inverse_inertia_matrix, self._state(q, 'q'))

    def composite_body(self, q, qd):
        """Return (H, b) by the composite-body method about one fixed point (paper 003)."""
        q, qd = self._states(q=q, qd=qd)
        return self._blockwise(self._composite_body, q, qd)

    def _composite_body(self, kin, qd):
        return (composite_body.inertia_matrix(kin),
                composite_body.bias_vector(kin, qd, self.gravity))

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """Return T = qd^T I qd / 2."""
        q, qd = self._states(q=q, qd=qd)
        return _finite(0.5 * np.einsum('...i,...ij,...j->...', qd, self.inertia_matrix(q), qd))

    def potential_energy(self, q) -> np.ndarray:
        """Return V = -sum m_i g . C_i (zero at the base origin)."""
        kin = self.kinematics(q)
        return _finite(-np.einsum('i,...ij,j->...', kin.m, kin.C, self.gravity))

    def _blockwise(self, algorithm, q, *arrays):
        """
        Return algorithm(Kinematics at q, *arrays), block by block for large batches.

        A batch of more than CHUNK_STATES states runs in blocks of that many, so that
        each block's arrays stay in the cache; every state goes through the same code
        and gets the same result.  ``arrays`` have q's batch shape in front (or are
        None); the result is an array, or a tuple of arrays, with it in front too.
        """
        batch = q.shape[:-1]
        count = math.prod(batch)
        if count <= CHUNK_STATES:
            return _finite(algorithm(Kinematics(self.chain, self._basis, q), *arrays))
        flat = [None if a is None else a.reshape((count,) + a.shape[len(batch):])
                for a in (q,) + arrays]
        parts = []
        for start in range(0, count, CHUNK_STATES):
            block = [None if a is None else a[start:start + CHUNK_STATES] for a in flat]
            parts.append(algorithm(Kinematics(self.chain, self._basis, block[0]), *block[1:]))
        if isinstance(parts[0], tuple):
            return _finite(tuple(_joined([part[k] for part in parts], batch)
                                 for k in range(len(parts[0]))))
        return _finite(_joined(parts, batch))

    def _check_articulated_inertias(self):
        """
        Raise ValueError for a joint that moves no mass; O(n) time and memory.

        m^_k, the articulated-body inertia about joint k (000 eq. 33), is zero
        exactly when joint k can move without moving any mass: nothing with mass
        beyond it, an axis through a point mass, a massless link between two
        coaxial joints.  Computed, such a zero is rounding noise, so m^_k is compared
        with the size of what it is summed from in the backward sweep (002 eq. 11),
        m^_k = p_k^T M_k p_k + p_k^T B^T Psi_{k+1} M^_{k+1} B p_k with
        B = B_{k+1,k}: body k's own terms, and the part of the articulated body beyond
        it that joint k+1 takes away, m^_{k+1} (p_k^T B^T psi_{k+1})^2, so

            sigma_k = |p_k|^T |M_k| |p_k| + m^_{k+1} (|p_k|^T |B|^T |psi_{k+1}|)^2

        (elementwise absolute values, so that terms that cancel count at their size).
        Joint k fails when m^_k <= ARTICULATED_EPS sigma_k.  sigma_k is local: it
        does not grow with the bodies beyond k+1, unlike the composite inertia I_kk,
        which grows as n^3 along a chain while m^_k stays bounded (a 20,000-link chain
        of 0.2 m links has m^_1 / I_kk ~ 1e-12).
        Only the articulated-body sweep runs: no GIM is formed.
        """
        kin = Kinematics(self.chain, self._basis, np.zeros(self.n))
        with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
            psi, m_hat = articulated_bodies(kin)
            p_abs = np.abs(kin.p)
            sigma = np.einsum('ki,kij,kj->k', p_abs, np.abs(kin.M), p_abs)
            B_T_abs = np.abs(np.swapaxes(kin.B_prev[1:], -1, -2))
            sigma[:-1] += m_hat[1:] * dot(p_abs[:-1], matvec(B_T_abs, np.abs(psi[1:]))) ** 2
            failed = ~(m_hat > ARTICULATED_EPS * sigma) | ~np.isfinite(sigma)
        if failed.any():
            k = int(np.argmax(failed))
            raise ValueError(
                f'joint {self.chain.joint_names[k]!r} moves no mass: its articulated-body '
                f'inertia m^_{k + 1} = {m_hat[k]:.3g} is rounding noise against the '
                f'{sigma[k]:.3g} it is computed from; add mass or inertia to link '
                f'{self.chain.link_names[k]!r} or the links beyond it')


def _all_finite(x) -> bool:
    """Return True if ``x`` holds no NaN or Inf: one reduction, element-wise only if needed."""
    # the sum of squares overflows for finite values above 1e154: then look closer
    return math.isfinite(np.vdot(x, x)) or bool(np.isfinite(x).all())


def _finite(result):
    """Return ``result`` (an array or a tuple of arrays); NonFiniteResult if not finite."""
    for x in result if isinstance(result, tuple) else (result,):
        if not _all_finite(x):
            raise NonFiniteResult(
                'the result is not finite (NaN or Inf): the input overflowed the '
                'floating-point range; joint positions, velocities, accelerations or '
                'efforts this large are not physical')
    return result


def _joined(blocks, batch):
    """Return the blocks' results joined along the states, with the batch shape in front."""
    out = np.concatenate(blocks, axis=0)
    return out.reshape(batch + out.shape[1:])


def load_urdf(path_or_xml, base_link: Optional[str] = None, tip_link: Optional[str] = None,
              gravity=(0.0, 0.0, -9.81), side_branches: str = 'lock',
              locked_positions: Optional[Dict[str, float]] = None,
              max_dof: Optional[int] = None) -> Robot:
    """
    Load a URDF file or XML (str or bytes) as a :class:`Robot`.

    A str is XML when it starts with ``<`` (after a byte-order mark and white space),
    else a file path; bytes are XML.  ``base_link`` defaults to the URDF root and
    ``tip_link`` to the single leaf below it.  ``side_branches``: ``"lock"`` keeps
    links off the base-tip path rigidly at ``locked_positions`` (default 0),
    ``"drop"`` discards them.  ``gravity`` is in the base-link frame.  A chain of
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
        raise ValueError(f'the chain {chain.base_link!r} -> {chain.tip_link!r} has {chain.n} '
                         f'joints, more than max_dof = {max_dof}')
    return Robot(chain, gravity=gravity)


class ForwardDynamicsKernel:
    """
    qdd = FD(q, qd, tau) for one state, with the method chosen once and no checks.

    The algorithms of :meth:`Robot.forward_dynamics` without its per-call checks of
    the input and of the result (about 13 us of the 70 us of one call on a 7-DOF
    arm): for an inner loop that checks its own state, such as the simulation's
    integrator, which stops on a non-finite state.  q, qd and tau are float arrays of
    shape (n,).

    A call runs in two phases, which can also be called apart: :meth:`configure`
    evaluates what depends on q alone (the kinematics, and for ``"dense"`` N, M N and
    I = N^T M N, 000 eq. 18), and :meth:`solve` finishes the state.  :meth:`configure`
    takes several configurations at once: a Runge-Kutta step knows two of its four
    stage positions before it evaluates any acceleration, and the other two after
    its first two stages, so two batched evaluations of two configurations replace
    four single ones (on a 7-DOF arm, 50 us for a pair against 35 us for one).
    """

    def __init__(self, robot: Robot, method: str = 'auto'):
        """Choose the algorithm of ``method`` for one state of ``robot``."""
        self._robot = robot
        self._algorithm = robot._fd_algorithm(method, batched=False)
        self._dense = self._algorithm == robot._forward_dynamics_dense

    def __call__(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Return qdd = FD(q, qd, tau)."""
        return self.solve(self.configure(q), qd, tau)

    def configure(self, q: np.ndarray):
        """
        Return the configuration terms at q (n,), or a list of them for q (k, n).

        Pass one of them to :meth:`solve` with a state at that configuration.
        """
        robot = self._robot
        kin = Kinematics(robot.chain, robot._basis, q)
        mass = mass_terms(kin) if self._dense else None
        if q.ndim == 1:
            return kin, mass
        if mass is None:
            return [(kin.state(k), None) for k in range(q.shape[0])]
        N, M_N, I = mass
        return [(kin.state(k), (N[k], M_N[k], I[k])) for k in range(q.shape[0])]

    def solve(self, configuration, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Return qdd = FD(q, qd, tau), q the configuration of ``configuration``."""
        kin, mass = configuration
        if self._dense:
            return self._algorithm(kin, qd, tau, None, mass)
        return self._algorithm(kin, qd, tau, None)
