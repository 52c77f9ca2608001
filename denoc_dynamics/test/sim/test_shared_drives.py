"""
Effort commands for the arm's joints beside joint commands for the gripper's finger.

With the ``joints`` parameter naming the arm's joints only, sim_node passes the joints
its effort commands cover (``Simulation.set_command(tau, joints)``): the finger is
left to JointState commands (the gripper controller's), neither takes the other's
joints over, the effort commands still time out, and a command that covers every
joint takes over as before.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.joint_io import EffortCommandReader
from denoc_dynamics.servo import EFFORT
from denoc_dynamics.sim_settings import PhysicsParameters
from denoc_dynamics.simulation import Simulation
import numpy as np
import pytest

POSE = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0, 0.02]
ARM = np.arange(7)
FINGER = 7


@pytest.fixture(scope='module')
def robot():
    return load_urdf(bundled_urdf('denoc_arm7_gripper'))


def simulation(robot):
    sim = Simulation(robot, PhysicsParameters(effort_mode='gravity_compensated',
                                              command_timeout=0.5),
                     initial_positions=POSE)
    sim.drives.feedforward_steps = 10
    return sim


def finger_effort(sim, force):
    sim.set_joint_command(np.array([FINGER]), np.array([EFFORT]), np.array([force]),
                          np.zeros(1), np.zeros(1))


def test_the_reader_says_which_joints_it_covers(robot):
    names = robot.joint_names
    assert EffortCommandReader(names).covered is None
    assert EffortCommandReader(names, names[::-1]).covered is None
    np.testing.assert_array_equal(EffortCommandReader(names, names[:7]).covered, ARM)


def test_arm_efforts_and_a_finger_force_drive_side_by_side(robot):
    sim = simulation(robot)
    tau = np.zeros(8)
    tau[3] = 1.5
    sim.set_command(tau, ARM)
    sim.advance(10)
    finger_effort(sim, 3.0)
    assert sim.drives.joint_commanded
    assert list(sim.drives.mode) == [EFFORT] * 8       # nothing is held in position
    for _ in range(10):
        sim.set_command(tau, ARM)                      # the arm's controller goes on
        sim.advance(10)
    g = robot.gravity_torques(sim.q)     # held over a publish period: the arm moves
    assert sim.applied_effort[3] == pytest.approx(1.5 + g[3], abs=0.1)
    assert sim.drives.tau_cmd[FINGER] == pytest.approx(3.0 + g[FINGER], abs=0.1)
    assert sim.q[FINGER] > POSE[FINGER] + 0.005         # the finger opened
    assert sim.qd[3] > 0.0                              # the arm's command acts
    # the arm's commands stop: after command_timeout its joints get zero (plus g)
    sim.advance(600)
    g = robot.gravity_torques(sim.q)
    assert sim.applied_effort[3] == pytest.approx(g[3], abs=0.2)   # not 1.5 + g
    assert sim.applied_effort[FINGER] == pytest.approx(3.0 + g[FINGER], abs=0.1)


def test_a_command_for_every_joint_takes_over(robot):
    sim = simulation(robot)
    sim.set_command(np.zeros(8), ARM)
    finger_effort(sim, 3.0)
    sim.set_command(np.zeros(8))            # covers the finger too
    assert not sim.drives.joint_commanded
    sim.advance(10)
    assert abs(sim.applied_effort[FINGER] - robot.gravity_torques(sim.q)[FINGER]) < 1e-6
