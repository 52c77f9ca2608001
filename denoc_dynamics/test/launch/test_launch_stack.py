"""
The package under the ROS 2 launch stack, beyond the launch_testing files.

* ``ros2 launch`` of both launch files, stopped as a terminal's Ctrl-C does (SIGINT to
  the whole process group; launch then signals each node again) or by one SIGINT to
  launch alone: launch reports "process has finished cleanly" for every node, and
  there is no traceback.  (SIGTERM to ``ros2 launch`` itself cancels launch without
  stopping its nodes, by launch's design; SIGTERM to a node: test_ros_shutdown.py.)
* The launch tests are collected where Pinocchio cannot be imported, and a launch test
  file runs as plain ``launch_test FILE`` too.
* ``use_rsp``, the one launch argument this venv cannot start (robot_state_publisher
  is not on PyPI), evaluated on the launch description.
"""

import os
import signal
import subprocess
import sys

from ament_index_python.packages import get_package_share_directory
from denoc_dynamics.resources import bundled_urdf
import pytest
from ros_helpers import sigint_at_default
from ros_helpers import wait_for

pytestmark = pytest.mark.ros

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
SHARE = get_package_share_directory('denoc_dynamics')
#: Repetitions of each ``ros2 launch`` stop (set DENOC_LAUNCH_REPEAT=50 for a long run).
REPEAT = int(os.environ.get('DENOC_LAUNCH_REPEAT', '3'))

LAUNCHES = {
    'sim_arm': (['sim_arm.launch.py'], 3),
    'dynamics': (['dynamics.launch.py', f'urdf:={bundled_urdf()}'], 1),
}


@pytest.mark.parametrize('stop', ['ctrl-c', 'sigint-to-launch'])
@pytest.mark.parametrize('launch', LAUNCHES)
def test_ros2_launch_stops_every_node_cleanly(launch, stop):
    arguments, nodes = LAUNCHES[launch]
    for attempt in range(REPEAT):
        log = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'ros2_launch_{os.getpid()}.log')
        with open(log, 'w') as stream:
            proc = subprocess.Popen(['ros2', 'launch', 'denoc_dynamics'] + arguments,
                                    stdout=stream, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=sigint_at_default)

        def output():
            with open(log, errors='replace') as stream:
                return stream.read()

        try:
            # under a load of 8-15 on 2 cores a node took over 30 s to load its model
            assert wait_for(lambda: output().count('robot model from') >= nodes
                            or proc.poll() is not None, timeout=180.0), (
                f"{output().count('robot model from')} of {nodes} nodes loaded their model "
                f'(launch exit code {proc.poll()}):\n' + output())
            if stop == 'ctrl-c':
                os.killpg(proc.pid, signal.SIGINT)  # the terminal signals the group
            else:
                proc.send_signal(signal.SIGINT)
            code = proc.wait(30.0)
        finally:
            try:  # whatever is left of the group: nothing, if all went well
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out = output()
        os.unlink(log)
        assert code == 0, f'attempt {attempt}: ros2 launch exited {code}\n{out}'
        assert out.count('process has finished cleanly') == nodes, f'attempt {attempt}\n{out}'
        assert 'Traceback' not in out and 'process has died' not in out, out


