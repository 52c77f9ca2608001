"""
What the dynamics tests share: relative errors, one tolerance rule, the Pinocchio oracle.

* :func:`relative_error` (Frobenius or largest entry), :func:`backward_error`, and the
  tolerance rule of every cross-check: an identity holds to :data:`IDENTITY` relative;
  a result through a solve with M (forward dynamics, M^-1) to :func:`solve_tolerance`,
  1e-12 or 10 cond(M) eps, whichever is larger.
* The oracle: Pinocchio and the example-robot-data URDFs, imported once here; a test
  module that needs them declares ``pytestmark = pytest.mark.usefixtures('oracles')``
  (the fixture in conftest.py skips each test, never the module: launch_testing's
  pytest plugin imports every test module while it collects, and a module-level skip
  would end the collection of the whole directory); one that needs Pinocchio alone
  (the bundled URDFs) calls :func:`require_pinocchio` in the test or its fixture.
* Independent readings of a URDF: the mimic map from its text, and the forward
  kinematics of a tree from X_tree, parent and the axes.
* The bundled arm (:func:`bundled_arm`, the ``arm`` fixture of conftest.py).
"""

import xml.etree.ElementTree as ET

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf, example_robot_data_dir
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

try:
    import pinocchio as pin
except ImportError as exc:
    pin = None
    PIN_MISSING = f'pinocchio cannot be imported: {exc}'

EPS = np.finfo(float).eps
#: An identity of two computations without a solve (M = columns of ID, H = M, ...).
IDENTITY = 1e-13
#: A symmetric result (M^-1) against its transpose.
SYMMETRY = 1e-14
#: Against Pinocchio, Frobenius-relative; FD's normwise backward error.
ORACLE = 1e-12
BACKWARD = 1e-14


def relative_error(actual, expected, floor=1e-300, largest=False):
    """
    Return ||actual - expected|| / ||expected|| (Frobenius; ``largest``: max |entry|).

    ``floor`` bounds the denominator from below (a reference that is exactly zero).
    """
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f'shape {actual.shape} != {expected.shape}'
    if largest:
        return float(np.abs(actual - expected).max() / max(np.abs(expected).max(), floor))
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), floor))


def assert_close(actual, expected, what, tol=ORACLE, largest=False):
    """Assert that ``actual`` matches ``expected`` to relative error ``tol``."""
    err = relative_error(actual, expected, largest=largest)
    assert err <= tol, f'{what}: relative error {err:.3e} > {tol:.1e}'


def solve_tolerance(M, floor=ORACLE, ulps=10.0):
    """Return the tolerance of a result through a solve with M: floor or ulps cond(M) eps."""
    return max(floor, ulps * np.linalg.cond(M) * EPS)


def backward_error(M, qdd, phi):
    """Return eta = ||M qdd - phi|| / (||M|| ||qdd|| + ||phi||), FD's normwise backward error."""
    return np.linalg.norm(M @ qdd - phi) / (np.linalg.norm(M, 2) * np.linalg.norm(qdd)
                                            + np.linalg.norm(phi))


def symmetric(upper):
    """Return the symmetric matrix whose upper triangle is that of ``upper``."""
    return np.triu(upper) + np.triu(upper, 1).T


# --------------------------------------------------------------------------- the oracle

ROBOTS_DIR = example_robot_data_dir()
#: The bundled arm with its gripper, compared like an example-robot-data URDF.
BUNDLED = 'bundled:denoc_arm7_gripper'

#: URDFs of example-robot-data that must not load, and why (each message names it).
REFUSED = {
    'ur_description/urdf/ur3.urdf': 'URDF has no <link> elements',    # an empty <robot/>
    # a single link: nothing moves
    'hector_description/robots/quadrotor_base.urdf': 'no movable joint',
    'iris_description/robots/iris_simple.urdf': "no movable joint below 'iris__base_link'",
    # its left hand's mimic joints name the right hand's joints without their prefix
    'alex_description/urdf/alex_psyonic_hands.urdf':
        "joint 'Left_index_q2' mimics joint 'index_q1', which is not defined",
    'romeo_description/urdf/romeo_laas_small.urdf':
        "link 'LHipPitch_link': <inertia> tensor is not positive",
    'romeo_description/urdf/romeo_small.urdf':
        "link 'RShoulderYawLink': <inertia> violates the triangle inequality",
}


