"""The ament_pep257 docstring check of the package, as in every ROS 2 Python package."""

from pathlib import Path

import pytest

try:
    from ament_pep257.main import main
except ImportError as exc:  # the linter wheels (or pydocstyle) are missing
    main = None
    _IMPORT_ERROR = exc

# The package root (setup.py, denoc_dynamics/, launch/, test/), independent of the cwd.
PACKAGE_DIR = Path(__file__).resolve().parents[1]


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    if main is None:
        pytest.skip(f'ament_pep257 cannot be imported: {_IMPORT_ERROR}')
    rc = main(argv=[str(PACKAGE_DIR), str(PACKAGE_DIR / 'test')])
    assert rc == 0, 'Found code style errors / warnings'
