"""
arm_viewer: a live 3D view of any robot in the browser, a small RViz without RViz.

The node reads the robot like the other nodes (the ``robot_description`` parameter,
else ``urdf_path``, else the transient-local ``robot_description`` topic; see
:mod:`.robot_model`) and ``joint_states`` (sensor-data QoS, joints by name), and serves
a web page that draws the robot and moves it.  The page is viser's three.js client;
the URDF is read by yourdfpy, so any URDF shows, not only the chains the dynamics core
accepts: visual geometry (primitives and meshes; ``package://`` resolved through the
ament index), and for links without any, a skeleton of capsules between the joints.

Both libraries are imported here only, when the node starts: the core and the other
nodes do not depend on them (``pip install viser``).

Parameters: ``port`` (0: any free port; a busy port: the next free one), ``host``,
``update_rate``.  The URL is logged at start.  Joint states may be partial (several
publishers, as joint_state_publisher allows): joints not in a message keep their last
position (initially zero, or the limit nearest to zero).
Messages with mismatched array lengths or a non-finite position of a robot joint are
rejected, counted and logged (throttled).
"""

import io
import math
import os
import sys
from typing import Dict, List

import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from .joint_io import Rejected
from .joint_io import Rejections
from .node_main import run_node
from .parameters import declare
from .robot_model import DescriptionSource
from ..core.urdf_xml import parse_xml

#: Colour of the skeleton drawn for links without visual geometry (RGB 0-255).
SKELETON_COLOR = (240, 140, 20)

#: Scene node under which the robot is drawn.
ROOT = '/robot'


def _import_viser():
    """Return (viser, ViserUrdf, yourdfpy, trimesh); RuntimeError says how to install."""
    try:
        import trimesh
        import viser
        from viser.extras import ViserUrdf
        import yourdfpy
    except ImportError as exc:
        raise RuntimeError(
            f'the browser view needs viser and yourdfpy ({exc}): '
            'pip install viser yourdfpy pycollada'
        ) from exc
    return viser, ViserUrdf, yourdfpy, trimesh


def package_filename_handler(yourdfpy, directory):
    """
    Return a yourdfpy filename handler that resolves ``package://`` through ament.

    ``package://pkg/path`` becomes ``<share of pkg>/path`` when the ament index knows
    ``pkg``; anything else goes to yourdfpy's own search relative to ``directory``.
    """
    from ament_index_python.packages import get_package_share_directory
    from ament_index_python.packages import PackageNotFoundError

    def handler(fname):
        if fname.startswith('package://'):
            package, _, rest = fname[len('package://'):].partition('/')
            try:
                candidate = os.path.join(get_package_share_directory(package), rest)
            except (PackageNotFoundError, ValueError):
                candidate = None
            if candidate and os.path.isfile(candidate):
                return candidate
        return yourdfpy.filename_handler_magic(fname, dir=directory)

    return handler


def read_urdf(yourdfpy, urdf, from_file: bool = False):
    """
    Read a URDF (XML, or a file path where ``from_file``) with yourdfpy, meshes included.

    XML is first read by the core's hardened parser
    (:func:`denoc_dynamics.core.urdf_xml.parse_xml`: no DTD, no entities, no XInclude,
    never a file path), so that yourdfpy only ever sees text that passed it.  Raise
    ValueError for a missing file, text that is not safe URDF XML, or a URDF yourdfpy
    cannot read.
    """
    if from_file:
        if not os.path.isfile(urdf):
            raise ValueError(f'no URDF file {urdf}')
        source, directory = urdf, os.path.dirname(os.path.abspath(urdf))
    else:
        parse_xml(urdf)
        data = urdf if isinstance(urdf, bytes) else urdf.encode('utf-8')
        source, directory = io.BytesIO(data), os.getcwd()
    try:
        model = yourdfpy.URDF.load(
            source, build_scene_graph=True, load_meshes=True,
            filename_handler=package_filename_handler(yourdfpy, directory))
    except Exception as exc:  # yourdfpy raises many kinds; the caller wants ValueError
        raise ValueError(f'yourdfpy cannot read the URDF: {exc}') from exc
    if model.scene is None or not model.link_map:
        raise ValueError('the URDF has no links')
    return model