def oracles_missing():
    """Return why Pinocchio or example-robot-data cannot be used, or None."""
    if pin is None:
        return PIN_MISSING
    if ROBOTS_DIR is None:
        return 'example-robot-data is not installed'
    return None


def require_oracles():
    """Skip the calling test without Pinocchio or example-robot-data."""
    missing = oracles_missing()
    if missing is not None:
        pytest.skip(missing)


def require_pinocchio():
    """Skip the calling test without Pinocchio (a test on the bundled URDFs needs no more)."""
    if pin is None:
        pytest.skip(PIN_MISSING)


def example_urdfs():
    """Return every URDF of example-robot-data, relative to its robots/ directory."""
    if ROBOTS_DIR is None:
        return []
    return sorted(str(path.relative_to(ROBOTS_DIR)) for path in ROBOTS_DIR.rglob('*.urdf'))


URDFS = example_urdfs()


def urdf_path(name):
    """Return the file of an example-robot-data URDF, or of :data:`BUNDLED`."""
    return bundled_urdf(name.split(':')[1]) if name == BUNDLED else str(ROBOTS_DIR / name)


def urdf_mimics(path):
    """Return {joint: (root leader, multiplier, offset)} from the URDF text."""
    root = ET.parse(path).getroot()
    direct = {}
    for joint in root.findall('joint'):
        element = joint.find('mimic')
        if element is not None and joint.get('type') != 'fixed':
            direct[joint.get('name')] = (element.get('joint'),
                                         float(element.get('multiplier', 1.0)),
                                         float(element.get('offset', 0.0)))

    def resolve(name):
        leader, a, b = direct[name]
        if leader not in direct:
            return leader, a, b
        root_leader, a2, b2 = resolve(leader)
        return root_leader, a * a2, a * b2 + b
    return {name: resolve(name) for name in direct}


# --------------------------------------------------------------------------- kinematics

def joint_motion(axis, prismatic, value):
    """Return the 4x4 motion of a joint about (along) its unit ``axis`` by ``value``."""
    T = np.eye(4)
    if prismatic:
        T[:3, 3] = axis * value
    else:
        T[:3, :3] = Rotation.from_rotvec(axis * value).as_matrix()
    return T


def body_positions(chain, q_coordinates):
    """Return q of every body from the coordinates' values, mimic joints following."""
    q = np.zeros(chain.n)
    q[chain.coordinates] = q_coordinates
    mimics = chain.mimic_leader >= 0
    q[mimics] = (chain.mimic_multiplier[mimics] * q[chain.mimic_leader[mimics]]
                 + chain.mimic_offset[mimics])
    return q


def body_poses(chain, q):
    """Forward kinematics of the tree from X_tree, parent and the axes (pure numpy)."""
    T = np.empty((chain.n, 4, 4))
    for k in range(chain.n):
        above = np.eye(4) if chain.parent[k] < 0 else T[chain.parent[k]]
        T[k] = above @ chain.X_tree[k] @ joint_motion(chain.axis[k], chain.prismatic[k], q[k])
    return T


# --------------------------------------------------------------------------- the bundled arm

#: The excess over v_max that the drives' velocity limit leaves (docs/bad-input.md):
#: a joint whose drive is not braking with its full effort stays within this (1.3 %
#: measured on denoc_arm7: a hard stop engaging within the step).  Where it is braking,
#: test_sim_physics.BEYOND_FULL_EFFORT bounds the rest.
NOT_BRAKING = 1.015


def bundled_arm(name='denoc_arm7', gravity=None):
    """Return the bundled robot ``name``, with standard gravity unless ``gravity`` is given."""
    kwargs = {} if gravity is None else {'gravity': gravity}
    return load_urdf(bundled_urdf(name), **kwargs)
