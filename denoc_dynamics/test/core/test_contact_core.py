"""
Reaction wrenches, F/T sensors, the momentum terms and the momentum observer of the core.

Independent references: Pinocchio's RNEA (``data.f``, the wrench across each joint in
its frame), ``computeCoriolisMatrix``, ``crba`` and ``computeGeneralizedGravity``; a
fixed joint turned into a revolute one held at zero in Pinocchio's model gives the
wrench across it; statics written out from the URDF's numbers; the inverse dynamics
(Newton-Euler) and finite differences of the GIM for the observer and C^T qd.
"""

import xml.etree.ElementTree as ET

from denoc_dynamics import load_urdf, load_urdf_xml
from denoc_dynamics.core.ft_sensor import ForceTorqueSensors
from denoc_dynamics.core.momentum_observer import MomentumObserver
from denoc_dynamics.resources import bundled_urdf
from helpers import pin, require_pinocchio
import numpy as np
import pytest

ARM = bundled_urdf('denoc_arm7.urdf')
GRIPPER = bundled_urdf('denoc_arm7_gripper.urdf')
G = np.array([0.0, 0.0, -9.81])


def _pinocchio(xml):
    """Return Pinocchio's model and data of the URDF text; skip the test without Pinocchio."""
    require_pinocchio()   # per test, never at import (helpers.py)
    model = pin.buildModelFromXML(xml)
    return model, model.createData()


def _body_state(robot, model, q_b, extra=None):
    """Return Pinocchio's vector for the bodies' values q_b (by joint name), zero elsewhere."""
    x = np.zeros(model.nq)
    for k, name in enumerate(robot.body_joint_names):
        x[model.joints[model.getJointId(name)].idx_q] = q_b[k]
    return x


def _with_revolute(xml, joint):
    """Return the URDF with fixed ``joint`` turned into a revolute one (held at zero)."""
    root = ET.fromstring(xml)
    for element in root.iter('joint'):
        if element.get('name') == joint:
            element.set('type', 'revolute')
            ET.SubElement(element, 'axis', xyz='0 0 1')
            ET.SubElement(element, 'limit', lower='-1', upper='1', effort='1', velocity='1')
    return ET.tostring(root, encoding='unicode')


def _read(path):
    with open(path) as f:
        return f.read()


@pytest.mark.parametrize('path', [ARM, GRIPPER])
def test_reaction_wrenches_equal_pinocchio_rnea(path):
    """w~_i of the backward pass = Pinocchio's data.f, with and without external wrenches."""
    robot = load_urdf(path)
    model, data = _pinocchio(_read(path))       # no mimic: the bodies as they move
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1.0, 1.0, (3, robot.n))
        q_b, qd_b, qdd_b = (robot.body_positions(q), *(robot._bodies(q, qd, qdd)[1:]))
        f_local = rng.uniform(-5.0, 5.0, (robot.n_bodies, 6))     # Pinocchio: [f; n]
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        x = [_body_state(robot, model, v) for v in (q_b, qd_b, qdd_b)]
        pin.forwardKinematics(model, data, x[0])
        kin = robot.kinematics(q)
        f_ext = np.zeros((robot.n_bodies, 6))
        for k, name in enumerate(robot.body_joint_names):
            j = model.getJointId(name)
            fext[j] = pin.Force(f_local[k, :3], f_local[k, 3:])
            M = data.oMi[j]
            force, moment = M.rotation @ f_local[k, :3], M.rotation @ f_local[k, 3:]
            f_ext[k, :3] = moment + np.cross(M.translation - kin.C[k], force)   # about C_k
            f_ext[k, 3:] = force
        for wrenches, forces in ((None, None), (f_ext, fext)):
            if forces is None:
                pin.rnea(model, data, *x)
            else:
                pin.rnea(model, data, *x, forces)
            W = robot.reaction_wrenches(q, qd, qdd, f_ext=wrenches)
            for k, name in enumerate(robot.body_joint_names):
                j = model.getJointId(name)
                R = data.oMi[j].rotation
                expected = np.concatenate((R @ data.f[j].angular, R @ data.f[j].linear))
                np.testing.assert_allclose(W[k], expected, atol=1e-10 * max(1.0, np.abs(
                    expected).max()))


