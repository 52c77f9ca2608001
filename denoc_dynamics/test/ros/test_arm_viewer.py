"""
arm_viewer: the robot drawn in a real browser and moving with joint_states.

The browser tests drive Debian's chromium (``make test`` installs it where it can)
through playwright: the page must load without console errors, show the robot, and
change between two screenshots a second apart while the arm moves, and not change
while it stands still (the control that lets the test fail).  Without chromium or
playwright they skip, saying why, except under CI=true, where they fail.

The in-process tests check what the view draws against the dynamics core's own
forward kinematics (an independent implementation), and the input handling.
"""

import math
import os
import re
import threading
import time

from browser import browser  # noqa: F401 (the chromium fixture)
from browser import Page, PAGE_TIMEOUT, REQUIRES_VISER, viewer_url
from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.resources import example_robot_data_dir
from denoc_dynamics.ros.arm_viewer import ArmViewer
from denoc_dynamics.ros.arm_viewer import ROOT
from denoc_dynamics.ros.arm_viewer import SKELETON_COLOR
from denoc_dynamics.ros.robot_model import ROBOT_DESCRIPTION_QOS
from denoc_dynamics.sample_urdfs import random_chain_urdf
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient
from ros_helpers import wait_for
from sensor_msgs.msg import JointState
from std_msgs.msg import String

pytestmark = [pytest.mark.ros, REQUIRES_VISER]


def chain_urdf(seed=3, n=5):
    """Return a random serial chain without visual geometry (drawn as a skeleton)."""
    return random_chain_urdf(np.random.default_rng(seed), n, name=f'viewer_chain{seed}')


# --- in-process: what is drawn, and the input handling -------------------------------
class InProcess:
    """An ArmViewer in its own rclpy context, its callbacks called by the test."""

    def __init__(self, **params):
        """Create the node with ``params`` (port 0: any free port)."""
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        overrides = [Parameter('port', Parameter.Type.INTEGER, 0)]
        overrides += [Parameter(name, value=value) for name, value in params.items()]
        self.viewer = None
        try:
            self.viewer = ArmViewer(context=self.context, parameter_overrides=overrides)
        finally:
            if self.viewer is None:
                rclpy.try_shutdown(context=self.context)
        assert self.viewer.wait_shown(timeout=60.0)

    def close(self):
        """Destroy the node (and its web server) and shut the context down."""
        self.viewer.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def chain_viewer():
    urdf = chain_urdf()
    node = InProcess(robot_description=urdf)
    yield node.viewer, load_urdf(urdf)
    node.close()


def joint_state(names, positions, velocities=None):
    """Return a sensor_msgs/JointState."""
    msg = JointState(name=list(names), position=[float(p) for p in positions])
    if velocities is not None:
        msg.velocity = [float(v) for v in velocities]
    return msg


def drawn_pose(viewer, link):
    """Return the 4x4 pose of ``link`` in the root frame in the viewer's model, as drawn."""
    return viewer.link_pose(link)


def skeleton_spheres(viewer):
    """Return the positions of the skeleton's spheres sent to the browser (float32)."""
    return np.asarray(viewer._view.spheres.batched_positions, dtype=float)


def test_draws_each_link_where_the_dynamics_core_puts_it(chain_viewer):
    viewer, robot = chain_viewer
    q = np.random.default_rng(7).uniform(-1.0, 1.0, robot.n)
    names = robot.joint_names[::-1] + ['another_robots_joint']  # any order, extras ignored
    viewer._on_joint_states(joint_state(names, list(q[::-1]) + [5.0], np.zeros(robot.n + 1)))
    viewer.draw()
    kin = robot.kinematics(q)
    spheres = skeleton_spheres(viewer)
    for i, link in enumerate(robot.chain.link_names):
        T = drawn_pose(viewer, link)
        np.testing.assert_allclose(T[:3, :3], kin.R[i], atol=1e-9, err_msg=link)
        np.testing.assert_allclose(T[:3, 3], kin.O[i], atol=1e-9, err_msg=link)
        # what the browser is sent: the sphere of the link at its origin (float32)
        k = viewer._view.model.tree.index[link]
        np.testing.assert_allclose(spheres[list(viewer._view.sphere_links).index(k)],
                                   kin.O[i], atol=1e-6, err_msg=link)
    assert viewer.accepted == 1 and viewer.rejections.total == 0