def test_launch_tests_are_collected_without_pinocchio(tmp_path):
    # launch_testing's plugin imports every test module while collecting; a module
    # that skipped itself at import (test_pinocchio did) ended the whole collection
    (tmp_path / 'pinocchio.py').write_text('raise ImportError("hidden by the test")\n')
    env = dict(os.environ, PYTHONPATH=f'{tmp_path}{os.pathsep}{os.environ["PYTHONPATH"]}')
    proc = subprocess.run(
        # the pytest script, not `python -m pytest`: the cwd must not go on sys.path
        [os.path.join(os.path.dirname(sys.executable), 'pytest'), '--collect-only', '-q',
         '-p', 'no:cacheprovider',
         'test/core/test_pinocchio.py', 'test/launch/test_dynamics_launch.py'],
        cwd=os.path.dirname(os.path.dirname(TEST_DIR)), env=env, capture_output=True, text=True,
        timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'test/launch/test_dynamics_launch.py::test_dynamics_launch' in proc.stdout, \
        proc.stdout
    assert 'test/core/test_pinocchio.py::test_inertia_matrix' in proc.stdout, proc.stdout


def test_a_launch_test_file_runs_with_launch_test():
    proc = subprocess.run(['launch_test', os.path.join(TEST_DIR, 'test_dynamics_launch.py')],
                          cwd='/', capture_output=True, text=True, timeout=300,
                          preexec_fn=sigint_at_default)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert 'No module named' not in out, out
    assert 'OK' in out, out


@pytest.mark.parametrize('use_rsp', ['true', 'false'])
def test_use_rsp_starts_robot_state_publisher_with_the_urdf(use_rsp):
    from launch import LaunchContext
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import Node
    from launch_ros.utilities import evaluate_parameters
    source = PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'sim_arm.launch.py'))
    context = LaunchContext()
    description = source.get_launch_description(context)
    urdf = os.path.join(SHARE, 'urdf', 'planar3.urdf')
    context.launch_configurations.update(
        {argument.name: argument.default_value[0].perform(context)
         if len(argument.default_value) == 1 else ''
         for argument in description.get_launch_arguments()})
    context.launch_configurations.update(namespace='rsp_ns', urdf=urdf, use_sim_time='true',
                                         use_rsp=use_rsp)
    nodes = [entity for entity in description.entities if isinstance(entity, Node)]
    rsp = [node for node in nodes if node.node_executable == 'robot_state_publisher']
    assert len(rsp) == 1
    assert rsp[0].condition.evaluate(context) == (use_rsp == 'true')
    rsp[0]._perform_substitutions(context)
    assert rsp[0].expanded_node_namespace == '/rsp_ns'
    parameters = evaluate_parameters(context, rsp[0]._Node__parameters)
    with open(urdf) as stream:
        # frame_prefix '<namespace>/': the namespaced arm's TF frames, as sim_node's
        assert list(parameters) == [{'frame_prefix': 'rsp_ns/',
                                     'robot_description': stream.read(),
                                     'use_sim_time': True}]


@pytest.mark.parametrize('urdf, gripper', [('denoc_arm7_gripper', 'auto'),
                                           ('denoc_arm7_gripper', 'false'),
                                           ('denoc_arm7', 'auto')])
def test_a_gripper_gets_its_controller_and_the_arm_the_other_joints(urdf, gripper):
    from denoc_dynamics import load_urdf
    from denoc_dynamics.ros.launch_support import arm_joints
    from launch import LaunchContext
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import Node
    from launch_ros.utilities import evaluate_parameters
    source = PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'sim_arm.launch.py'))
    context = LaunchContext()
    description = source.get_launch_description(context)
    context.launch_configurations.update(
        {argument.name: argument.default_value[0].perform(context)
         if len(argument.default_value) == 1 else ''
         for argument in description.get_launch_arguments()})
    context.launch_configurations.update(urdf=bundled_urdf(urdf), gripper=gripper)
    nodes = {node.node_executable: node for node in description.entities
             if isinstance(node, Node)
             and (node.condition is None or node.condition.evaluate(context))}
    with_gripper = urdf == 'denoc_arm7_gripper' and gripper == 'auto'
    assert ('gripper_controller' in nodes) == with_gripper, sorted(nodes)
    arm = [f'joint{k}' for k in range(1, 8)]
    robot = load_urdf(bundled_urdf(urdf))
    for name in ('sim_node', 'dynamics_node', 'trajectory_controller'):
        parameters = {}
        for item in evaluate_parameters(context, nodes[name]._Node__parameters):
            if isinstance(item, dict):
                parameters.update(item)
        # the launch sets no joints: each node leaves its robot's finger out of them
        assert 'joints' not in parameters and parameters['gripper'] == gripper, name
        joints = arm_joints(robot, parameters['gripper'])
        assert joints == (arm if with_gripper else []), name
    if with_gripper:
        parameters = [item for item in evaluate_parameters(
            context, nodes['gripper_controller']._Node__parameters) if isinstance(item, dict)]
        assert parameters[-1]['joint'] == 'left_finger_joint'
