"""
Text from /robot_description and the robot_description parameter is XML, never a path.

In process: the node is built and its topic callback called directly, with the core's
file opening watched.  Only ``urdf_path`` names a file.
"""

from pathlib import Path

from denoc_dynamics.core import urdf_xml
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.ros.robot_model import RobotModelSource
import pytest
import rclpy
from rclpy.parameter import Parameter
from std_msgs.msg import String

PATHS = [bundled_urdf('denoc_arm7'), '/etc/passwd']


@pytest.fixture
def make_node():
    context = rclpy.Context()
    rclpy.init(context=context)
    nodes = []

    def make(**parameters):
        node = rclpy.create_node(
            'robot_model_test', context=context,
            parameter_overrides=[Parameter(k, value=v) for k, v in parameters.items()])
        nodes.append(node)
        return node
    try:
        yield make
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def opened(monkeypatch):
    """Record every file the URDF reader opens."""
    files = []

    def watched(path, *args, **kwargs):
        files.append(str(path))
        return open(path, *args, **kwargs)
    monkeypatch.setattr(urdf_xml, 'open', watched, raising=False)
    return files


@pytest.mark.parametrize('path', PATHS)
def test_parameter_that_is_a_path_is_refused_unread(path, make_node, opened):
    with pytest.raises(RuntimeError, match='robot_description parameter: .*not URDF XML'):
        RobotModelSource(make_node(robot_description=path), lambda robot, source: None)
    assert opened == []


@pytest.mark.parametrize('path', PATHS)
def test_topic_message_that_is_a_path_is_refused_unread(path, make_node, opened, capfd):
    models = []
    source = RobotModelSource(make_node(), lambda robot, origin: models.append(origin))
    assert source.subscription is not None
    source._on_description(String(data=path))
    assert models == [] and source.robot is None and opened == []
    log = capfd.readouterr().err
    assert 'ignoring the robot description received on the topic' in log
    assert 'not URDF XML' in log and 'root:' not in log
    # the same node takes XML from the topic
    source._on_description(String(data=Path(bundled_urdf('planar3')).read_text()))
    assert models == ['the robot_description topic'] and source.robot.n == 3


def test_urdf_path_parameter_still_names_a_file(make_node, opened):
    source = RobotModelSource(make_node(urdf_path=bundled_urdf('planar3')),
                              lambda robot, origin: None)
    assert source.robot.n == 3 and opened == [bundled_urdf('planar3')]