def test_no_scene_updates_without_a_browser(chain_viewer):
    """The periodic update skips the kinematics while no browser is connected."""
    viewer, robot = chain_viewer
    before = skeleton_spheres(viewer)
    viewer._on_joint_states(joint_state(robot.joint_names, np.full(robot.n, 0.5)))
    assert viewer.server.get_clients() == {}
    viewer._update_scene()
    np.testing.assert_array_equal(skeleton_spheres(viewer), before)
    viewer.draw()       # what the first update after a browser connects does
    assert not np.allclose(skeleton_spheres(viewer), before)


def test_partial_states_keep_the_other_joints(chain_viewer):
    viewer, robot = chain_viewer
    q = np.linspace(-0.4, 0.4, robot.n)
    viewer._on_joint_states(joint_state(robot.joint_names, q))  # no velocities: fine
    viewer._on_joint_states(joint_state([robot.joint_names[1]], [0.9]))
    q[1] = 0.9
    np.testing.assert_allclose(viewer.configuration(), q)
    assert viewer.joint_names == robot.joint_names


@pytest.mark.parametrize('names, positions, reason', [
    (['joint1', 'joint2'], [0.1], 'length'),
    (['joint1', 'joint2'], [0.1, math.nan], 'non-finite'),
    (['joint1', 'joint2'], [math.inf, 0.1], 'non-finite'),
    (['joint1', 'joint1'], [0.1, 0.2], 'duplicate joint'),
], ids=['length', 'nan', 'inf', 'duplicate'])
def test_bad_joint_states_are_rejected_counted_and_change_nothing(
        chain_viewer, names, positions, reason):
    viewer, robot = chain_viewer
    before = viewer.configuration()
    viewer._on_joint_states(joint_state(names, positions))
    viewer._on_joint_states(joint_state(names, positions))
    assert viewer.rejections.counts == {reason: 2} and viewer.accepted == 0
    np.testing.assert_array_equal(viewer.configuration(), before)
    # a NaN of a joint the robot does not have is not its business
    viewer._on_joint_states(joint_state(['joint1', 'not_mine'], [0.3, math.nan]))
    assert viewer.accepted == 1 and viewer.configuration()[0] == 0.3


def drawn_links(viewer):
    """Return the names of the links drawn with their visual geometry."""
    view = viewer._view
    return {view.model.tree.links[i] for i in view.visual_link}


def test_links_without_visual_geometry_get_a_skeleton():
    urdf = bundled_urdf()
    arm = InProcess(urdf_path=urdf)
    try:
        view = arm.viewer._view
        drawn = drawn_links(arm.viewer)
        assert drawn, 'the bundled arm has visual primitives'
        assert view.problems == []
        skeleton = {view.model.tree.links[i] for i in view.sphere_links}
        assert skeleton == set(view.model.tree.links) - drawn
    finally:
        arm.close()
    chain = InProcess(robot_description=chain_urdf())
    try:
        view = chain.viewer._view
        assert not view.visuals
        assert len(view.sphere_links) == len(view.model.tree)  # every link
        assert len(view.rod_links) == len(view.model.tree) - 1  # a rod to each joint
    finally:
        chain.close()


def test_meshes_of_another_robot_are_found():
    """Panda of example-robot-data: package:// .dae meshes in the package holding the URDF."""
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip('example-robot-data is not installed')
    node = InProcess(urdf_path=os.path.join(robots, 'panda_description', 'urdf', 'panda.urdf'))
    try:
        assert {f'panda_link{i}' for i in range(8)} <= drawn_links(node.viewer)
        assert node.viewer._view.problems == []
        assert node.viewer.joint_names[:7] == [f'panda_joint{i}' for i in range(1, 8)]
    finally:
        node.close()


def test_a_missing_urdf_file_is_a_clear_error():
    with pytest.raises(RuntimeError, match='no URDF file /nonexistent.urdf'):
        InProcess(urdf_path='/nonexistent.urdf')


