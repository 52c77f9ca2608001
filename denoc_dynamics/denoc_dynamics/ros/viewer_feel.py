"""
What the arm feels, in the browser view: wrench arrows and a drag handle that pushes.

Arrows
  Every WrenchStamped topic the simulator publishes under ``~/ft/`` (its simulated
  force/torque sensors) and dynamics_node's ``~/external_wrench`` (the estimated
  external wrench) is drawn at the origin of its ``header.frame_id`` link: the force
  as an arrow (``arrow_scale`` metres per newton), the torque as a thinner one
  (``arrow_scale`` metres per newton-metre), rotated from the link's frame to the
  base frame with the drawn pose.  A reading older than a second is hidden.
Drag
  A handle (viser's transform controls) sits on the end effector (``drag_link``,
  default the tip: the deepest link, or where the deepest links branch, e.g. a
  gripper's hand).  Dragging it away by d pulls the link with the spring force
  f = k d (``drag_stiffness`` k, at most ``drag_max_force``), as MuJoCo's viewer
  perturbs a body: the wrench (f, 0) at the link's origin in the link's frame,
  R^T f, published on the simulator's ``~/link_wrench`` (WrenchStamped,
  ``frame_id`` the link) ten times a second while the drag lasts, since the
  simulator holds a wrench for a timeout only.  On release, or when the dragging
  browser goes away, one zero wrench is sent and publishing stops; a browser closed
  without a word leaves the simulator's timeout to end the push.
"""

import threading
import time
from typing import Dict, Optional

from geometry_msgs.msg import WrenchStamped
import numpy as np

#: A reading older than this [s] is not drawn.
STALE = 1.0
FORCE_COLOR = (220, 40, 40)
TORQUE_COLOR = (40, 90, 220)
ESTIMATE_COLOR = (200, 0, 200)


def tip_link(tree) -> str:
    """Return the deepest link, or the link where the deepest links branch (a hand)."""
    depth = np.zeros(len(tree.links), dtype=int)
    for i in range(1, len(tree.links)):
        depth[i] = depth[tree.parent[i]] + 1
    deepest = [i for i in range(len(depth)) if depth[i] == depth.max()]
    while len(set(deepest)) > 1:        # climb to the common ancestor
        deepest = [tree.parent[i] for i in deepest]
    return tree.links[deepest[0]]


def _vector(v) -> np.ndarray:
    return np.array([v.x, v.y, v.z], dtype=float)


