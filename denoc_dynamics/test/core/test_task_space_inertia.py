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
The task-space inertia Lambda and the dynamically consistent inverse J-bar.

* Against Pinocchio on every robot of example-robot-data loaded whole: Lambda =
  (J M^-1 J^T)^-1 with Pinocchio's M (``crba``) and frame Jacobian, projected on the
  coordinates with the mimic joints (G^T M G, J G), for 6 and 3 rows of every link
  frame where J M^-1 J^T is well conditioned; to COND_EPS cond(A) cond(M) eps.
* Independent of Pinocchio: Lambda J M^-1 J^T = 1 with our own GIM and Jacobian,
  J J-bar = 1, J-bar = M^-1 J^T Lambda, the damped inverse at a singularity.
* Bad input: a frame on the base, a singular configuration, bad rows, NaN, damping.
"""

import warnings

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import hand_robot
from helpers import pin
import numpy as np
from pin_oracle import get_tree, LOADED
import pytest

#: Lambda may lose this many ulps times cond(J M^-1 J^T) cond(M) (both sides invert).
COND_EPS = 10.0
#: Compared where that bound is below this (well conditioned).
WELL_CONDITIONED = 1e-7
ROW_SETS = (None, (0, 1, 2))


@pytest.fixture(scope='module')
def arm():
    return load_urdf(bundled_urdf('denoc_arm7_gripper'))


def _dense(robot, q, frame, rows, damping=0.0):
    """Return (A = J M^-1 J^T + damping, M^-1 J^T) from our M and J, dense."""
    J = robot.frame_jacobian(q, frame)[list(rows) if rows else slice(None)]
    M_inv_Jt = np.linalg.solve(robot.inertia_matrix(q), J.T)
    return J @ M_inv_Jt + damping * np.eye(len(J)), M_inv_Jt, J


@pytest.mark.parametrize('rows', ROW_SETS)
def test_lambda_inverts_j_m_inverse_j_transpose(arm, rows):
    """Lambda (J M^-1 J^T) = 1, J J-bar = 1 and J-bar = M^-1 J^T Lambda (our M, J)."""
    rng = np.random.default_rng(8)
    for _ in range(5):
        q = rng.uniform(-2.0, 2.0, arm.n)
        for frame in ('flange', arm.chain.link_names[-1], 'tool0'):
            if frame not in arm.frames:
                continue
            A, M_inv_Jt, J = _dense(arm, q, frame, rows)
            Lam = arm.task_space_inertia(q, frame, rows)
            k = len(A)
            assert Lam.shape == (k, k) and np.array_equal(Lam, Lam.T)
            tol = COND_EPS * np.linalg.cond(A) * np.finfo(float).eps
            np.testing.assert_allclose(Lam @ A, np.eye(k), rtol=0, atol=tol)
            J_bar = arm.dynamically_consistent_inverse(q, frame, rows)
            assert J_bar.shape == (arm.n, k)
            np.testing.assert_allclose(J @ J_bar, np.eye(k), rtol=0, atol=tol)
            expected = M_inv_Jt @ Lam              # both sides solve with M too
            tol_bar = tol * np.linalg.cond(arm.inertia_matrix(q))
            np.testing.assert_allclose(J_bar, expected, rtol=0,
                                       atol=tol_bar * np.abs(expected).max())


def test_singular_configurations_are_named_or_damped(arm):
    """At q = 0 the arm is stretched: an error naming the frame; damped, the damped inverse."""
    q = np.zeros(arm.n)
    with pytest.raises(ValueError, match=r"frame 'flange': J I\^-1 J\^T is singular"):
        arm.task_space_inertia(q, 'flange')
    with pytest.raises(ValueError, match="frame 'flange'.*damping"):
        arm.dynamically_consistent_inverse(q, 'flange')
    A, M_inv_Jt, _ = _dense(arm, q, 'flange', None, damping=1e-3)
    Lam = arm.task_space_inertia(q, 'flange', damping=1e-3)
    np.testing.assert_allclose(Lam @ A, np.eye(6), rtol=0, atol=1e-9)
    np.testing.assert_allclose(arm.dynamically_consistent_inverse(q, 'flange', damping=1e-3),
                               M_inv_Jt @ Lam, rtol=1e-9, atol=1e-12)
    # a batch says which state
    Q = np.stack([np.full(arm.n, 0.4), q])
    with pytest.raises(ValueError, match=r'state \(1,\) of the batch'):
        arm.task_space_inertia(Q, 'flange')


def test_fewer_joints_than_rows_is_singular():
    robot = load_urdf(hand_robot())             # 3 coordinates: 6 rows cannot be independent
    with pytest.raises(ValueError, match="frame 'hand'.*singular"):
        robot.task_space_inertia(np.full(robot.n, 0.3), 'hand')
    Lam = robot.task_space_inertia(np.full(robot.n, 0.3), 'left', rows=(0, 1))
    A, _, _ = _dense(robot, np.full(robot.n, 0.3), 'left', (0, 1))
    np.testing.assert_allclose(Lam @ A, np.eye(2), rtol=0, atol=1e-12)


def test_a_batch_equals_its_single_states_to_the_bit(arm):
    Q = np.random.default_rng(9).uniform(-2.0, 2.0, (2, 3, arm.n))
    for rows in ROW_SETS:
        Lam = arm.task_space_inertia(Q, 'flange', rows)
        J_bar = arm.dynamically_consistent_inverse(Q, 'flange', rows)
        k = 6 if rows is None else len(rows)
        assert Lam.shape == (2, 3, k, k) and J_bar.shape == (2, 3, arm.n, k)
        for s in np.ndindex(2, 3):
            assert np.array_equal(Lam[s], arm.task_space_inertia(Q[s], 'flange', rows))
            assert np.array_equal(J_bar[s],
                                  arm.dynamically_consistent_inverse(Q[s], 'flange', rows))


def test_bad_input_is_refused(arm):
    q = np.full(arm.n, 0.4)
    with pytest.raises(ValueError, match="frame 'base_link' is fixed to the base"):
        arm.task_space_inertia(q, 'base_link')
    with pytest.raises(ValueError, match='unknown frame'):
        arm.task_space_inertia(q, 'nowhere')
    for rows in ((), (0, 0), (6,), (-1,), ('x',), ((0, 1), (2, 3))):
        with pytest.raises(ValueError, match='rows must be'):
            arm.task_space_inertia(q, 'flange', rows=rows)
    for damping in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match='damping'):
            arm.task_space_inertia(q, 'flange', damping=damping)
    with pytest.raises(ValueError, match='NaN or Inf'):
        arm.dynamically_consistent_inverse(np.full(arm.n, np.nan), 'flange')


@pytest.mark.usefixtures('oracles')
@pytest.mark.parametrize('name', LOADED)
def test_lambda_matches_pinocchio(name):
    """Lambda = (J M^-1 J^T)^-1 of Pinocchio's J and M (G^T M G, J G), 6 and 3 rows."""
    pair = get_tree(name)
    robot, full, G, b = pair.robot, pair.full, pair.G, pair.b
    model, data = full.model, full.data
    compared = 0
    for q, _, _, _ in pair.states:
        config = full.configuration(G @ q + b)
        M = G.T @ full.ours(pin.crba(model, data, config)) @ G
        M = np.triu(M) + np.triu(M, 1).T
        pin.computeJointJacobians(model, data, config)
        pin.updateFramePlacements(model, data)
        cond_M = np.linalg.cond(M)
        for frame in robot.frames:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                fid = model.getFrameId(frame, pin.BODY)
            J_all = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            J_all = J_all[:, full.idx_v] @ G
            if not J_all.any():
                continue
            for rows in ROW_SETS:
                J = J_all[list(rows) if rows else slice(None)]
                A = J @ np.linalg.solve(M, J.T)
                tol = COND_EPS * np.linalg.cond(A) * cond_M * np.finfo(float).eps
                if not tol < WELL_CONDITIONED:
                    continue
                expected = np.linalg.inv(A)
                Lam = robot.task_space_inertia(q, frame, rows)
                err = np.linalg.norm(Lam - expected) / np.linalg.norm(expected)
                assert err <= max(tol, 1e-12), f'{pair.name} {frame} rows {rows}: {err:.3e}'
                compared += 1
    if not compared:           # legs of two joints: no frame has three independent rows
        pytest.skip(f'{pair.name}: J M^-1 J^T is ill conditioned at every frame')
