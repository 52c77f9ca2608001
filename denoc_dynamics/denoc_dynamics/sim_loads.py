"""
What pushes on the simulated arm: wrenches on links, a virtual wall, F/T sensors to feel them.

The simulation's side of :mod:`.link_loads` (no ROS here): names of links turned into
bodies and body points, the wrenches' durations on simulated time, the wall's planes
and contact points checked, and the readings of force/torque sensors at fixed joints
(:mod:`.core.ft_sensor`) at the simulated state and accelerations.  Every wrench and
the wall's force enter the forward dynamics as the bodies' external wrenches.
"""

import math
from typing import List, Optional, Sequence

import numpy as np

from .core.ft_sensor import ForceTorqueSensors
from .link_loads import evaluate_loads, PLANE_REALS, WRENCH_REALS

#: Largest force [N] and torque [N m] a wrench or a held topic wrench may have, and the
#: farthest its point [m] may be from its link: anything beyond is refused as absurd.
MAX_FORCE = 1e5
MAX_TORQUE = 1e5
MAX_DISTANCE = 100.0

#: Largest stiffness [N/m] and damping [N s/m] of a wall plane.
MAX_STIFFNESS = 1e8
MAX_DAMPING = 1e6

#: The reference frames that mean the base frame.
WORLD_FRAMES = ('', 'world')


