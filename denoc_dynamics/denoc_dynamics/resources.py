"""Find the URDFs bundled with the package, wherever it is installed."""

import os
from pathlib import Path
import sys
from typing import Optional

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
    # colcon install (lib/pythonX.Y/site-packages/denoc_dynamics; none in a shallow tree)
    candidates += [prefix / 'share' / 'denoc_dynamics' / 'urdf' for prefix in here.parents[3:4]]
    candidates += [here.parent / 'urdf',                                     # source tree
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


EXAMPLE_ROBOT_DATA_PROBE = 'panda_description/urdf/panda.urdf'


def example_robot_data_dir() -> Optional[Path]:
    """
    Return the ``robots`` folder of the example-robot-data package, or None.

    The package's ``getModelPath`` when it has one, else ``share/example-robot-data/
    robots`` under the prefixes of sys.path (the PyPI wheel installs under
    ``site-packages/cmeel.prefix``), AMENT_PREFIX_PATH and sys.prefix.
    """
    try:
        from example_robot_data import getModelPath
        return Path(getModelPath(EXAMPLE_ROBOT_DATA_PROBE))
    except (ImportError, OSError):
        pass
    prefixes = [Path(entry, '..', '..', '..') for entry in sys.path if entry]
    prefixes += [Path(entry, 'cmeel.prefix') for entry in sys.path if entry]
    prefixes += [Path(p) for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)
                 if p]
    prefixes.append(Path(sys.prefix))
    for prefix in prefixes:
        candidate = prefix / 'share' / 'example-robot-data' / 'robots'
        if (candidate / EXAMPLE_ROBOT_DATA_PROBE).is_file():
            return candidate.resolve()
    return None
