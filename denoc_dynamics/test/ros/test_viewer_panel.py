"""
The control panel of arm_viewer: in process against the real nodes, and in chromium.

In process, the viewer runs beside a real sim_node (and a second one in another
namespace, which the panel must never touch), spun by an executor in a thread; the
panel's handlers are called as the browser's clicks call them.  Each control is
checked against the real interface it drives and what the robot then does:

* the drag handle against sim_node's ``~/link_wrench``: the held arm's drives answer
  the spring force f with -J^T f, and dynamics_node's ``~/external_torques``, in the
  panel's plot, estimate J^T f;
* the arrows against sim_node's ``~/ft/flange_joint`` and dynamics_node's
  ``~/external_wrench``;
* the gripper buttons against gripper_controller's GripperCommand action on the
  simulated gripper arm: the finger goes to the width;
* the payload panel against ``~/set_payload`` of sim_node and dynamics_node.

Where an interface is absent, the control is hidden behind its hint; test doubles
remain only for what the tests must control exactly (a listener that records the
drag's messages, a publisher of one reading, an action server that records goals).

In chromium (as test_arm_viewer.py), ``denoc_sim_arm`` (``make run``) with its page:
the labelled controls, Pause, Step, Reset, the joint2 slider, the plots, Save PNG,
two browsers at once; a browser closed while it drags.  With
``DENOC_PANEL_SCREENSHOT=<path>`` the first one also writes the README's screenshot.
"""

import math
import os
import threading
import time
from types import SimpleNamespace

from browser import browser  # noqa: F401 (the chromium fixture)
from browser import Page, PAGE_TIMEOUT, REQUIRES_VISER, viewer_url
from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.arm_viewer import ArmViewer
from denoc_dynamics.ros.dynamics_node import DynamicsNode
from denoc_dynamics.ros.gripper_controller import GripperController
from denoc_dynamics.ros.sim_node import SimNode
from denoc_dynamics.ros.viewer_feel import tip_link
from denoc_dynamics.ros.viewer_links import Names
from denoc_dynamics.ros.viewer_panel import min_jerk
from denoc_dynamics.ros.viewer_panel import payload_request
from denoc_dynamics.ros.viewer_plots import Trace
from geometry_msgs.msg import WrenchStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from ros_helpers import NodeProcess
from ros_helpers import RosClient
from ros_helpers import wait_for
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

pytestmark = [pytest.mark.ros, REQUIRES_VISER]


def _simulation_interfaces():
    try:
        import simulation_interfaces.srv  # noqa: F401
        return True
    except ImportError:
        return False


ARM = bundled_urdf()
GRIPPER_ARM = bundled_urdf('denoc_arm7_gripper')
INITIAL = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0]


# --- pure parts ----------------------------------------------------------------------
def test_every_name_is_in_the_viewer_namespace_and_absolute_ones_are_refused():
    names = Names('/left', 'sim_node', 'trajectory_controller', 'dynamics_node',
                  'gripper_controller/gripper_cmd', 'robot_joint_commands')
    assert all(value.startswith('/left/') or value == '/left'
               for value in names.every().values()), names.every()
    assert all(name.startswith('/left/') for name in names.set_payload)
    assert names.step == '/left/sim_node/step_simulation'
    assert names.gripper == '/left/gripper_controller/gripper_cmd'
    root = Names('/', 'sim_node', 'c', 'd', 'g/a', 'j')
    assert root.pause == '/sim_node/pause' and root.namespace == '/'
    for bad in ('/right/sim_node', '~/x', '', 'a//b', 'a/'):
        with pytest.raises(ValueError, match='relative'):
            Names('/left', bad, 'c', 'd', 'g/a', 'j')


def test_a_minimum_jerk_move_starts_and_ends_at_rest():
    assert min_jerk(-1.0) == 0.0 and min_jerk(0.0) == 0.0 and min_jerk(1.0) == 1.0
    assert min_jerk(2.0) == 1.0 and abs(min_jerk(0.5) - 0.5) < 1e-15
    h = 1e-4   # slope zero at both ends (finite differences: 30 h^2)
    assert abs(min_jerk(h) / h) < 1e-6 and abs((1.0 - min_jerk(1.0 - h)) / h) < 1e-6


def test_a_trace_keeps_its_window_at_its_rate_and_starts_over_for_other_joints():
    trace = Trace(window=1.0, rate=8.0)   # times in 1/64 s: exact in binary
    kept = [trace.add(k / 64.0, ['a', 'b'], [k, -k]) for k in range(320)]
    assert sum(kept) == 40          # one sample per 1/8 s of the 5 s
    t, y = trace.arrays()
    assert t[-1] == 0.0 and t[0] == -1.0 and len(t) == 9
    np.testing.assert_array_equal(y[:, 0], -y[:, 1])
    trace.add(10.0, ['c'], [1.0])
    assert trace.names == ['c'] and len(trace.samples) == 1


