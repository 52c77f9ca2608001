"""
Contact: the momentum observer's work per joint state, and the physics with a wall and a wrench.

1. Observer (Panda, fingers locked, 7 DOF): one :meth:`MomentumObserver.update` per
   joint state (p, C^T qd and g by two DeNOC sweeps, then the discrete update), against
   Pinocchio computing the same three terms (``crba`` times qd,
   ``computeCoriolisMatrix`` transposed times qd, ``computeGeneralizedGravity``) in the
   same run (target: <= 5 us per state).
2. Physics (denoc_arm7, RK4 at 1 kHz): :class:`Simulation` running a servo hold with a
   10 N wrench on the flange and the flange pressed into a wall plane, advanced in
   chunks of 10 steps with the servos' feedforward held for a chunk, as the sim node's
   runner holds it for a publish period (target: real-time factor >= 100).

Run: ``.ci/env.sh python benchmarks/bench_contact.py [--quick]`` (say the machine's load
when quoting a figure), or as the ``contact`` section of ``run_all.py``.
"""

import time

import common
import numpy as np

NAME = 'contact'
OBSERVER_TARGET_US = 5.0
PHYSICS_TARGET = 100.0


def observer(pin) -> tuple:
    """Return (ours, Pinocchio's) callables: the observer's update, Pinocchio's three terms."""
    from denoc_dynamics.core.momentum_observer import MomentumObserver
    robot, model, data, _ = common.panda(pin)
    rng = np.random.default_rng(0)
    q, qd, tau = rng.uniform(-1.0, 1.0, (3, robot.n))
    obs = MomentumObserver(robot, 100.0)
    obs.update(q, qd, tau, 0.0)

    def ours():
        obs.update(q, qd, tau, 1e-3)

    def peer():
        M = pin.crba(model, data, q)
        C = pin.computeCoriolisMatrix(model, data, q, qd)
        g = pin.computeGeneralizedGravity(model, data, q)
        return M @ qd, C.T @ qd, g

    return ours, peer


def physics(seconds=3.0):
    """Return the real-time factor of the held arm with a wrench and a wall."""
    from denoc_dynamics import load_urdf
    from denoc_dynamics.resources import bundled_urdf
    from denoc_dynamics.servo import POSITION
    from denoc_dynamics.sim_settings import PhysicsParameters
    from denoc_dynamics.simulation import Simulation
    robot = load_urdf(bundled_urdf())
    q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
    sim = Simulation(robot, PhysicsParameters(), initial_positions=q0, start_mode='running')
    n = sim.n
    sim.drives.feedforward_steps = 10                 # as the runner: one publish period
    sim.set_joint_command(np.arange(n), [POSITION] * n, np.zeros(n), q0, np.zeros(n))
    kin = robot.kinematics(q0)
    flange = kin.O[-1] + kin.R[-1] @ np.array([0.0, 0.0, 0.1])
    sim.loads.apply('flange', (10.0, 0.0, 0.0), (0.0, 0.0, 0.0), 'world')
    sim.loads.set_walls([(flange + [0.0, 0.0, 0.002], (0.0, 0.0, 1.0), 2e4, 100.0)])
    sim.loads.set_contact_points([('flange', (0.0, 0.0, 0.0))])
    sim.advance(100)
    steps = int(seconds * 1000)
    start = time.perf_counter()
    for _ in range(steps // 10):
        sim.advance(10)
    wall = time.perf_counter() - start
    return steps * sim.h / wall, sim.loads.wall_wrenches(sim.q, sim.qd)[0][1]


def run(opts) -> dict:
    """Time the observer against Pinocchio and the physics with contact; the section."""
    pin = common.import_pinocchio()
    if pin is None:
        return {'available': False, 'reason': 'Pinocchio is not installed'}
    rows, _ = common.side_by_side({'observer update, Panda': observer(pin)}, opts)
    ours_us = rows[0]['ours_us']
    rtf, wall_force = physics(1.0 if opts.quick else 3.0)
    targets = [
        common.target('observer update, Panda (per joint state)', ours_us, 'us',
                      f'<= {OBSERVER_TARGET_US:g} us', ours_us <= OBSERVER_TARGET_US),
        common.target('physics with a wrench and a wall: real-time factor', rtf, 'x',
                      f'>= {PHYSICS_TARGET:g}', rtf >= PHYSICS_TARGET,
                      figures=f'wall force {np.round(wall_force, 2).tolist()} N')]
    return {'rows': rows, 'targets': targets}


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
