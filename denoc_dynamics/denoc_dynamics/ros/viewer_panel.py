"""
The control panel of the browser view: the simulation, the joints, the gripper, the payload.

MuJoCo's ``simulate`` window in a browser, through the robot's own ROS interfaces
(:mod:`.viewer_links` finds them, in the viewer's namespace only):

Simulation
  ``Play``, ``Pause``, ``Step`` (``Steps`` physics steps; a playing simulation is
  paused first) and ``Reset`` call the simulator's ``simulation_interfaces`` services
  (``set_simulation_state``, ``step_simulation``, ``reset_simulation``) where it offers
  them, else its ``~/pause`` and ``~/reset``; ``Step`` needs the former.  A status
  line shows the mode (``get_simulation_state``, else what this panel last set), the
  simulated time (``/clock``) and the real-time factor (simulated over wall time in
  the last two seconds).
Joints
  One slider per coordinate, labelled with the joint's name, within its limits
  (continuous joints: one turn each way).  ``Send`` sends the sliders once they rest
  (0.3 s without a change: on release), ``Follow`` while they move.  A move goes to
  the trajectory controller (``joint_trajectory``, one point ``Move time`` ahead: its
  quintic interpolation from where the arm is), or, when no controller listens, to
  the simulator's ``robot_joint_commands`` as JointState positions along a
  minimum-jerk ramp of the same duration.  While the panel moves nothing, the
  sliders show where the joints are.
Gripper
  ``Open``, ``Close`` and a ``Width`` slider (the finger joint's position, the
  GripperCommand ``position``) through the ``gripper_controller/gripper_cmd`` action.
Payload
  Link, mass, centre of mass and transition time, sent to every ``~/set_payload``
  among the simulator, the dynamics node and the controller.

Each control shows only while what it calls exists, a one-line hint otherwise; the
graph is read once a second.  The viser callbacks (a browser's clicks, in viser's
threads) only record the request or call ``call_async``: the ROS callbacks never wait
for a browser, and the answers come back in the executor.  The GUI handles belong
to the server, so every browser sees and drives the same state.
"""

import math
import threading
import time
from typing import Dict, List, Optional

import numpy as np
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

from .viewer_links import call
from .viewer_links import Graph

#: A slider at rest this long [s] counts as released (viser tells no release).
REST = 0.3
#: Slider range of a joint without limits [rad].
UNLIMITED = math.pi


def _optional(module, name):
    """Return ``module.name`` or None where the package is not installed."""
    try:
        return getattr(__import__(module, fromlist=[name]), name)
    except (ImportError, AttributeError):
        return None


def _integer(value) -> int:
    """Return ``value`` as an int, or 0 if it is not a finite number."""
    try:
        return int(value) if math.isfinite(float(value)) else 0
    except (TypeError, ValueError):
        return 0


def min_jerk(s: float) -> float:
    """Return the minimum-jerk blend 10 s^3 - 15 s^4 + 6 s^5 of s in [0, 1]."""
    s = min(max(s, 0.0), 1.0)
    return s * s * s * (10.0 + s * (-15.0 + 6.0 * s))


class Section:
    """A folder of the panel with a one-line hint shown while its controls are hidden."""

    def __init__(self, gui, title: str, order: float):
        """Add the folder ``title`` to ``gui``."""
        self.folder = gui.add_folder(title, order=order)
        with self.folder:
            self.hint = gui.add_markdown('', visible=False)
        self.controls = []
        self.available = None

    def show(self, available: bool, hint: str = ''):
        """Show the controls (``available``) or the ``hint`` in their place."""
        if available == self.available and (available or self.hint.content == hint):
            return
        self.available = available
        for handle in self.controls:
            handle.visible = available
        self.hint.content = hint
        self.hint.visible = not available