def test_the_payload_request_is_filled_by_field_name():
    """A request of SetPayload's shape stands in for the type (not in this build)."""
    from geometry_msgs.msg import Point
    from builtin_interfaces.msg import Duration

    class Request:

        def __init__(self):
            self.link, self.mass = '', 0.0
            self.center_of_mass = Point()
            self.inertia = [0.0] * 6
            self.transition_time = Duration()

        def get_fields_and_field_types(self):
            return {'link': 'string', 'mass': 'double',
                    'center_of_mass': 'geometry_msgs/Point', 'inertia': 'double[6]',
                    'transition_time': 'builtin_interfaces/Duration'}
    request = payload_request(SimpleNamespace(Request=Request), 'flange', 2.5,
                              (0.01, -0.02, 0.05), 1.25)
    assert request.link == 'flange' and request.mass == 2.5
    com = request.center_of_mass
    assert (com.x, com.y, com.z) == (0.01, -0.02, 0.05)
    assert request.inertia == [0.0] * 6   # a point mass
    assert (request.transition_time.sec, request.transition_time.nanosec) == (1, 250000000)


def test_the_handle_goes_on_the_tip_or_where_the_fingers_branch():
    from denoc_dynamics.ros.viewer_model import read_description
    import yourdfpy
    for path, expected in ((ARM, None), (GRIPPER_ARM, 'hand')):
        with open(path) as stream:
            model = read_description(yourdfpy, stream.read(), path, 1000)
        tree = model.tree
        tip = tip_link(tree)
        if expected is None:   # a chain: its last link
            depth = [0] * len(tree.links)
            for i in range(1, len(tree.links)):
                depth[i] = depth[tree.parent[i]] + 1
            assert depth[tree.index[tip]] == max(depth)
        else:
            assert tip == expected


# --- in process: the viewer beside real nodes -----------------------------------------
class Rig:
    """A viewer in ``/arm`` beside sim nodes in ``/arm`` and ``/other``, spun in a thread."""

    def __init__(self, urdf=ARM, sims=True, viewer_params=None, sim_params=None, more=()):
        """
        Create the nodes in a context of their own and start spinning.

        ``more``: (node class, parameters) of further nodes in ``/arm`` (the dynamics
        node, the gripper controller), given the URDF.
        """
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.nodes = []
        self.executor = MultiThreadedExecutor(num_threads=3, context=self.context)
        try:
            common = [Parameter('urdf_path', value=urdf),
                      Parameter('robot_description', value='')]
            self.sims = {}
            if sims:
                for ns in ('/arm', '/other'):
                    params = common + [Parameter('initial_positions', value=INITIAL),
                                       Parameter('publish_clock', value=ns == '/arm')]
                    params += [Parameter(k, value=v) for k, v in (sim_params or {}).items()]
                    self.sims[ns] = self._add(SimNode(
                        namespace=ns, context=self.context, parameter_overrides=params))
            for cls, extra in more:
                self._add(cls(namespace='/arm', context=self.context, parameter_overrides=(
                    common + [Parameter(k, value=v) for k, v in extra.items()])))
            params = common + [Parameter('port', value=0)]
            params += [Parameter(k, value=v) for k, v in (viewer_params or {}).items()]
            self.viewer = self._add(ArmViewer(namespace='/arm', context=self.context,
                                              parameter_overrides=params))
            assert self.viewer.wait_shown(60.0)
            self.client = self._add(rclpy.create_node('panel_test', namespace='/arm',
                                                      context=self.context))
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        self.panel = self.viewer.panel

    def _add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:  # noqa: B902 (the context shut down under it)
            pass

    def graph_read(self):
        """Wait until the panel has read the graph after now."""
        start = time.monotonic()
        assert wait_for(lambda: self.panel._last_graph > start + 0.05, timeout=10.0)

    def close(self):
        """Destroy the nodes, stop the executor, shut the context down."""
        self.executor.shutdown(timeout_sec=5.0)
        for node in self.nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def rig():
    rig = Rig()
    yield rig
    rig.close()


def test_without_the_interfaces_each_control_is_hidden_behind_a_one_line_hint():
    rig = Rig(sims=False)
    try:
        rig.graph_read()
        panel, feel = rig.panel, rig.viewer.feel
        for section, name in ((panel.sim, '/arm/sim_node/pause'),
                              (panel.joint_section, '/arm/trajectory_controller/'),
                              (panel.payload, 'set_payload')):
            assert section.available is False
            assert section.hint.visible and name in section.hint.content
            assert not any(handle.visible for handle in section.controls)
            assert '\n' not in section.hint.content
        assert not panel.gripper.folder.visible    # the bundled arm has no gripper
        assert 'nobody listens to `/arm/sim_node/link_wrench`' in feel.hint.content
        assert '/arm/dynamics_node/external_wrench' in feel.hint.content
        assert feel.handle is not None and not feel.handle.visible
    finally:
        rig.close()


