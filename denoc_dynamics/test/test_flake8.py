"""The ament_flake8 style check of the package, as in every ROS 2 Python package."""

from pathlib import Path

import pytest

try:
    from ament_flake8.main import main_with_errors
except ImportError as exc:  # the linter wheels (or flake8 and its plugins) are missing
    main_with_errors = None
    _IMPORT_ERROR = exc

# The package root (setup.py, denoc_dynamics/, launch/, test/), independent of the cwd.
PACKAGE_DIR = Path(__file__).resolve().parents[1]


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    if main_with_errors is None:
        pytest.skip(f'ament_flake8 cannot be imported: {_IMPORT_ERROR}')
    rc, errors = main_with_errors(
        argv=['--config', str(PACKAGE_DIR / 'setup.cfg'), str(PACKAGE_DIR)])
    assert rc == 0, \
        'Found %d code style errors / warnings:\n' % len(errors) + \
        '\n'.join(errors)
