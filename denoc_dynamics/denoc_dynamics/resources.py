"""Find the URDFs bundled with the package, wherever it is installed."""

import os
from pathlib import Path
import sys

DEFAULT_ROBOT = 'denoc_arm7'


def urdf_dir() -> Path:
    """
    Return the folder that holds the bundled URDFs.

    Looks in the ament share folder (a colcon or ROS install), then beside the source
    tree, then under sys.prefix.
    """
    here = Path(__file__).resolve().parent
    candidates = []
    try:
        from ament_index_python.packages import get_package_share_directory
        candidates.append(Path(get_package_share_directory('denoc_dynamics')) / 'urdf')
    except Exception:  # not a ROS environment, or the package is not indexed
        pass
    candidates += [here.parents[3] / 'share' / 'denoc_dynamics' / 'urdf',  # colcon install
                   here.parent / 'urdf',                                     # source tree
                   Path(sys.prefix) / 'share' / 'denoc_dynamics' / 'urdf']
    for path in candidates:
        if path.is_dir():
            return path
    raise FileNotFoundError('bundled URDF folder not found; looked in '
                            + ', '.join(map(str, candidates)))


def bundled_urdf(name: str = DEFAULT_ROBOT) -> str:
    """Return the path of a bundled URDF by name (``denoc_arm7``, ``planar3``)."""
    path = urdf_dir() / (name if name.endswith('.urdf') else name + '.urdf')
    if not path.is_file():
        available = sorted(p.stem for p in urdf_dir().glob('*.urdf'))
        raise FileNotFoundError(f'no bundled URDF {name!r}; available: {available}')
    return os.fspath(path)
