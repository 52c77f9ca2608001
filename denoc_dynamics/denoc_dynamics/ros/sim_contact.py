"""
sim_node's wrenches, virtual wall and force/torque sensors over ROS (:mod:`..sim_loads`).

Services
  ``~/apply_link_wrench`` (denoc_dynamics_interfaces/srv/ApplyLinkWrench): a force and
  torque on any URDF link (merged fixed links such as ``flange`` or ``tool0``
  included), in the axes of ``reference_frame`` (``''`` or ``'world'``: the base
  frame; a link: turning with it), the force acting at ``point`` in the link's frame,
  for ``duration`` of simulated time (zero: until cleared).  Refused with a reason
  (unknown link or frame, a link fixed to the base, NaN, a force or torque above
  1e5, a point 100 m away, a negative duration).  Like Gazebo's ``apply_body_wrench``.
  ``~/clear_link_wrenches`` (std_srvs/Trigger): removes them all, the topic's too.
  ``~/set_virtual_walls`` (denoc_dynamics_interfaces/srv/SetVirtualWalls): replaces
  the wall's planes.

Subscribes
  ``~/link_wrench`` (geometry_msgs/WrenchStamped): ``header.frame_id`` names the link;
  the wrench acts at its origin in its axes, held like the effort commands
  (``command_timeout`` of simulated time) or until the next message.  Bad messages
  are rejected, counted and logged (throttled).

Publishes
  ``~/ft/<joint>`` (geometry_msgs/WrenchStamped, ``frame_id`` the joint's child link)
  for each joint of ``ft_sensors``, with the joint states: the wrench that the links
  beyond the joint exert on the link before it, about the child link's origin in its
  axes, from the wrench pass of the inverse dynamics at the simulated state and
  accelerations (held still in hold mode: statics), plus ``ft_bias`` and Gaussian
  noise of standard deviation ``ft_noise`` (both zero by default).

Parameters: ``ft_sensors``, ``ft_bias``, ``ft_noise``, ``wall_planes`` (8 numbers per
plane: point, normal, stiffness [N/m], damping [N s/m], base frame), ``wall_links``
(the links whose origins the wall pushes; default: the last link of the chain).
"""

from denoc_dynamics_interfaces.srv import ApplyLinkWrench
from denoc_dynamics_interfaces.srv import SetVirtualWalls
from geometry_msgs.msg import WrenchStamped
import numpy as np
from std_srvs.srv import Trigger

from .joint_io import Rejected
from .joint_io import Rejections
from .parameters import SIM_CONTACT
from ..sim_loads import SimulatedSensors


def _vector(v):
    return np.array([v.x, v.y, v.z], dtype=float)


