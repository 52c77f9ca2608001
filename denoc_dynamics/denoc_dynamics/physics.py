"""
The simulated arm's physics, compiled: one call advances x = [q; qd] by k steps.

:func:`advance` takes the steps of one stretch of simulated time in which the
commands stay put (a publish period, in practice) without returning to Python.  Per
step h, with the drives' efforts decided once at the start of the step like a
drive's control cycle:

    qd    = impacts on the stops faster than v_max  (:mod:`.stop_impact`)
    tau   = drive(q, qd)                        effort, or the servo law (:mod:`.servo`)
    qdd   = FD(q, qd, tau + passive(q, qd))     Saha's O(n) sweeps (002 eqs. 14-19)
    tau   = the drives' velocity limit          (:func:`hold_velocity_limits`)
    x    <- RK4, AB4 or semi-implicit Euler on xdot = [qd; FD(q, qd, tau + passive)]

``passive`` is the URDF's joint physics: viscous damping ``-c qd``, Coulomb friction
``-f tanh(qd / v_eps)`` and the position limits as one-sided spring-damper stops.
FD is the core's (:func:`.core.mimic.accelerations`): with mimic joints, the bodies
move as q_b = G q + b and the sweeps add a k x k system along the mimic joints'
paths to the base to hold them to their leaders, still O(n); ``method='cholesky'``
(the reference) solves G^T M G qdd = tau - G^T h(q_b, qd_b) with the composite-body
GIM (000 eq. 22) by Cholesky.

The loops allocate nothing: every array lives in the :class:`Buffers` of a
:class:`Physics`, whose rows are the arrays that :class:`~.simulation.Simulation`
shows (``sim.damping`` is a row of :attr:`Physics.joint`); the kernels take that one
named tuple and read its arrays by name.  Compiled without ``fastmath``: the limits
are +-inf where the URDF gives none, and a non-finite state must be seen to stop the
run.
"""

from collections import namedtuple
import math

import numba
import numpy as np

from .core.call import BIAS_FORCES, FORWARD_DYNAMICS_CHOLESKY, run
from .core.forward_dynamics import cholesky_solve, sweeps_at
from .core.kinematics import kinematics
from .core.mimic import accelerations_at, constrained_cholesky, forward_dynamics, place_bodies
from .core.mimic import unit_response as mimic_unit_response
from .core.model import data_arrays, mimic_arrays, model_arrays, unowned
# the physics kernels as the core's: cached, IEEE arithmetic; the small parts inlined
from .core.spatial import njit, njit_inline
from .link_loads import link_wrenches, Loads
from .servo import EFFORT, VELOCITY
from .stop_impact import impact_velocity

#: Rows of :attr:`Physics.joint`, one column per coordinate.
(LOWER, UPPER, VELOCITY_LIMIT, EFFORT_LIMIT, DAMPING, FRICTION, FRICTION_VELOCITY,
 STOP_STIFFNESS, STOP_DAMPING, KP, KD, MAX_ERROR) = range(12)

#: Rows of :attr:`Physics.drive`: the servo command (effort feedforward, references,
#: held gravity and bias forces) and the held effort command of the effort path.
TAU_CMD, Q_REF, QD_REF, TAU_FF, EFFORT_CMD = range(5)

#: Integrator codes (the order of :data:`.simulation.INTEGRATORS`).
RK4, AB4, SEMI_IMPLICIT_EULER = range(3)

#: What :func:`advance` reports: all steps taken, or the step that failed and why.
RUNNING, NON_FINITE, DIVERGED = range(3)

#: Adams-Bashforth 4 weights of f_n, f_n-1, f_n-2, f_n-3 (times h / 24).
AB4_WEIGHTS = np.array([55.0, -59.0, 37.0, -9.0])

#: Sweeps of :func:`hold_velocity_limits` at most (it stops once nothing changes).
VELOCITY_SWEEPS = 50

#: Rows of :attr:`Physics.scratch`.
(TAU, COMMAND, TAU_STAGE, Q_STAGE, QD_STAGE, QDD_1, QDD_2, QDD_3, QDD_4, QD_2, QD_3,
 Q_NEW, QD_NEW, UNIT, ACTIVE, V_END, TAU_BEFORE) = range(17)

