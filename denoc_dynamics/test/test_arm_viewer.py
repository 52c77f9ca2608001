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
import shutil
import threading
import time

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.resources import example_robot_data_dir
from denoc_dynamics.ros.arm_viewer import ArmViewer
from denoc_dynamics.ros.arm_viewer import SKELETON_COLOR
from denoc_dynamics.ros.robot_model import ROBOT_DESCRIPTION_QOS
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
from urdf_factory import random_chain_urdf

pytestmark = pytest.mark.ros

try:
    import viser  # noqa: F401
    VISER_MISSING = None
except ImportError as exc:
    VISER_MISSING = f'arm_viewer needs viser (make venv installs it): {exc}'


@pytest.fixture(autouse=True)
def _viser_installed():
    """Skip each test without viser; a module-level skip would end the collection."""
    if VISER_MISSING:
        pytest.skip(VISER_MISSING)


URL = re.compile(r'open (http://localhost:\d+) in a browser')

#: How long the page may take to load and draw on a loaded machine [s].
PAGE_TIMEOUT = 90.0


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


def drawn_pose(viewer, link, base='base_link'):
    """Return the 4x4 pose of ``link`` in ``base`` in the viewer's model, as drawn."""
    return viewer.description.model.get_transform(link, base)


def test_draws_each_link_where_the_dynamics_core_puts_it(chain_viewer):
    viewer, robot = chain_viewer
    q = np.random.default_rng(7).uniform(-1.0, 1.0, robot.n)
    names = robot.joint_names[::-1] + ['another_robots_joint']  # any order, extras ignored
    viewer._on_joint_states(joint_state(names, list(q[::-1]) + [5.0], np.zeros(robot.n + 1)))
    viewer.draw()
    kin = robot.kinematics(q)
    for i, link in enumerate(robot.chain.link_names):
        T = drawn_pose(viewer, link)
        np.testing.assert_allclose(T[:3, :3], kin.R[i], atol=1e-9, err_msg=link)
        np.testing.assert_allclose(T[:3, 3], kin.O[i], atol=1e-9, err_msg=link)
    assert viewer.accepted == 1 and viewer.rejections.total == 0


def test_no_scene_updates_without_a_browser(chain_viewer):
    """The periodic update skips the kinematics while no browser is connected."""
    viewer, robot = chain_viewer
    before = drawn_pose(viewer, robot.chain.link_names[-1])
    viewer._on_joint_states(joint_state(robot.joint_names, np.full(robot.n, 0.5)))
    assert viewer.server.get_clients() == {}
    viewer._update_scene()
    np.testing.assert_array_equal(drawn_pose(viewer, robot.chain.link_names[-1]), before)
    viewer.draw()       # what the first update after a browser connects does
    assert not np.allclose(drawn_pose(viewer, robot.chain.link_names[-1]), before)


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


def test_links_without_visual_geometry_get_a_skeleton():
    urdf = bundled_urdf()
    arm = InProcess(urdf_path=urdf)
    try:
        model = arm.viewer.description.model
        drawn = {model.scene.graph.transforms.parents[node]
                 for node in model.scene.graph.nodes_geometry}
        assert drawn, 'the bundled arm has visual primitives'
        assert len(arm.viewer._skeleton) == len(set(model.link_map) - drawn)
    finally:
        arm.close()
    chain = InProcess(robot_description=chain_urdf())
    try:
        model = chain.viewer.description.model
        assert not model.scene.graph.nodes_geometry
        assert len(chain.viewer._skeleton) == len(model.link_map)  # every link
    finally:
        chain.close()


def test_meshes_of_another_robot_are_found():
    """Panda of example-robot-data: package:// .dae meshes beside the URDF."""
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip('example-robot-data is not installed')
    node = InProcess(urdf_path=os.path.join(robots, 'panda_description', 'urdf', 'panda.urdf'))
    try:
        model = node.viewer.description.model
        drawn = {model.scene.graph.transforms.parents[n] for n in model.scene.graph.nodes_geometry}
        assert {f'panda_link{i}' for i in range(8)} <= drawn
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


# --- in a real browser -------------------------------------------------------------
def _unavailable(reason):
    if os.environ.get('CI', '').lower() == 'true':
        pytest.fail(f'the browser test must run in CI: {reason}')
    pytest.skip(reason)


@pytest.fixture(scope='module')
def browser():
    path = shutil.which('chromium') or shutil.which('chromium-browser')
    if path is None:
        _unavailable("no chromium: `make test` installs Debian's chromium when it runs as "
                     'root; otherwise: sudo apt-get install chromium')
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _unavailable(f'playwright is not installed ({exc}): run make venv')
    # WebGL on the CPU (no GPU here); root needs --no-sandbox
    args = ['--use-angle=swiftshader', '--enable-unsafe-swiftshader']
    if os.geteuid() == 0:
        args.append('--no-sandbox')
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=args,
                                              timeout=PAGE_TIMEOUT * 1000)
        yield chromium
        chromium.close()


class Page:
    """A page of the viewer in chromium, collecting console errors."""

    def __init__(self, browser, url, shots):
        """Open ``url``; screenshots are also saved under ``shots`` (a folder)."""
        self.errors = []
        self.shots = shots
        self.count = 0
        self.page = browser.new_page(viewport={'width': 800, 'height': 600})
        self.page.set_default_timeout(PAGE_TIMEOUT * 1000)
        self.page.on('console', self._on_console)
        self.page.on('pageerror', lambda exc: self.errors.append(f'page error: {exc}'))
        self.page.goto(url)
        self.page.wait_for_selector('canvas')

    def _on_console(self, message):
        if message.type == 'error':
            self.errors.append(f'console error: {message.text}')

    def wait_for_text(self, text):
        """Wait until the page shows ``text`` (e.g. in the robot's info panel)."""
        self.page.wait_for_function('text => document.body.innerText.includes(text)',
                                    arg=text)

    def screenshot(self, label):
        """Return a screenshot as an (h, w, 3) int array, and save it as label.png."""
        from PIL import Image
        self.count += 1
        path = os.path.join(self.shots, f'{self.count:02d}-{label}.png')
        self.page.screenshot(path=path)
        return np.asarray(Image.open(path).convert('RGB'), dtype=int)

    def close(self):
        """Close the page."""
        self.page.close()


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


def viewer_url(proc):
    """Wait for the URL the process logs and return it."""
    assert wait_for(lambda: URL.search(proc.output()) or not proc.alive(),
                    timeout=PAGE_TIMEOUT), proc.describe()
    match = URL.search(proc.output())
    assert match, proc.describe()
    return match.group(1)


def test_page_shows_the_robot_of_the_topic_and_moves_it(browser, tmp_path):
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


def test_make_run_serves_the_moving_arm_and_stops_cleanly(browser, tmp_path):
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