@pytest.mark.parametrize('path', ['/etc/passwd', bundled_urdf('denoc_arm7')])
def test_a_description_parameter_that_is_a_path_is_refused_unread(path):
    # as for the dynamics nodes: robot_description text is XML, only urdf_path a file
    with pytest.raises(RuntimeError, match='not URDF XML'):
        InProcess(robot_description=path)


def test_a_description_with_a_doctype_never_reaches_yourdfpy():
    xml = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           '<robot name="r"><link name="a"/></robot>')
    with pytest.raises(RuntimeError, match='DOCTYPE'):
        InProcess(robot_description=xml)


# --- robot descriptions a peer may send ----------------------------------
def lean_chain(n, name='lean'):
    """Return a serial chain of ``n`` revolute joints and n + 1 links, few bytes a link."""
    parts = [f'<robot name="{name}"><link name="l0"/>']
    for i in range(1, n + 1):
        parts.append(f'<link name="l{i}"/><joint name="j{i}" type="revolute"><parent '
                     f'link="l{i - 1}"/><child link="l{i}"/><origin xyz="0 0 0.01"/>'
                     '<axis xyz="0 1 0"/></joint>')
    return ''.join(parts) + '</robot>'


def from_topic(viewer, urdf):
    """Hand ``urdf`` to the viewer as the robot_description topic does; wait for the scene."""
    viewer.description._on_description(String(data=urdf))
    assert viewer.wait_shown(timeout=120.0)


@pytest.fixture
def topic_viewer():
    """Yield a viewer waiting for the robot description on the topic."""
    node = InProcess()
    yield node.viewer
    node.close()


def scene_nodes(viewer):
    """Return the names of the viser scene nodes of the robots."""
    return [name for name in viewer.server.scene._handle_from_node_name
            if name.startswith(ROOT + '/')]


def test_max_dof_and_mesh_directories_are_typed_parameters(topic_viewer):
    max_dof, meshes = topic_viewer.describe_parameters(['max_dof', 'mesh_directories'])
    assert max_dof.type == Parameter.Type.INTEGER.value and max_dof.read_only
    assert topic_viewer.get_parameter('max_dof').value == 1000
    assert max_dof.integer_range[0].from_value == 1
    assert meshes.type == Parameter.Type.STRING_ARRAY.value and meshes.read_only


def test_a_description_above_max_dof_is_refused_in_one_line_and_the_robot_kept(
        topic_viewer, capfd):
    from_topic(topic_viewer, lean_chain(3, name='small'))
    capfd.readouterr()
    from_topic(topic_viewer, lean_chain(1001, name='huge'))
    lines = [line for line in capfd.readouterr().err.splitlines() if 'max_dof' in line]
    assert len(lines) == 1 and 'ignoring the robot description' in lines[0], lines
    assert topic_viewer.model.name == 'small' and topic_viewer._view.root.visible
    from_topic(topic_viewer, lean_chain(1000, name='largest'))  # 1000 joints: accepted
    assert topic_viewer.model.name == 'largest' and len(topic_viewer.joint_names) == 1000


def test_max_dof_refuses_a_parameter_description():
    with pytest.raises(RuntimeError, match='max_dof'):
        InProcess(robot_description=lean_chain(6), max_dof=5)


def test_a_deep_chain_is_a_few_scene_nodes_with_short_names(topic_viewer):
    """O(n): one node per visual, two for the whole skeleton; no name nested per link."""
    from_topic(topic_viewer, lean_chain(60))
    names = scene_nodes(topic_viewer)
    assert 1 <= len(names) <= 3, names
    assert max(len(name) for name in names) < 40, names
    assert len(topic_viewer._view.sphere_links) == 61