def test_pause_play_and_reset_act_on_the_viewer_namespace_only(rig):
    rig.graph_read()
    panel = rig.panel
    arm, other = rig.sims['/arm'], rig.sims['/other']
    assert panel.sim.available and all(h.visible for h in panel.sim.controls)
    panel._set_paused(True)
    assert wait_for(lambda: arm.sim.paused, timeout=10.0)
    # the panel learns the mode from the service's response, which comes after
    assert wait_for(lambda: panel.mode == 'paused', timeout=10.0), panel.mode
    assert not other.sim.paused
    t = arm.sim.t
    time.sleep(0.3)
    assert arm.sim.t == t                     # the simulated time stands still
    assert wait_for(lambda: 'paused' in panel.sim_status() and 'RTF 0.00' in
                    panel.sim_status(), timeout=10.0), panel.sim_status()
    arm.sim.q[1] = 0.2                        # somewhere else than the start (paused)
    panel._reset()
    assert wait_for(lambda: abs(arm.sim.q[1] - INITIAL[1]) < 1e-12, timeout=10.0)
    np.testing.assert_allclose(arm.sim.q, INITIAL, atol=1e-12)
    panel._set_paused(False)
    assert wait_for(lambda: not arm.sim.paused, timeout=10.0)
    assert wait_for(lambda: arm.sim.t > t + 0.2, timeout=10.0)
    assert not other.sim.paused and other.sim.t > 0.0


@pytest.mark.ros2_msgs
def test_step_takes_exactly_the_count_of_physics_steps(rig, ros2_msgs):
    rig.graph_read()
    panel, arm = rig.panel, rig.sims['/arm']
    assert not panel.step.disabled
    t0 = arm.sim.t
    panel._step(10)                           # pauses first, then steps
    assert wait_for(lambda: 'stepped 10' in panel.sim_result.content, timeout=10.0), \
        panel.sim_result.content
    dt = 1.0 / arm.physics.physics_rate
    t1 = arm.sim.t
    panel._step(10)
    assert wait_for(lambda: arm.sim.t > t1, timeout=10.0)
    assert arm.sim.t - t1 == pytest.approx(10 * dt, abs=1e-9)
    assert t1 >= t0


def test_step_without_the_standard_services_is_disabled_with_its_reason(rig):
    if _simulation_interfaces():
        pytest.skip('simulation_interfaces is installed: Step is on (tested above)')
    rig.graph_read()
    assert rig.panel.step.disabled
    rig.panel._step(10)
    assert 'simulation_interfaces' in rig.panel.sim_result.content


def slide(panel, name, value):
    """Move ``name``'s slider as a browser does (an update event from a client)."""
    slider = panel.sliders[name]
    slider._impl.value = value
    panel._on_slider(name, SimpleNamespace(client=object(), target=slider))


def test_a_slider_moves_the_arm_by_joint_commands_when_no_controller_runs(rig):
    rig.graph_read()
    panel, arm = rig.panel, rig.sims['/arm']
    assert panel.joint_section.available     # the sim listens to robot_joint_commands
    panel.move_time.value = 0.5
    slide(panel, 'joint2', 0.8)
    assert panel.moves_sent == 0              # not before the slider rests
    assert wait_for(lambda: panel.moves_sent == 1, timeout=5.0)
    assert wait_for(lambda: abs(arm.sim.q[1] - 0.8) < 2e-3, timeout=10.0), arm.sim.q
    assert abs(arm.sim.q[0] - INITIAL[0]) < 2e-3    # the others held where they were
    assert rig.sims['/other'].sim.q[1] == pytest.approx(INITIAL[1], abs=1e-3)


def test_follow_sends_while_the_slider_moves(rig):
    rig.graph_read()
    panel = rig.panel
    panel.follow.value = 'Follow'
    received = []
    rig.client.create_subscription(JointState, 'robot_joint_commands',
                                   received.append, 10)
    for k in range(5):
        slide(panel, 'joint1', 0.05 * (k + 1))
        time.sleep(0.12)
    assert panel.moves_sent >= 3              # live, not once at rest
    assert wait_for(lambda: received, timeout=5.0)
    assert received[-1].name[0] == 'joint1'