#: Passes of the drives' velocity limit per step at most: one on the Euler prediction
#: qd + h qdd, then on the integrator's own end-of-step velocities (a stop engaging
#: within the step changes the accelerations there).
DRIVE_PASSES = 3


#: Every array of the compiled step, by name: the model (``reals``, ``ints``, the
#: mimic map included), the joint parameters ``joint`` (rows :data:`LOWER` ..
#: :data:`MAX_ERROR`), the drives (``drive``, rows :data:`TAU_CMD` ..
#: :data:`EFFORT_CMD`; ``mode``), the state ``x`` = [q; qd], the AB4 ``history`` and
#: its ``count``, the core's workspace ``data``, the bodies' GIM ``M_b`` and the
#: Cholesky factor ``L`` of the reference (``cholesky`` True), M^-1 (``M_inv``), the
#: rows of :data:`TAU` .. (``scratch``), the ``report``, and the wrenches on the links
#: and the virtual wall (``loads``, :mod:`.link_loads`).
Buffers = namedtuple('Buffers', ['reals', 'ints', 'cholesky', 'joint', 'drive', 'mode', 'x',
                                 'history', 'count', 'data', 'M_b', 'L', 'M_inv', 'scratch',
                                 'report', 'loads'])


class Physics:
    """
    The buffers of :func:`advance` for one robot: parameters, drives, state, workspace.

    ``joint`` (12, n): the rows named by :data:`LOWER` .. :data:`MAX_ERROR`; ``drive``
    (5, n): :data:`TAU_CMD` .. :data:`EFFORT_CMD`; ``mode`` (n,) the drive modes;
    ``x`` = [q; qd]; ``history`` (4, 2n) with ``count`` the AB4 derivatives kept.
    """

    def __init__(self, robot, method: str = 'denoc'):
        """
        Lay out the buffers for ``robot`` (a :class:`~.core.robot.Robot`).

        ``method`` ``'denoc'``: Saha's O(n) sweeps, once, and the mimic joints' k x k system;
        ``'cholesky'``: the (constrained) composite-body GIM and Cholesky, the O(n^3)
        reference.  ``robot.fd_algorithms`` says which one a method runs (a mimic joint
        whose body moves no mass takes the reference).
        """
        n, nb = robot.n, robot.n_bodies
        self.reals, self.ints = robot.model.reals, robot.model.ints
        self.cholesky = robot.fd_algorithms[method] == FORWARD_DYNAMICS_CHOLESKY
        self.joint = np.zeros((12, n))
        self.drive = np.zeros((5, n))
        self.mode = np.zeros(n, dtype=np.int64)
        self.x = np.zeros(2 * n)
        self.history = np.zeros((4, 2 * n))
        self.count = np.zeros(1, dtype=np.int64)
        self.data = robot.model.data()
        self.M_b = np.zeros((nb, nb) if self.cholesky else (0, 0))
        self.L = np.zeros((n, n) if self.cholesky else (0, 0))
        self.M_inv = np.zeros((n, n))
        self.scratch = np.zeros((17, n))
        self.report = np.zeros(1)
        self.loads = Loads(nb)
        self.buffers = Buffers(self.reals, self.ints, self.cholesky, self.joint, self.drive,
                               self.mode, self.x, self.history, self.count, self.data,
                               self.M_b, self.L, self.M_inv, self.scratch, self.report,
                               self.loads.arrays())
        self._entry = None                  # advance's compiled entry, for these types

    def advance(self, steps: int, servo: bool, h: float, integrator: int,
                divergence_velocity: float, feedforward: bool = False):
        """
        Take up to ``steps`` steps; return (steps taken, status, failed speed).

        ``feedforward``: first set the servos' held ``TAU_FF`` row to the bias forces
        ID(q, qd, 0) at the current state, as ``robot.bias_forces`` gives them.
        """
        done, status = self._run(steps, servo, h, integrator, divergence_velocity,
                                 feedforward)
        return done, status, self.report[0]

    def _run(self, steps, servo, h, integrator, divergence_velocity, feedforward):
        """Call the compiled :func:`advance`; return (steps taken, status)."""
        if self.buffers.loads[0] is not self.loads.wrench_ints or (
                self.buffers.loads[2] is not self.loads.planes
                or self.buffers.loads[3] is not self.loads.contact_body):
            self.buffers = self.buffers._replace(loads=self.loads.arrays())  # changed
            self._entry = None
        if self._entry is None:
            self._entry = compiled_entry(advance, numba.typeof(self.buffers), numba.boolean,
                                         numba.float64, numba.int64, numba.int64,
                                         numba.float64, numba.boolean)
        return self._entry(self.buffers, servo, h, integrator, steps, divergence_velocity,
                           feedforward)

    @property
    def applied_effort(self) -> np.ndarray:
        """Return the drives' efforts of the last step taken (a copy)."""
        return self.scratch[TAU].copy()