class ControlPanel:
    """The panel's controls on the viewer's GUI; :meth:`tick` runs in the executor."""

    def __init__(self, viewer, names, settings):
        """Build the sections on ``viewer.server.gui``; ``names`` a viewer_links.Names."""
        self.viewer = viewer
        self.node = viewer
        self.names = names
        self.settings = settings
        self.graph = Graph(viewer)
        self.gui = gui = viewer.server.gui
        self.log = viewer.get_logger()
        sim_srv = _optional('simulation_interfaces', 'srv')
        self.sim_msg = _optional('simulation_interfaces', 'msg')
        self.sim_srv = sim_srv
        node = viewer
        self.clients = {
            'pause': node.create_client(SetBool, names.pause),
            'reset': node.create_client(Trigger, names.reset)}
        if sim_srv is not None:
            self.clients.update(
                set_state=node.create_client(sim_srv.SetSimulationState, names.set_state),
                get_state=node.create_client(sim_srv.GetSimulationState, names.get_state),
                step=node.create_client(sim_srv.StepSimulation, names.step),
                reset_simulation=node.create_client(sim_srv.ResetSimulation,
                                                    names.reset_simulation))
        self.mode = 'unknown'
        self.clock: List = []            # (wall, simulated) of /clock, last 2 s
        self.clock_sub = node.create_subscription(Clock, '/clock', self._on_clock, 10,
                                                  raw=True)   # read ten times a second
        self.trajectory_pub = node.create_publisher(JointTrajectory, names.trajectory, 10)
        self.command_pub = node.create_publisher(JointState, names.joint_commands, 10)
        self.joints: List[str] = []
        self.sliders: Dict[str, object] = {}
        self.targets: Dict[str, float] = {}
        self.touched = -math.inf         # monotonic time of the last slider change
        # a browser's slider change (viser's thread) against the sliders following the
        # arm (the executor's): a change must not be overwritten by the arm's position
        self.slider_lock = threading.RLock()
        self.sent_touch = -math.inf      # the change last sent
        self.last_follow = -math.inf
        self.ramp = None                 # (start time, q0, q1, duration) of a JointState move
        self.busy_until = -math.inf      # sliders follow the arm after this
        self.controller_joints: Optional[List[str]] = None
        self._status_text = None
        self._last_state_poll = -math.inf
        self._last_graph = -math.inf
        self.moves_sent = 0
        self.rejected = 0

        self.sim = Section(gui, 'Simulation', 1.0)
        with self.sim.folder:
            self.status = gui.add_markdown('mode: unknown')
            self.play = gui.add_button('Play', hint='run the simulation')
            self.pause = gui.add_button('Pause', hint='stop the simulated time')
            self.steps = gui.add_number('Steps', 10, min=1, max=100000, step=1,
                                        hint='physics steps taken by Step')
            self.step = gui.add_button('Step', hint='pause, then take Steps physics steps')
            self.reset = gui.add_button('Reset', hint='back to the initial state')
            self.sim_result = gui.add_markdown('')
        self.sim.controls = [self.status, self.play, self.pause, self.steps, self.step,
                             self.reset, self.sim_result]
        self.play.on_click(lambda event: self._set_paused(False))
        self.pause.on_click(lambda event: self._set_paused(True))
        self.step.on_click(lambda event: self._step(_integer(self.steps.value)))
        self.reset.on_click(lambda event: self._reset())

        self.joint_section = Section(gui, 'Joints', 2.0)
        with self.joint_section.folder:
            self.follow = gui.add_dropdown(
                'Sliders', ('Send', 'Follow'), initial_value='Send',
                hint='Send: a move when a slider rests (on release); Follow: live')
            self.move_time = gui.add_number('Move time', float(settings['move_time']),
                                            min=0.1, max=60.0, step=0.1,
                                            hint='duration of a move [s]')
            self.slider_folder = gui.add_folder('Positions')
        self.joint_section.controls = [self.follow, self.move_time, self.slider_folder]

        self.gripper = Section(gui, 'Gripper', 3.0)
        self.gripper_type = _optional('control_msgs.action', 'GripperCommand')
        self.gripper_client = None
        if self.gripper_type is not None:
            from rclpy.action import ActionClient
            self.gripper_client = ActionClient(node, self.gripper_type, names.gripper)
        self.finger = None
        with self.gripper.folder:
            self.open = gui.add_button('Open')
            self.close = gui.add_button('Close')
            self.width = gui.add_slider('Width', 0.0, 0.1, 0.001, 0.0,
                                        hint='finger position [m] (GripperCommand position)')
            self.gripper_result = gui.add_markdown('')
        self.gripper.controls = [self.open, self.close, self.width, self.gripper_result]
        self.open.on_click(lambda event: self._grip(self.finger[2]))
        self.close.on_click(lambda event: self._grip(self.finger[1]))
        self.width_touched = None
        self.width.on_update(self._on_width)
        self.gripper.folder.visible = False   # until the robot has a finger

        self.payload = Section(gui, 'Payload', 5.0)
        self.payload_type = _optional('denoc_dynamics_interfaces.srv', 'SetPayload')
        self.payload_clients = ([node.create_client(self.payload_type, name)
                                 for name in names.set_payload]
                                if self.payload_type is not None else [])
        with self.payload.folder:
            self.payload_link = gui.add_dropdown('Link', ('',), initial_value='')
            self.mass = gui.add_number('Mass', 0.0, min=0.0, max=1000.0, step=0.01,
                                       hint='payload mass [kg]')
            self.com = gui.add_vector3('Centre of mass', (0.0, 0.0, 0.0), step=0.001,
                                       hint="in the link's frame [m]")
            self.transition = gui.add_number('Transition', 0.0, min=0.0, max=60.0,
                                             step=0.1, hint='time to change to it [s]')
            self.set_payload = gui.add_button('Set payload')
            self.payload_result = gui.add_markdown('')
        self.payload.controls = [self.payload_link, self.mass, self.com, self.transition,
                                 self.set_payload, self.payload_result]
        self.set_payload.on_click(lambda event: self._set_payload())

    # --- the robot -------------------------------------------------------------------
    def set_model(self, model, positions: Dict[str, float]):
        """Make the sliders (and the gripper's) for ``model``, at ``positions``."""
        gui = self.gui
        for slider in self.sliders.values():
            slider.remove()
        self.sliders = {}
        self.joints = list(model.joint_names)
        with self.slider_folder:
            for name in self.joints:
                lower, upper = model.tree.limits[name]
                lower = -UNLIMITED if lower is None else float(lower)
                upper = UNLIMITED if upper is None else float(upper)
                value = min(max(positions.get(name, 0.0), lower), upper)
                slider = gui.add_slider(name, lower, upper, 1e-3, value)
                slider.on_update(lambda event, name=name: self._on_slider(name, event))
                self.sliders[name] = slider
        self.targets = {name: s.value for name, s in self.sliders.items()}
        self.finger = finger_joint(model)
        if self.finger is not None:
            name, lower, upper = self.finger
            self.width.min, self.width.max = lower, upper
            self.width.step = (upper - lower) / 100.0
        self.gripper.folder.visible = self.finger is not None
        links = tuple(model.tree.links)
        self.payload_link.options = links
        self.payload_link.value = self.settings['tip'] or links[-1]
        self.payload.available = None

    # --- the simulation --------------------------------------------------------------
    def _standard(self, key: str) -> bool:
        return key in self.clients and self.clients[key].service_is_ready()

    def _say(self, text: str, where=None):
        (where or self.sim_result).content = text

    def _set_paused(self, paused: bool):
        if self._standard('set_state'):
            states = self.sim_msg.SimulationState
            request = self.sim_srv.SetSimulationState.Request()
            request.state.state = states.STATE_PAUSED if paused else states.STATE_PLAYING
            call(self.clients['set_state'], request,
                 lambda r: self._on_result('paused' if paused else 'playing', r.result),
                 self._say)
        else:
            call(self.clients['pause'], SetBool.Request(data=paused),
                 lambda r: self._on_trigger('paused' if paused else 'playing', r),
                 self._say)

    def _on_result(self, mode: str, result):
        codes = self.sim_srv.SetSimulationState.Response
        ok = result.result in (self.sim_msg.Result.RESULT_OK,
                               getattr(codes, 'ALREADY_IN_TARGET_STATE', -1))
        if ok:
            self.mode = mode
        self._say(mode if ok else f'refused: {result.error_message}')

    def _on_trigger(self, mode: str, response):
        if response.success:
            self.mode = mode
        self._say(response.message if response.success else
                  f'refused: {response.message}')

    def _step(self, steps: int):
        if not 1 <= steps <= 100000:
            self._say(f'Steps must be 1 to 100000, not {steps}')
            return
        if not self._standard('step'):
            self._say("Step needs the simulator's step_simulation "
                      '(simulation_interfaces)')
            return
        request = self.sim_srv.StepSimulation.Request(steps=steps)

        def stepped(response):
            ok = response.result.result == self.sim_msg.Result.RESULT_OK
            self._say(f'stepped {steps}' if ok else
                      f'refused: {response.result.error_message}')
        if self.mode == 'paused':
            call(self.clients['step'], request, stepped, self._say)
            return
        states = self.sim_msg.SimulationState
        pause = self.sim_srv.SetSimulationState.Request()
        pause.state.state = states.STATE_PAUSED

        def paused(response):
            self.mode = 'paused'
            call(self.clients['step'], request, stepped, self._say)
        call(self.clients['set_state'], pause, paused, self._say)

    def _reset(self):
        self.busy_until = -math.inf      # the sliders follow the arm back
        self.ramp = None
        if self._standard('reset_simulation'):
            request = self.sim_srv.ResetSimulation.Request()
            request.scope = request.SCOPE_ALL
            call(self.clients['reset_simulation'], request,
                 lambda r: self._say('reset' if r.result.result ==
                                     self.sim_msg.Result.RESULT_OK else
                                     f'refused: {r.result.error_message}'), self._say)
        else:
            call(self.clients['reset'], Trigger.Request(),
                 lambda r: self._say(r.message if r.success else f'refused: {r.message}'),
                 self._say)

    def _on_clock(self, data):
        now = time.monotonic()
        if self.clock and now - self.clock[-1][0] < 0.1:
            return
        msg = deserialize_message(data, Clock)
        t = msg.clock.sec + 1e-9 * msg.clock.nanosec
        if self.clock and t < self.clock[-1][1]:
            self.clock = []              # the time was reset
        self.clock.append((now, t))
        while self.clock and now - self.clock[0][0] > 2.0:
            self.clock.pop(0)

    def sim_status(self) -> str:
        """Return the status line: mode, simulated time, real-time factor."""
        if not self.clock:
            return f'**{self.mode}** · simulated time: no `/clock`'
        (w0, t0), (w1, t1) = self.clock[0], self.clock[-1]
        idle = time.monotonic() - w1
        rtf = 0.0 if idle > 0.5 else (t1 - t0) / (w1 - w0) if w1 > w0 else float('nan')
        rtf_text = 'n/a' if math.isnan(rtf) else f'{rtf:.2f}'
        mode = self.mode
        if not self._standard('get_state') and not math.isnan(rtf):
            mode = 'playing' if rtf > 0.0 else 'paused'    # what the clock says
        return f'**{mode}** · sim time {t1:.3f} s · RTF {rtf_text}'

    def _poll_state(self):
        if not self._standard('get_state'):
            return
        states = self.sim_msg.SimulationState
        names = {states.STATE_PLAYING: 'playing', states.STATE_PAUSED: 'paused',
                 states.STATE_STOPPED: 'stopped', states.STATE_NO_WORLD: 'no world'}

        def got(response):
            self.mode = names.get(response.state.state, str(response.state.state))
        call(self.clients['get_state'], self.sim_srv.GetSimulationState.Request(), got)

    # --- the joints ------------------------------------------------------------------
    def _on_slider(self, name: str, event):
        if event.client is None:
            return                       # set here (following the arm), not by a browser
        value = float(event.target.value)
        if not math.isfinite(value):     # a page sends what it likes: refused
            self.rejected += 1
            return
        slider = event.target            # and within the limits, whatever it says
        with self.slider_lock:
            self.targets[name] = min(max(value, slider.min), slider.max)
            self.touched = time.monotonic()
            self.busy_until = math.inf

    def _move_time(self) -> float:
        return max(0.1, float(self.move_time.value))

    def send_move(self, duration: float) -> bool:
        """Send the sliders' targets as a move of ``duration`` [s]; False if nowhere to."""
        if self.graph.subscribed(self.names.trajectory):
            joints = self.controller_joints or self.joints
            if not all(name in self.targets for name in joints):
                joints = [name for name in joints if name in self.targets]
            msg = JointTrajectory(joint_names=list(joints))
            point = JointTrajectoryPoint(positions=[self.targets[n] for n in joints],
                                         velocities=[0.0] * len(joints))
            point.time_from_start.sec = int(duration)
            point.time_from_start.nanosec = int(round((duration - int(duration)) * 1e9))
            msg.points = [point]
            self.trajectory_pub.publish(msg)
        elif self.graph.subscribed(self.names.joint_commands):
            q0 = np.array([self.viewer.positions.get(n, 0.0) for n in self.joints])
            q1 = np.array([self.targets[n] for n in self.joints])
            self.ramp = (time.monotonic(), q0, q1, duration)
            self._ramp()
        else:
            return False
        self.moves_sent += 1
        self.busy_until = time.monotonic() + duration + 1.0
        return True

    def _ramp(self):
        start, q0, q1, duration = self.ramp
        s = (time.monotonic() - start) / duration
        q = q0 + min_jerk(s) * (q1 - q0)
        self.command_pub.publish(JointState(name=list(self.joints), position=q.tolist()))
        if s >= 1.0:
            self.ramp = None

    def _joints_tick(self, now: float, watched: bool):
        if self.ramp is not None:
            self._ramp()
        if self.touched > self.sent_touch:
            if self.follow.value == 'Follow':
                if now - self.last_follow >= 0.1:
                    self.last_follow = now
                    self.sent_touch = self.touched
                    self.send_move(min(self._move_time(), 0.5))
            elif now - self.touched >= REST:
                self.sent_touch = self.touched
                if not self.send_move(self._move_time()):
                    self.busy_until = -math.inf
        with self.slider_lock:
            if watched and now > self.busy_until and self.touched <= self.sent_touch:
                for name, slider in self.sliders.items():   # show where the arm is
                    value = min(max(self.viewer.positions.get(name, 0.0), slider.min),
                                slider.max)
                    if abs(slider.value - value) > 5e-4:
                        slider.value = round(value, 3)
                    self.targets[name] = value

    def on_controller_status(self, msg):
        """Take the controller's joints from its ``~/status`` (for the trajectories)."""
        if self.controller_joints != list(msg.joint_names):
            self.controller_joints = list(msg.joint_names)

    # --- the gripper -----------------------------------------------------------------
    def _on_width(self, event):
        if event.client is not None:
            self.width_touched = time.monotonic()

    def _grip(self, position: float):
        client = self.gripper_client
        if client is None or not client.server_is_ready():
            self._say('no gripper action', self.gripper_result)
            return
        goal = self.gripper_type.Goal()
        goal.command.position = float(position)
        goal.command.max_effort = float(self.settings['gripper_effort'])
        future = client.send_goal_async(goal)

        def accepted(fut):
            handle = fut.result()
            if handle is None or not handle.accepted:
                self._say('goal refused', self.gripper_result)
                return
            self._say(f'moving to {position:.4f} m', self.gripper_result)
            handle.get_result_async().add_done_callback(finished)

        def finished(fut):
            result = fut.result().result
            what = ('reached' if result.reached_goal else
                    'stalled' if result.stalled else 'stopped')
            self._say(f'{what} at {result.position:.4f} m', self.gripper_result)
        future.add_done_callback(accepted)

    # --- the payload -----------------------------------------------------------------
    def _set_payload(self):
        ready = [client for client in self.payload_clients if client.service_is_ready()]
        if not ready:
            self._say('no ~/set_payload', self.payload_result)
            return
        request = payload_request(self.payload_type, self.payload_link.value,
                                  float(self.mass.value), tuple(self.com.value),
                                  float(self.transition.value))
        answers = {}

        def answered(client, response):
            ok = getattr(response, 'success', True)
            message = getattr(response, 'message', '')
            answers[client.srv_name] = 'ok' if ok else f'refused: {message}'
            self._say('  \n'.join(f'`{name}`: {text}' for name, text in answers.items()),
                      self.payload_result)
        for client in ready:
            call(client, request, lambda r, c=client: answered(c, r),
                 lambda text: self._say(text, self.payload_result))

    # --- the periodic part (the executor) --------------------------------------------
    def tick(self):
        """Refresh what exists (1 Hz), the status (2 Hz), and send the pending moves."""
        now = time.monotonic()
        watched = bool(self.viewer.server.get_clients())
        if now - self._last_graph >= 1.0:
            try:
                self.graph.refresh()
                self._show_sections()
            finally:               # after the sections: a reader of it sees them shown
                self._last_graph = now
        if self.width_touched is not None and now - self.width_touched >= REST:
            self.width_touched = None
            self._grip(self.width.value)
        slow = watched and now - self._last_state_poll >= 0.5    # 2 Hz for the page
        if self.joints:
            self._joints_tick(now, slow)
        if slow:
            self._last_state_poll = now
            self._poll_state()
            text = self.sim_status()
            if text != self._status_text:
                self._status_text = self.status.content = text

    def _show_sections(self):
        graph, names = self.graph, self.names
        standard = graph.service(names.set_state)
        fallback = graph.service(names.pause)
        self.sim.show(standard or fallback,
                      f'no simulator in `{names.namespace}`: `{names.sim}/pause` or '
                      '`set_simulation_state` is not offered')
        self.step.disabled = not graph.service(names.step)
        if self.joints:
            self.joint_section.show(
                graph.subscribed(names.trajectory) or graph.subscribed(names.joint_commands),
                f'nobody listens to `{names.trajectory}` nor `{names.joint_commands}`')
        else:
            self.joint_section.show(False, 'waiting for the robot description')
        if self.finger is not None:
            self.gripper.show(
                self.gripper_type is not None and graph.action(names.gripper),
                f'no gripper action `{names.gripper}`' + (
                    '' if self.gripper_type is not None else ' (control_msgs not installed)'))
        self.payload.show(
            self.payload_type is not None and any(graph.service(n) for n in names.set_payload),
            'no `~/set_payload` on the simulator, the dynamics node or the controller'
            + ('' if self.payload_type is not None else
               ' (this build has no SetPayload service type)'))