class WrenchListener:
    """A test double of the simulator's ``~/link_wrench`` subscriber."""

    def __init__(self, node, topic):
        """Record every WrenchStamped on ``topic`` with its arrival time."""
        self.messages = []
        node.create_subscription(WrenchStamped, topic,
                                 lambda msg: self.messages.append((time.monotonic(), msg)),
                                 10)

    def force(self, k=-1):
        """Return the force of message ``k``."""
        f = self.messages[k][1].wrench.force
        return np.array([f.x, f.y, f.z])


def drag(feel, phase, position, client_id=1):
    """Send the handle a drag event, as viser does for a browser."""
    feel.handle._impl.position = np.asarray(position, dtype=float)
    feel._on_drag(SimpleNamespace(phase=phase, client_id=client_id, target=feel.handle))


def test_dragging_the_handle_pushes_the_tip_with_a_spring_force_in_its_frame(rig):
    listener = WrenchListener(rig.client, '/arm/sim_node/link_wrench')
    rig.graph_read()
    feel = rig.viewer.feel
    assert wait_for(lambda: feel.available, timeout=10.0)
    T = rig.viewer.link_pose(feel.link)
    d = np.array([0.1, -0.05, 0.02])
    feel.server.get_clients = lambda: {1: object()}   # a browser is watching
    drag(feel, 'start', T[:3, 3])
    drag(feel, 'update', T[:3, 3] + d)
    assert wait_for(lambda: len(listener.messages) >= 3, timeout=5.0)
    msg = listener.messages[-1][1]
    assert msg.header.frame_id == feel.link
    k = rig.viewer.panel_settings['drag_stiffness']
    # the spring force k d of the base frame, in the link's frame (the arm holds still)
    T = rig.viewer.link_pose(feel.link)
    np.testing.assert_allclose(T[:3, :3] @ listener.force(), k * d, atol=0.05 * k * 0.12)
    drag(feel, 'update', T[:3, 3] + np.array([10.0, 0.0, 0.0]))    # far: capped
    limit = rig.viewer.panel_settings['drag_max_force']
    # the next 10 Hz tick publishes it (on a loaded machine, later than 0.1 s)
    assert wait_for(lambda: np.linalg.norm(listener.force()) > k * 0.12 * 1.5,
                    timeout=5.0), listener.force()
    assert np.linalg.norm(listener.force()) == pytest.approx(limit, rel=1e-9)
    drag(feel, 'end', T[:3, 3])
    # one zero wrench, then nothing
    assert wait_for(lambda: not np.any(listener.force()), timeout=5.0), listener.force()
    count = len(listener.messages)
    time.sleep(0.4)
    assert len(listener.messages) == count
    assert not np.any(listener.force())


def test_a_wrench_reading_is_drawn_at_its_link_in_the_base_frame(rig):
    pub = rig.client.create_publisher(WrenchStamped, '/arm/sim_node/ft/flange_joint', 10)
    link = rig.viewer.feel.link
    msg = WrenchStamped()
    msg.header.frame_id = link
    msg.wrench.force.z = -20.0
    rig.graph_read()
    rig.graph_read()                          # subscribed after the first reading
    assert '/arm/sim_node/ft/flange_joint' in rig.viewer.feel.subscriptions
    assert wait_for(lambda: (pub.publish(msg), link in str(
        [m.header.frame_id for _, m, _ in rig.viewer.feel.readings.values()]))[1],
        timeout=10.0)
    points, colours = rig.viewer.feel.arrow_points()
    T = rig.viewer.link_pose(link)
    scale = rig.viewer.panel_settings['arrow_scale']
    assert points.shape == (1, 2, 3)          # a force, no torque
    np.testing.assert_allclose(points[0, 0], T[:3, 3], atol=1e-12)
    np.testing.assert_allclose(points[0, 1] - points[0, 0],
                               scale * T[:3, :3] @ [0.0, 0.0, -20.0], atol=1e-12)


def test_the_plots_fill_from_joint_states_and_save_a_png(rig, tmp_path):
    plots = rig.viewer.plots
    plots.directory = str(tmp_path)
    assert wait_for(lambda: len(plots.traces['position'].samples) > 5, timeout=10.0)
    assert plots.traces['position'].names == rig.viewer.joint_names
    assert len(plots.traces['effort'].samples) > 5
    plots.update()
    assert set(plots.charts) >= {'position', 'effort'} and plots.save.visible
    before = plots.charts['position'].data[1][-1]
    path, data = plots.save_png()
    assert os.path.dirname(path) == str(tmp_path)
    with open(path, 'rb') as stream:
        assert stream.read(8) == b'\x89PNG\r\n\x1a\n'
    assert math.isfinite(before)