def compiled_entry(kernel, *types):
    """
    Return ``kernel``'s compiled entry point for the argument ``types`` (numba's cache).

    A call through numba's dispatcher types its arguments anew each time, and a named
    tuple has no fast path there: typing :class:`Buffers` (some twenty arrays) took
    most of the Python side of a 10-step :func:`advance`.  The entry point of one
    signature unboxes the arguments without typing them, and converts numbers to its
    types (a bool, an int or a float given for a float).  Under NUMBA_DISABLE_JIT the
    kernel itself.
    """
    if not hasattr(kernel, 'compile'):
        return kernel
    return kernel.compile(types)


@njit
def advance(dyn, servo, h, integrator, steps, divergence_velocity, feedforward):
    """
    Advance x = [q; qd] of the :class:`Buffers` ``dyn`` by up to ``steps`` steps.

    With ``feedforward``, first the servos' held feedforward: ``drive[TAU_FF]`` =
    ID(q, qd, 0) at the stretch's start (:func:`bias_feedforward`).
    Return (steps taken, status).  A step whose new state is not finite, or has a
    joint speed above ``divergence_velocity``, is not taken: x keeps the last good
    state, ``report[0]`` the failed speed, and the status says :data:`NON_FINITE` or
    :data:`DIVERGED`.
    """
    dyn = unowned(dyn)               # the buffers outlive the call: no reference counts
    x, history, count, scratch, report = dyn.x, dyn.history, dyn.count, dyn.scratch, dyn.report
    joint, drive, mode = dyn.joint, dyn.drive, dyn.mode
    n = x.shape[0] // 2
    q, qd = x[:n], x[n:]
    tau, active, q_new, qd_new = scratch[TAU], scratch[ACTIVE], scratch[Q_NEW], scratch[QD_NEW]
    if feedforward:
        bias_feedforward(dyn, q, qd)
    for step in range(steps):
        if stop_impacts(dyn, q, qd, h) and integrator == AB4:
            count[0] = 0                                           # AB4 starts afresh
        drive_efforts(joint, drive, mode, servo, q, qd, h, tau)
        for i in range(n):
            scratch[COMMAND, i] = tau[i]
            active[i] = 1.0 if driving(mode, servo, tau, i) else 0.0
        dynamics(dyn, q, qd, tau, scratch[TAU_STAGE], scratch[QDD_1])
        multistep = integrator == AB4 and count[0] >= 3
        if integrator == AB4:
            push_history(x, history, count, scratch[QDD_1])
        drive_velocity_limits(dyn, q, qd, h, integrator, multistep)
        speed, finite = 0.0, True
        for i in range(n):
            finite = finite and math.isfinite(q_new[i]) and math.isfinite(qd_new[i])
            speed = max(speed, abs(qd_new[i]))
        if not finite or not speed <= divergence_velocity:
            report[0] = speed
            count[0] = 0
            return step, NON_FINITE if not finite else DIVERGED
        q[:] = q_new
        qd[:] = qd_new
    return steps, RUNNING


@njit
def bias_feedforward(dyn, q, qd):
    """
    Set ``drive[TAU_FF]`` = ID(q, qd, 0), the servos' gravity and bias forces (000 eqs. 10-18).

    The core's one entry (:func:`.core.call.run`, as ``robot.bias_forces`` reaches it)
    on the step's workspace, which every stage fills anew: the numbers of
    ``robot.bias_forces(q, qd)``, without a return to Python per publish period.
    """
    run(BIAS_FORCES, dyn.reals, dyn.ints, q, qd, qd, None, dyn.data, dyn.drive[TAU_FF])


