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

#: Set to ``required`` (make test does, where ../shared/ros2-msgs exists): a test
#: marked ``ros2_msgs`` (control_msgs, simulation_interfaces, tf2_msgs) that skips is a
#: failure.
REQUIRE_ROS2_MSGS = 'DENOC_REQUIRE_ROS2_MSGS'
ROS2_MSGS_REQUIRED = os.environ.get(REQUIRE_ROS2_MSGS) == 'required'


def _ros2_msgs_missing():
    """Return why control_msgs, simulation_interfaces or tf2_msgs cannot be imported."""
    for name in ('control_msgs.action', 'simulation_interfaces.srv', 'tf2_msgs.msg'):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return f'{name}: {exc}'
    return None


ROS2_MSGS_MISSING = _ros2_msgs_missing()


@pytest.fixture(scope='session')
def ros2_msgs():
    """Skip (a failure where they are required) without control_msgs and simulation_interfaces."""
    if ROS2_MSGS_MISSING is not None:
        pytest.skip(f'control_msgs / simulation_interfaces not installed ({ROS2_MSGS_MISSING}):'
                    ' make test builds them from ../shared/ros2-msgs')


@pytest.fixture
def oracles():
    """Skip the test without Pinocchio or example-robot-data (helpers.require_oracles)."""
    from helpers import require_oracles
    require_oracles()


@pytest.fixture(scope='module')
def arm():
    """Return the bundled 7-joint arm, loaded once per test module."""
    from helpers import bundled_arm
    return bundled_arm()


@pytest.fixture
def context():
    """Yield an rclpy context of its own for nodes built in the test; shut it down after."""
    import rclpy
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.try_shutdown(context=ctx)


#: The test files that import control_msgs, simulation_interfaces or tf2_msgs at the top.
ROS2_MSGS_TESTS = ('test_moveit_launch.py', 'test_two_arms_launch.py',
                   'test_ros_simulation_services.py', 'test_sim_arm_tf_launch.py',
                   'test_ros_sim_entities.py')

# the tests live one folder down (core/, urdf/, sim/, ros/, launch/)
collect_ignore_glob = []
if LAUNCH_STACK_MISSING is not None and not LAUNCH_TESTS_REQUIRED:
    collect_ignore_glob += [f'*/{pattern}' for pattern in LAUNCH_TESTS]
if ROS2_MSGS_MISSING is not None and not ROS2_MSGS_REQUIRED:
    collect_ignore_glob += [f'*/{pattern}' for pattern in ROS2_MSGS_TESTS]


def pytest_report_header(config):
    """Say in one line each whether the launch tests and the ros2_msgs tests run."""
    if LAUNCH_STACK_MISSING is None:
        mode = ' (required: a skip fails)' if LAUNCH_TESTS_REQUIRED else ''
        lines = [f'launch tests: run{mode}']
    else:
        lines = ['launch tests: skipped, the ROS 2 launch stack is not installed '
                 f'({LAUNCH_STACK_MISSING}); see README "How it is checked"']
    if ROS2_MSGS_MISSING is None:
        mode = ' (required: a skip fails)' if ROS2_MSGS_REQUIRED else ''
        lines.append(f'control_msgs / simulation_interfaces tests: run{mode}')
    else:
        lines.append('control_msgs / simulation_interfaces tests: skipped, not installed '
                     f'({ROS2_MSGS_MISSING})')
    return lines


def pytest_sessionstart(session):
    """
    Refuse to test the source tree; isolate the run on its own ROS domain.

    `make test` runs pytest in the environment of install/ (.ci/env.sh); there
    `import denoc_dynamics` must resolve to install/.../site-packages. Set
    DENOC_TEST_FROM_SOURCE=1 to run against the source tree on purpose.
    """
    if ROS2_MSGS_REQUIRED and ROS2_MSGS_MISSING is not None:
        raise pytest.UsageError(
            f'{REQUIRE_ROS2_MSGS}=required but they cannot be imported: {ROS2_MSGS_MISSING}')
    if LAUNCH_TESTS_REQUIRED and LAUNCH_STACK_MISSING is not None:
        raise pytest.UsageError(
            f'{REQUIRE_LAUNCH_TESTS}=required but the launch stack cannot be imported: '
            f'{LAUNCH_STACK_MISSING}')
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


def _is_ros2_msgs_test(item):
    return (item.get_closest_marker('ros2_msgs') is not None
            or any(Path(item.path).match(pattern) for pattern in ROS2_MSGS_TESTS))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Where the launch tests (ros2_msgs tests) are required, a skip of one is a failure."""
    outcome = yield
    report = outcome.get_result()
    if LAUNCH_TESTS_REQUIRED and report.skipped and _is_launch_test(item.path):
        report.outcome = 'failed'
        report.longrepr = (f'{item.nodeid} was skipped, but {REQUIRE_LAUNCH_TESTS}=required: '
                           f'{report.longrepr}')
    elif ROS2_MSGS_REQUIRED and report.skipped and _is_ros2_msgs_test(item):
        report.outcome = 'failed'
        report.longrepr = (f'{item.nodeid} was skipped, but {REQUIRE_ROS2_MSGS}=required: '
                           f'{report.longrepr}')