class Feel:
    """The arrows and the drag handle; :meth:`tick` runs in the executor."""

    def __init__(self, viewer, names, settings):
        """Subscribe to the wrenches found by the panel's graph; add the handle."""
        self.viewer = viewer
        self.server = viewer.server
        self.names = names
        self.settings = settings
        self.readings: Dict[str, tuple] = {}    # topic -> (time, msg, colour)
        self.subscriptions: Dict[str, object] = {}
        self.arrows = None
        self._arrows_shown = None    # (points rounded, colours) of the arrows sent
        self.link = None
        self.handle = None
        self.dragging: Optional[int] = None     # id of the client that drags
        self.offset = np.zeros(3)
        self.force = np.zeros(3)
        self.wrench_pub = viewer.create_publisher(WrenchStamped, names.link_wrench, 10)
        self.pushes = 0
        self.lock = threading.Lock()   # the browser's events against the executor's tick
        gui = self.server.gui
        self.folder = gui.add_folder('Forces', order=4.5)
        with self.folder:
            self.hint = gui.add_markdown('')
            self.drag_enabled = gui.add_checkbox(
                'Drag handle', True, hint='drag the end effector to push the arm')
            self.push_text = gui.add_markdown('')
        self.drag_enabled.on_update(lambda event: self._show_handle())
        self.server.on_client_disconnect(self._on_disconnect)

    # --- the robot -------------------------------------------------------------------
    def set_model(self, model):
        """Put the handle on the end effector of ``model``."""
        tree = model.tree
        wanted = self.settings['drag_link']
        self.link = wanted if wanted in tree.index else tip_link(tree)
        if self.handle is None:
            self.handle = self.server.scene.add_transform_controls(
                '/drag', scale=0.15, disable_rotations=True, disable_sliders=True,
                depth_test=False, visible=False)
            self.handle.on_update(self._on_drag)
        self.follow_link()

    def _link_pose(self) -> np.ndarray:
        return self.viewer.link_pose(self.link)

    def follow_link(self, poses=None):
        """Put the handle where the link is (not while dragged); ``poses`` as drawn."""
        if self.handle is None or self.dragging is not None:
            return
        T = (self._link_pose() if poses is None
             else poses[self.viewer.model.tree.index[self.link]])
        self.handle.position = tuple(float(c) for c in T[:3, 3])

    # --- the drag --------------------------------------------------------------------
    def _on_drag(self, event):
        if event.phase == 'end':
            self.release()
            return
        offset = np.asarray(event.target.position, dtype=float) - self._link_pose()[:3, 3]
        with self.lock:
            self.dragging = event.client_id
            self.offset = offset

    def release(self):
        """End the push: one zero wrench, and the handle back on the link."""
        with self.lock:
            if self.dragging is None:
                return
            self.dragging = None
            self.offset = np.zeros(3)
            self.publish(np.zeros(3))
        self.push_text.content = ''
        self.follow_link()

    def _on_disconnect(self, client):
        if self.dragging is not None and client.client_id == self.dragging:
            self.release()

    def _show_handle(self):
        if self.handle is not None:
            self.handle.visible = bool(self.drag_enabled.value and self.available)
        if not self.drag_enabled.value:
            self.release()

    def spring_force(self) -> np.ndarray:
        """Return the spring force k d of the drag [N, base frame], capped."""
        force = float(self.settings['drag_stiffness']) * self.offset
        norm = float(np.linalg.norm(force))
        limit = float(self.settings['drag_max_force'])
        return force * (limit / norm) if norm > limit else force

    def publish(self, force):
        """Publish ``force`` (base frame) at the link's origin, in the link's frame."""
        R = self._link_pose()[:3, :3]
        f = R.T @ np.asarray(force, dtype=float)
        msg = WrenchStamped()
        msg.header.frame_id = self.link
        msg.header.stamp = self.viewer.get_clock().now().to_msg()
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(c) for c in f)
        self.wrench_pub.publish(msg)
        self.pushes += 1
        self.force = np.asarray(force, dtype=float)

    # --- the arrows ------------------------------------------------------------------
    def _on_wrench(self, topic, colour, msg):
        self.readings[topic] = (time.monotonic(), msg, colour)

    def _subscribe(self, topics):
        for topic, colour in topics.items():
            if topic not in self.subscriptions:
                self.subscriptions[topic] = self.viewer.create_subscription(
                    WrenchStamped, topic,
                    lambda msg, t=topic, c=colour: self._on_wrench(t, c, msg), 10)

    def arrow_points(self):
        """Return (N x 2 x 3 points, N x 3 colours) of the fresh readings' arrows."""
        now = time.monotonic()
        scale = float(self.settings['arrow_scale'])
        tree = self.viewer.model.tree if self.viewer.model is not None else None
        points, colours = [], []
        if tree is None:
            return np.zeros((0, 2, 3)), np.zeros((0, 3))
        poses = None
        for topic, (stamp, msg, colour) in sorted(self.readings.items()):
            link = msg.header.frame_id
            if now - stamp > STALE or link not in tree.index:
                continue
            if poses is None:
                poses = tree.poses(self.viewer.configuration())
            T = poses[tree.index[link]]
            origin = T[:3, 3]
            for vector, c in ((_vector(msg.wrench.force), colour),
                              (_vector(msg.wrench.torque), TORQUE_COLOR)):
                if np.all(np.isfinite(vector)) and np.linalg.norm(vector) > 1e-9:
                    points.append((origin, origin + scale * (T[:3, :3] @ vector)))
                    colours.append(c)
        if self.dragging is not None:
            origin = self._link_pose()[:3, 3]
            points.append((origin, origin + self.offset))
            colours.append((255, 160, 0))
        return (np.array(points, dtype=float).reshape(-1, 2, 3),
                np.array(colours, dtype=np.uint8).reshape(-1, 3))

    def draw_arrows(self):
        """
        Replace the arrows by those of the fresh readings (none: removed).

        Arrows that moved less than a millimetre (points rounded) are not sent again.
        """
        points, colours = self.arrow_points()
        shown = (np.round(points, 3).tobytes(), colours.tobytes())
        if shown == self._arrows_shown:
            return
        self._arrows_shown = shown
        if len(points) == 0:
            if self.arrows is not None:
                self.arrows.remove()
                self.arrows = None
            return
        if self.arrows is not None:
            self.arrows.remove()
        self.arrows = self.server.scene.add_arrows(
            '/wrenches', points, colours, shaft_radius=0.006, head_radius=0.015,
            head_length=0.03)

    # --- the periodic part -----------------------------------------------------------
    @property
    def available(self) -> bool:
        """Return True while the simulator listens to ``~/link_wrench``."""
        return getattr(self, '_available', False)

    def refresh(self, graph):
        """Subscribe to new wrench topics; show the handle if ``~/link_wrench`` exists."""
        names = self.names
        topics = {t: FORCE_COLOR for t in graph.topics_under(
            names.ft_prefix, 'geometry_msgs/msg/WrenchStamped')}
        if graph.published(names.external_wrench):
            topics[names.external_wrench] = ESTIMATE_COLOR
        self._subscribe(topics)
        available = graph.subscribed(names.link_wrench)
        if available != self.available:
            self._available = available
            self._show_handle()
        missing = []
        if not available:
            missing.append(f'no drag: nobody listens to `{names.link_wrench}`')
        if not topics:
            missing.append(f'no wrench arrows: no `{names.ft_prefix}*` nor '
                           f'`{names.external_wrench}`')
        text = '  \n'.join(missing)
        if self.hint.content != text:
            self.hint.content = text
        self.drag_enabled.visible = available

    def tick(self):
        """Publish the drag's wrench (10 Hz, while dragging) and redraw the arrows."""
        with self.lock:
            force = self.spring_force() if self.dragging is not None else None
            if force is not None and self.available:
                self.publish(force)
        if force is not None:
            self.push_text.content = (f'pushing `{self.link}` with '
                                      f'{np.linalg.norm(force):.1f} N')
        if self.readings or self.arrows is not None or self.dragging is not None:
            self.draw_arrows()