class SimContact:
    """The contact interface of one :class:`~.sim_node.SimNode` (module doc)."""

    def __init__(self, node):
        """Declare the parameters, services and the topic on ``node``."""
        self.node = node
        values = SIM_CONTACT.declare(node)
        self.ft_joints, self.ft_bias, self.ft_noise, self.wall_planes, self.wall_links = (
            list(values[name]) for name in SIM_CONTACT.entries)
        self.rejections = Rejections(node.get_logger(), 'link wrench')
        self.sensors = None
        self.ft_pubs = []
        self._ft_msgs = []
        node.create_service(ApplyLinkWrench, '~/apply_link_wrench', self._apply)
        node.create_service(Trigger, '~/clear_link_wrenches', self._clear)
        node.create_service(SetVirtualWalls, '~/set_virtual_walls', self._set_walls)
        node.create_subscription(WrenchStamped, '~/link_wrench', self._on_wrench, 10)

    def set_model(self, sim):
        """Set up the sensors and the wall of a new simulation; RuntimeError if bad."""
        robot = sim.robot
        try:
            if len(self.wall_planes) % 8:
                raise ValueError(f'wall_planes needs 8 numbers per plane, got '
                                 f'{len(self.wall_planes)}')
            planes = np.reshape(self.wall_planes, (-1, 8))
            sim.loads.set_walls([(p[:3], p[3:6], p[6], p[7]) for p in planes])
            links = self.wall_links or [robot.chain.tip_link or robot.chain.link_names[-1]]
            sim.loads.set_contact_points([(link, (0.0, 0.0, 0.0)) for link in links])
            sensors = None
            if self.ft_joints:
                for name, values in (('ft_bias', self.ft_bias), ('ft_noise', self.ft_noise)):
                    if values and len(values) != 6:
                        raise ValueError(f'{name} needs 6 numbers (torque, force)')
                sensors = SimulatedSensors(sim, self.ft_joints, self.ft_bias or None,
                                           self.ft_noise or None)
        except ValueError as exc:
            raise RuntimeError(str(exc)) from exc
        if sensors is not None and not self.ft_pubs:
            self.ft_pubs = [self.node.create_publisher(WrenchStamped, f'~/ft/{joint}', 10)
                            for joint in self.ft_joints]
            self._ft_msgs = [WrenchStamped() for _ in self.ft_joints]
            for msg, frame in zip(self._ft_msgs, sensors.frames):
                msg.header.frame_id = frame
        self.sensors = sensors

    def publish(self, snapshot, stamp):
        """
        Publish the F/T readings at ``snapshot`` (the state just published).

        The wrench pass runs only while some sensor's topic has a subscriber.
        """
        sensors = self.sensors
        if sensors is None or not any(pub.get_subscription_count() for pub in self.ft_pubs):
            return
        held = self.node.sim.mode == 'hold'
        readings = sensors.read(snapshot.q, snapshot.qd, snapshot.effort, held=held)
        for pub, msg, F in zip(self.ft_pubs, self._ft_msgs, readings):
            msg.header.stamp = stamp
            w = msg.wrench
            w.torque.x, w.torque.y, w.torque.z = (float(x) for x in F[:3])
            w.force.x, w.force.y, w.force.z = (float(x) for x in F[3:])
            pub.publish(msg)

    # --- inputs ----------------------------------------------------------------------
    def _apply(self, request, response):
        sim = self.node.sim
        if sim is None or sim.loads is None:
            response.success, response.message = False, 'no robot model yet'
            return response
        duration = request.duration.sec + 1e-9 * request.duration.nanosec
        w = request.wrench
        try:
            sim.loads.apply(request.link, _vector(w.force), _vector(w.torque),
                            request.reference_frame, _vector(request.point), duration,
                            sim.t)
        except ValueError as exc:
            response.success, response.message = False, f'refused: {exc}'
            self.node.get_logger().warning(f'~/apply_link_wrench {response.message}',
                                           throttle_duration_sec=1.0)
            return response
        response.success = True
        response.message = (f'applied to {request.link!r} '
                            + (f'for {duration:g} s' if duration > 0.0 else 'until cleared'))
        return response

    def _clear(self, request, response):
        sim = self.node.sim
        if sim is None or sim.loads is None:
            response.success, response.message = False, 'no robot model yet'
            return response
        count = len(sim.loads.applied) + (sim.loads.topic is not None)
        sim.loads.clear()
        response.success, response.message = True, f'cleared {count} wrench(es)'
        return response

    def _set_walls(self, request, response):
        sim = self.node.sim
        if sim is None or sim.loads is None:
            response.success, response.message = False, 'no robot model yet'
            return response
        planes = [((p.point.x, p.point.y, p.point.z), _vector(p.normal), p.stiffness,
                   p.damping) for p in request.walls]
        try:
            sim.loads.set_walls(planes)
        except ValueError as exc:
            response.success, response.message = False, f'refused: {exc}'
            return response
        response.success, response.message = True, f'{len(planes)} wall plane(s) set'
        return response

    def _on_wrench(self, msg):
        sim = self.node.sim
        if sim is None or sim.loads is None:
            self.rejections.add(Rejected('no model', 'no robot model yet'))
            return
        w = msg.wrench
        try:
            sim.loads.hold(msg.header.frame_id, _vector(w.force), _vector(w.torque),
                           sim.t)
        except ValueError as exc:
            self.rejections.add(Rejected('invalid', str(exc)))