def test_the_gripper_buttons_send_goals_to_the_gripper_action(ros2_msgs):
    """A GripperCommand server (a test double of the driver's) in the namespace."""
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionServer
    rig = Rig(urdf=GRIPPER_ARM, sims=False)
    goals = []

    def execute(handle):
        goals.append(handle.request.command.position)
        handle.succeed()
        result = GripperCommand.Result()
        result.position, result.reached_goal = handle.request.command.position, True
        return result
    try:
        server = ActionServer(rig.client, GripperCommand, 'gripper_controller/gripper_cmd',
                              execute)
        assert rig.panel.gripper.folder.visible
        assert wait_for(lambda: (rig.graph_read(), rig.panel.gripper.available)[1],
                        timeout=20.0), rig.panel.gripper.hint.content
        rig.panel._grip(rig.panel.finger[2])
        assert wait_for(lambda: goals == [0.04], timeout=10.0), goals
        assert wait_for(lambda: 'reached' in rig.panel.gripper_result.content, timeout=10.0)
        rig.panel.width._impl.value = 0.012
        rig.panel._on_width(SimpleNamespace(client=object()))
        assert wait_for(lambda: goals == [0.04, 0.012], timeout=10.0), goals
        server.destroy()
    finally:
        rig.close()


def test_the_viewer_refuses_an_absolute_simulator_name():
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(RuntimeError, match='relative'):
            ArmViewer(context=context, parameter_overrides=[
                Parameter('port', value=0), Parameter('urdf_path', value=ARM),
                Parameter('sim_node', value='/another_robot/sim_node')])
    finally:
        rclpy.try_shutdown(context=context)


# --- against the real interfaces ------------------------------------------------------
def settled_effort(sim, period=0.3, timeout=30.0):
    """
    Return the sim's joint torques once they changed less than 1e-3 N m over ``period``.

    Over ``period`` of simulated time, twice in a row: the nodes share one process
    here, and on a loaded machine its simulation runs well below real time (at moments
    a tenth of it), so that wall-clock windows can see a simulation standing still.
    """
    deadline = time.monotonic() + timeout
    previous, t = np.array(sim.sim.joint_torque, dtype=float), sim.sim.t
    now, still, changes = previous, 0, []
    while time.monotonic() < deadline and still < 2:
        time.sleep(0.05)
        if sim.sim.t - t < period:
            continue
        now, t = np.array(sim.sim.joint_torque, dtype=float), sim.sim.t
        changes.append(float(np.abs(now - previous).max()))
        still = still + 1 if changes[-1] < 1e-3 else 0
        previous = now
    assert still == 2, f'the efforts did not settle: {now}, changes {changes}'
    return now


def test_the_drag_pushes_the_simulated_arm_and_the_estimate_in_the_plot_feels_it():
    """
    The panel's drag through sim_node and dynamics_node, and back into the panel.

    The arm holds its pose by position servos (a JointState command): once settled, its
    drives read tau_J = g(q) - J^T f (statics), f the drag's spring force (base frame, at
    the tip link's origin, as the sim holds it: the link-frame force of the panel's last
    message turned with the link), g and J from the core at the simulated pose.
    dynamics_node's momentum observer, on the sim's joint states, estimates J^T f, which
    the panel's 'External torques' plot shows.
    """
    rig = Rig(more=[(DynamicsNode, {'estimate_external_torques': True,
                                    'use_sim_time': True})])
    try:
        arm, feel, plots = rig.sims['/arm'], rig.viewer.feel, rig.viewer.plots
        assert wait_for(lambda: (rig.graph_read(), feel.available)[1], timeout=20.0)
        hold = rig.client.create_publisher(JointState, '/arm/robot_joint_commands', 10)
        # sent once: the sim's subscription must have matched, or it is lost
        assert wait_for(lambda: hold.get_subscription_count() > 0, timeout=20.0), \
            'the sim never matched /arm/robot_joint_commands'
        hold.publish(JointState(name=arm.sim.robot.joint_names, position=INITIAL))
        assert wait_for(lambda: arm.sim.mode != 'hold', timeout=10.0)
        assert wait_for(lambda: len(plots.traces['external'].samples) > 5, timeout=20.0)
        before = settled_effort(arm)
        assert np.abs(before).max() > 1.0         # the servos carry the arm's weight
        robot = load_urdf(ARM)
        np.testing.assert_allclose(before, robot.gravity_torques(arm.sim.q), atol=1e-3)
        listener = WrenchListener(rig.client, '/arm/sim_node/link_wrench')
        T = rig.viewer.link_pose(feel.link)
        feel.server.get_clients = lambda: {1: object()}   # a browser is watching
        drag(feel, 'start', T[:3, 3])
        drag(feel, 'update', T[:3, 3] + np.array([0.0, 0.05, 0.04]))
        assert wait_for(lambda: arm.sim.loads.topic is not None, timeout=10.0)
        assert arm.sim.loads.topic[0] == feel.link
        held = settled_effort(arm)
        q = arm.sim.q.copy()
        f = robot.frame_placement(q, feel.link)[:3, :3] @ listener.force()
        assert np.linalg.norm(f) > 5.0
        J = robot.frame_jacobian(q, feel.link)[:3]
        np.testing.assert_allclose(held, robot.gravity_torques(q) - J.T @ f,
                                   atol=0.01 * np.abs(J.T @ f).max())
        # the observer's estimate, as the panel plots it
        trace = plots.traces['external']

        def estimate():
            return np.array(trace.samples[-1][1], dtype=float)[:robot.n]
        assert wait_for(lambda: np.abs(estimate() - J.T @ f).max()
                        < 0.05 * np.abs(J.T @ f).max(), timeout=10.0), (estimate(), J.T @ f)
        # and the external wrench's arrow is drawn (the estimate's colour)
        assert wait_for(lambda: (rig.graph_read(), '/arm/dynamics_node/external_wrench'
                                 in feel.readings)[1], timeout=20.0), list(feel.readings)
        drag(feel, 'end', T[:3, 3])
        assert wait_for(lambda: arm.sim.loads.topic is None or not np.any(
            arm.sim.loads.topic[4]), timeout=10.0)
        np.testing.assert_allclose(settled_effort(arm), before, atol=0.05)
    finally:
        rig.close()


