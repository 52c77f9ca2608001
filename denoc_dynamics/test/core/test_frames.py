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
The frames table: every URDF link, merged fixed links included, and its placement.

Checked against the URDF text itself (each link's pose composed from the joints'
<origin> and <axis> read by ElementTree, not by our reader) and, for every robot of
example-robot-data loaded whole, against Pinocchio's ``oMf`` of its link frames
(``pin.BODY``), with the mimic joints at G q + b on Pinocchio's full model.
"""

import math
import warnings
import xml.etree.ElementTree as ET

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import hand_robot
from helpers import pin
import numpy as np
from pin_oracle import get_tree, LOADED
import pytest

TOL = 1e-12


def _rpy(rpy):
    """Return R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def urdf_text_poses(xml, joint_values):
    """
    Return {link: pose in the root link's frame} from the URDF text (ElementTree).

    ``joint_values``: {joint name: position} for every movable joint.
    """
    root = ET.fromstring(xml)
    children = {}
    for joint in root.findall('joint'):
        children.setdefault(joint.find('parent').get('link'), []).append(joint)
    links = [link.get('name') for link in root.findall('link')]
    childs = {j.find('child').get('link') for j in root.findall('joint')}
    base = next(name for name in links if name not in childs)
    poses, stack = {base: np.eye(4)}, [base]
    while stack:
        name = stack.pop()
        for joint in children.get(name, []):
            origin = joint.find('origin')
            X = np.eye(4)
            if origin is not None:
                X[:3, 3] = [float(v) for v in origin.get('xyz', '0 0 0').split()]
                X[:3, :3] = _rpy([float(v) for v in origin.get('rpy', '0 0 0').split()])
            motion = np.eye(4)
            if joint.get('type') != 'fixed':
                element = joint.find('axis')
                axis = np.array([float(v) for v in (element.get('xyz') if element is not None
                                                    else '1 0 0').split()])
                axis /= np.linalg.norm(axis)
                value = joint_values[joint.get('name')]
                if joint.get('type') == 'prismatic':
                    motion[:3, 3] = axis * value
                else:                                    # Rodrigues
                    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]],
                                  [-axis[1], axis[0], 0]])
                    motion[:3, :3] = np.eye(3) + math.sin(value) * K + (
                        1 - math.cos(value)) * K @ K
            child = joint.find('child').get('link')
            poses[child] = poses[name] @ X @ motion
            stack.append(child)
    return poses


def _bundled():
    with open(bundled_urdf('denoc_arm7_gripper')) as stream:
        return stream.read()


def test_every_link_is_a_frame():
    """robot.frames are the URDF's links, each once; the merged fixed links included."""
    xml = _bundled()
    robot = load_urdf(xml)
    links = {link.get('name') for link in ET.fromstring(xml).findall('link')}
    assert sorted(robot.frames) == sorted(links)
    assert len(robot.frames) > robot.n_bodies + 1           # merged links among them
    assert 'flange' in robot.frames and 'flange' not in robot.chain.link_names
    assert robot.frames[0] == robot.chain.base_link


@pytest.mark.parametrize('xml', [hand_robot(), _bundled()], ids=['hand', 'bundled'])
def test_placements_equal_the_urdf_text(xml):
    """Every frame's placement is the composition of the URDF's joints, read as text."""
    robot = load_urdf(xml)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, robot.n)
        values = dict(zip(robot.body_joint_names, robot.body_positions(q)))
        expected = urdf_text_poses(xml, values)
        for frame in robot.frames:
            np.testing.assert_allclose(robot.frame_placement(q, frame), expected[frame],
                                       rtol=0, atol=TOL, err_msg=frame)


def test_locked_and_dropped_side_branches():
    """With a tip, locked side-branch links are frames at their locked pose; dropped, none."""
    xml = hand_robot()
    locked = load_urdf(xml, tip_link='hand', locked_positions={'fl': 0.03})
    dropped = load_urdf(xml, tip_link='hand', side_branches='drop')
    assert set(locked.frames) == {'base', 'a', 'hand', 'left', 'right'}
    assert set(dropped.frames) == {'base', 'a', 'hand'}
    q = np.array([0.4, -0.7])
    expected = urdf_text_poses(xml, {'j1': 0.4, 'j2': -0.7, 'fl': 0.03, 'fr': 0.03})
    for frame in locked.frames:
        np.testing.assert_allclose(locked.frame_placement(q, frame), expected[frame],
                                   rtol=0, atol=TOL, err_msg=frame)


def test_a_batch_equals_its_single_states_to_the_bit():
    robot = load_urdf(_bundled())
    Q = np.random.default_rng(4).uniform(-2.0, 2.0, (4, 3, robot.n))
    for frame in ('flange', 'base_link', robot.chain.link_names[-1]):
        batch = robot.frame_placement(Q, frame)
        assert batch.shape == (4, 3, 4, 4)
        for s in np.ndindex(4, 3):
            assert np.array_equal(batch[s], robot.frame_placement(Q[s], frame)), (frame, s)


def test_bad_frames_and_states_are_refused():
    robot = load_urdf(_bundled())
    q = np.zeros(robot.n)
    for frame in ('no_such_link', 3, None, robot.joint_names[0]):
        with pytest.raises(ValueError, match='unknown frame'):
            robot.frame_placement(q, frame)
    with pytest.raises(ValueError, match='NaN or Inf'):
        robot.frame_placement(np.full(robot.n, np.nan), 'flange')
    with pytest.raises(ValueError, match='shape'):
        robot.frame_placement(np.zeros(robot.n + 1), 'flange')


@pytest.mark.usefixtures('oracles')
@pytest.mark.parametrize('name', LOADED)
def test_placements_match_pinocchio(name):
    """Every link frame of every robot: oMf of Pinocchio's BODY frame of the same name."""
    pair = get_tree(name)
    robot, full = pair.robot, pair.full
    model, data = full.model, full.data
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        names = {model.frames[i].name for i in range(model.nframes)
                 if model.frames[i].type == pin.BODY}
    assert set(robot.frames) <= names
    for q, _, _, _ in pair.states:
        pin.framesForwardKinematics(model, data, full.configuration(pair.G @ q + pair.b))
        for frame in robot.frames:
            expected = data.oMf[model.getFrameId(frame, pin.BODY)].homogeneous
            scale = max(1.0, np.abs(expected[:3, 3]).max())
            np.testing.assert_allclose(robot.frame_placement(q, frame), expected, rtol=0,
                                       atol=TOL * scale, err_msg=f'{pair.name}: {frame}')


@pytest.mark.usefixtures('oracles')
def test_every_pinocchio_link_is_a_frame():
    """No link is missed: on the TALOS and PR2 trees, all of Pinocchio's BODY frames."""
    for name in ('pr2_description/urdf/pr2.urdf', 'talos_data/robots/talos_full_v2.urdf'):
        pair = get_tree(name)
        model = pair.full.model
        bodies = {model.frames[i].name for i in range(model.nframes)
                  if model.frames[i].type == pin.BODY}
        assert set(pair.robot.frames) == bodies, name