class SimulationLoads:
    """
    The wrenches and the virtual wall of one simulated robot (:class:`~.simulation.Simulation`).

    ``physics_loads`` is the :class:`~.link_loads.Loads` of its physics, rewritten here
    when something changes; ``timeout`` [s] holds the topic wrench (as the effort
    commands' timeout; <= 0: until the next).
    """

    def __init__(self, robot, physics_loads, timeout: float):
        """No wrench, no wall."""
        self.robot = robot
        self.loads = physics_loads
        self.timeout = timeout
        self.applied = []          # (link, k, b, x, f, n, start, duration)
        self.topic = None          # the held topic wrench, same layout
        self.planes = np.zeros((0, PLANE_REALS))
        self.contacts = []         # (link, k, x)
        self._timed = False        # an applied wrench has a duration (expire has work)
        self._model_A = robot.model.A
        self._workspace = robot.model.data()

    # --- links -----------------------------------------------------------------------
    def body_point(self, link: str, point=(0.0, 0.0, 0.0)):
        """Return (body k, x in k's model coordinates) of a point in ``link``'s frame."""
        k, T = self.robot.chain.link_frame(link)
        if k < 0:
            raise ValueError(f'link {link!r} does not move (it is fixed to the base or not '
                             'in the model): a wrench on it moves nothing')
        x = T[:3, :3] @ np.asarray(point, dtype=float) + T[:3, 3]
        return k, self._model_A[k].T @ x

    def _frame(self, reference_frame: str):
        """Return (body b, rotation from the frame to b's model coordinates); b -1: base."""
        if reference_frame in WORLD_FRAMES:
            return -1, np.eye(3)
        k, T = self.robot.chain.link_frame(reference_frame)
        if k < 0:                          # the base link or a link fixed to it
            return -1, T[:3, :3]
        return k, self._model_A[k].T @ T[:3, :3]

    def _wrench(self, link, force, torque, reference_frame, point, start, duration):
        force, torque, point = (np.asarray(x, dtype=float) for x in (force, torque, point))
        if not all(np.all(np.isfinite(x)) and x.shape == (3,) for x in (force, torque, point)):
            raise ValueError('force, torque and point must be 3 finite numbers each')
        if not (math.isfinite(duration) and duration >= 0.0):
            raise ValueError(f'duration must be >= 0 (0: until cleared), got {duration!r}')
        if np.linalg.norm(force) > MAX_FORCE or np.linalg.norm(torque) > MAX_TORQUE:
            raise ValueError(f'force {np.linalg.norm(force):.3g} N or torque '
                             f'{np.linalg.norm(torque):.3g} N m beyond the {MAX_FORCE:g} '
                             'accepted')
        if np.linalg.norm(point) > MAX_DISTANCE:
            raise ValueError(f'point {point.tolist()} is more than {MAX_DISTANCE:g} m from '
                             f'link {link!r}')
        k, x = self.body_point(link, point)
        b, R = self._frame(reference_frame)
        return (link, k, b, x, R @ force, R @ torque, start, duration)

    def apply(self, link: str, force, torque, reference_frame: str = '', point=(0, 0, 0),
              duration: float = 0.0, now: float = 0.0):
        """
        Apply force and torque (in ``reference_frame``'s axes) to ``link`` at ``point``.

        ``point`` in the link's frame; ``duration`` [s] 0: until :meth:`clear`.
        ValueError, saying why, for an unknown link or frame, a link that does not
        move, non-finite or absurd values (:data:`MAX_FORCE`, :data:`MAX_DISTANCE`).
        """
        self.applied.append(self._wrench(link, force, torque, reference_frame, point, now,
                                         duration))
        self._write()

    def hold(self, link: str, force, torque, now: float):
        """Hold the topic's wrench on ``link`` (its origin, its axes) until the timeout."""
        self.topic = self._wrench(link, force, torque, link, (0.0, 0.0, 0.0), now, 0.0)
        self._write()

    def clear(self):
        """Remove every applied wrench and the topic's."""
        self.applied, self.topic = [], None
        self._write()

    # --- the wall --------------------------------------------------------------------
    def set_walls(self, planes: Sequence):
        """
        Set the wall's planes: (point, normal, stiffness, damping) each, base frame.

        The normal points out of the wall (any length > 0); ValueError, naming the
        plane, for non-finite values, a zero normal, or negative or absurd gains.
        """
        rows = []
        for i, (point, normal, stiffness, damping) in enumerate(planes):
            point, normal = (np.asarray(x, dtype=float) for x in (point, normal))
            values = np.concatenate((point, normal, [stiffness, damping]))
            if values.shape != (8,) or not np.all(np.isfinite(values)):
                raise ValueError(f'wall plane {i}: point and normal must be 3 finite numbers '
                                 'each, stiffness and damping finite')
            length = np.linalg.norm(normal)
            if not length > 1e-9:
                raise ValueError(f'wall plane {i}: the normal is zero')
            if not (0.0 <= stiffness <= MAX_STIFFNESS and 0.0 <= damping <= MAX_DAMPING):
                raise ValueError(f'wall plane {i}: stiffness must be in [0, {MAX_STIFFNESS:g}] '
                                 f'N/m and damping in [0, {MAX_DAMPING:g}] N s/m, got '
                                 f'{stiffness!r}, {damping!r}')
            if np.linalg.norm(point) > MAX_DISTANCE:
                raise ValueError(f'wall plane {i}: point more than {MAX_DISTANCE:g} m away')
            rows.append(np.concatenate((point, normal / length, [stiffness, damping])))
        self.planes = np.array(rows).reshape(-1, PLANE_REALS)
        self._write()

    def set_contact_points(self, points: Sequence):
        """Set the points the wall pushes: (link, point in its frame) each."""
        contacts = []
        for link, point in points:
            point = np.asarray(point, dtype=float)
            if point.shape != (3,) or not np.all(np.isfinite(point)):
                raise ValueError(f'contact point of {link!r} must be 3 finite numbers')
            contacts.append((link,) + self.body_point(link, point))
        self.contacts = contacts
        self._write()

    # --- time ------------------------------------------------------------------------
    def expire(self, now: float) -> float:
        """Drop the wrenches that ended by ``now``; return the time of the next end (inf)."""
        if not self._timed and (self.topic is None or self.timeout <= 0.0):
            return math.inf                # called per chunk: nothing ends, nothing to build
        ends = [(w[6] + w[7], w) for w in self.applied if w[7] > 0.0]
        if self.topic is not None and self.timeout > 0.0:
            ends.append((self.topic[6] + self.timeout, self.topic))
        gone = [w for end, w in ends if now >= end]
        if gone:
            self.applied = [w for w in self.applied if w not in gone]
            if self.topic in gone:
                self.topic = None
            self._write()
        return min([end for end, w in ends if w not in gone], default=math.inf)

    def _write(self):
        """Rewrite the physics' arrays from the wrenches and the wall."""
        wrenches = self.applied + ([self.topic] if self.topic is not None else [])
        self._timed = any(w[7] > 0.0 for w in self.applied)
        loads = self.loads
        loads.wrench_ints = np.array([(w[1], w[2]) for w in wrenches],
                                     dtype=np.int64).reshape(-1, 2)
        loads.wrench_reals = np.array([np.concatenate((w[3], w[4], w[5])) for w in wrenches]
                                      ).reshape(-1, WRENCH_REALS)
        loads.planes = self.planes
        loads.contact_body = np.array([c[1] for c in self.contacts], dtype=np.int64)
        loads.contact_point = np.array([c[2] for c in self.contacts]).reshape(-1, 3)
        loads.wall_force = np.zeros((len(self.contacts), 3))

    # --- what it does ----------------------------------------------------------------
    def evaluate(self, q, qd):
        """Return (f_ext (n_bodies, 6), wall forces (c, 3)) at the coordinates (q, qd)."""
        robot = self.robot
        q_b, qd_b = (np.ascontiguousarray(x, dtype=float) for x in robot._bodies(q, qd))
        evaluate_loads(robot.model.reals, robot.model.ints, q_b, qd_b, self.loads.arrays(),
                       self._workspace)
        return self.loads.f_ext.copy(), self.loads.wall_force.copy()

    def wall_wrenches(self, q, qd):
        """Return [(link, force (3,) base frame)] of the contact points the wall pushes."""
        _, forces = self.evaluate(q, qd)
        return [(c[0], forces[i]) for i, c in enumerate(self.contacts)]