def test_the_arrows_show_the_simulated_force_torque_sensor():
    rig = Rig(sim_params={'ft_sensors': ['flange_joint']})
    try:
        feel, topic = rig.viewer.feel, '/arm/sim_node/ft/flange_joint'
        assert wait_for(lambda: (rig.graph_read(), topic in feel.readings)[1],
                        timeout=20.0), list(feel.readings)
        _, msg, _ = feel.readings[topic]
        assert msg.header.frame_id == 'flange'    # the sensor joint's child link
        points, colours = feel.arrow_points()
        T = rig.viewer.link_pose('flange')
        scale = rig.viewer.panel_settings['arrow_scale']
        force = np.array([msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z])
        # at rest the sensor carries the weight beyond it: a force down in the base frame
        assert (T[:3, :3] @ force)[2] < -1.0
        drawn = [p for p in points if np.allclose(p[0], T[:3, 3], atol=1e-9)]
        assert any(np.allclose(p[1] - p[0], scale * T[:3, :3] @ force, atol=1e-3 * scale
                               * np.linalg.norm(force)) for p in drawn), points
    finally:
        rig.close()


def test_the_payload_panel_sets_the_payload_of_the_sim_and_the_dynamics_node():
    rig = Rig(more=[(DynamicsNode, {})])
    try:
        panel, arm = rig.panel, rig.sims['/arm']
        dynamics = [n for n in rig.nodes if isinstance(n, DynamicsNode)][0]
        assert wait_for(lambda: (rig.graph_read(), panel.payload.available)[1],
                        timeout=20.0), panel.payload.hint.content
        panel.payload_link._impl.value = 'flange'
        panel.mass.value = 1.5
        panel.com.value = (0.0, 0.0, 0.05)
        panel.transition.value = 0.0
        panel._set_payload()
        assert wait_for(lambda: panel.payload_result.content.count('ok') >= 2,
                        timeout=10.0), panel.payload_result.content
        for node in (arm, dynamics):
            assert node.payload.current.link == 'flange'
            assert node.payload.current.mass == pytest.approx(1.5)
            np.testing.assert_allclose(node.payload.current.com, [0.0, 0.0, 0.05])
        # the other arm's simulator is not touched
        assert rig.sims['/other'].payload.current.mass == 0.0
        panel.mass.value = -1.0                    # refused by the nodes, with the reason
        panel._set_payload()
        assert wait_for(lambda: 'refused' in panel.payload_result.content, timeout=10.0)
        assert arm.payload.current.mass == pytest.approx(1.5)
    finally:
        rig.close()


@pytest.mark.ros2_msgs
def test_the_gripper_buttons_drive_the_gripper_controller_of_the_simulated_arm(ros2_msgs):
    rig = Rig(urdf=GRIPPER_ARM, sim_params={'real_time_factor': 2.0},
              more=[(GripperController, {})])
    try:
        panel, arm = rig.panel, rig.sims['/arm']
        finger = arm.sim.robot.joint_names.index(panel.finger[0])
        assert wait_for(lambda: (rig.graph_read(), panel.gripper.available)[1],
                        timeout=20.0), panel.gripper.hint.content
        panel._grip(panel.finger[2])              # Open
        assert wait_for(lambda: 'reached' in panel.gripper_result.content
                        or 'stalled' in panel.gripper_result.content, timeout=30.0), \
            panel.gripper_result.content
        assert arm.sim.q[finger] == pytest.approx(panel.finger[2], abs=2e-3)
        panel.width._impl.value = 0.012
        panel._on_width(SimpleNamespace(client=object()))
        assert wait_for(lambda: abs(arm.sim.q[finger] - 0.012) < 2e-3, timeout=30.0), \
            arm.sim.q[finger]
    finally:
        rig.close()


