"""
Compile every kernel of the core into numba's on-disk cache.

numba compiles a kernel at its first call (tens of seconds for the whole core) and
keeps the machine code beside the module (``__pycache__``), or in the user's cache
directory where the install is read-only (numba falls back to it by itself).
:func:`compile_kernels` calls every entry point once with the argument types the
:class:`~.robot.Robot` API passes (one state and a batch, with and without external
wrenches), on a small tree with a prismatic and a mimic joint, so that later
processes load them from the cache.  ``make build`` and ``denoc-dynamics compile``
run it.
"""

import time

import numpy as np

from .momentum_observer import MomentumObserver
from .robot import load_urdf_xml
from .task_space import REFERENCES

WARM_UP_TREE = """<robot name="warm_up">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><origin xyz="0 0.1 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.2"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="tool"><inertial><mass value="0.1"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="tool_joint" type="fixed"><parent link="b"/><child link="tool"/>
    <origin xyz="0 0 0.05"/></joint>
  <joint name="j3" type="revolute"><parent link="a"/><child link="c"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 1 0"/><mimic joint="j1" multiplier="0.5"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>"""


def compile_kernels() -> float:
    """Call every kernel of the core once (compiling or loading it); return the seconds."""
    from . import fixman        # not imported with WARM_UP_TREE (the simulation's warm-up)
    start = time.perf_counter()
    tree = load_urdf_xml(WARM_UP_TREE)
    chain = load_urdf_xml(WARM_UP_TREE, tip_link='b', side_branches='drop')
    for robot in (tree, chain):
        for states in ((), (2,)):
            q, qd, x = (np.full(states + (robot.n,), 0.1) for _ in range(3))
            f_ext = np.ones(states + (robot.n_bodies, 6))
            for wrenches in (None, f_ext):
                robot.inverse_dynamics(q, qd, x, f_ext=wrenches)
                for method in ('denoc', 'cholesky'):
                    robot.forward_dynamics(q, qd, x, method=method, f_ext=wrenches)
            robot.inertia_matrix(q)
            robot.udu(q)
            for method in ('denoc', 'analytical'):
                robot.inverse_inertia_matrix(q, method=method)
            robot.composite_body(q, qd)
            robot.gravity_torques(q)
            robot.bias_forces(q, qd)
            robot.kinetic_energy(q, qd)
            robot.potential_energy(q)
            robot.regressor(q, qd, x)
        robot.articulated_inertias(q[0])
        robot.kinematics(q[0])
        robot.reaction_wrenches(q[0], qd[0], x[0], f_ext=f_ext[0])
        robot.momentum_terms(q[0], qd[0])
        observer = MomentumObserver(robot, 10.0)
        for dt in (0.0, 1e-3):
            observer.update(q[0], qd[0], x[0], dt)
        for states in ((), (2,)):                # the frame kernels (task space)
            q = np.full(states + (robot.n,), 0.1)
            robot.frame_placement(q, 'b')
            for reference in REFERENCES:
                robot.frame_jacobian(q, 'b', reference)
                robot.frame_velocity(q, q, 'b', reference)
                robot.frame_acceleration_bias(q, q, 'b', reference)
            robot.task_space_inertia(q, 'b', rows=(0, 1))
            robot.dynamically_consistent_inverse(q, 'b', rows=(0, 1))
    for states in ((3,), (2, 3)):            # the planar point-mass chain (001)
        theta = np.full(states, 0.3)
        fixman.forward_dynamics(theta, theta, 0.5, 1.0, theta)
        fixman.inverse_mass_matrix(theta, 0.5, 1.0)
        fixman.apply_inverse_mass_matrix(theta, 0.5, 1.0, theta)
        fixman.mass_matrix(theta, 0.5, 1.0)
    fixman.log_det_identity(theta[0], 0.5, 1.0)
    return time.perf_counter() - start
