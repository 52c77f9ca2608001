# Copyright 2025 denoc_dynamics developers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Frame Jacobians, velocities and J-dot q-dot, against Pinocchio and finite differences.

* Pinocchio, every robot of example-robot-data loaded whole: for every link frame,
  ``getFrameJacobian``, ``getFrameVelocity`` and ``getFrameClassicalAcceleration``
  (at qdd = 0) in the three references, on Pinocchio's full model at the bodies'
  positions G q + b and projected on the coordinates (J G), as the tree tests do.
  Relative to 1e-12 (Frobenius norm).
* Independent of Pinocchio: J against central differences of the placements; J-dot
  q-dot against central differences of J q-dot along the motion q + t q-dot.
"""

import warnings

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import hand_robot
from helpers import assert_close, pin
import numpy as np
from pin_oracle import get_tree, LOADED
import pytest

REFERENCES = ('local', 'local_world_aligned', 'world')
TOL = 1e-12


def _skew_vector(S):
    """Return w with S = [w x] (the antisymmetric part)."""
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def _robots():
    return {'hand': load_urdf(hand_robot()),
            'bundled': load_urdf(bundled_urdf('denoc_arm7_gripper'))}


@pytest.fixture(scope='module')
def robots():
    return _robots()


@pytest.mark.parametrize('name', ['hand', 'bundled'])
def test_jacobian_is_the_derivative_of_the_placement(robots, name):
    """Column c of J: d o_f / d q_c and the angular velocity of R_f, by central differences."""
    robot = robots[name]
    rng = np.random.default_rng(5)
    h = 1e-6
    q = rng.uniform(-1.0, 1.0, robot.n)
    for frame in robot.frames:
        J = {ref: robot.frame_jacobian(q, frame, ref) for ref in REFERENCES}
        T = robot.frame_placement(q, frame)
        R, o = T[:3, :3], T[:3, 3]
        numeric = np.empty((6, robot.n))
        for c in range(robot.n):
            dq = np.zeros(robot.n)
            dq[c] = h
            plus = robot.frame_placement(q + dq, frame)
            minus = robot.frame_placement(q - dq, frame)
            numeric[:3, c] = (plus[:3, 3] - minus[:3, 3]) / (2 * h)
            numeric[3:, c] = _skew_vector((plus[:3, :3] - minus[:3, :3]) / (2 * h) @ R.T)
        np.testing.assert_allclose(J['local_world_aligned'], numeric, rtol=0, atol=1e-8,
                                   err_msg=frame)
        local = np.vstack([R.T @ numeric[:3], R.T @ numeric[3:]])
        np.testing.assert_allclose(J['local'], local, rtol=0, atol=1e-8, err_msg=frame)
        world = np.vstack([numeric[:3] - np.cross(numeric[3:].T, o).T, numeric[3:]])
        np.testing.assert_allclose(J['world'], world, rtol=0, atol=1e-8, err_msg=frame)


@pytest.mark.parametrize('name', ['hand', 'bundled'])
def test_bias_is_the_rate_of_j_qd_along_a_motion(robots, name):
    """
    J-dot q-dot: d(J qd)/dt along q(t) = q + t qd by central differences.

    In 'local_world_aligned' that is the classical acceleration itself; in 'local'
    d(R^T v)/dt = R^T a - w_l x v_l, in 'world' d(v_O)/dt = a_O - w x v_O (v_O the
    velocity of the body point at the base origin): Pinocchio's classical acceleration
    adds w x v back.
    """
    robot = robots[name]
    rng = np.random.default_rng(6)
    h = 1e-6
    q, qd = rng.uniform(-1.0, 1.0, robot.n), rng.normal(size=robot.n)
    for frame in robot.frames:
        for ref in REFERENCES:
            def J_qd(t):
                return robot.frame_jacobian(q + t * qd, frame, ref) @ qd
            rate = (J_qd(h) - J_qd(-h)) / (2 * h)
            v = robot.frame_velocity(q, qd, frame, ref)
            np.testing.assert_allclose(v, J_qd(0.0), rtol=0, atol=1e-13)
            bias = robot.frame_acceleration_bias(q, qd, frame, ref)
            expected = rate.copy()
            if ref != 'local_world_aligned':
                expected[:3] += np.cross(v[3:], v[:3])
            np.testing.assert_allclose(bias, expected, rtol=0, atol=1e-7,
                                       err_msg=f'{frame} {ref}')


def test_a_batch_equals_its_single_states_to_the_bit(robots):
    robot = robots['bundled']
    rng = np.random.default_rng(7)
    Q, QD = rng.uniform(-2.0, 2.0, (3, 4, robot.n)), rng.normal(size=(3, 4, robot.n))
    for frame in ('flange', robot.chain.link_names[-1], robot.frames[0]):
        for ref in REFERENCES:
            J = robot.frame_jacobian(Q, frame, ref)
            v = robot.frame_velocity(Q, QD, frame, ref)
            a = robot.frame_acceleration_bias(Q, QD, frame, ref)
            assert J.shape == (3, 4, 6, robot.n) and v.shape == a.shape == (3, 4, 6)
            for s in np.ndindex(3, 4):
                assert np.array_equal(J[s], robot.frame_jacobian(Q[s], frame, ref))
                assert np.array_equal(v[s], robot.frame_velocity(Q[s], QD[s], frame, ref))
                assert np.array_equal(a[s], robot.frame_acceleration_bias(Q[s], QD[s], frame,
                                                                          ref))
    # broadcasting: one q against a batch of rates
    v = robot.frame_velocity(Q[0, 0], QD, 'flange')
    assert np.array_equal(v[1, 2], robot.frame_velocity(Q[0, 0], QD[1, 2], 'flange'))


def test_a_frame_on_the_base_does_not_move(robots):
    robot = robots['bundled']
    q, qd = np.full(robot.n, 0.3), np.full(robot.n, -0.7)
    base = robot.frames[0]
    for ref in REFERENCES:
        assert not robot.frame_jacobian(q, base, ref).any()
        assert not robot.frame_velocity(q, qd, base, ref).any()
        assert not robot.frame_acceleration_bias(q, qd, base, ref).any()


def test_bad_input_is_refused(robots):
    robot = robots['bundled']
    q = np.zeros(robot.n)
    with pytest.raises(ValueError, match='unknown frame'):
        robot.frame_jacobian(q, 'tool9')
    with pytest.raises(ValueError, match='reference must be one of'):
        robot.frame_jacobian(q, 'flange', 'LOCAL')
    with pytest.raises(ValueError, match='NaN or Inf'):
        robot.frame_velocity(q, np.full(robot.n, np.inf), 'flange')
    with pytest.raises(ValueError, match='NaN or Inf'):
        robot.frame_acceleration_bias(np.full(robot.n, np.nan), q, 'flange')
    with pytest.raises(ValueError, match='broadcast'):
        robot.frame_velocity(np.zeros((2, robot.n)), np.zeros((3, robot.n)), 'flange')


def test_unhashable_frames_and_references_are_refused_by_name(robots):
    """A list or dict as a frame or reference, after the frame's fast path is set up."""
    robot = robots['bundled']
    q = np.zeros(robot.n)
    robot.frame_jacobian(q, 'flange')
    robot.frame_velocity(q, q, 'flange')
    for bad in (['flange'], {'frame': 'flange'}):
        with pytest.raises(ValueError, match='unknown frame'):
            robot.frame_jacobian(q, bad)
        with pytest.raises(ValueError, match='unknown frame'):
            robot.frame_velocity(q, q, bad)
        with pytest.raises(ValueError, match='reference must be one of'):
            robot.frame_jacobian(q, 'flange', bad)
        with pytest.raises(ValueError, match='reference must be one of'):
            robot.frame_acceleration_bias(q, q, 'flange', bad)
    assert np.array_equal(robot.frame_jacobian(q, 'flange'),
                          robot.frame_jacobian(q[None], 'flange')[0])


