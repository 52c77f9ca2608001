"""Shared pytest setup: install-space check, isolation, launch and msgs tests required."""

import importlib.util
import os
from pathlib import Path

import pytest

SOURCE_PACKAGE = Path(__file__).resolve().parents[1] / 'denoc_dynamics'

#: The tests that need the ROS 2 launch stack (launch, launch_ros, launch_testing and
#: the ros2 CLI), which is not on PyPI.
LAUNCH_TESTS = ('test_*_launch.py', 'test_launch_*.py')

#: Set to ``required`` (make test does, where ../shared/ros2-launch exists): a launch
#: test that is not collected, or skipped, is then an error, never a silent skip.
REQUIRE_LAUNCH_TESTS = 'DENOC_REQUIRE_LAUNCH_TESTS'


def _launch_stack_missing():
    """Return why the launch stack cannot be imported, or None."""
    for name in ('launch', 'launch_ros', 'launch_testing', 'launch_testing_ros', 'ros2cli'):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return f'{name}: {exc}'
    return None


LAUNCH_STACK_MISSING = _launch_stack_missing()
LAUNCH_TESTS_REQUIRED = os.environ.get(REQUIRE_LAUNCH_TESTS) == 'required'

#: The tests that need the interface packages that PyPI lacks (simulation_interfaces),
#: built from ../shared/ros2-msgs.
MSGS_TESTS = ('test_ros_simulation_services.py',)

#: Set to ``required`` where ../shared/ros2-msgs exists (make test, as for the launch
#: tests): a msgs test that is not collected, or skipped, is then an error.
REQUIRE_MSGS_TESTS = 'DENOC_REQUIRE_MSGS_TESTS'


def _msgs_missing():
    """Return why simulation_interfaces cannot be imported, or None."""
    try:
        importlib.import_module('simulation_interfaces.srv')
    except ImportError as exc:
        return f'simulation_interfaces: {exc}'
    return None


MSGS_MISSING = _msgs_missing()
MSGS_TESTS_REQUIRED = os.environ.get(REQUIRE_MSGS_TESTS) == 'required'

collect_ignore_glob = []
if LAUNCH_STACK_MISSING is not None and not LAUNCH_TESTS_REQUIRED:
    collect_ignore_glob += list(LAUNCH_TESTS)
if MSGS_MISSING is not None and not MSGS_TESTS_REQUIRED:
    collect_ignore_glob += list(MSGS_TESTS)


def pytest_report_header(config):
    """Say in one line each whether the launch and the msgs tests run, and if not why."""
    if LAUNCH_STACK_MISSING is None:
        mode = ' (required: a skip fails)' if LAUNCH_TESTS_REQUIRED else ''
        launch = f'launch tests: run{mode}'
    else:
        launch = ('launch tests: skipped, the ROS 2 launch stack is not installed '
                  f'({LAUNCH_STACK_MISSING}); see README "Testing"')
    if MSGS_MISSING is None:
        mode = ' (required: a skip fails)' if MSGS_TESTS_REQUIRED else ''
        msgs = f'simulation_interfaces tests: run{mode}'
    else:
        msgs = ('simulation_interfaces tests: skipped, simulation_interfaces is not '
                f'installed ({MSGS_MISSING})')
    return [launch, msgs]


def pytest_sessionstart(session):
    """
    Refuse to test the source tree; isolate the run on its own ROS domain.

    `make test` runs pytest in the environment of install/ (.ci/env.sh); there
    `import denoc_dynamics` must resolve to install/.../site-packages. Set
    DENOC_TEST_FROM_SOURCE=1 to run against the source tree on purpose.
    """
    if LAUNCH_TESTS_REQUIRED and LAUNCH_STACK_MISSING is not None:
        raise pytest.UsageError(
            f'{REQUIRE_LAUNCH_TESTS}=required but the launch stack cannot be imported: '
            f'{LAUNCH_STACK_MISSING}')
    if MSGS_TESTS_REQUIRED and MSGS_MISSING is not None:
        raise pytest.UsageError(
            f'{REQUIRE_MSGS_TESTS}=required but {MSGS_MISSING}: build it from '
            '../shared/ros2-msgs into install/')
    if os.environ.get('DENOC_TEST_FROM_SOURCE') != '1':
        spec = importlib.util.find_spec('denoc_dynamics')
        locations = [Path(p).resolve() for p in (spec.submodule_search_locations or [])] \
            if spec is not None else []
        if not locations or any(p == SOURCE_PACKAGE for p in locations) \
                or not all('site-packages' in p.parts for p in locations):
            raise pytest.UsageError(
                'denoc_dynamics must be imported from the colcon install space, '
                f'found {locations or "nothing"}: run the tests with `make test` '
                '(or .ci/env.sh pytest), or set DENOC_TEST_FROM_SOURCE=1.')
    from ros_helpers import isolate
    isolate()


def _is_launch_test(path):
    return any(Path(path).match(pattern) for pattern in LAUNCH_TESTS)


def _is_msgs_test(path):
    return any(Path(path).match(pattern) for pattern in MSGS_TESTS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Where the launch (or msgs) tests are required, a skipped one is a failure."""
    outcome = yield
    report = outcome.get_result()
    if LAUNCH_TESTS_REQUIRED and report.skipped and _is_launch_test(item.path):
        report.outcome = 'failed'
        report.longrepr = (f'{item.nodeid} was skipped, but {REQUIRE_LAUNCH_TESTS}=required: '
                           f'{report.longrepr}')
    elif MSGS_TESTS_REQUIRED and report.skipped and _is_msgs_test(item.path):
        report.outcome = 'failed'
        report.longrepr = (f'{item.nodeid} was skipped, but the simulation_interfaces tests '
                           f'are required: {report.longrepr}')