@pytest.mark.parametrize('path', [ARM, GRIPPER])
def test_momentum_terms_equal_pinocchio(path):
    """The two sweeps give p = I qd, C^T qd (computeCoriolisMatrix) and g."""
    robot = load_urdf(path)
    rng = np.random.default_rng(4)
    model, data = _pinocchio(_read(path))
    for _ in range(5):
        q, qd = rng.uniform(-1.5, 1.5, (2, robot.n))
        p, ct_qd, g = robot.momentum_terms(q, qd)
        np.testing.assert_allclose(p, robot.inertia_matrix(q) @ qd, atol=1e-12)
        np.testing.assert_allclose(g, robot.gravity_torques(q), atol=1e-12)
        if robot.n == robot.n_bodies:
            C = pin.computeCoriolisMatrix(model, data, q, qd)
            np.testing.assert_allclose(ct_qd, C.T @ qd, atol=1e-12)
        # independent of Pinocchio (mimic joints too): C^T qd = Id qd - C qd, with Id
        # from central differences of the GIM along qd and C qd = b(q, qd) - g(q)
        h = 1e-6
        I_dot = (robot.inertia_matrix(q + h * qd) - robot.inertia_matrix(q - h * qd)) / (2 * h)
        c_qd = robot.bias_forces(q, qd) - robot.gravity_torques(q)
        np.testing.assert_allclose(ct_qd, I_dot @ qd - c_qd, atol=1e-7)


def test_ft_sensor_at_rest_is_statics():
    """A 10 N force at the flange reads R^T (f + m g) and the weight's moment (statics)."""
    robot = load_urdf(ARM)
    sensors = ForceTorqueSensors(robot, ['flange_joint'])
    assert sensors.frames == ['flange'] and sensors.links == [['flange']]
    model, data = _pinocchio(_with_revolute(_read(ARM), 'flange_joint'))
    flange = ET.fromstring(_read(ARM)).find("link[@name='flange']/inertial")
    m = float(flange.find('mass').get('value'))
    c = np.array([float(v) for v in flange.find('origin').get('xyz').split()])
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, robot.n)
        f = rng.normal(size=3)
        f *= 10.0 / np.linalg.norm(f)
        pin.forwardKinematics(model, data, np.append(q, 0.0))
        M = data.oMi[model.getJointId('flange_joint')]
        R, P = M.rotation, M.translation
        C = robot.kinematics(q).C[-1]
        f_ext = np.zeros((robot.n, 6))
        f_ext[-1] = np.concatenate((np.cross(P - C, f), f))
        F = sensors.read(q, np.zeros(robot.n), np.zeros(robot.n), f_ext,
                         [np.concatenate((np.zeros(3), f))])
        np.testing.assert_allclose(F[0, 3:], R.T @ (f + m * G), atol=1e-12)
        np.testing.assert_allclose(F[0, :3], np.cross(c, R.T @ (m * G)), atol=1e-12)


@pytest.mark.parametrize('path, joint', [(ARM, 'flange_joint'), (GRIPPER, 'flange_joint'),
                                         (GRIPPER, 'hand_joint')])
def test_ft_sensor_in_motion_equals_pinocchio(path, joint):
    """In motion, pushed: minus RNEA's wrench across the joint made revolute (held at 0)."""
    robot = load_urdf(path)
    sensors = ForceTorqueSensors(robot, [joint])
    model, data = _pinocchio(_with_revolute(_read(path), joint))
    j = model.getJointId(joint)
    rng = np.random.default_rng(6)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1.0, 1.0, (3, robot.n))
        x = [_body_state(robot, model, v) for v in robot._bodies(q, qd, qdd)]
        f_local = rng.uniform(-10.0, 10.0, 6)                 # on the sensor's child link
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        fext[j] = pin.Force(f_local[:3], f_local[3:])
        pin.forwardKinematics(model, data, x[0])
        R, P = data.oMi[j].rotation, data.oMi[j].translation
        force, moment = R @ f_local[:3], R @ f_local[3:]
        k = sensors.body[0]
        C = robot.kinematics(q).C[k]
        f_ext = np.zeros((robot.n_bodies, 6))
        f_ext[k] = np.concatenate((moment + np.cross(P - C, force), force))
        pin.rnea(model, data, *x, fext)
        F = sensors.read(q, qd, qdd, f_ext, [np.concatenate((moment, force))])
        expected = -np.concatenate((data.f[j].angular, data.f[j].linear))
        np.testing.assert_allclose(F[0], expected, atol=1e-10 * max(1, np.abs(expected).max()))


@pytest.mark.parametrize('joint, links', [
    ('hand_joint', ['hand', 'left_finger', 'right_finger']),
    ('flange_joint', ['flange', 'hand', 'left_finger', 'right_finger'])])
