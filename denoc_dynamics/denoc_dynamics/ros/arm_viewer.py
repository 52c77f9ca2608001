"""
arm_viewer: a live 3D view of any robot in the browser, a small RViz without RViz.

The node reads the robot like the other nodes (the ``robot_description`` parameter,
else ``urdf_path``, else the transient-local ``robot_description`` topic; see
:mod:`.robot_model`) and ``joint_states`` (sensor-data QoS, joints by name), and serves
a web page that draws the robot and moves it.  The page is viser's three.js client;
the URDF's visuals are read by yourdfpy, so any URDF shows, chains and trees, not only
the chains the dynamics core accepts: visual geometry (primitives and meshes), and for
links without any, a skeleton of spheres and rods between the joints
(:mod:`.viewer_model`, :mod:`.viewer_scene`: O(n) in the links).

Both libraries are imported here only, when the node starts: the core and the other
nodes do not depend on them (``pip install viser``).

The page is also the arm's control panel (:mod:`.viewer_panel`: play, pause, step,
reset, joint sliders, the gripper, the payload; :mod:`.viewer_plots`: live plots;
:mod:`.viewer_feel`: wrench arrows and a drag handle that pushes the arm), each
control shown only while what it drives exists, in the viewer's namespace.

Parameters: ``port`` (0: any free port; a busy port: the next free one),
``viewer_host`` (default 127.0.0.1: this machine only; ``0.0.0.0`` opens the page,
and so the arm's controls, to the network, which the log says), ``update_rate``,
``max_dof`` (a description with more joints is refused in one log line),
``mesh_directories`` (see :mod:`.mesh_files`: which mesh files a description
may name).  The URL is logged at start.  Joint states may be partial (several
publishers, as joint_state_publisher allows): joints not in a message keep their last
position (initially zero, or the limit nearest to zero).
Messages with mismatched array lengths or a non-finite position of a robot joint are
rejected, counted and logged (throttled).

A description from the topic is read and its scene built in a thread of its own
(:class:`SceneBuilder`): the executor keeps serving joint states and signals, a newer
description replaces one still being built, the robot shown stays until the new one
is ready, and a shutdown stops the build at its next link.
"""


import math
import os
import sys
import threading
import time
from typing import Dict, List

from denoc_dynamics_interfaces.msg import TrajectoryControllerState
import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from .diagnostics import Diagnostics
from .diagnostics import STALE
from .joint_io import Rejected
from .joint_io import Rejections
from .mesh_files import MeshFiles
from .node_main import run_node
from .parameters import ARM_VIEWER
from .parameters import PANEL
from .robot_model import DescriptionSource
from .viewer_feel import Feel
from .viewer_links import Names
from .viewer_model import read_description
from .viewer_model import ViewerModel
from .viewer_panel import ControlPanel
from .viewer_plots import Plots
from .viewer_scene import RobotView
from .viewer_scene import SKELETON_COLOR  # noqa: F401 (the colour the tests look for)

#: Scene node under which the robots are drawn (each under a child of its own).
ROOT = '/robot'


def _import_viser():
    """Return (viser, yourdfpy, trimesh); RuntimeError says how to install them."""
    try:
        import trimesh
        import viser
        import yourdfpy
    except ImportError as exc:
        raise RuntimeError(
            f'the browser view needs viser and yourdfpy ({exc}): '
            'pip install viser yourdfpy pycollada'
        ) from exc
    return viser, yourdfpy, trimesh


