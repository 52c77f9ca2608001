"""
Which mesh files arm_viewer may open: the rules for the file names a URDF carries.

A robot description can come from any DDS peer, and the viewer streams what it loads
to every browser that connects, so a name in the URDF never opens an arbitrary file.
:class:`MeshFiles` decides from the name alone (and, for ``package://``, the ament
index), before the file is looked at:

* the extension must be one of :data:`MESH_TYPES` (the types the viewer draws);
* ``package://PKG/path`` resolves inside the share directory of ``PKG`` (ament index),
  or, for a URDF read from ``urdf_path``, inside the nearest ancestor directory of that
  file named ``PKG`` (a package used in place, as example-robot-data's wheel does);
  the path is normalized first and may not leave that directory (no ``..`` escape);
* ``file://`` URIs and absolute paths resolve only below an allowed directory: the
  directory of ``urdf_path`` (when one is given) and the ``mesh_directories`` the
  user lists; a relative path is taken from the directory of ``urdf_path`` (and must
  then lie below an allowed directory too);
* anything else (``http://``, ``model://``, a relative path in a description from the
  topic or the parameter) is refused.

A refused name raises :class:`MeshRefused` with the words "not allowed" and a reason
that depends on the name and the configuration only, never on whether the file
exists, so that the log tells a peer nothing about the file system.  Paths are
normalized lexically (``os.path.normpath``): symbolic links inside an allowed
directory are followed, as an installed package may consist of them (colcon's
``--symlink-install``).  The file must be a regular file; it is opened non-blocking,
so that a FIFO of a mesh's name cannot stall the viewer.
"""

import os
import stat
from typing import Iterable, List, Optional, Tuple
from urllib.parse import unquote

#: Extensions of the mesh files the viewer draws (through trimesh; .dae with pycollada).
MESH_TYPES = ('.stl', '.dae', '.obj', '.ply', '.glb', '.off')


class MeshRefused(ValueError):
    """A mesh name the rules do not allow (the message says "not allowed" and why)."""


def _inside(path: str, directory: str) -> bool:
    """Return True if the normalized ``path`` is strictly below ``directory``."""
    directory = os.path.normpath(directory)
    return path.startswith(directory.rstrip(os.sep) + os.sep)


def _package_share(package: str) -> Optional[str]:
    """Return the ament share directory of ``package``, or None."""
    try:
        from ament_index_python.packages import get_package_share_directory
        from ament_index_python.packages import PackageNotFoundError
    except ImportError:
        return None
    try:
        return get_package_share_directory(package)
    except (PackageNotFoundError, ValueError, OSError):
        return None


class MeshFiles:
    """The mesh names a robot description may use, and the opening of those files."""

    def __init__(self, urdf_path: str = '', directories: Iterable[str] = ()):
        """Allow the directory of ``urdf_path`` (if any) and ``directories``."""
        self.urdf_dir = (os.path.dirname(os.path.abspath(urdf_path)) if urdf_path
                         else None)
        roots = [self.urdf_dir] if self.urdf_dir else []
        roots += [os.path.abspath(d) for d in directories if d]
        self.directories: List[str] = [os.path.normpath(d) for d in roots]

    def resolve(self, name: str) -> str:
        """Return the file a URDF mesh ``name`` stands for, or raise MeshRefused."""
        if '\0' in name:
            raise MeshRefused('not allowed: a NUL character in the name')
        extension = os.path.splitext(name)[1].lower()
        if extension not in MESH_TYPES:
            raise MeshRefused(f'not allowed: not a mesh type the viewer draws '
                              f'({", ".join(MESH_TYPES)})')
        if name.startswith('package://'):
            return self._in_package(name[len('package://'):])
        if name.startswith('file://'):
            path = unquote(name[len('file://'):])
            if path.startswith('localhost/'):
                path = path[len('localhost'):]
            if '\0' in path:
                raise MeshRefused('not allowed: a NUL character in the name')
            return self._in_directories(path)
        if '://' in name:
            raise MeshRefused('not allowed: only package:// and file:// URIs are read')
        if os.path.isabs(name):
            return self._in_directories(name)
        if self.urdf_dir is None:
            raise MeshRefused('not allowed: a relative path needs a URDF read from urdf_path')
        return self._in_directories(os.path.join(self.urdf_dir, name))

    def _in_package(self, rest: str) -> str:
        package, _, relative = rest.partition('/')
        if not package or package in ('.', '..') or not relative or os.path.isabs(relative):
            raise MeshRefused('not allowed: not package://PACKAGE/PATH')
        root = _package_share(package) or self._ancestor_named(package)
        if root is None:
            raise MeshRefused(f'not allowed: package {package!r} is not known')
        path = os.path.normpath(os.path.join(root, relative))
        if not _inside(path, root):
            raise MeshRefused(f'not allowed: outside the share directory of {package!r}')
        return path

    def _ancestor_named(self, package: str) -> Optional[str]:
        """Return the nearest ancestor directory of urdf_path named ``package``, or None."""
        directory = self.urdf_dir
        while directory is not None and os.path.dirname(directory) != directory:
            if os.path.basename(directory) == package:
                return directory
            directory = os.path.dirname(directory)
        return None

    def _in_directories(self, path: str) -> str:
        if not os.path.isabs(path):
            raise MeshRefused('not allowed: a file:// URI needs an absolute path')
        path = os.path.normpath(path)
        if not any(_inside(path, root) for root in self.directories):
            raise MeshRefused('not allowed: outside the directory of urdf_path and '
                              'the mesh_directories parameter')
        return path

    def read(self, name: str) -> Tuple[bytes, str]:
        """
        Return (the bytes of the mesh file ``name``, its type without the dot).

        Raise MeshRefused where the rules do not allow the name, OSError where the
        allowed file cannot be read (missing, not a regular file).
        """
        path = self.resolve(name)
        flags = os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOCTTY', 0)
        descriptor = os.open(path, flags)
        with os.fdopen(descriptor, 'rb') as stream:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise OSError(f'{path} is not a regular file')
            return stream.read(), os.path.splitext(path)[1][1:].lower()