def test_ft_sensor_carries_locked_fingers(joint, links):
    """
    The chain to link7, fingers locked apart: the sensor carries them where they were locked.

    The frame table places the locked fingers in link7's body; the reading equals minus
    RNEA's wrench across the joint made revolute in Pinocchio's whole-tree model with
    the fingers held at the same positions (at rest, then in motion with a push).
    """
    locked = {'left_finger_joint': 0.01, 'right_finger_joint': 0.03}
    robot = load_urdf(GRIPPER, tip_link='link7', locked_positions=locked)
    sensors = ForceTorqueSensors(robot, [joint])
    assert sorted(sensors.links[0]) == links and not sensors.beyond.any()
    model, data = _pinocchio(_with_revolute(_read(GRIPPER), joint))
    j = model.getJointId(joint)
    rng = np.random.default_rng(7)
    for still in (True, False, False):
        q, qd, qdd = rng.uniform(-1.0, 1.0, (3, robot.n)) * ([1.0], [0.0 if still else 1.0],
                                                             [0.0 if still else 1.0])
        x = [_body_state(robot, model, v) for v in (q, qd, qdd)]
        for name, value in locked.items():
            x[0][model.joints[model.getJointId(name)].idx_q] = value
        f_local = np.zeros(6) if still else rng.uniform(-10.0, 10.0, 6)
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        fext[j] = pin.Force(f_local[:3], f_local[3:])   # on the sensor's child link
        pin.forwardKinematics(model, data, x[0])
        R, P = data.oMi[j].rotation, data.oMi[j].translation
        force, moment = R @ f_local[:3], R @ f_local[3:]
        C = robot.kinematics(q).C[-1]
        f_ext = np.zeros((robot.n, 6))
        f_ext[-1] = np.concatenate((moment + np.cross(P - C, force), force))
        pin.rnea(model, data, *x, fext)
        F = sensors.read(q, qd, qdd, f_ext, [np.concatenate((moment, force))])
        expected = -np.concatenate((data.f[j].angular, data.f[j].linear))
        np.testing.assert_allclose(F[0], expected, atol=1e-10 * max(1, np.abs(expected).max()))


def test_ft_sensor_bad_joints():
    """Unknown and movable joints, and a sensor on the base, are refused by name."""
    robot = load_urdf(GRIPPER)
    for name in ('nope', 'joint3'):
        with pytest.raises(ValueError, match=name):
            ForceTorqueSensors(robot, [name])
    xml = _read(ARM).replace('<child link="flange"/>', '<child link="flange"/>', 1)
    root = ET.fromstring(xml)
    base = root.find('link').get('name')
    ET.SubElement(root, 'link', name='pedestal')
    fixed = ET.SubElement(root, 'joint', name='pedestal_joint', type='fixed')
    ET.SubElement(fixed, 'parent', link=base)
    ET.SubElement(fixed, 'child', link='pedestal')
    robot = load_urdf_xml(ET.tostring(root, encoding='unicode'))
    with pytest.raises(ValueError, match='pedestal_joint'):
        ForceTorqueSensors(robot, ['pedestal_joint'])


def _trajectory(robot, t):
    """Return (q, qd, qdd) of a smooth motion through the workspace at time t."""
    n = robot.n
    w = 1.0 + 0.3 * np.arange(n)
    a = 0.6 / (1.0 + 0.2 * np.arange(n))
    return a * np.sin(w * t), a * w * np.cos(w * t), -a * w ** 2 * np.sin(w * t)


@pytest.mark.parametrize('path', [ARM, GRIPPER])
def test_observer_follows_an_external_torque_step(path):
    """
    The residual follows tau_ext: zero without it, within 1 % of it 0.1 s after a step (K = 100).

    The measured torques are tau = ID(q, qd, qdd) - tau_ext along a smooth motion:
    the Newton-Euler inverse dynamics, independent of the momentum sweeps.  They are
    continuous in time, hence the first-order hold (the simulation's held drive
    torques are test_contact_sim.py's).
    """
    robot = load_urdf(path)
    observer = MomentumObserver(robot, 100.0, 'first_order')
    dt = 1e-3
    tau_ext = np.linspace(1.0, -2.0, robot.n)
    before, after = [], []
    for k in range(600):
        t = k * dt
        q, qd, qdd = _trajectory(robot, t)
        push = tau_ext if t >= 0.3 else 0.0
        tau = robot.inverse_dynamics(q, qd, qdd) - push
        r = observer.update(q, qd, tau, dt).copy()
        if 0.1 <= t < 0.3:
            before.append(r)
        if t >= 0.4:
            after.append(r)
    assert np.abs(before).max() < 2e-3
    assert np.abs(np.array(after) - tau_ext).max() < 0.01 * np.abs(tau_ext).max()


def test_observer_bad_gain():
    """A gain that is not finite and > 0 is refused."""
    robot = load_urdf(ARM)
    for gain in (0.0, -1.0, np.nan, [1.0] * (robot.n + 1)):
        with pytest.raises(ValueError):
            MomentumObserver(robot, gain)