@pytest.mark.usefixtures('oracles')
@pytest.mark.parametrize('name', LOADED)
def test_jacobians_match_pinocchio(name):
    """Every link frame, three references: J, J qd and the classical acceleration."""
    pair = get_tree(name)
    references = {'local': pin.LOCAL, 'local_world_aligned': pin.LOCAL_WORLD_ALIGNED,
                  'world': pin.WORLD}
    robot, full, G, b = pair.robot, pair.full, pair.G, pair.b
    model, data = full.model, full.data
    for k, (q, qd, _, _) in enumerate(pair.states):
        config, rates = full.configuration(G @ q + b), full.tangent(G @ qd)
        pin.forwardKinematics(model, data, config, rates, np.zeros(model.nv))
        pin.updateFramePlacements(model, data)
        pin.computeJointJacobians(model, data, config)
        for frame in robot.frames:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                fid = model.getFrameId(frame, pin.BODY)
            for name, ref in references.items():
                what = f'{frame} ({name}), state {k}'
                J = pin.getFrameJacobian(model, data, fid, ref)[:, full.idx_v] @ G
                if not J.any():
                    assert not robot.frame_jacobian(q, frame, name).any(), what
                    continue
                assert_close(robot.frame_jacobian(q, frame, name), J, f'J {what}')
                # relative to the size of the terms: a point on a joint axis may have
                # zero velocity or acceleration where J is not zero
                scale = np.linalg.norm(J) * np.linalg.norm(qd)
                check(robot.frame_velocity(q, qd, frame, name),
                      pin.getFrameVelocity(model, data, fid, ref).vector, scale, f'v {what}')
                check(robot.frame_acceleration_bias(q, qd, frame, name),
                      pin.getFrameClassicalAcceleration(model, data, fid, ref).vector,
                      scale * np.linalg.norm(qd), f'Jdot qd {what}')


def check(actual, expected, scale, what):
    """||actual - expected|| <= 1e-12 (||expected|| + scale), scale the size of its terms."""
    err = np.linalg.norm(actual - expected)
    assert err <= TOL * (np.linalg.norm(expected) + scale), f'{what}: error {err:.3e}'