def scene_path(scene, frame: str, root: str) -> str:
    """
    Return the viser node name of a URDF frame: ``root/<link>/<link>/.../frame``.

    The same naming as viser's ViserUrdf, whose joint nodes carry the link frames, so
    that anything added under this name moves with the link.
    """
    frames = []
    while frame != scene.graph.base_frame:
        frames.append(frame)
        frame = scene.graph.transforms.parents[frame]
    return '/'.join([root] + frames[::-1])


def skeleton_meshes(trimesh, urdf) -> Dict[str, object]:
    """
    Return, per link without visual geometry, a trimesh of its skeleton in its frame.

    A link's skeleton is a sphere at its origin and a capsule from there to the origin
    of each child joint, sized from the robot's extent, so that a URDF without any
    visual geometry still shows its kinematic structure.
    """
    scene = urdf.scene
    drawn = {scene.graph.transforms.parents[node] for node in scene.graph.nodes_geometry}
    offsets: Dict[str, List[np.ndarray]] = {name: [] for name in urdf.link_map}
    for joint in urdf.joint_map.values():
        origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin)
        offsets[joint.parent].append(origin[:3, 3])
    points = [scene.graph.get(name)[0][:3, 3] for name in urdf.link_map
              if name in scene.graph.nodes]
    extent = float(np.ptp(np.asarray(points), axis=0).max()) if points else 0.0
    radius = max(extent, 0.2) / 60.0
    meshes = {}
    for link, ends in offsets.items():
        if link in drawn:
            continue
        parts = [trimesh.creation.icosphere(subdivisions=2, radius=1.6 * radius)]
        for end in ends:
            if np.linalg.norm(end) > 1e-9:
                parts.append(trimesh.creation.cylinder(radius=radius,
                                                       segment=[np.zeros(3), end]))
        meshes[link] = trimesh.util.concatenate(parts)
    return meshes


