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
  STEP_SIMULATION_ACTION.
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
  the action can be cancelled between two periods.

``~/reset`` and ``~/pause`` stay as they are.  The package is not on PyPI: where it
cannot be imported the node runs without these and says so in one log line.
"""

import importlib


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
            features.STEP_SIMULATION_ACTION]
        # Not the node's default (mutually exclusive) group: a stepping service waits for
        # the physics timer's ticks, which must run meanwhile.
        group = ReentrantCallbackGroup()
        for srv_type, name, callback in (
                (srv.GetSimulatorFeatures, 'get_simulator_features', self._features),
                (srv.ResetSimulation, 'reset_simulation', self._reset),
                (srv.GetSimulationState, 'get_simulation_state', self._get_state),
                (srv.SetSimulationState, 'set_simulation_state', self._set_state),
                (srv.StepSimulation, 'step_simulation', self._step)):
            node.create_service(srv_type, f'~/{name}', callback, callback_group=group)
        self.action_server = ActionServer(
            node, action.SimulateSteps,
            f'{node.get_fully_qualified_name()}/simulate_steps', self._simulate_steps,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT, callback_group=group)

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
            'entities, spawning and worlds are not supported')
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

    async def _advance(self, steps, on_period=None, cancelled=None):
        """
        Step ``steps`` physics steps while paused, a publish period at a time.

        Return (steps taken, None) or (steps taken, why it stopped early).
        """
        done = 0
        while done < steps:
            if cancelled is not None and cancelled():
                return done, 'cancelled'
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
        done, failure = await self._advance(request.steps)
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
        feedback = self.action.SimulateSteps.Feedback()

        def on_period(done):
            feedback.completed_steps = done
            feedback.remaining_steps = steps - done
            goal_handle.publish_feedback(feedback)

        done, failure = await self._advance(
            steps, on_period, lambda: goal_handle.is_cancel_requested)
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
