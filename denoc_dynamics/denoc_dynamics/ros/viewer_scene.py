"""
The viser scene of one robot for arm_viewer, built step by step in O(n).

:class:`RobotView` puts a robot under a root node of its own, hidden while it is
built, so that the robot shown before stays until the new one is ready.  The scene is
flat: every visual is one node directly under the root, posed in the root frame by
:meth:`KinematicTree.poses`, and the skeleton (a sphere at each link without visual
geometry and a rod to each of its child joints) is two batched meshes whatever the
number of links.  Node names therefore have a bounded length (a nested name per link,
``root/link1/link2/...``, grows with the depth of the tree), and replacing the robot
removes one node, its root.

:meth:`RobotView.build` is a generator that yields after each link, so that the
caller can give up between two links (a newer description, a shutdown).
"""

import io
from typing import List

import numpy as np

from .mesh_files import MeshRefused
from .viewer_model import quaternions
from .viewer_model import rotations
from .viewer_model import shorten

#: Decimals of the poses sent to the browser (positions in m, unit quaternions): a
#: change below a micrometre or 1e-6 rad is not sent again (the browser draws in
#: float32: about as fine).
DECIMALS = 6

#: Colour of the skeleton drawn for links without visual geometry (RGB 0-255).
SKELETON_COLOR = (240, 140, 20)

#: Colour of visual geometry without a material (RGB 0-255).
DEFAULT_COLOR = (200, 200, 200)


def _pose_vectors(T: np.ndarray):
    """Return (positions (m, 3), quaternions wxyz (m, 4)) of the (m, 4, 4) poses ``T``."""
    return T[:, :3, 3], quaternions(T[:, :3, :3])


