"""
Where both nodes get their robot model from (the one shared implementation).

Order of precedence:

1. the ``robot_description`` string parameter (URDF XML, never a file path);
2. else the ``urdf_path`` parameter (a URDF file, the only way to name a file);
3. else the ``robot_description`` topic (std_msgs/String; depth 1, reliable,
   transient_local, as robot_state_publisher publishes it).  Every new description
   received there rebuilds the model.  Its text is XML, never a file path: a
   message that is not XML is refused unread.

:class:`DescriptionSource` does this for any model built from the URDF (the browser
view builds its own); :class:`RobotModelSource` builds the dynamics model, with
``base_link``, ``tip_link``, ``gravity``, ``side_branches`` and ``max_dof`` passed
to :func:`denoc_dynamics.load_urdf`.  A description with more than ``max_dof``
joints in the chain is refused like a malformed one.
"""

from typing import Callable, Optional

from rclpy.qos import DurabilityPolicy
from rclpy.qos import HistoryPolicy
from rclpy.qos import QoSProfile
from rclpy.qos import ReliabilityPolicy
from std_msgs.msg import String

from .parameters import DESCRIPTION
from .parameters import ROBOT_MODEL
from .. import load_urdf, load_urdf_xml

#: QoS of /robot_description: latched like robot_state_publisher's publisher.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL)

DESCRIPTION_TOPIC = 'robot_description'


class DescriptionSource:
    """
    Declare ``robot_description`` and ``urdf_path`` on ``node`` and build a model.

    ``build(urdf, source, from_file)`` turns a URDF into the model and may raise
    ValueError to refuse it; ``urdf`` is XML, or a file path only where ``from_file``
    (the ``urdf_path`` parameter: text from the topic or the ``robot_description``
    parameter is never opened as a file); it is called at construction with a parameter's
    URDF, or later for every description received on the topic.  A bad URDF given by
    parameter raises RuntimeError from the constructor; a bad one on the topic is
    logged and the previous model kept.
    """

    def __init__(self, node, build: Callable):
        """Declare the parameters and build the model, or subscribe to the topic."""
        self._node = node
        self._build = build
        self.model = None
        self.source: Optional[str] = None
        self.subscription = None
        values = DESCRIPTION.declare(node)
        description, path = values.robot_description, values.urdf_path
        if description:
            self._load_or_raise(description, 'the robot_description parameter')
        elif path:
            self._load_or_raise(path, f'urdf_path {path}', from_file=True)
        else:
            self.subscription = node.create_subscription(
                String, DESCRIPTION_TOPIC, self._on_description, ROBOT_DESCRIPTION_QOS)
            node.get_logger().info(
                'no robot_description or urdf_path parameter: waiting for the robot '
                f'description on topic {self.subscription.topic_name}')

    def load(self, urdf: str, source: str, from_file: bool = False):
        """Build the model from URDF XML (or a file, ``from_file``); keep and return it."""
        model = self._build(urdf, source, from_file)
        self.model = model
        self.source = source
        return model

    def _load_or_raise(self, urdf, source, from_file=False):
        try:
            self.load(urdf, source, from_file)
        except (ValueError, OSError, KeyError, TypeError) as exc:
            raise RuntimeError(f'cannot load the robot model from {source}: {exc}') from exc

    def _on_description(self, msg):
        try:
            self.load(msg.data, 'the robot_description topic')
        except Exception as exc:  # any parser error: keep the previous model
            self._node.get_logger().error(
                f'ignoring the robot description received on the topic: {exc}')


class RobotModelSource(DescriptionSource):
    """
    The dynamics model (:func:`denoc_dynamics.load_urdf`) from a :class:`DescriptionSource`.

    ``on_model(robot, source)`` is called for every model loaded and may raise
    ValueError to refuse it.
    """

    def __init__(self, node, on_model: Callable):
        """Declare the model parameters, then load the model as DescriptionSource does."""
        self._on_model = on_model
        values = ROBOT_MODEL.declare(node)
        self.base_link, self.tip_link = values.base_link, values.tip_link
        self.gravity, self.side_branches = values.gravity, values.side_branches
        self.max_dof = values.max_dof
        super().__init__(node, self._load_robot)

    @property
    def robot(self):
        """Return the current dynamics model (None before the first one)."""
        return self.model

    def _load_robot(self, urdf: str, source: str, from_file: bool):
        read = load_urdf if from_file else load_urdf_xml
        robot = read(urdf, base_link=self.base_link or None,
                     tip_link=self.tip_link or None, gravity=tuple(self.gravity),
                     side_branches=self.side_branches, max_dof=self.max_dof)
        self._on_model(robot, source)
        self._node.get_logger().info(
            f'robot model from {source}: {robot.chain.name!r}, {robot.n} joints '
            f'{robot.joint_names} ({robot.chain.base_link} -> '
            f'{robot.chain.tip_link or "the whole tree"}'
            + (f'; mimic joints {sorted(robot.mimic_joints)})' if robot.mimic_joints else ')'))
        return robot