@njit
def stop_impacts(dyn, q, qd, h):
    """
    Take the impacts on the stops of joints faster than v_max (:mod:`.stop_impact`).

    qd += M^-1 e_i p per impact, M^-1 e_i from one factorization at q, made only when
    a joint hits.  Return True if a velocity changed.
    """
    joint, scratch = dyn.joint, dyn.scratch
    e, column = scratch[UNIT], scratch[V_END]
    factored = False
    for i in range(q.shape[0]):
        target = impact_velocity(q[i], qd[i], joint[LOWER, i], joint[UPPER, i],
                                 joint[VELOCITY_LIMIT, i], h)
        if target == qd[i]:
            continue
        if not factored:
            scratch[QDD_2, :] = 0.0
            accelerations(dyn, q, qd, scratch[QDD_2], scratch[TAU_STAGE], scratch[QDD_1])
            factored = True
        e[:] = 0.0
        e[i] = 1.0
        unit_response(dyn, e, column)                              # M^-1 e_i
        p = (target - qd[i]) / column[i]
        for k in range(q.shape[0]):
            qd[k] += column[k] * p
    return factored


@njit
def integrate(dyn, q, qd, h, integrator, multistep):
    """Take the step from stage 1's qdd into Q_NEW, QD_NEW: Euler, AB4 or RK4."""
    scratch = dyn.scratch
    q_new, qd_new, qdd = scratch[Q_NEW], scratch[QD_NEW], scratch[QDD_1]
    if integrator == SEMI_IMPLICIT_EULER:
        for i in range(q.shape[0]):
            qd_new[i] = qd[i] + h * qdd[i]                         # qd_n+1 = qd_n + h qdd_n
            q_new[i] = q[i] + h * qd_new[i]                        # q_n+1 = q_n + h qd_n+1
    elif multistep:
        adams_bashforth(dyn.x, dyn.history, h, q_new, qd_new)
    else:                                                          # AB4's start-up too
        runge_kutta(dyn, q, qd, scratch[TAU], h, scratch)


@njit
def drive_velocity_limits(dyn, q, qd, h, integrator, multistep):
    """
    Take the step with the drives holding their joints within v_max (integrate's result).

    Pass 1 on the Euler prediction qd + h qdd; then, while a driving joint's
    end-of-step velocity is past its v_max, again on the integrator's own, whose
    sensitivity to the efforts is h M^-1 (55 h / 24 M^-1 for AB4), and the step is
    taken anew.  M^-1 comes from n unit solves on the factorization at the step's
    start, made only when a limit is reached.
    """
    joint, history, M_inv, scratch = dyn.joint, dyn.history, dyn.M_inv, dyn.scratch
    tau, active, v = scratch[TAU], scratch[ACTIVE], scratch[V_END]
    qdd = scratch[QDD_1]
    n = q.shape[0]
    for i in range(n):
        v[i] = qd[i] + h * qdd[i]
    inverse = beyond_limits(joint, active, v)
    if inverse:
        inverse_inertia(dyn, M_inv, scratch[UNIT])
        limit_efforts(joint, active, h, M_inv, scratch)
        if integrator == AB4:
            history[0, n:] = qdd
    for attempt in range(DRIVE_PASSES):
        integrate(dyn, q, qd, h, integrator, multistep)
        v[:] = scratch[QD_NEW]
        if (integrator == SEMI_IMPLICIT_EULER or attempt == DRIVE_PASSES - 1
                or not beyond_limits(joint, active, v)):
            return
        if not inverse:                          # the factorization at the step's start
            dynamics(dyn, q, qd, tau, scratch[TAU_STAGE], qdd)
            inverse_inertia(dyn, M_inv, scratch[UNIT])
            inverse = True
        if not limit_efforts(joint, active, h * 55.0 / 24.0 if multistep else h, M_inv,
                             scratch):
            return
        if integrator == AB4:
            history[0, n:] = qdd