class SceneBuilder:
    """
    A thread that builds the scene of the latest robot description submitted.

    ``build(job, cancelled)`` runs in the thread; ``cancelled()`` turns true when a
    newer job is submitted or :meth:`stop` is called, and the build gives up between
    two links.  Only the latest job waits: a flood of descriptions costs one build.
    """

    def __init__(self, build):
        """Start the (daemon) thread."""
        self._build = build
        self._condition = threading.Condition()
        self._job = None
        self._busy = False
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name='arm_viewer scene',
                                        daemon=True)
        self._thread.start()

    def submit(self, job):
        """Build ``job`` next, giving up the build under way."""
        with self._condition:
            self._job = job
            self._condition.notify_all()

    def cancelled(self) -> bool:
        """Return True if the build under way should give up."""
        return self._stopped or self._job is not None

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every job submitted is built; return False on timeout."""
        with self._condition:
            return self._condition.wait_for(
                lambda: self._job is None and not self._busy, timeout=timeout)

    def stop(self, timeout: float = 0.5):
        """Stop the thread: the build under way gives up at its next link."""
        with self._condition:
            self._stopped = True
            self._condition.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """Return True while the thread runs."""
        return self._thread.is_alive()

    def _run(self):
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._stopped or self._job is not None)
                if self._stopped:
                    return
                job, self._job, self._busy = self._job, None, True
            try:
                self._build(job, self.cancelled)
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()


class ArmViewer(Node):
    """Serve a web page with the robot of ``robot_description`` at ``joint_states``."""

    accepted = 0
    model = builder = None
    _view = _pending = None        # the robot shown; a description before the builder
    _dirty = False
    _generation = 0
    _constructing = True

    def __init__(self, **kwargs):
        """Declare the parameters, start the web server and load the robot."""
        super().__init__('arm_viewer', **kwargs)
        self._viser, self._yourdfpy, self._trimesh = _import_viser()
        self.params = params = ARM_VIEWER.declare(self)
        self.max_dof, self.mesh_directories = params.max_dof, params.mesh_directories
        self.panel_settings = {name: params[name] for name in PANEL.entries}
        self.rejections = Rejections(self.get_logger(), 'joint state')
        self.positions: Dict[str, float] = {}
        self._lock = threading.Lock()   # the scene thread (SceneBuilder) against the executor
        self.joint_names: List[str] = []
        self.server = self._viser.ViserServer(host=params.viewer_host, port=params.port,
                                              verbose=False)
        self.port = self.server.get_port()
        try:
            self.subscription = self.create_subscription(
                JointState, 'joint_states', self._on_joint_states, qos_profile_sensor_data)
            self.create_timer(1.0 / params.update_rate, self._update_scene)
            self._set_up_scene()
            self._add_panel()
            self.builder = SceneBuilder(self._build)
            self.description = DescriptionSource(self, self._on_description)
            self.mesh_files = MeshFiles(self.get_parameter('urdf_path').value,
                                        self.mesh_directories)
            self._constructing = False
            if self._pending is not None:
                self.builder.submit(self._pending)
        except BaseException:
            if self.builder is not None:
                self.builder.stop()
            self.server.stop()
            raise
        self._announce(params.viewer_host)
        self.diagnostics = Diagnostics(self)
        self.diagnostics.add('view', self._diagnose_view)

    def _set_up_scene(self):
        """Set the page's theme, the up direction (ROS: z) and the grid."""
        # no share button: it would open a tunnel to viser's public relay
        self.server.gui.configure_theme(show_share_button=False)
        self.info = self.server.gui.add_markdown('waiting for the robot description')
        self.server.scene.set_up_direction('+z')  # ROS: z up
        self.server.scene.add_grid('/grid', width=2.0, height=2.0, cell_size=0.1,
                                   section_size=0.5)

    def _announce(self, host):
        """Log the page's address, and who may drive the robot from it."""
        shown_host = 'localhost' if host in ('127.0.0.1', '0.0.0.0', '::', '') else host
        self.url = f'http://{shown_host}:{self.port}'
        self.get_logger().info(f'3D view of the robot: open {self.url} in a browser')
        if host in ('127.0.0.1', 'localhost', '::1'):
            self.get_logger().info('the page (and its controls) is served on this machine '
                                   'only; viewer_host:=0.0.0.0 opens it to the network')
        else:
            self.get_logger().warning(
                f'the page is served on {host}: anyone who reaches port {self.port} '
                f'drives the robot in {self.names.namespace}')

    def _diagnose_view(self, report):
        """/diagnostics ``arm_viewer: view``: the page, the robot shown, the joint states."""
        report.add('url', self.url)
        report.add('joint states accepted', self.accepted)
        report.counter('joint states rejected', self.rejections)
        if self.model is None:
            report.summary(STALE, 'no robot shown yet')

    def _add_panel(self):
        """Add the control panel, the plots and the forces; their timer (10 Hz)."""
        settings = self.panel_settings
        try:
            self.names = Names(self.get_namespace(), settings['sim_node'],
                               settings['trajectory_controller'], settings['dynamics_node'],
                               settings['gripper_action'], settings['joint_commands_topic'])
        except ValueError as exc:
            raise RuntimeError(str(exc)) from exc
        settings['tip'] = settings['drag_link']
        self.panel = ControlPanel(self, self.names, settings)
        self.plots = Plots(self.server, settings['plot_window'], settings['plot_directory'],
                           self.get_logger())
        self.feel = Feel(self, self.names, settings)
        # raw: the controller's status comes with every command (100 Hz and more), and
        # its deserialization costs 0.3 ms; only the samples the plot keeps are read
        self.create_subscription(TrajectoryControllerState, self.names.controller_status,
                                 self._on_controller_status, 10, raw=True)
        self.create_subscription(JointState, self.names.external_torques,
                                 self._on_external_torques, 10, raw=True)
        self._last_plot = -math.inf
        self.create_timer(0.1, self._panel_tick)

    def _panel_tick(self):
        """Do the panel's periodic work (it never waits on a browser)."""
        graph_read = self.panel._last_graph
        self.panel.tick()
        if self.panel._last_graph != graph_read:
            self.feel.refresh(self.panel.graph)
        if self.server.get_clients():
            self.feel.tick()
            now = time.monotonic()
            if now - self._last_plot >= 1.0:   # the charts once a second
                self._last_plot = now
                self.plots.update()
        elif self.feel.dragging is not None:
            self.feel.release()

    def _on_controller_status(self, data):
        if self.panel.controller_joints is not None and \
                not self.plots.traces['error'].due(time.monotonic()):
            return
        msg = deserialize_message(data, TrajectoryControllerState)
        self.panel.on_controller_status(msg)
        if msg.trajectory_active and len(msg.error.positions) == len(msg.joint_names):
            self.plots.add('error', msg.joint_names, msg.error.positions)

    def _on_external_torques(self, data):
        # raw, as the controller's status: one estimate per joint state (1 kHz and
        # more), and only the samples the plot keeps are read
        now = time.monotonic()
        if not self.plots.traces['external'].due(now):
            return
        msg = deserialize_message(data, JointState)
        if len(msg.effort) == len(msg.name) and all(map(math.isfinite, msg.effort)):
            self.plots.add('external', msg.name, msg.effort, now)

    # --- model -----------------------------------------------------------------------
    def _on_description(self, urdf: str, source: str, from_file: bool):
        """
        Take a URDF (XML, or a file ``from_file``) to show; the scene is built in a thread.

        At construction (the parameters) the description is read here, so that a bad
        one raises ValueError; one from the topic is read in the thread too.
        """
        if from_file:
            if not os.path.isfile(urdf):
                raise ValueError(f'no URDF file {urdf}')
            with open(urdf, 'rb') as stream:
                urdf = stream.read()
        if self._constructing:  # the mesh rules are known once the parameters are
            self._pending = read_description(self._yourdfpy, urdf, source, self.max_dof)
            return self._pending
        self.builder.submit((urdf, source))
        return None

    def _build(self, job, cancelled):
        """Read (if needed) and build the robot of ``job``, then show it (in the thread)."""
        try:
            self._build_and_show(job, cancelled)
        except Exception as exc:  # the thread must outlive any description
            self.get_logger().error(f'cannot show the robot description: {exc!r}')

    def _build_and_show(self, job, cancelled):
        if isinstance(job, ViewerModel):
            model = job
        else:
            urdf, source = job
            self.get_logger().info(f'reading the robot description from {source} '
                                   f'({len(urdf)} characters)')
            try:
                model = read_description(self._yourdfpy, urdf, source, self.max_dof)
            except ValueError as exc:
                self.get_logger().error(
                    f'ignoring the robot description from {source}: {exc}')
                return
        if cancelled():
            return
        self._generation += 1
        view = RobotView(self.server, self._trimesh, model, f'{ROOT}/{self._generation}')
        try:
            for _ in view.build(self.mesh_files):
                if cancelled():
                    view.remove()
                    return
        except Exception as exc:
            view.remove()
            self.get_logger().error(f'ignoring the robot description from {model.source}: '
                                    f'{exc}')
            return
        self._swap(view)

    def _swap(self, view):
        """Show ``view`` in place of the robot shown so far."""
        model = view.model
        for name in model.joint_names:
            if name not in self.positions:  # zero, or the limit nearest to it
                lower, upper = model.tree.limits[name]
                self.positions[name] = min(max(0.0, -math.inf if lower is None else lower),
                                           math.inf if upper is None else upper)
        with self._lock:
            old = self._view
            self.joint_names = list(model.joint_names)
            self._dirty = False
            with self.server.atomic():
                world = view.draw(self.configuration())
                view.show()
                if old is not None:
                    old.remove()
            self._view, self.model = view, model
        centre, size = view.look_at(world)
        self.server.initial_camera.look_at = tuple(centre)
        self.server.initial_camera.position = tuple(centre + size * np.array([1.2, 1.0, 0.6]))
        shown = ' '.join(model.name.replace('`', "'").split()) or 'unnamed'  # no markdown
        self.panel.set_model(model, self.positions)
        self.feel.set_model(model)
        self.info.content = (f'`{shown}`: {len(model.tree)} links, '
                             f'{len(self.joint_names)} moving joints  \n'
                             f'joint states: `{self.subscription.topic_name}`')
        if view.problems:
            more = len(view.problems) - 3
            self.get_logger().warning(
                f'{len(view.problems)} visuals of {model.name!r} not drawn (their links are '
                'drawn as a skeleton): ' + '; '.join(view.problems[:3])
                + (f'; and {more} more' if more > 0 else ''))
        self.get_logger().info(
            f'showing {model.name!r} from {model.source}: {len(model.tree)} links, '
            f'{len(self.joint_names)} moving joints')

    def wait_shown(self, timeout: float = 60.0) -> bool:
        """Wait until every description received is built (and shown, if good)."""
        return self.builder.wait_idle(timeout)

    # --- joint states ----------------------------------------------------------------
    def _on_joint_states(self, msg):
        try:
            self.positions.update(self.read(msg))
        except Rejected as exc:
            self.rejections.add(exc)
            return
        self.accepted += 1
        self._dirty = True
        self._plot_joint_state(msg)
        if self.accepted == 1:
            self.get_logger().info(f'receiving {self.subscription.topic_name}')

    def _plot_joint_state(self, msg):
        """Add the state's positions and efforts of the drawn joints to the plots."""
        plots = self.plots
        now = time.monotonic()
        if not plots.traces['position'].due(now):
            return                       # a plot needs 20 samples a second, not 100
        names = self.joint_names
        if not names:
            return
        where = {name: k for k, name in enumerate(msg.name)}
        if not all(name in where for name in names):
            return                       # a partial state: plotted when complete
        index = [where[name] for name in names]
        plots.add('position', names, [msg.position[k] for k in index], now)
        if len(msg.effort) == len(msg.name):
            plots.add('effort', names, [msg.effort[k] for k in index], now)

    def read(self, msg) -> Dict[str, float]:
        """Return {joint name: position} of the robot's joints in ``msg``, or raise Rejected."""
        if len(msg.position) != len(msg.name):
            raise Rejected('length', f'{len(msg.position)} positions for '
                                     f'{len(msg.name)} names')
        known = set(self.joint_names) if self.joint_names else None
        positions = {}
        for name, value in zip(msg.name, msg.position):
            if known is not None and name not in known:
                continue  # another robot's joint, or a fixed one: not drawn
            if not math.isfinite(value):
                raise Rejected('non-finite', f'position of {name} is {value}')
            if name in positions:  # as the dynamics nodes: no silent choice of a value
                raise Rejected('duplicate joint', f'joint {name!r} is named twice')
            positions[name] = float(value)
        return positions

    def configuration(self) -> np.ndarray:
        """Return the joint positions in the order of the drawn robot's moving joints."""
        return np.array([self.positions.get(name, 0.0) for name in self.joint_names])

    def _update_scene(self):
        # Nobody watching, nothing to draw: the forward kinematics of a scene update
        # takes 3 ms on the 7-DOF arm, 9% of a core at 30 Hz in the simulated arm's
        # process.  The first tick after a browser connects draws the latest pose.
        if self._dirty and self._view is not None and self.server.get_clients():
            self.draw()

    def draw(self):
        """Move the drawn robot to the latest joint positions; return its link poses."""
        with self._lock:
            self._dirty = False
            if self._view is None:
                return None
            with self.server.atomic():    # one batch of messages: half the CPU of a draw
                poses = self._view.draw(self.configuration())
        self.feel.follow_link(poses)
        return poses

    def link_pose(self, link: str) -> np.ndarray:
        """Return the 4x4 pose of ``link`` in the root frame, as last drawn."""
        with self._lock:
            return self._view.model.tree.poses(self.configuration())[
                self._view.model.tree.index[link]]

    def destroy_node(self):
        """Stop the scene thread and the web server, then destroy the node."""
        builder, self.builder = getattr(self, 'builder', None), None
        if builder is not None:
            builder.stop()
        server, self.server = getattr(self, 'server', None), None
        if server is not None:
            server.stop()
        return super().destroy_node()


def start_viewer(parameter_overrides, port, host='127.0.0.1'):
    """
    Return ``[ArmViewer]`` on ``host``:``port`` for a composed process (denoc_sim_arm).

    Return ``[]`` with a warning on stderr where the viewer cannot start (viser not
    installed, a URDF yourdfpy cannot read): the rest runs without the 3D view.
    """
    overrides = list(parameter_overrides) + [
        Parameter('port', Parameter.Type.INTEGER, int(port)),
        Parameter('viewer_host', Parameter.Type.STRING, str(host))]
    try:
        return [ArmViewer(parameter_overrides=overrides)]
    except RuntimeError as exc:
        print(f'no 3D view: {exc}', file=sys.stderr, flush=True)
        return []


def main(args=None):
    """Run the arm_viewer node until Ctrl-C; return the exit code."""
    return run_node(ArmViewer, 'arm_viewer', args=args)


if __name__ == '__main__':
    sys.exit(main())