def _align_z(directions: np.ndarray) -> np.ndarray:
    """Return (m, 3, 3) rotations that turn +z into each unit direction (m, 3)."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, directions)
    sine = np.linalg.norm(axis, axis=-1)
    cosine = directions @ z
    angle = np.arctan2(sine, cosine)
    unit = np.where(sine[:, None] > 1e-12, axis / np.maximum(sine, 1e-300)[:, None],
                    np.array([1.0, 0.0, 0.0]))  # parallel or opposite: about x
    return rotations(unit, angle)


class RobotView:
    """
    The viser nodes of one robot under the root node ``name`` (hidden until shown).

    ``problems`` lists, after :meth:`build`, the visuals not drawn and why (a mesh
    not allowed or unreadable); their links are drawn as skeletons.
    """

    def __init__(self, server, trimesh, model, name: str):
        """Create the hidden root node of ``model`` (a ViewerModel) in ``server``."""
        self.server = server
        self.trimesh = trimesh
        self.model = model
        self.name = name
        self.root = server.scene.add_frame(name, show_axes=False, visible=False)
        self.problems: List[str] = []
        self.visuals = []                # viser handles of the visual parts
        self.visual_link: List[int] = []  # link index of each
        self.visual_local: List[np.ndarray] = []  # pose of each in its link's frame
        self.bounds: List[np.ndarray] = []  # (2, 3) bounds of each, in its own frame
        self.spheres = self.rods = None
        self._last = None

    # --- building ----------------------------------------------------------------
    def build(self, files):
        """Add the visuals (meshes opened through ``files``), then the skeleton; a generator."""
        tree = self.model.tree
        links = {link.name: link for link in self.model.robot.links}
        drawn = np.zeros(len(tree), dtype=bool)
        cache = {}
        for i, name in enumerate(tree.links):
            for visual in links[name].visuals:
                if self._add_visual(i, name, visual, files, cache):
                    drawn[i] = True
            yield
        self._add_skeleton(~drawn)
        yield

    def _add_visual(self, index, link, visual, files, cache) -> bool:
        geometry = visual.geometry
        if geometry is None:
            return False
        what = (f'mesh {shorten(geometry.mesh.filename)!r}' if geometry.mesh is not None
                else 'geometry')
        try:
            parts = self._geometry(geometry, files, cache)
        except (MeshRefused, OSError, ValueError) as exc:
            self.problems.append(f'link {link!r} {what}: {exc}')
            return False
        except Exception as exc:  # trimesh's loaders raise many kinds for a bad file
            self.problems.append(f'link {link!r} {what}: unreadable ({type(exc).__name__})')
            return False
        local = np.eye(4) if visual.origin is None else np.asarray(visual.origin, float)
        if not np.all(np.isfinite(local)):
            raise ValueError(f'link {link!r}: non-finite <visual><origin>')
        color = self._color(visual)
        for part in parts:
            node = f'{self.name}/v{len(self.visuals)}'
            if color is None:
                handle = self.server.scene.add_mesh_trimesh(node, part)
            else:
                handle = self.server.scene.add_mesh_simple(
                    node, part.vertices, part.faces, color=tuple(int(255 * c) for c in
                                                                 color[:3]),
                    opacity=float(color[3]) if color[3] < 1.0 else None)
            self.visuals.append(handle)
            self.visual_link.append(index)
            self.visual_local.append(local)
            self.bounds.append(np.asarray(part.bounds, dtype=float))
        return bool(parts)

    def _geometry(self, geometry, files, cache):
        """Return the trimeshes of a URDF ``<geometry>`` in the visual's frame."""
        trimesh = self.trimesh
        if geometry.box is not None:
            return [trimesh.creation.box(extents=_sizes(geometry.box.size, 3, 'box'))]
        if geometry.sphere is not None:
            radius = _sizes([geometry.sphere.radius], 1, 'sphere radius')[0]
            return [trimesh.creation.icosphere(subdivisions=3, radius=radius)]
        if geometry.cylinder is not None:
            radius, length = _sizes([geometry.cylinder.radius, geometry.cylinder.length],
                                    2, 'cylinder')
            return [trimesh.creation.cylinder(radius=radius, height=length)]
        if geometry.mesh is None:
            return []
        name = geometry.mesh.filename or ''
        if name not in cache:
            cache[name] = None
            data, kind = files.read(name)
            loaded = trimesh.load(io.BytesIO(data), file_type=kind, force='scene')
            cache[name] = [m for m in loaded.dump(concatenate=False)
                           if isinstance(m, trimesh.Trimesh) and len(m.faces)]
        if cache[name] is None:
            raise ValueError('unreadable')
        scale = geometry.mesh.scale
        parts = [m.copy() for m in cache[name]]
        if scale is not None:
            factors = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
            if not np.all(np.isfinite(factors)):
                raise ValueError('non-finite scale')
            for part in parts:
                part.apply_transform(np.diag([*factors, 1.0]))
        return parts

    def _color(self, visual):
        """Return the RGBA (0-1) of a visual's material, or None (the mesh's own)."""
        material = visual.material
        if material is None:
            return None
        color = material.color
        if color is None and material.name in self.model.materials:
            color = self.model.materials[material.name].color
        if color is None or color.rgba is None:
            return None
        rgba = np.clip(np.nan_to_num(np.asarray(color.rgba, dtype=float)), 0.0, 1.0)
        return rgba if rgba.shape == (4,) else None

    def _add_skeleton(self, undrawn: np.ndarray):
        """Add the skeleton of the ``undrawn`` links: two batched meshes."""
        tree = self.model.tree
        rest = tree.poses(np.zeros(len(tree.joint_names)))[:, :3, 3]
        extent = float(np.ptp(rest, axis=0).max()) if len(rest) > 1 else 0.0
        radius = max(extent, 0.2) / 60.0
        self.sphere_links = np.flatnonzero(undrawn)
        children = np.arange(1, len(tree))
        offsets = tree.origin[children, :3, 3]
        length = np.linalg.norm(offsets, axis=-1)
        keep = undrawn[tree.parent[children]] & (length > 1e-9)
        self.rod_links = tree.parent[children][keep]
        self.rod_rotation = _align_z(offsets[keep] / length[keep, None])
        trimesh = self.trimesh
        if len(self.sphere_links):
            ball = trimesh.creation.icosphere(subdivisions=2, radius=1.6 * radius)
            count = len(self.sphere_links)
            self.spheres = self.server.scene.add_batched_meshes_simple(
                f'{self.name}/skeleton_joints', ball.vertices, ball.faces,
                batched_wxyzs=np.tile([1.0, 0.0, 0.0, 0.0], (count, 1)),
                batched_positions=np.zeros((count, 3)),
                batched_colors=SKELETON_COLOR, lod='off')
        if len(self.rod_links):
            rod = trimesh.creation.cylinder(radius=radius, height=1.0)
            rod.apply_translation([0.0, 0.0, 0.5])  # from z = 0 to z = 1
            count = len(self.rod_links)
            scales = np.ones((count, 3))
            scales[:, 2] = length[keep]
            self.rods = self.server.scene.add_batched_meshes_simple(
                f'{self.name}/skeleton_links', rod.vertices, rod.faces,
                batched_wxyzs=np.tile([1.0, 0.0, 0.0, 0.0], (count, 1)),
                batched_positions=np.zeros((count, 3)), batched_scales=scales,
                batched_colors=SKELETON_COLOR, lod='off')

    # --- showing and moving --------------------------------------------------------
    def draw(self, q):
        """
        Pose every node for the joint positions ``q`` (of ``model.joint_names``).

        Poses are sent rounded (:data:`DECIMALS`), and only those that changed: a
        link at rest, or one that moved less than a browser can show, costs nothing.
        """
        world = self.model.tree.poses(q)
        last = self._last or {}
        sent = {}
        if self.visuals:
            T = world[self.visual_link] @ np.asarray(self.visual_local)
            positions, wxyzs = (np.round(v, DECIMALS) for v in _pose_vectors(T))
            for key, values, attribute in (('position', positions, 'position'),
                                           ('wxyz', wxyzs, 'wxyz')):
                before = last.get(key)
                moved = (range(len(values)) if before is None else
                         np.flatnonzero(np.any(values != before, axis=1)).tolist())
                for k in moved:
                    setattr(self.visuals[k], attribute, values[k])
                sent[key] = values
        if self.spheres is not None:
            sent['spheres'] = self._send(last, 'spheres', self.spheres, 'batched_positions',
                                         world[self.sphere_links, :3, 3])
        if self.rods is not None:
            R = world[self.rod_links, :3, :3] @ self.rod_rotation
            sent['rods'] = self._send(last, 'rods', self.rods, 'batched_wxyzs', quaternions(R))
            sent['rod_positions'] = self._send(last, 'rod_positions', self.rods,
                                               'batched_positions',
                                               world[self.rod_links, :3, 3])
        self._last = sent
        return world

    @staticmethod
    def _send(last, key, handle, attribute, values):
        """Set ``handle.attribute`` to ``values`` rounded, unless unchanged; return them."""
        values = np.round(values, DECIMALS)
        before = last.get(key)
        if before is None or not np.array_equal(values, before):
            setattr(handle, attribute, values)
        return values

    def look_at(self, world):
        """Return (centre, size) of the robot posed at ``world`` (link poses)."""
        points = [world[:, :3, 3]]
        for link, local, bounds in zip(self.visual_link, self.visual_local, self.bounds):
            corners = np.array([[x, y, z, 1.0] for x in bounds[:, 0] for y in bounds[:, 1]
                                for z in bounds[:, 2]])
            points.append((world[link] @ local @ corners.T).T[:, :3])
        points = np.concatenate(points)
        points = points[np.all(np.isfinite(points), axis=1)]
        if not len(points):
            return np.zeros(3), 0.3
        low, high = points.min(axis=0), points.max(axis=0)
        return 0.5 * (low + high), max(float(np.linalg.norm(high - low)), 0.3)

    def show(self):
        """Make the robot visible."""
        self.root.visible = True

    def remove(self):
        """Remove the robot: its root node, and with it every node below."""
        self.root.remove()


def _sizes(values, count, what):
    """Return ``count`` finite positive sizes, or raise ValueError."""
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.shape != (count,) or not np.all(np.isfinite(array)) or np.any(array <= 0.0):
        raise ValueError(f'bad {what} size {values}')
    return array