@njit
def drive_efforts(joint, drive, mode, servo, q, qd, h, tau):
    """
    Set tau to the drives' efforts at (q, qd), within +-effort (:mod:`.servo`'s laws).

    Effort path: the held command.  Servo path: a velocity joint's reference moves on
    by h qd_ref, kept within the limits and within the effort-saturating error
    effort / kp of q (anti-windup); then per joint tau = tau_cmd, plus in position and
    velocity mode kp (q_ref - q) + kd (qd_ref - qd) + tau_ff.
    """
    for i in range(q.shape[0]):
        if not servo:
            tau[i] = drive[EFFORT_CMD, i]
            continue
        if mode[i] == VELOCITY:
            ref = min(max(drive[Q_REF, i] + h * drive[QD_REF, i], joint[LOWER, i]),
                      joint[UPPER, i])
            drive[Q_REF, i] = min(max(ref, q[i] - joint[MAX_ERROR, i]),
                                  q[i] + joint[MAX_ERROR, i])
        tau[i] = drive[TAU_CMD, i]
        if mode[i] != EFFORT:
            tau[i] += (joint[KP, i] * (drive[Q_REF, i] - q[i])
                       + joint[KD, i] * (drive[QD_REF, i] - qd[i]) + drive[TAU_FF, i])
        tau[i] = min(max(tau[i], -joint[EFFORT_LIMIT, i]), joint[EFFORT_LIMIT, i])


@njit_inline
def passive_torques(joint, q, qd, out):
    """Set out to damping + smooth Coulomb friction + limit-stop efforts at (q, qd)."""
    for i in range(q.shape[0]):
        out[i] = -(joint[DAMPING, i] * qd[i]
                   + joint[FRICTION, i] * math.tanh(qd[i] / joint[FRICTION_VELOCITY, i]))
        pen = q[i] - max(min(q[i], joint[UPPER, i]), joint[LOWER, i])   # beyond a limit
        if pen != 0.0:
            stop = -joint[STOP_STIFFNESS, i] * pen - joint[STOP_DAMPING, i] * qd[i]
            # one-sided: the stop pushes out of the limit, never pulls into it
            out[i] += max(stop, 0.0) if pen < 0.0 else min(stop, 0.0)


@njit_inline
def dynamics(dyn, q, qd, tau, tau_stage, qdd):
    """Set qdd = FD(q, qd, tau + passive(q, qd)), the one dynamics of every stage."""
    if dyn.cholesky:
        passive_torques(dyn.joint, q, qd, tau_stage)
        for i in range(q.shape[0]):
            tau_stage[i] += tau[i]
        reference_accelerations(dyn, q, qd, tau_stage, qdd)
    else:
        stage(dyn.reals, dyn.ints, dyn.data, dyn.joint, dyn.loads, True, q, qd, tau,
              tau_stage, qdd)


@njit_inline
def accelerations(dyn, q, qd, tau, tau_stage, qdd):
    """Set qdd = FD(q, qd, tau), no passive efforts: the factors at q for :func:`unit_response`."""
    if dyn.cholesky:
        reference_accelerations(dyn, q, qd, tau, qdd)
    else:
        stage(dyn.reals, dyn.ints, dyn.data, dyn.joint, dyn.loads, False, q, qd, tau,
              tau_stage, qdd)


@njit
def stage(reals, ints, workspace, joint, loads, passive, q, qd, tau, tau_stage, qdd):
    """
    Set qdd = FD(q, qd, tau (+ passive(q, qd) with ``passive``)) by Saha's O(n) sweeps.

    The core's one forward dynamics (:func:`.core.mimic.forward_dynamics`: 002 eqs.
    14-19, with the mimic joints' k x k system), called on flat arrays as the core's
    kernels are (the buffers that :func:`advance` took on :func:`.core.model.unowned`,
    which numba does not reference-count).  The link wrenches and the wall enter as its
    external wrenches, at the bodies' state (:mod:`.link_loads`), from the one kinematics pass
    of the stage (:func:`.core.mimic.accelerations_at`; a tree without mimic joints,
    whose bodies are its coordinates, :func:`.core.forward_dynamics.sweeps_at`, the
    same numbers without the copies to and from the bodies); without them, no wrench
    at all (``None``: the kernel without the wrench terms, the same numbers, w - 0 = w).
    """
    if passive:
        passive_torques(joint, q, qd, tau_stage)
        for i in range(q.shape[0]):
            tau_stage[i] += tau[i]
    else:
        for i in range(q.shape[0]):
            tau_stage[i] = tau[i]
    if loads[0].shape[0] > 0 or (loads[2].shape[0] > 0 and loads[3].shape[0] > 0):
        nb = ints.shape[1]
        model, data = model_arrays(reals, ints), data_arrays(workspace, nb)
        if nb == q.shape[0]:                                       # no mimic joint: q_b = q
            kinematics(model, data, q)                             # once: loads and FD
            link_wrenches(model, data, qd, loads)
            sweeps_at(model, data, qd, tau_stage, loads[5], qdd)   # 002 eqs. 14-19
            return
        mimic = mimic_arrays(workspace, nb, nb - q.shape[0])
        place_bodies(model, mimic, q, qd)                          # q_b, qd_b
        kinematics(model, data, mimic.q_b)                         # once: loads and FD
        link_wrenches(model, data, mimic.qd_b, loads)
        accelerations_at(model, data, mimic, tau_stage, loads[5], qdd)
    else:
        forward_dynamics(reals, ints, q, qd, tau_stage, None, workspace, qdd)


