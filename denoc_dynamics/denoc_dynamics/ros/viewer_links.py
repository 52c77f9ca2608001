"""
The robot's interfaces that the browser view's control panel drives, found by name.

Every name is relative to the viewer's own namespace (the panel acts on the robot it
shows, never on another one): the simulator node (``sim_node`` parameter), the
trajectory controller, the dynamics node and the gripper action.  :class:`Graph`
reads the ROS graph once a second (in the executor, a cached local query) and says
which of them exist, so that each control of the panel appears only when what it
calls is there.  Nothing here waits: services are called with ``call_async`` and
their answers come back through a callback.
"""

from typing import Callable, Dict, Optional


def relative_name(value: str, what: str) -> str:
    """Return ``value`` as a name relative to the namespace; ValueError if it is not one."""
    name = value.strip()
    if not name or name[0] in '/~' or '//' in name or name.endswith('/'):
        raise ValueError(f"{what} must be a name relative to the viewer's namespace "
                         f'(the panel acts on its own robot only), got {value!r}')
    return name


class Names:
    """The fully qualified names of everything the panel calls, in one namespace."""

    def __init__(self, namespace: str, sim_node: str, controller: str, dynamics_node: str,
                 gripper_action: str, joint_commands: str):
        """Resolve the relative names under ``namespace`` (ValueError if one is absolute)."""
        ns = namespace.rstrip('/')
        sim = f'{ns}/{relative_name(sim_node, "sim_node")}'
        controller = f'{ns}/{relative_name(controller, "trajectory_controller")}'
        dynamics = f'{ns}/{relative_name(dynamics_node, "dynamics_node")}'
        self.namespace = ns or '/'
        self.sim = sim
        self.set_state = f'{sim}/set_simulation_state'
        self.get_state = f'{sim}/get_simulation_state'
        self.step = f'{sim}/step_simulation'
        self.reset_simulation = f'{sim}/reset_simulation'
        self.pause = f'{sim}/pause'
        self.reset = f'{sim}/reset'
        self.link_wrench = f'{sim}/link_wrench'
        self.ft_prefix = f'{sim}/ft/'
        self.trajectory = f'{controller}/joint_trajectory'
        self.controller_status = f'{controller}/status'
        self.joint_commands = f'{ns}/{relative_name(joint_commands, "joint_commands_topic")}'
        self.external_torques = f'{dynamics}/external_torques'
        self.external_wrench = f'{dynamics}/external_wrench'
        self.gripper = f'{ns}/{relative_name(gripper_action, "gripper_action")}'
        self.set_payload = [f'{node}/set_payload' for node in (sim, dynamics, controller)]

    def every(self) -> Dict[str, str]:
        """Return {attribute: name} of every single name (for the log and the tests)."""
        return {key: value for key, value in vars(self).items() if isinstance(value, str)}


class Graph:
    """What exists in the ROS graph: service, action and topic names (read once a second)."""

    def __init__(self, node):
        """Read the graph of ``node`` on :meth:`refresh`."""
        self.node = node
        self.services: Dict[str, list] = {}
        self.topics: Dict[str, list] = {}

    def refresh(self):
        """Read the names (in the executor: a query of the local graph cache)."""
        self.services = dict(self.node.get_service_names_and_types())
        self.topics = dict(self.node.get_topic_names_and_types())

    def service(self, name: str) -> bool:
        """Return True if a server offers ``name`` (the graph lists clients' names too)."""
        return name in self.services and self.node.count_services(name) > 0

    def action(self, name: str) -> bool:
        """Return True if an action server offers ``name``."""
        return self.service(f'{name}/_action/send_goal')

    def subscribed(self, name: str) -> bool:
        """Return True if somebody subscribes to the topic ``name``."""
        return name in self.topics and self.node.count_subscribers(name) > 0

    def published(self, name: str) -> bool:
        """Return True if somebody publishes the topic ``name``."""
        return name in self.topics and self.node.count_publishers(name) > 0

    def topics_under(self, prefix: str, type_name: str):
        """Return the topics named ``prefix...`` of type ``type_name``, sorted."""
        return sorted(name for name, types in self.topics.items()
                      if name.startswith(prefix) and type_name in types)


def call(client, request, done: Optional[Callable] = None, failed: Optional[Callable] = None):
    """
    Call a service without waiting; ``done(response)`` runs in the executor.

    Return False (and call ``failed`` with a reason) if no server is there now.
    """
    if not client.service_is_ready():
        if failed is not None:
            failed(f'{client.srv_name} is not offered')
        return False
    future = client.call_async(request)
    if done is not None:
        def _finished(fut):
            exc = fut.exception()
            if exc is not None:
                if failed is not None:
                    failed(f'{client.srv_name}: {exc}')
                return
            done(fut.result())
        future.add_done_callback(_finished)
    return True