def finger_joint(model):
    """
    Return (name, closed, open) of the gripper's finger joint, or None.

    The finger is a prismatic coordinate with limits whose name says ``finger`` or
    that another joint mimics (a parallel gripper); closed is its lower limit.
    """
    robot = model.robot
    mimicked = {joint.mimic.joint for joint in robot.joints if joint.mimic is not None}
    for joint in robot.joints:
        if joint.name not in model.tree.limits or joint.type != 'prismatic':
            continue
        lower, upper = model.tree.limits[joint.name]
        if lower is None or upper is None:
            continue
        if 'finger' in joint.name.lower() or joint.name in mimicked:
            return joint.name, float(lower), float(upper)
    return None


def payload_request(srv_type, link: str, mass: float, com, transition: float):
    """
    Return a SetPayload request (a point mass at ``com``), its fields found by name.

    The request has ``link``, ``mass``, the centre of mass (a Point or Vector3, or
    three numbers), the inertia (six values, here zero: a point mass) and the
    transition time (a Duration or seconds).
    """
    request = srv_type.Request()
    fields = request.get_fields_and_field_types()
    for name, kind in fields.items():
        lowered = name.lower()
        value = getattr(request, name)
        if lowered == 'link' or lowered.endswith('link'):
            setattr(request, name, link)
        elif lowered == 'mass':
            setattr(request, name, mass)
        elif 'com' in lowered or 'center' in lowered or 'centre' in lowered:
            if hasattr(value, 'x'):
                value.x, value.y, value.z = (float(c) for c in com)
            else:
                setattr(request, name, [float(c) for c in com])
        elif 'transition' in lowered or 'time' in lowered:
            if hasattr(value, 'sec'):
                value.sec = int(transition)
                value.nanosec = int(round((transition - int(transition)) * 1e9))
            else:
                setattr(request, name, float(transition))
    return request