@njit
def reference_accelerations(dyn, q, qd, tau, qdd):
    """Set qdd = FD(q, qd, tau) by the reference: G^T M G and its Cholesky factor in L."""
    nb = dyn.ints.shape[1]
    model, data = model_arrays(dyn.reals, dyn.ints), data_arrays(dyn.data, nb)
    mimic = mimic_arrays(dyn.data, nb, nb - q.shape[0])
    loads = dyn.loads
    if loads[0].shape[0] > 0 or (loads[2].shape[0] > 0 and loads[3].shape[0] > 0):
        # the wrenches on the links and the wall, at the bodies' state (:mod:`.link_loads`)
        place_bodies(model, mimic, q, qd)
        kinematics(model, data, mimic.q_b)
        link_wrenches(model, data, mimic.qd_b, loads)
        constrained_cholesky(model, data, mimic, q, qd, tau, loads[5], dyn.M_b, dyn.L, qdd)
    else:
        constrained_cholesky(model, data, mimic, q, qd, tau, None, dyn.M_b, dyn.L, qdd)


@njit
def unit_response(dyn, e, out):
    """Set out = M^-1 e at the state of the last :func:`accelerations` (O(n) or Cholesky)."""
    if dyn.cholesky:
        cholesky_solve(dyn.L, e, out)
        return
    nb = dyn.ints.shape[1]
    mimic_unit_response(model_arrays(dyn.reals, dyn.ints), data_arrays(dyn.data, nb),
                        mimic_arrays(dyn.data, nb, nb - e.shape[0]), e, out)


@njit
def driving(mode, servo, tau, i):
    """Return True if joint i's drive is on: a servo mode, or a non-zero effort command."""
    return (servo and mode[i] != EFFORT) or tau[i] != 0.0


@njit
def beyond_limits(joint, active, v):
    """Return True if a driving joint's velocity in ``v`` is past its v_max."""
    for i in range(v.shape[0]):
        if active[i] != 0.0 and abs(v[i]) > joint[VELOCITY_LIMIT, i]:
            return True
    return False


@njit
def inverse_inertia(dyn, M_inv, e):
    """Set M_inv = M^-1 by n unit solves on the last factorization (row j = column j)."""
    for j in range(e.shape[0]):
        e[:] = 0.0
        e[j] = 1.0
        unit_response(dyn, e, M_inv[j])


@njit
def limit_efforts(joint, active, hs, M_inv, scratch):
    """
    Hold the velocity limits on V_END (sensitivity hs M^-1); update TAU and QDD_1.

    Return True if an effort changed (:func:`hold_velocity_limits`).
    """
    tau, before, qdd = scratch[TAU], scratch[TAU_BEFORE], scratch[QDD_1]
    before[:] = tau
    hold_velocity_limits(joint, active, scratch[COMMAND], hs, M_inv, tau, scratch[V_END])
    changed = False
    for i in range(tau.shape[0]):
        d = tau[i] - before[i]
        if d != 0.0:
            changed = True
            for k in range(tau.shape[0]):
                qdd[k] += M_inv[i, k] * d                          # qdd += M^-1 e_i d
    return changed


