"""
The ROS 2 standard simulator interface (``simulation_interfaces``) on the sim node.

Gazebo and Isaac Sim implement the services and actions of the
``simulation_interfaces`` package; the sim node offers the ones that a simulation of
one arm has, under its own name as Gazebo does under ``/gzserver`` (here
``/sim_node/...``):

``~/get_simulator_features`` (GetSimulatorFeatures)
  exactly the features below: SIMULATION_RESET, SIMULATION_RESET_TIME,
  SIMULATION_RESET_STATE, SIMULATION_STATE_GETTING, SIMULATION_STATE_SETTING,
  SIMULATION_STATE_PAUSE, STEP_SIMULATION_SINGLE, STEP_SIMULATION_MULTIPLE,
  STEP_SIMULATION_ACTION, ENTITY_STATE_GETTING, ENTITY_INFO_GETTING, ENTITY_CATEGORIES.
``~/get_entities``, ``~/get_entities_states`` (GetEntities, GetEntitiesStates)
  every link of the arm is an entity, named as in the URDF (merged fixed links such as
  ``flange`` included), of category CATEGORY_ROBOT.  The filter is a regular
  expression searched in the name (Python's ``re``, which reads POSIX extended ones);
  categories filter as the definition says; tags and bounds filters are
  RESULT_FEATURE_UNSUPPORTED (the links have no tags, and no geometry here).
``~/get_entity_state`` (GetEntityState)
  the ground truth of a link from the simulation's own state, in the base link's
  frame (``header.frame_id``, with ``frame_prefix``), stamped like joint_states: its
  pose, the twist of its origin and its classical acceleration J qdd + J-dot qd, qdd
  the simulation's forward dynamics at the state and the applied efforts (zero in
  hold mode, where the arm is held still): ``Robot.frame_placement``,
  ``frame_velocity`` and ``frame_acceleration_bias`` in ``'local_world_aligned'``.
  An unknown name is RESULT_NOT_FOUND.
``~/get_entity_info`` (GetEntityInfo)
  CATEGORY_ROBOT and a description naming the joint that moves the link.
``~/reset_simulation`` (ResetSimulation)
  SCOPE_TIME sets the simulated time back to zero (state and commands stay);
  SCOPE_STATE puts the arm back in its initial state, in hold mode (the time runs
  on); SCOPE_ALL (and SCOPE_DEFAULT) both, as ``~/reset`` does.  Paused stays paused,
  as in Gazebo.  SCOPE_SPAWNED: RESULT_FEATURE_UNSUPPORTED (nothing is spawned).
``~/get_simulation_state``, ``~/set_simulation_state`` (Get/SetSimulationState)
  STATE_PLAYING, STATE_PAUSED and STATE_STOPPED (reset and paused, until it is played,
  paused or stepped); the hold mode, where time runs, counts as playing.  Setting the
  current state gives ALREADY_IN_TARGET_STATE, playing a failed (non-finite)
  simulation STATE_TRANSITION_ERROR (reset it first), the other states
  RESULT_FEATURE_UNSUPPORTED.  Without a robot model yet the state is STATE_NO_WORLD.
``~/step_simulation`` (StepSimulation), ``~/simulate_steps`` (action SimulateSteps)
  exactly ``steps`` physics steps (1 / ``physics_rate`` of simulated time each), while
  paused, and paused again after; otherwise RESULT_OPERATION_FAILED, as the
  definitions say.  Both step one publish period at a time, publishing after each
  and letting the other callbacks run in between (the action's feedback comes then);
  the action can be cancelled between two periods.  Stepping ends (RESULT_OPERATION_
  FAILED, saying why and after how many steps) when the state is set (PAUSED,
  STOPPED, PLAYING), the simulation is reset (any scope, ``~/reset``, ``~/pause``), or
  the caller is gone (fewer clients of the service, or subscribers of the action's
  feedback, than when the stepping began).  One stepping at a time: a step request
  while another runs is refused (RESULT_OPERATION_FAILED, "already stepping"), counted
  and logged, never run
  alongside (N callers never step N times as fast).

Requests: every service here and the action queue up to ``REQUEST_DEPTH`` requests
(:mod:`.joint_io`: a burst of callers), not rclpy's default 10.

``~/reset`` and ``~/pause`` stay as they are.  The package is not on PyPI: where it
cannot be imported the node runs without these and says so in one log line.
"""