# --- in chromium ------------------------------------------------------------------
def button(page, label):
    """Return the page's button ``label``."""
    return page.page.get_by_role('button', name=label, exact=True)


def number_input(page, label):
    """Return the text box of the GUI input (or slider) labelled ``label``."""
    row = page.page.locator(
        f'xpath=//label[normalize-space(.)="{label}"]/ancestor::div'
        '[.//input[not(@type="hidden")]][1]')
    return row.locator('input:not([type="hidden"])').last


class ClockReader:
    """The latest /clock and joint_states of the process, read by a test node in a thread."""

    def __init__(self, client):
        """Subscribe on ``client`` (a RosClient) and spin it until :meth:`stop`."""
        from rclpy.qos import qos_profile_sensor_data
        self.t = None
        self.q = None
        client.node.create_subscription(Clock, '/clock', self._on_clock, 10)
        client.node.create_subscription(JointState, '/joint_states', self._on_state,
                                        qos_profile_sensor_data)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=lambda: [client.executor.spin_once(timeout_sec=0.05)
                            for _ in iter(self._stop.is_set, True)], daemon=True)
        self._thread.start()

    def stop(self):
        """Stop spinning."""
        self._stop.set()
        self._thread.join()

    def _on_clock(self, msg):
        self.t = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec

    def _on_state(self, msg):
        self.q = dict(zip(msg.name, msg.position))


def test_make_run_panel_in_chromium(browser, tmp_path):  # noqa: F811
    proc = NodeProcess('denoc_sim_arm', [
        '--viewer-port', '0', '--ros-args', '-p', f'plot_directory:={tmp_path}',
        '-p', 'move_time:=1.5'])
    client = RosClient('panel_test')
    reader = ClockReader(client)
    pages = []
    try:
        url = viewer_url(proc)
        page = Page(browser, url, str(tmp_path))
        pages.append(page)
        page.wait_for_text('denoc_arm7')
        for label in ('Play', 'Pause', 'Step', 'Reset', 'Save PNG'):
            button(page, label).wait_for()
        for text in ('Steps', 'Sliders', 'Move time', 'joint1', 'joint7', 'sim time',
                     'Joint positions', 'Efforts'):
            page.wait_for_text(text)
        assert 'Gripper' not in page.page.inner_text('body')    # the arm has none
        # Pause stops the simulated time
        button(page, 'Pause').click()
        page.wait_for_text('paused')
        assert wait_for(lambda: reader.t is not None, timeout=PAGE_TIMEOUT)
        time.sleep(0.5)
        t = reader.t
        time.sleep(1.0)
        assert reader.t == t, 'the simulated time runs while paused'
        # a second browser sees the same state
        second = Page(browser, url, str(tmp_path))
        pages.append(second)
        second.wait_for_text('paused')
        # Reset: the initial positions
        button(page, 'Reset').click()
        assert wait_for(lambda: reader.q is not None and all(
            abs(reader.q[f'joint{i + 1}'] - INITIAL[i]) < 1e-9 for i in range(7)),
            timeout=30.0), reader.q
        # the joint2 slider (typed into its box), played: the arm goes to 0.8 rad
        button(page, 'Play').click()
        page.wait_for_text('playing')
        box = number_input(page, 'joint2')
        box.fill('0.8')
        started = time.monotonic()
        time.sleep(1.5 + 1.0)                 # the move's duration, and a second
        assert wait_for(lambda: abs(reader.q['joint2'] - 0.8) < 1e-3,
                        timeout=max(0.1, 10.0 - (time.monotonic() - started))), reader.q
        values = []
        assert wait_for(lambda: values.append(number_input(second, 'joint2').input_value())
                        or values[-1].startswith('0.8'), timeout=20.0), values
        shot = os.environ.get('DENOC_PANEL_SCREENSHOT')
        if shot:   # the README's picture: the panel of make run after the move
            page.page.set_viewport_size({'width': 1280, 'height': 1000})
            close = page.page.locator('.mantine-Notification-closeButton')
            if close.count():
                close.first.click()   # viser's notice about software WebGL
            time.sleep(2.0)
            page.page.screenshot(path=shot)
        # the plots update; Save PNG writes a file
        chart = page.page.locator('.u-wrap canvas').first    # uPlot's
        chart.evaluate('element => element.scrollIntoView()')
        time.sleep(0.5)
        box = chart.bounding_box()
        first_plot = page.page.screenshot(clip=box)
        time.sleep(1.5)
        assert page.page.screenshot(clip=box) != first_plot, 'the plots do not update'
        button(page, 'Save PNG').click()
        assert wait_for(lambda: any(name.endswith('.png') and name.startswith('arm_viewer')
                                    for name in os.listdir(tmp_path)), timeout=30.0)
        assert page.errors == [] and second.errors == [], page.errors + second.errors
    finally:
        for page in pages:
            page.close()
        reader.stop()
        client.close()
        proc.stop()