@njit
def hold_velocity_limits(joint, active, command, hs, M_inv, tau, v):
    """
    Choose the active drives' efforts so that their joints keep |v| <= v_max.

    ``v`` are the joints' end-of-step velocities under ``tau``, and change by
    hs M^-1 dtau.  Each active drive i gives the effort nearest its command, within
    +-effort_i, that keeps v_i within +-v_max,i; it brakes with up to its full effort
    when the other joints drive it.  The joints are coupled, so the choices are made
    by projected Gauss-Seidel sweeps (each joint's interval given the others'), until
    nothing changes.  Where even the full effort cannot hold a joint (gravity, a stop,
    the other drives' coupling stronger than its own drive), it gives the full effort.
    ``tau`` and ``v`` are updated.
    """
    n = v.shape[0]
    for sweep in range(VELOCITY_SWEEPS):
        change = 0.0
        for i in range(n):
            if active[i] == 0.0:
                continue
            s = hs * M_inv[i, i]
            v_max, limit = joint[VELOCITY_LIMIT, i], joint[EFFORT_LIMIT, i]
            low, high = tau[i] + (-v_max - v[i]) / s, tau[i] + (v_max - v[i]) / s
            target = min(max(min(max(command[i], low), high), -limit), limit)
            d = target - tau[i]
            if d != 0.0:
                tau[i] = target
                for k in range(n):
                    v[k] += hs * M_inv[i, k] * d                   # v += hs M^-1 e_i d
                change = max(change, abs(d) * s)
        if change <= 1e-13:
            return


@njit
def runge_kutta(dyn, q, qd, tau, h, scratch):
    """Take the classic Runge-Kutta step on x = [q, qd] from stage 1's qdd (Q_NEW, QD_NEW)."""
    n = q.shape[0]
    q_s, qd_s, qd_2, qd_3, tau_s = (scratch[Q_STAGE], scratch[QD_STAGE], scratch[QD_2],
                                    scratch[QD_3], scratch[TAU_STAGE])
    qdd_1, qdd_2, qdd_3, qdd_4 = scratch[QDD_1], scratch[QDD_2], scratch[QDD_3], scratch[QDD_4]
    for i in range(n):
        q_s[i], qd_2[i] = q[i] + (0.5 * h) * qd[i], qd[i] + (0.5 * h) * qdd_1[i]
    dynamics(dyn, q_s, qd_2, tau, tau_s, qdd_2)                    # k2
    for i in range(n):
        q_s[i], qd_3[i] = q[i] + (0.5 * h) * qd_2[i], qd[i] + (0.5 * h) * qdd_2[i]
    dynamics(dyn, q_s, qd_3, tau, tau_s, qdd_3)                    # k3
    for i in range(n):
        q_s[i], qd_s[i] = q[i] + h * qd_3[i], qd[i] + h * qdd_3[i]
    dynamics(dyn, q_s, qd_s, tau, tau_s, qdd_4)                    # k4
    for i in range(n):
        scratch[Q_NEW, i] = q[i] + (h / 6.0) * (qd[i] + 2.0 * (qd_2[i] + qd_3[i]) + qd_s[i])
        scratch[QD_NEW, i] = qd[i] + (h / 6.0) * (qdd_1[i] + 2.0 * (qdd_2[i] + qdd_3[i])
                                                  + qdd_4[i])


@njit
def push_history(x, history, count, qdd):
    """Push f_n = [qd_n; qdd_n] onto the AB4 history (``count`` of them kept, up to 4)."""
    n = qdd.shape[0]
    for k in range(3, 0, -1):
        history[k, :] = history[k - 1]
    history[0, :n] = x[n:]
    history[0, n:] = qdd
    count[0] = min(count[0] + 1, 4)


@njit
def adams_bashforth(x, history, h, q_new, qd_new):
    """Set x_n+1 = x_n + h/24 (55 f_n - 59 f_n-1 + 37 f_n-2 - 9 f_n-3), into q_new, qd_new."""
    n = q_new.shape[0]
    for i in range(2 * n):
        dx = 0.0
        for k in range(4):
            dx += AB4_WEIGHTS[k] * history[k, i]
        value = x[i] + (h / 24.0) * dx
        if i < n:
            q_new[i] = value
        else:
            qd_new[i - n] = value