def test_the_robot_shown_stays_until_the_new_one_is_ready(topic_viewer):
    viewer = topic_viewer
    from_topic(viewer, lean_chain(4, name='old'))
    old = viewer._view
    seen = []

    def midway():  # called between two links of the new robot
        handles = viewer.server.scene._handle_from_node_name
        new = [handles[n].visible for n in scene_nodes(viewer)  # the robots' roots
               if n.count('/') == ROOT.count('/') + 1 and n != old.name]
        seen.append((viewer.model.name, old.root.visible, new))
        return False

    viewer._build((lean_chain(6, name='new'), 'a test'), midway)
    assert len(seen) >= 6
    for name, visible, new in seen[1:]:
        assert name == 'old' and visible  # still shown
        assert new == [False]  # the new robot's root, hidden while it is built
    assert viewer.model.name == 'new' and viewer._view.root.visible
    assert all(not n.startswith(old.name) for n in scene_nodes(viewer))


def test_a_build_given_up_leaves_the_robot_shown_and_nothing_else(topic_viewer):
    viewer = topic_viewer
    from_topic(viewer, lean_chain(4, name='old'))
    before = sorted(scene_nodes(viewer))
    calls = []

    def after_three_links():
        calls.append(1)
        return len(calls) > 3

    viewer._build((lean_chain(8, name='abandoned'), 'a test'), after_three_links)
    assert viewer.model.name == 'old' and viewer._view.root.visible
    assert sorted(scene_nodes(viewer)) == before


def test_replacing_the_robot_warns_nothing(topic_viewer):
    """Viser warned 'Attempted to remove already removed node' about 18 times a robot."""
    import warnings
    from_topic(topic_viewer, bundled_urdf_text())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        from_topic(topic_viewer, chain_urdf(seed=5))
        from_topic(topic_viewer, bundled_urdf_text())
    assert [str(w.message) for w in caught] == []
    assert topic_viewer.model.name == 'denoc_arm7'


def bundled_urdf_text():
    """Return the XML of the bundled arm (visual primitives and skeleton links)."""
    with open(bundled_urdf(), 'r', encoding='utf-8') as stream:
        return stream.read()


def test_the_scene_thread_gives_up_on_a_newer_job_and_on_stop():
    from denoc_dynamics.ros.arm_viewer import SceneBuilder
    started, finished = [], []

    def build(job, cancelled):
        started.append(job)
        while not cancelled():
            if job == 'quick':
                break
            time.sleep(0.01)
        else:
            return
        finished.append(job)

    builder = SceneBuilder(build)
    builder.submit('endless')
    assert wait_for(lambda: started == ['endless'])
    builder.submit('quick')  # a newer description: the endless one gives up
    assert builder.wait_idle(timeout=30.0) and finished == ['quick']
    builder.submit('endless')
    assert wait_for(lambda: len(started) == 3)
    builder.stop(timeout=30.0)
    assert not builder.alive and finished == ['quick']


def test_a_tree_is_drawn_with_its_branches_and_mimic_joints(topic_viewer):
    """A gripper: two fingers on one palm, the second mimicking the first."""
    urdf = (
        '<robot name="gripper"><link name="base"/><link name="palm"/><link name="left"/>'
        '<link name="right"/>'
        '<joint name="wrist" type="revolute"><parent link="base"/><child link="palm"/>'
        '<origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>'
        '<limit lower="-2" upper="2" effort="1" velocity="1"/></joint>'
        '<joint name="left_finger" type="prismatic"><parent link="palm"/><child link="left"/>'
        '<origin xyz="0 0.05 0.1"/><axis xyz="0 1 0"/>'
        '<limit lower="0.01" upper="0.04" effort="1" velocity="1"/></joint>'
        '<joint name="right_finger" type="prismatic"><parent link="palm"/>'
        '<child link="right"/><origin xyz="0 -0.05 0.1"/><axis xyz="0 -1 0"/>'
        '<limit lower="0" upper="0.04" effort="1" velocity="1"/>'
        '<mimic joint="left_finger" multiplier="1" offset="0"/></joint></robot>')
    from_topic(topic_viewer, urdf)
    assert topic_viewer.joint_names == ['wrist', 'left_finger']
    assert topic_viewer.configuration().tolist() == [0.0, 0.01]  # the limit nearest 0
    topic_viewer._on_joint_states(joint_state(['wrist', 'left_finger'], [math.pi / 2, 0.03]))
    topic_viewer.draw()
    np.testing.assert_allclose(drawn_pose(topic_viewer, 'left')[:3, 3], [-0.08, 0, 0.6],
                               atol=1e-12)
    np.testing.assert_allclose(drawn_pose(topic_viewer, 'right')[:3, 3], [0.08, 0, 0.6],
                               atol=1e-12)
    # the rods sent to the browser run from each link's origin to its child joints'
    from viser.transforms import SO3
    rods = topic_viewer._view.rods
    ends = {tuple(np.round(np.asarray(p, float) + SO3(np.asarray(w, float)).as_matrix()
                           @ [0.0, 0.0, float(s[2])], 5))
            for p, w, s in zip(rods.batched_positions, rods.batched_wxyzs,
                               rods.batched_scales)}
    assert ends == {(0.0, 0.0, 0.5), (-0.05, 0.0, 0.6), (0.05, 0.0, 0.6)}


