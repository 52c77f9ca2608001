"""Shared pytest setup for denoc_dynamics."""

import importlib.util
import os
from pathlib import Path

import pytest

SOURCE_PACKAGE = Path(__file__).resolve().parents[1] / 'denoc_dynamics'


def pytest_sessionstart(session):
    """
    Refuse to test the source tree instead of the colcon install space.

    `make test` runs pytest in the environment of install/ (.ci/env.sh); there
    `import denoc_dynamics` must resolve to install/.../site-packages. Set
    DENOC_TEST_FROM_SOURCE=1 to run against the source tree on purpose.
    """
    if os.environ.get('DENOC_TEST_FROM_SOURCE') == '1':
        return
    spec = importlib.util.find_spec('denoc_dynamics')
    locations = [Path(p).resolve() for p in (spec.submodule_search_locations or [])] \
        if spec is not None else []
    if not locations or any(p == SOURCE_PACKAGE for p in locations) \
            or not all('site-packages' in p.parts for p in locations):
        raise pytest.UsageError(
            'denoc_dynamics must be imported from the colcon install space, '
            f'found {locations or "nothing"}: run the tests with `make test` '
            '(or .ci/env.sh pytest), or set DENOC_TEST_FROM_SOURCE=1.')
