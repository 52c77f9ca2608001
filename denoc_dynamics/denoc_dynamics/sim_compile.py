"""
Compile the simulated arm's physics kernels (:mod:`.physics`) into numba's disk cache.

``make build`` and ``denoc-dynamics compile`` call :func:`compile_simulation` after the
core's kernels (:func:`.core.warm_up.compile_kernels`), so that a node starts warm.
"""

import time

from .core.robot import load_urdf_xml
from .core.warm_up import WARM_UP_TREE
from .servo import VELOCITY
from .sim_loads import SimulatedSensors
from .sim_settings import INTEGRATORS, PhysicsParameters
from .simulation import Simulation


def compile_simulation() -> float:
    """
    Compile the physics kernels (:mod:`.physics`) into their disk cache; return the seconds.

    One run of each integrator on the warm-up tree of :mod:`.core.warm_up` (a mimic
    and a prismatic joint), on the effort and the servo path, with a velocity limit
    reached; ``make build`` and ``denoc-dynamics compile`` call it.
    """
    start = time.perf_counter()
    for tip in (None, 'tool'):
        robot = load_urdf_xml(WARM_UP_TREE, tip_link=tip, side_branches='drop')
        for integrator in INTEGRATORS:
            sim = Simulation(robot, PhysicsParameters(integrator=integrator),
                             start_mode='running')
            sim.set_command(sim.model.effort_limit)
            sim.advance(5)
            sim.loads.apply('tool', (1.0, 0.0, 0.0), (0.0, 0.0, 0.1), 'a', (0.0, 0.1, 0.0))
            sim.loads.set_walls([((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), 1e3, 1.0)])
            sim.loads.set_contact_points([('b', (0.0, 0.0, 0.0))])
            sim.advance(5)
            SimulatedSensors(sim, ['tool_joint']).read(sim.q, sim.qd, sim.applied_effort)
            sim.loads.set_walls([])
            sim.loads.clear()
            sim.set_joint_command([0], [VELOCITY], [0.0], [0.0], [1.0])
            sim.advance(5)
            sim.model.passive_torques(sim.q, sim.qd)
    return time.perf_counter() - start