class ArmViewer(Node):
    """Serve a web page with the robot of ``robot_description`` at ``joint_states``."""

    def __init__(self, **kwargs):
        """Declare the parameters, start the web server and load the robot."""
        super().__init__('arm_viewer', **kwargs)
        self._viser, self._ViserUrdf, self._yourdfpy, self._trimesh = _import_viser()
        port = declare(
            self, 'port', Parameter.Type.INTEGER, 8080,
            'TCP port of the web page; 0: any free port; if busy, the next free one',
            read_only=True, min_value=0, max_value=65535)
        host = declare(
            self, 'host', Parameter.Type.STRING, '127.0.0.1',
            "address the web server listens on; '0.0.0.0' to be reachable from other "
            'machines', read_only=True)
        update_rate = declare(
            self, 'update_rate', Parameter.Type.DOUBLE, 30.0,
            'most scene updates per second sent to the browser [Hz]', read_only=True,
            min_value=1.0, max_value=1000.0)
        self.rejections = Rejections(self.get_logger(), 'joint state')
        self.accepted = 0
        self.positions: Dict[str, float] = {}
        self._dirty = False
        self._urdf_view = None
        self._skeleton = []
        self.joint_names: List[str] = []
        self.server = self._viser.ViserServer(host=host, port=port, verbose=False)
        self.port = self.server.get_port()
        shown_host = 'localhost' if host in ('127.0.0.1', '0.0.0.0', '::', '') else host
        self.url = f'http://{shown_host}:{self.port}'
        self.subscription = self.create_subscription(
            JointState, 'joint_states', self._on_joint_states, qos_profile_sensor_data)
        self.create_timer(1.0 / update_rate, self._update_scene)
        try:
            # no share button: it would open a tunnel to viser's public relay
            self.server.gui.configure_theme(show_share_button=False)
            self.info = self.server.gui.add_markdown('waiting for the robot description')
            self.server.scene.set_up_direction('+z')  # ROS: z up
            self.server.scene.add_grid('/grid', width=2.0, height=2.0, cell_size=0.1,
                                       section_size=0.5)
            self.description = DescriptionSource(self, self._show)
        except BaseException:
            self.server.stop()
            raise
        self.get_logger().info(f'3D view of the robot: open {self.url} in a browser')

    # --- model -----------------------------------------------------------------------
    def _show(self, urdf: str, source: str, from_file: bool):
        """Replace the robot drawn by the one of ``urdf`` (XML, or a file ``from_file``)."""
        model = read_urdf(self._yourdfpy, urdf, from_file)
        self._remove_robot()
        self._urdf_view = self._ViserUrdf(self.server, model, root_node_name=ROOT)
        visual_root = f'{ROOT}/visual'
        for link, mesh in skeleton_meshes(self._trimesh, model).items():
            self._skeleton.append(self.server.scene.add_mesh_simple(
                f'{scene_path(model.scene, link, visual_root)}/skeleton',
                mesh.vertices, mesh.faces, color=SKELETON_COLOR))
        self.joint_names = list(self._urdf_view.get_actuated_joint_names())
        for name, (lower, upper) in self._urdf_view.get_actuated_joint_limits().items():
            if name not in self.positions:  # zero, or the limit nearest to it
                self.positions[name] = min(max(0.0, -math.inf if lower is None else lower),
                                           math.inf if upper is None else upper)
        self._look_at(model)
        self.draw()
        self.info.content = (f'**{model.robot.name}**: {len(model.link_map)} links, '
                             f'{len(self.joint_names)} moving joints  \n'
                             f'joint states: `{self.subscription.topic_name}`')
        self.get_logger().info(
            f'showing {model.robot.name!r} from {source}: {len(model.link_map)} links, '
            f'{len(self.joint_names)} moving joints')
        return model

    def _look_at(self, model):
        """Aim the initial camera at the robot, from a distance fitting its size."""
        bounds = model.scene.bounds if model.scene.geometry else None
        if bounds is None or not np.all(np.isfinite(bounds)):
            points = np.array([model.scene.graph.get(name)[0][:3, 3]
                               for name in model.link_map if name in model.scene.graph.nodes])
            bounds = np.array([points.min(axis=0), points.max(axis=0)])
        centre = 0.5 * (bounds[0] + bounds[1])
        size = max(float(np.linalg.norm(bounds[1] - bounds[0])), 0.3)
        self.server.initial_camera.look_at = tuple(centre)
        self.server.initial_camera.position = tuple(centre + size * np.array([1.2, 1.0, 0.6]))

    def _remove_robot(self):
        for handle in self._skeleton:
            handle.remove()
        self._skeleton = []
        if self._urdf_view is not None:
            self._urdf_view.remove()
            self._urdf_view = None

    # --- joint states ----------------------------------------------------------------
    def _on_joint_states(self, msg):
        try:
            self.positions.update(self.read(msg))
        except Rejected as exc:
            self.rejections.add(exc)
            return
        self.accepted += 1
        self._dirty = True
        if self.accepted == 1:
            self.get_logger().info(f'receiving {self.subscription.topic_name}')

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
        if self._dirty and self._urdf_view is not None and self.server.get_clients():
            self.draw()

    def draw(self):
        """Move the drawn robot to the latest joint positions."""
        self._dirty = False
        self._urdf_view.update_cfg(self.configuration())

    def destroy_node(self):
        """Stop the web server, then destroy the node."""
        server, self.server = getattr(self, 'server', None), None
        if server is not None:
            server.stop()
        return super().destroy_node()


def start_viewer(parameter_overrides, port):
    """
    Return ``[ArmViewer]`` on ``port`` for a composed process (denoc_sim_arm).

    Return ``[]`` with a warning on stderr where the viewer cannot start (viser not
    installed, a URDF yourdfpy cannot read): the rest runs without the 3D view.
    """
    overrides = list(parameter_overrides) + [Parameter('port', Parameter.Type.INTEGER,
                                                       int(port))]
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