@pytest.mark.ros2_msgs
def test_step_10_in_chromium_advances_10_physics_steps(browser, tmp_path, ros2_msgs):  # noqa
    proc = NodeProcess('denoc_sim_arm', ['--viewer-port', '0'])
    client = RosClient('panel_step_test')
    reader = ClockReader(client)
    page = None
    try:
        page = Page(browser, viewer_url(proc), str(tmp_path))
        page.wait_for_text('denoc_arm7')
        button(page, 'Pause').click()
        page.wait_for_text('paused')
        time.sleep(1.0)
        t = reader.t
        box = number_input(page, 'Steps')
        box.fill('10')
        button(page, 'Step').click()
        page.wait_for_text('stepped 10')
        # 10 steps of 1 ms (physics_rate 1000), once the clock's message is in; no more
        assert wait_for(lambda: reader.t - t >= 10 * 1_000_000, timeout=10.0), reader.t - t
        time.sleep(0.5)
        assert reader.t - t == 10 * 1_000_000
    finally:
        if page is not None:
            page.close()
        reader.stop()
        client.close()
        proc.stop()


def test_gripper_arm_panel_in_chromium(browser, tmp_path):  # noqa: F811
    proc = NodeProcess('denoc_sim_arm', ['--viewer-port', '0', '--urdf', 'denoc_arm7_gripper'])
    page = None
    try:
        page = Page(browser, viewer_url(proc), str(tmp_path))
        page.wait_for_text('denoc_arm7_gripper')
        for text in ('joint1', 'joint7', 'left_finger_joint', 'Gripper', 'Pause'):
            page.wait_for_text(text)
        # the gripper's buttons where the driver's action runs, its hint where not
        assert wait_for(lambda: 'gripper_cmd' in page.page.inner_text('body')
                        or button(page, 'Open').count() == 1, timeout=PAGE_TIMEOUT)
        assert 'right_finger_joint' not in page.page.inner_text('body')  # a mimic joint
        assert page.errors == [], page.errors
    finally:
        if page is not None:
            page.close()
        proc.stop()


def test_a_browser_closed_mid_drag_stops_the_push(browser, tmp_path):  # noqa: F811
    rig = Rig(sims=False)
    page = None
    try:
        listener = WrenchListener(rig.client, '/arm/sim_node/link_wrench')
        feel = rig.viewer.feel
        assert wait_for(lambda: (rig.graph_read(), feel.available)[1], timeout=20.0)
        page = Page(browser, rig.viewer.url, str(tmp_path))
        page.wait_for_text('Drag handle')
        clients = rig.viewer.server.get_clients()
        assert len(clients) == 1
        client_id = next(iter(clients))
        T = rig.viewer.link_pose(feel.link)
        drag(feel, 'start', T[:3, 3], client_id)
        drag(feel, 'update', T[:3, 3] + [0.0, 0.0, 0.1], client_id)
        assert wait_for(lambda: len(listener.messages) >= 2 and np.any(listener.force()),
                        timeout=10.0)
        page.close()
        page = None
        assert wait_for(lambda: feel.dragging is None, timeout=20.0)
        # one zero wrench, then nothing
        assert wait_for(lambda: not np.any(listener.force()), timeout=5.0), listener.force()
        count = len(listener.messages)
        time.sleep(0.5)
        assert len(listener.messages) == count
        assert not np.any(listener.force())
    finally:
        if page is not None:
            page.close()
        rig.close()


def test_bad_values_from_a_page_are_refused_or_clamped(rig):
    """A page may send anything: NaN is refused, a value beyond a limit clamped."""
    panel = rig.panel
    slider = panel.sliders['joint2']
    for value in (math.nan, math.inf):
        slide(panel, 'joint2', value)
    assert panel.rejected == 2
    slide(panel, 'joint2', 50.0)
    assert panel.targets['joint2'] == slider.max
    slide(panel, 'joint2', -50.0)
    assert panel.targets['joint2'] == slider.min
    for steps in (0, -5, 10 ** 9):
        panel._step(steps)
        assert 'Steps must be' in panel.sim_result.content