class SimulatedSensors:
    """
    Force/torque sensors at fixed joints of a simulation, read at its state.

    ``bias`` (s, 6) is added to each reading and ``noise`` (s, 6) is the standard
    deviation of the Gaussian noise added (both zero by default: the exact wrench).
    """

    def __init__(self, sim, joints: List[str], bias=None, noise=None,
                 seed: Optional[int] = None):
        """Place the sensors (ValueError names a joint that cannot carry one)."""
        self.sim = sim
        self.sensors = ForceTorqueSensors(sim.robot, joints)
        s = len(joints)
        self.bias = np.zeros((s, 6)) if bias is None else np.broadcast_to(bias, (s, 6))
        self.noise = np.zeros((s, 6)) if noise is None else np.broadcast_to(noise, (s, 6))
        self._rng = np.random.default_rng(seed)
        self._links = [set(links) for links in self.sensors.links]

    @property
    def joints(self):
        """Return the sensors' joint names."""
        return self.sensors.joints

    @property
    def frames(self):
        """Return the sensors' frame names: their joints' child links."""
        return self.sensors.frames

    def read(self, q, qd, tau_joint, held: bool = False) -> np.ndarray:
        """
        Return the readings (s, 6) [torque; force] at (q, qd), each in its frame.

        ``tau_joint``: the joints' link-side torques (the drives' past friction and
        damping, :attr:`~.simulation.Simulation.joint_torque`); the accelerations are
        the simulation's, FD(q, qd, tau_joint) with the loads, or zero when ``held``
        (hold mode: statics).  The wrench pass of the inverse dynamics gives the
        readings.
        """
        sim, loads = self.sim, self.sim.loads
        robot = sim.robot
        f_ext, wall = loads.evaluate(q, qd)
        qdd = (np.zeros(robot.n) if held else
               robot.forward_dynamics(q, qd, tau_joint, f_ext=f_ext))
        f_sensor = np.zeros((len(self._links), 6))
        applied = loads.applied + ([loads.topic] if loads.topic is not None else [])
        if any(w[0] in links for w in applied for links in self._links) or len(wall):
            kin = robot.kinematics(q)
            R_model = np.einsum('kij,kjl->kil', kin.R, robot.model.A)
            for j, links in enumerate(self._links):
                P = self._origin(kin, R_model, j)
                for w in applied:
                    if w[0] in links:
                        X = kin.O[w[1]] + R_model[w[1]] @ w[3]
                        R_b = np.eye(3) if w[2] < 0 else R_model[w[2]]
                        f, n = R_b @ w[4], R_b @ w[5]
                        f_sensor[j] += np.concatenate((n + np.cross(X - P, f), f))
                for i, c in enumerate(loads.contacts):
                    if c[0] in links:
                        X = kin.O[c[1]] + R_model[c[1]] @ c[2]
                        f_sensor[j] += np.concatenate((np.cross(X - P, wall[i]), wall[i]))
        out = self.sensors.read(q, qd, qdd, f_ext, f_sensor) + self.bias
        if np.any(self.noise):
            out = out + self._rng.normal(size=out.shape) * self.noise
        return out

    def _origin(self, kin, R_model, j):
        """Return sensor j's origin P in the base frame."""
        k = self.sensors.body[j]
        return kin.O[k] + R_model[k] @ self.sensors.reals[j, 13:16]