import importlib
import re

import numpy as np

from .joint_io import Rejected
from .joint_io import Rejections
from .joint_io import REQUEST_QOS
from .ros_time import set_duration
from .task_space_io import pose_message


def import_interfaces():
    """Return the msg, srv and action modules of simulation_interfaces (ImportError)."""
    modules = [importlib.import_module(f'simulation_interfaces.{kind}')
               for kind in ('msg', 'srv', 'action')]
    importlib.import_module('rclpy.action')   # needs rcl_action
    return modules


def attach_simulation_services(node):
    """Offer the simulation_interfaces services on the sim ``node``; None if not installed."""
    try:
        modules = import_interfaces()
    except ImportError as exc:
        node.get_logger().info(f'simulation_interfaces is not installed ({exc}): the '
                               'standard simulator services are off (~/reset and ~/pause '
                               'are there)')
        return None
    return SimulationServices(node, *modules)


class SimulationServices:
    """The services and the action; see the module docstring."""

    def __init__(self, node, msg, srv, action):
        """Create them on ``node`` (a SimNode)."""
        from rclpy.action import ActionServer
        from rclpy.action import CancelResponse
        from rclpy.action import GoalResponse
        from rclpy.callback_groups import ReentrantCallbackGroup
        self.node, self.msg, self.srv, self.action = node, msg, srv, action
        features = msg.SimulatorFeatures
        self.features = [
            features.SIMULATION_RESET, features.SIMULATION_RESET_TIME,
            features.SIMULATION_RESET_STATE, features.SIMULATION_STATE_GETTING,
            features.SIMULATION_STATE_SETTING, features.SIMULATION_STATE_PAUSE,
            features.STEP_SIMULATION_SINGLE, features.STEP_SIMULATION_MULTIPLE,
            features.STEP_SIMULATION_ACTION, features.ENTITY_STATE_GETTING,
            features.ENTITY_INFO_GETTING, features.ENTITY_CATEGORIES]
        # Not the node's default (mutually exclusive) group: a stepping service waits for
        # the physics timer's ticks, which must run meanwhile.
        group = ReentrantCallbackGroup()
        for srv_type, name, callback in (
                (srv.GetSimulatorFeatures, 'get_simulator_features', self._features),
                (srv.ResetSimulation, 'reset_simulation', self._reset),
                (srv.GetSimulationState, 'get_simulation_state', self._get_state),
                (srv.SetSimulationState, 'set_simulation_state', self._set_state),
                (srv.StepSimulation, 'step_simulation', self._step),
                (srv.GetEntities, 'get_entities', self._get_entities),
                (srv.GetEntitiesStates, 'get_entities_states', self._get_entities_states),
                (srv.GetEntityState, 'get_entity_state', self._get_entity_state),
                (srv.GetEntityInfo, 'get_entity_info', self._get_entity_info)):
            node.create_service(srv_type, f'~/{name}', callback, callback_group=group,
                                qos_profile=REQUEST_QOS)
        self.action_name = f'{node.get_fully_qualified_name()}/simulate_steps'
        self.action_server = ActionServer(
            node, action.SimulateSteps, self.action_name, self._simulate_steps,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT, callback_group=group,
            goal_service_qos_profile=REQUEST_QOS, result_service_qos_profile=REQUEST_QOS,
            cancel_service_qos_profile=REQUEST_QOS)
        self.stepping = False
        self.refused = Rejections(node.get_logger(), 'step request')

    # --- helpers ----------------------------------------------------------------------
    def _result(self, result, code, message=''):
        result.result = code
        result.error_message = message
        return result

    def _no_model(self, result):
        """Fill ``result`` and return True if there is no robot model yet."""
        if self.node.sim is not None:
            return False
        self._result(result, self.msg.Result.RESULT_OPERATION_FAILED, 'no robot model yet')
        return True

    def state(self):
        """Return the current SimulationState value."""
        states = self.msg.SimulationState
        sim = self.node.sim
        if sim is None:
            return states.STATE_NO_WORLD
        if sim.stopped:
            return states.STATE_STOPPED
        if sim.paused or sim.failure is not None:
            return states.STATE_PAUSED
        return states.STATE_PLAYING

    def _restarted(self):
        """Restart the pacing after the time or the state jumped."""
        self.node.runner.set_simulation(self.node.sim)

    # --- services ---------------------------------------------------------------------
    def _features(self, request, response):
        response.features.features = list(self.features)
        response.features.custom_info = (
            'denoc_dynamics sim_node: one arm, DeNOC forward dynamics at physics_rate; '
            'its links are the entities (CATEGORY_ROBOT); spawning and worlds are not '
            'supported')
        return response

    def _reset(self, request, response):
        if self._no_model(response.result):
            return response
        scope = request.scope
        R = self.srv.ResetSimulation.Request
        if scope in (R.SCOPE_DEFAULT, R.SCOPE_ALL):
            scope = R.SCOPE_TIME | R.SCOPE_STATE
        if scope & ~(R.SCOPE_TIME | R.SCOPE_STATE):
            self._result(response.result, self.msg.Result.RESULT_FEATURE_UNSUPPORTED,
                         'only SCOPE_TIME, SCOPE_STATE and SCOPE_ALL are supported: '
                         'nothing is spawned in this simulation')
            return response
        sim = self.node.sim
        paused = sim.paused
        if scope & R.SCOPE_STATE:
            sim.reset_state()
        if scope & R.SCOPE_TIME:
            sim.reset_time()
        sim.paused = paused
        self._restarted()
        self.node.step_generation += 1
        what = {R.SCOPE_TIME: 'time', R.SCOPE_STATE: 'state'}.get(scope, 'time and state')
        self.node.get_logger().info(f'reset_simulation: {what} reset')
        self._result(response.result, self.msg.Result.RESULT_OK)
        return response

    def _get_state(self, request, response):
        response.state.state = self.state()
        sim = self.node.sim
        message = '' if sim is None or sim.failure is None else f'failed: {sim.failure}'
        self._result(response.result, self.msg.Result.RESULT_OK, message)
        return response

    def _set_state(self, request, response):
        if self._no_model(response.result):
            return response
        states, Response = self.msg.SimulationState, self.srv.SetSimulationState.Response
        target = request.state.state
        if target not in (states.STATE_PLAYING, states.STATE_PAUSED, states.STATE_STOPPED):
            self._result(response.result, self.msg.Result.RESULT_FEATURE_UNSUPPORTED,
                         'only STATE_PLAYING, STATE_PAUSED and STATE_STOPPED are supported')
            return response
        self.node.step_generation += 1    # ends a stepping under way, whatever the target
        if target == self.state():
            self._result(response.result, Response.ALREADY_IN_TARGET_STATE)
            return response
        sim = self.node.sim
        if target == states.STATE_PLAYING and sim.failure is not None:
            self._result(response.result, Response.STATE_TRANSITION_ERROR,
                         f'the simulation failed ({sim.failure}): reset it first')
            return response
        if target == states.STATE_STOPPED:
            sim.stop()
            self._restarted()
        else:
            sim.set_paused(target == states.STATE_PAUSED)
        self._result(response.result, self.msg.Result.RESULT_OK)
        return response

    def _begin(self, result):
        """Take the stepping for one caller; fill ``result`` and return False if refused."""
        if not self.stepping:
            self.stepping = True
            return True
        self.refused.add(Rejected('already stepping', 'a step request while another '
                                  'stepping runs: refused (one at a time)'))
        self._result(result, self.msg.Result.RESULT_OPERATION_FAILED,
                     'already stepping: another StepSimulation or SimulateSteps runs; '
                     'one at a time')
        return False

    async def _advance(self, steps, on_period=None, cancelled=None, gone=None):
        """
        Step ``steps`` physics steps while paused, a publish period at a time.

        Return (steps taken, None) or (steps taken, why it stopped early): cancelled,
        the state set or the simulation reset meanwhile (``step_generation``), the
        caller ``gone()``, not paused or failed.  Releases the stepping at the end.
        """
        try:
            return await self._advance_periods(steps, on_period, cancelled, gone)
        finally:
            self.stepping = False

    async def _advance_periods(self, steps, on_period, cancelled, gone):
        done = 0
        generation = self.node.step_generation
        while done < steps:
            if cancelled is not None and cancelled():
                return done, 'cancelled'
            if self.node.step_generation != generation:
                return done, 'the simulation state was set or reset meanwhile'
            if gone is not None and gone():
                return done, 'the caller is gone'
            sim = self.node.sim
            if not sim.paused or sim.failure is not None:
                return done, ('the simulation is not paused' if sim.failure is None
                              else f'the simulation failed: {sim.failure}')
            chunk = min(steps - done, self.node.runner.chunk)
            taken = self.node.step_paused(chunk)
            done += taken
            if taken < chunk:
                return done, f'the simulation failed: {self.node.sim.failure}'
            if on_period is not None:
                on_period(done)
            if done < steps:
                await self.node.next_tick()
        return done, None

    async def _step(self, request, response):
        if self._no_model(response.result):
            return response
        Result = self.msg.Result
        if not self.node.sim.paused:
            self._result(response.result, Result.RESULT_OPERATION_FAILED,
                         'the simulation is not paused: pause it before stepping')
            return response
        if not self._begin(response.result):
            return response
        name = f'{self.node.get_fully_qualified_name()}/step_simulation'
        callers = self.node.count_clients(name)
        done, failure = await self._advance(
            request.steps, gone=lambda: self.node.count_clients(name) < callers)
        if failure is None:
            self._result(response.result, Result.RESULT_OK)
        else:
            self._result(response.result, Result.RESULT_OPERATION_FAILED,
                         f'{failure} after {done} of {request.steps} steps')
        return response

    async def _simulate_steps(self, goal_handle):
        Result = self.msg.Result
        result = self.action.SimulateSteps.Result()
        steps = goal_handle.request.steps
        if self.node.sim is None or not self.node.sim.paused:
            goal_handle.abort()
            self._result(result.result, Result.RESULT_OPERATION_FAILED,
                         'no robot model yet' if self.node.sim is None else
                         'the simulation is not paused: pause it before stepping')
            return result
        if not self._begin(result.result):
            goal_handle.abort()
            return result
        feedback = self.action.SimulateSteps.Feedback()
        feedback_topic = f'{self.action_name}/_action/feedback'
        listeners = self.node.count_subscribers(feedback_topic)

        def on_period(done):
            feedback.completed_steps = done
            feedback.remaining_steps = steps - done
            goal_handle.publish_feedback(feedback)

        done, failure = await self._advance(
            steps, on_period, lambda: goal_handle.is_cancel_requested,
            lambda: self.node.count_subscribers(feedback_topic) < listeners)
        if failure is None:
            goal_handle.succeed()
            self._result(result.result, Result.RESULT_OK)
        elif failure == 'cancelled':
            goal_handle.canceled()
            self._result(result.result, Result.RESULT_OK,
                         f'cancelled after {done} of {steps} steps')
        else:
            goal_handle.abort()
            self._result(result.result, Result.RESULT_OPERATION_FAILED,
                         f'{failure} after {done} of {steps} steps')
        return result

    # --- entities: the links of the arm ------------------------------------------------
    def _filtered(self, filters, result):
        """Return the links that pass ``filters`` (EntityFilters), or None (result set)."""
        Result = self.msg.Result
        if self._no_model(result):
            return None
        if len(filters.tags.tags) or filters.bounds.type != self.msg.Bounds.TYPE_EMPTY:
            self._result(result, Result.RESULT_FEATURE_UNSUPPORTED,
                         'the links have no tags and no bounds: filter by name or category')
            return None
        try:
            pattern = re.compile(filters.filter)
        except re.error as exc:
            self._result(result, Result.RESULT_OPERATION_FAILED,
                         f'filter {filters.filter!r} is not a regular expression: {exc}')
            return None
        robot_category = self.msg.EntityCategory.CATEGORY_ROBOT
        if len(filters.categories) and all(c.category != robot_category
                                           for c in filters.categories):
            names = []
        else:
            names = [name for name in self.node.sim.robot.frames if pattern.search(name)]
        self._result(result, Result.RESULT_OK)
        return names

    def _get_entities(self, request, response):
        names = self._filtered(request.filters, response.result)
        if names is not None:
            response.entities = names
        return response

    def _get_entities_states(self, request, response):
        names = self._filtered(request.filters, response.result)
        if names is not None:
            response.entities = names
            response.states = self.entity_states(names)
        return response

    def _get_entity_state(self, request, response):
        if self._no_model(response.result):
            return response
        if request.entity not in self.node.sim.robot.frames:
            self._result(response.result, self.msg.Result.RESULT_NOT_FOUND,
                         f'no entity {request.entity!r}: the entities are the links '
                         f'{", ".join(self.node.sim.robot.frames)}')
            return response
        response.state = self.entity_states([request.entity])[0]
        self._result(response.result, self.msg.Result.RESULT_OK)
        return response

    def entity_states(self, names):
        """Return the EntityState of each link in ``names`` at the simulation's state."""
        node = self.node
        sim = node.sim
        q, qd, t = sim.q.copy(), sim.qd.copy(), sim.t
        held = sim.mode == 'hold'
        qdd = (np.zeros(sim.n) if held else
               sim.model.acceleration(q, qd, np.array(sim.applied_effort, dtype=float)))
        robot = sim.robot
        stamp = node.get_clock().now().to_msg()      # as joint_states is stamped
        if node.time.publisher is not None:
            set_duration(stamp, t)
        frame_id = (node.tf.prefix if node.tf is not None else '') + robot.frames[0]
        states = []
        for name in names:
            state = self.msg.EntityState()
            state.header.stamp, state.header.frame_id = stamp, frame_id
            pose_message(robot.frame_placement(q, name), state.pose)
            v = robot.frame_velocity(q, qd, name)
            a = robot.frame_acceleration_bias(q, qd, name) + robot.frame_jacobian(q, name) @ qdd
            for vector, values in ((state.twist.linear, v[:3]), (state.twist.angular, v[3:]),
                                   (state.acceleration.linear, a[:3]),
                                   (state.acceleration.angular, a[3:])):
                vector.x, vector.y, vector.z = values.tolist()
            states.append(state)
        return states

    def _get_entity_info(self, request, response):
        if self._no_model(response.result):
            return response
        robot = self.node.sim.robot
        chain = robot.chain
        if request.entity not in robot.frames:
            self._result(response.result, self.msg.Result.RESULT_NOT_FOUND,
                         f'no entity {request.entity!r}: the entities are the links '
                         f'{", ".join(robot.frames)}')
            return response
        f = robot.frames.index(request.entity)
        body = int(chain.frame_body[f])
        moved = (f'moved by joint {chain.joint_names[body]!r}' if body >= 0
                 else 'fixed to the base')
        response.info.category.category = self.msg.EntityCategory.CATEGORY_ROBOT
        response.info.description = f'link {request.entity!r} of robot {chain.name!r}, {moved}'
        self._result(response.result, self.msg.Result.RESULT_OK)
        return response