def test_a_robot_name_is_shown_as_text_not_markdown(topic_viewer):
    """The page shows the name to every browser: no image, link or HTML from a peer."""
    name = '![x](http://example.com/t.png)` <img src=x>\n# big' + 'x' * 5000
    from_topic(topic_viewer, lean_chain(2, name=name.replace('<', '&lt;')))
    content = topic_viewer.info.content
    code, rest = content[1:].split('`', 1)  # the name is one code span
    assert content.startswith('`') and code.startswith('![x](http://example.com/t.png)')
    assert '\n' not in code and len(code) < 200 and rest.startswith(': 3 links')


def test_the_orientations_sent_are_those_of_the_poses():
    """The quaternions of the rods and visuals, against viser's own conversion."""
    from denoc_dynamics.ros.viewer_model import quaternions
    from denoc_dynamics.ros.viewer_model import rotations
    from viser.transforms import SO3
    rng = np.random.default_rng(4)
    axes = rng.normal(size=(200, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = np.concatenate([rng.uniform(-np.pi, np.pi, 194), [0.0, np.pi, -np.pi,
                                                               1e-9, np.pi - 1e-9, 3.0]])
    R = rotations(axes, angles)
    np.testing.assert_allclose(R @ np.transpose(R, (0, 2, 1)), np.tile(np.eye(3), (200, 1, 1)),
                               atol=1e-12)
    q = quaternions(R)
    reference = np.array([SO3.from_matrix(r).wxyz for r in R])
    np.testing.assert_allclose(np.abs(np.sum(q * reference, axis=1)), 1.0, atol=1e-9)
    np.testing.assert_allclose(np.array([SO3(w).as_matrix() for w in q]), R, atol=1e-9)


def test_a_signal_ends_the_viewer_while_it_builds_a_scene():
    """A 20,000-link chain (max_dof raised) takes seconds to read: SIGINT must not wait."""
    proc = NodeProcess('arm_viewer', ros_args(port=0, max_dof=100000))
    client = RosClient('viewer_signal_test')
    try:
        viewer_url(proc)
        description = client.node.create_publisher(String, 'robot_description',
                                                   ROBOT_DESCRIPTION_QOS)
        description.publish(String(data=lean_chain(20000, name='endless')))
        if not wait_for(lambda: 'reading the robot description' in proc.output(),
                        timeout=60.0):
            time.sleep(5.0)  # a viewer that does not say so: it is surely busy by now
        assert "showing 'endless'" not in proc.output(), \
            'the build ended before the signal: make the chain longer'
        assert proc.interrupt(timeout=10.0) == 0, proc.describe()
        assert "showing 'endless'" not in proc.output(), proc.describe()
        assert 'Traceback' not in proc.output(), proc.describe()
    finally:
        client.close()
        proc.stop()


def test_a_peer_cannot_wedge_the_viewer_with_its_descriptions():
    """In the process layout: replace the robot, send too many joints, then 1,000 links."""
    proc = NodeProcess('arm_viewer', ros_args(port=0))
    client = RosClient('viewer_flood_test')
    try:
        viewer_url(proc)
        description = client.node.create_publisher(String, 'robot_description',
                                                   ROBOT_DESCRIPTION_QOS)

        def send(urdf, expect, timeout=60.0):
            description.publish(String(data=urdf))
            assert wait_for(lambda: expect in proc.output(), timeout=timeout), \
                proc.describe()

        send(bundled_urdf_text(), "showing 'denoc_arm7'")
        send(chain_urdf(seed=5), "showing 'viewer_chain5'")
        assert 'already removed' not in proc.output(), proc.describe()
        send(lean_chain(1001, name='too_many'), 'max_dof')
        assert len([line for line in proc.output().splitlines() if 'max_dof' in line]) == 1
        # 1,000 links: about a second (trimesh's scene graph took more than 300 s)
        send(lean_chain(999, name='thousand'), "showing 'thousand'", timeout=120.0)
        send(lean_chain(2, name='after'), "showing 'after'")
        assert proc.alive(), proc.describe()
        assert proc.interrupt(timeout=30.0) == 0, proc.describe()
        assert 'Traceback' not in proc.output(), proc.describe()
    finally:
        client.close()
        proc.stop()


# --- mesh files a description names ---------------------------------------
def mesh_robot(*names, name='meshes'):
    """Return a URDF with one link per mesh name, each link's only visual that mesh."""
    parts = [f'<robot name="{name}"><link name="base"/>']
    for i, mesh in enumerate(names):
        parts.append(f'<link name="m{i}"><visual><geometry><mesh filename="{mesh}"/>'
                     f'</geometry></visual></link><joint name="j{i}" type="fixed"><parent '
                     f'link="base"/><child link="m{i}"/></joint>')
    return ''.join(parts) + '</robot>'


def write_mesh(path):
    """Write a small STL box at ``path``; return the path."""
    import trimesh
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as stream:
        stream.write(trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(file_type='stl'))
    return str(path)


class OpenedFiles:
    """Record the paths the process opens (open, io.open, os.open) while active."""

    def __init__(self, monkeypatch):
        """Wrap the three ways of opening a file."""
        import builtins
        import io
        self.paths = []
        for module, attribute in ((builtins, 'open'), (io, 'open'), (os, 'open')):
            original = getattr(module, attribute)
            monkeypatch.setattr(module, attribute, self._recording(original))

    def _recording(self, original):
        def opener(file, *args, **kwargs):
            if isinstance(file, (str, bytes, os.PathLike)):
                self.paths.append(os.path.abspath(os.fsdecode(file)))
            return original(file, *args, **kwargs)
        return opener

    def below(self, directory):
        """Return the recorded paths below ``directory``."""
        return [p for p in self.paths if p.startswith(str(directory) + os.sep)]


FORBIDDEN = [
    ('file://{}', 'file:// outside the allowed directories'),
    ('{}', 'absolute path outside the allowed directories'),
    ('package://denoc_dynamics/' + '../' * 16 + '{}', 'package:// escaping with ..'),
    ('file://localhost{}', 'file://localhost'),
    ('package://denoc_dynamics/../denoc_dynamics/../../..' + '/..' * 16 + '{}',
     'package:// escaping and coming back'),
]


@pytest.mark.parametrize('template, what', FORBIDDEN, ids=[w for _, w in FORBIDDEN])
def test_a_forbidden_mesh_is_never_opened_and_its_existence_not_told(
        topic_viewer, tmp_path, monkeypatch, capfd, template, what):
    secret = tmp_path / 'secret'
    existing = write_mesh(str(secret / 'existing.stl'))
    missing = str(secret / 'missing.stl')
    opened = OpenedFiles(monkeypatch)
    lines = {}
    for label, path in (('existing', existing), ('missing', missing)):
        capfd.readouterr()
        from_topic(topic_viewer, mesh_robot(template.format(path), name=label))
        assert opened.below(tmp_path) == [], f'{what}: the viewer opened {opened.paths}'
        assert topic_viewer.model.name == label
        problems = topic_viewer._view.problems
        assert len(problems) == 1 and 'not allowed' in problems[0], problems
        logged = [line for line in capfd.readouterr().err.splitlines()
                  if 'not drawn' in line]
        assert len(logged) == 1, logged
        lines[label] = re.sub(r'^\[\w+\] \[[\d.]+\] ', '', logged[0]).replace(
            path, 'PATH').replace(f"'{label}'", 'ROBOT')
    assert lines['existing'] == lines['missing']
    assert 0 in topic_viewer._view.sphere_links  # the link is drawn as a skeleton


@pytest.mark.parametrize('name', [
    '/etc/shadow', 'file:///etc/shadow',
    'package://denoc_dynamics/../../../../../../../../etc/shadow',
    'package://denoc_dynamics/urdf/denoc_arm7.urdf',   # inside the share, not a mesh
    'http://example.com/arm.stl', 'model://arm/meshes/arm.stl', 'relative/arm.stl'])
def test_only_mesh_types_in_allowed_places_are_opened(topic_viewer, monkeypatch, name):
    opened = OpenedFiles(monkeypatch)
    from_topic(topic_viewer, mesh_robot(name))
    assert not [p for p in opened.paths if 'shadow' in p or p.endswith('.urdf')], opened.paths
    problems = topic_viewer._view.problems
    assert len(problems) == 1 and 'not allowed' in problems[0], problems


def test_meshes_below_urdf_path_and_mesh_directories_are_drawn(tmp_path):
    robot_dir, extra, other = tmp_path / 'robot', tmp_path / 'extra', tmp_path / 'other'
    write_mesh(str(robot_dir / 'meshes' / 'part.stl'))
    write_mesh(str(extra / 'part.STL'))
    write_mesh(str(other / 'part.stl'))
    urdf = robot_dir / 'urdf' / 'robot.urdf'
    os.makedirs(urdf.parent)
    urdf.write_text(mesh_robot(
        '../meshes/part.stl', f'file://{robot_dir}/meshes/part.stl',
        str(robot_dir / 'meshes' / 'part.stl'), str(extra / 'part.STL'),
        str(other / 'part.stl'), '../../other/part.stl'))
    node = InProcess(urdf_path=str(urdf), mesh_directories=[str(robot_dir), str(extra)])
    try:
        view = node.viewer._view
        assert drawn_links(node.viewer) == {'m0', 'm1', 'm2', 'm3'}
        assert len(view.problems) == 2 and all('not allowed' in p for p in view.problems)
    finally:
        node.close()
    node = InProcess(urdf_path=str(urdf))  # default: the directory of urdf_path only
    try:
        assert drawn_links(node.viewer) == set()
        assert len(node.viewer._view.problems) == 6
    finally:
        node.close()


# --- in a real browser -------------------------------------------------------------
def changed_pixels(a, b):
    """Return how many pixels differ between two screenshots."""
    return int(np.count_nonzero(np.any(a != b, axis=-1)))


def skeleton_pixels(image):
    """Return how many pixels have the skeleton's orange hue (at any shading)."""
    r, g, b = (image[..., k] for k in range(3))
    red, green, blue = SKELETON_COLOR
    ratio = (green - blue) / (red - blue)  # where green sits between blue and red
    span = np.maximum(r - b, 1)
    return int(np.count_nonzero((r - b > 60) & (np.abs((g - b) / span - ratio) < 0.2)))


class JointStatePublisher:
    """Publish joint_states at 50 Hz from a thread: still at q0, or moving around it."""

    def __init__(self, client, names, q0):
        """Start publishing ``q0`` for ``names`` (still)."""
        self.pub = client.node.create_publisher(JointState, 'joint_states',
                                                qos_profile_sensor_data)
        self.names = list(names)
        self.q0 = np.asarray(q0, dtype=float)
        self.moving = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        t0 = time.monotonic()
        while not self._stop.wait(0.02):
            t = time.monotonic() - t0
            q = self.q0 + (0.6 * np.sin(2.0 * np.pi * t / 3.0 + np.arange(len(self.q0)))
                           if self.moving else 0.0)
            self.pub.publish(joint_state(self.names, q))

    def stop(self):
        """Stop the thread."""
        self._stop.set()
        self._thread.join()


def test_page_shows_the_robot_of_the_topic_and_moves_it(browser, tmp_path):  # noqa: F811
    """Any robot: a random chain without geometry, from the robot_description topic."""
    urdf = chain_urdf(seed=11, n=6)
    robot = load_urdf(urdf)
    proc = NodeProcess('arm_viewer', ros_args(port=0))
    client = RosClient('viewer_test')
    publisher = page = None
    try:
        page = Page(browser, viewer_url(proc), str(tmp_path))
        page.wait_for_text('waiting for the robot description')
        empty = page.screenshot('no-robot')
        description = client.node.create_publisher(String, 'robot_description',
                                                   ROBOT_DESCRIPTION_QOS)
        description.publish(String(data=urdf))
        publisher = JointStatePublisher(client, robot.joint_names,
                                        np.linspace(-0.5, 0.5, robot.n))
        assert wait_for(lambda: 'receiving /joint_states' in proc.output(),
                        timeout=PAGE_TIMEOUT), proc.describe()
        page.wait_for_text(robot.chain.name)
        # the robot is shown: its orange skeleton, absent from the empty scene
        baseline = skeleton_pixels(empty)
        assert wait_for(lambda: skeleton_pixels(page.screenshot('robot')) > baseline + 300,
                        timeout=PAGE_TIMEOUT, period=1.0), \
            f'no skeleton drawn; screenshots in {tmp_path}\n{proc.describe()}'
        time.sleep(2.0)  # the last state of the still arm is drawn
        still = [page.screenshot('still')]
        time.sleep(1.0)
        still.append(page.screenshot('still'))
        assert changed_pixels(*still) == 0, f'the view changes with the arm still ({tmp_path})'
        publisher.moving = True
        time.sleep(0.5)
        moving = [page.screenshot('moving')]
        time.sleep(1.0)
        moving.append(page.screenshot('moving'))
        assert changed_pixels(*moving) > 300, f'the view does not move ({tmp_path})'
        assert page.errors == [], page.errors
    finally:
        if publisher is not None:
            publisher.stop()
        if page is not None:
            page.close()
        client.close()
        proc.stop()


def test_make_run_serves_the_moving_arm_and_stops_cleanly(browser, tmp_path):  # noqa: F811
    """denoc_sim_arm (make run) with its viewer: the demo moves the bundled arm."""
    proc = NodeProcess('denoc_sim_arm', ['--viewer-port', '0'])
    page = None
    try:
        page = Page(browser, viewer_url(proc), str(tmp_path))
        page.wait_for_text('denoc_arm7')
        assert wait_for(lambda: 'receiving /joint_states' in proc.output(),
                        timeout=PAGE_TIMEOUT), proc.describe()
        time.sleep(1.0)
        first = page.screenshot('arm')
        time.sleep(1.0)
        second = page.screenshot('arm')
        assert changed_pixels(first, second) > 300, f'the arm does not move ({tmp_path})'
        assert page.errors == [], page.errors
        page.close()
        page = None
        assert proc.interrupt(timeout=30.0) == 0, proc.describe()
        out = proc.output()
        assert 'Traceback' not in out and 'interrupted' in out, proc.describe()
    finally:
        if page is not None:
            page.close()
        proc.stop()


def test_the_rviz_config_shows_the_bundled_arm_on_a_ros_install():
    """config/denoc_arm.rviz (installed): RobotModel and TF, fixed frame = the URDF root."""
    import yaml
    from ament_index_python.packages import get_package_share_directory
    path = os.path.join(get_package_share_directory('denoc_dynamics'), 'config',
                        'denoc_arm.rviz')
    with open(path, 'r', encoding='utf-8') as stream:
        manager = yaml.safe_load(stream)['Visualization Manager']
    displays = {d['Class']: d for d in manager['Displays']}
    model = displays['rviz_default_plugins/RobotModel']
    assert model['Description Source'] == 'Topic'
    assert model['Description Topic']['Value'] == '/robot_description'
    assert model['Description Topic']['Durability Policy'] == 'Transient Local'
    assert displays['rviz_default_plugins/TF']['Enabled']
    assert manager['Global Options']['Fixed Frame'] == load_urdf(bundled_urdf()).chain.base_link
