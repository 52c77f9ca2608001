"""
``~/set_payload`` and ``~/payload``: one runtime payload, the same on every node.

Each node that holds a dynamics model (sim_node, dynamics_node, trajectory_controller)
attaches a :class:`PayloadService`.  It declares the start-up payload parameters

    payload.link (string, empty: none), payload.mass [kg],
    payload.center_of_mass [m] (3, link frame),
    payload.inertia [kg m^2] (6: ixx ixy ixz iyy iyz izz about the mass centre, link frame)

serves ``~/set_payload`` (denoc_dynamics_interfaces/SetPayload) and publishes the
current payload on ``~/payload`` (denoc_dynamics_interfaces/Payload, reliable,
transient local: latched).  A request is checked against the model without the
payload (unknown link, negative or non-finite mass, centre of mass or transition
time, an inertia no rigid body has: refused with the reason, counted and logged; the
node keeps its payload) and handed to the node's ``apply(payload, transition_time)``
callback; the models are :meth:`Robot.with_payload <denoc_dynamics.core.robot.Robot.
with_payload>` of the model without payload, so a new payload replaces the old one.
"""

import math
from typing import Callable, NamedTuple, Optional

from denoc_dynamics_interfaces.msg import Payload as PayloadMsg
from denoc_dynamics_interfaces.srv import SetPayload
import numpy as np
from rclpy.qos import DurabilityPolicy
from rclpy.qos import QoSProfile
from rclpy.qos import ReliabilityPolicy

from .joint_io import Rejected
from .joint_io import Rejections
from .parameters import PAYLOAD
from ..core.payload import checked_payload

#: ~/payload: latched (a late subscriber gets the current payload).
PAYLOAD_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Payload(NamedTuple):
    """A payload: ``link``, ``mass``, ``com`` (3,), ``inertia`` (3, 3) about the com."""

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def attach(self, robot):
        """Return ``robot`` with this payload (``robot`` itself for none)."""
        if not self.link:
            return robot
        return robot.with_payload(self.link, self.mass, self.com, self.inertia)

    def scaled(self, s: float) -> 'Payload':
        """Return the payload with mass and inertia times ``s`` (same mass centre)."""
        return self._replace(mass=s * self.mass, inertia=s * self.inertia)


NO_PAYLOAD = Payload('', 0.0, np.zeros(3), np.zeros((3, 3)))


def inertia_tensor(six) -> np.ndarray:
    """Return the (3, 3) tensor of (ixx, ixy, ixz, iyy, iyz, izz), the URDF's order."""
    ixx, ixy, ixz, iyy, iyz, izz = (float(x) for x in six)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def default_link(robot) -> str:
    """Return the link of the last body: where a tool is (the chain's tip)."""
    return robot.chain.tip_link or robot.chain.link_names[-1]


def checked(robot, link: str, mass, com, six) -> Payload:
    """Return the Payload for ``robot`` (mass 0: none); ValueError naming what is wrong."""
    if len(com) != 3 or len(six) != 6:
        raise ValueError(f'center_of_mass needs 3 values and inertia 6, got {len(com)} and '
                         f'{len(six)}')
    link = link or default_link(robot)
    mass, com, inertia = checked_payload(mass, com, inertia_tensor(six), link)
    robot.with_payload(link, mass, com, inertia)          # the link and the merged body
    if mass == 0.0:                                       # none (as UR's set_payload)
        return NO_PAYLOAD
    return Payload(link, mass, com, inertia)


class PayloadService:
    """
    ``~/set_payload`` and ``~/payload`` on ``node`` (see the module).

    ``apply(payload, transition_time)`` is called with each accepted payload; ``robot()``
    returns the node's model without payload (None before the model is loaded).
    """

    def __init__(self, node, robot: Callable, apply: Callable):
        """Declare the payload parameters, create the service and the latched topic."""
        self._node, self._robot, self._apply = node, robot, apply
        self.current: Payload = NO_PAYLOAD
        self.rejections = Rejections(node.get_logger(), 'payload')
        values = PAYLOAD.declare(node)
        self._start = tuple(values[f'payload.{key}']
                            for key in ('link', 'mass', 'center_of_mass', 'inertia'))
        self.publisher = node.create_publisher(PayloadMsg, '~/payload', PAYLOAD_QOS)
        node.create_service(SetPayload, '~/set_payload', self._set_payload)

    def start_up(self, robot) -> Payload:
        """Return the payload of the parameters for a newly loaded model (RuntimeError if bad)."""
        link, mass, com, six = self._start
        if not link:
            self.current = NO_PAYLOAD if not self.current.link else self.current
        else:
            try:
                self.current = checked(robot, link, mass, list(com), list(six))
            except ValueError as exc:
                raise RuntimeError(f'payload parameters: {exc}') from exc
        self.publish()
        return self.current

    def publish(self):
        """Publish the current payload on ~/payload."""
        p = self.current
        I = p.inertia
        self.publisher.publish(PayloadMsg(
            link=p.link, mass=float(p.mass), center_of_mass=[float(x) for x in p.com],
            inertia=[float(I[0, 0]), float(I[0, 1]), float(I[0, 2]), float(I[1, 1]),
                     float(I[1, 2]), float(I[2, 2])]))

    def _set_payload(self, request, response):
        robot: Optional = self._robot()
        try:
            if robot is None:
                raise ValueError('no robot model yet')
            T = float(request.transition_time)
            if not (math.isfinite(T) and T >= 0.0):
                raise ValueError(f'transition_time must be finite and >= 0, got {T}')
            payload = checked(robot, request.link, request.mass, list(request.center_of_mass),
                              list(request.inertia))
        except ValueError as exc:
            self.rejections.add(Rejected('bad payload', str(exc)))
            response.success, response.message = False, str(exc)
            return response
        self._apply(payload, T)
        self.current = payload
        self.publish()
        response.success = True
        response.message = (f'payload {payload.mass:g} kg on {payload.link!r}'
                            + (f' over {T:g} s' if T > 0.0 else ''))
        return response
