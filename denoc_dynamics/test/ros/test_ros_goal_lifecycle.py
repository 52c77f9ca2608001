"""
Goals over real DDS in the launch layout's processes: jumps of time and shutdown.

sim_node publishes /clock and the controller runs on it (``use_sim_time``, as
``sim_arm.launch.py use_sim_time:=true`` starts them, reading ``robot_joint_states``).
A goal under way when the simulation is reset, reset in time only, or stopped (the
simulation_interfaces services) ends ABORTED with the reason, never SUCCEEDED; the
arm is then held where it is.  A goal under way when the controller gets Ctrl-C ends
ABORTED, "shutting down".
"""

import time

from denoc_dynamics.resources import bundled_urdf
import numpy as np
import pytest
from ros_helpers import NodeProcess
from ros_helpers import ros_args
from ros_helpers import RosClient

pytestmark = [pytest.mark.ros, pytest.mark.ros2_msgs]

POSE = [0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0]
NAMES = [f'joint{k}' for k in range(1, 8)]
ABORTED = 6       # action_msgs/GoalStatus.STATUS_ABORTED
SUCCEEDED = 4


def start_arm(prefix):
    sim = NodeProcess('sim_node', ros_args(urdf_path=bundled_urdf(), initial_positions=POSE,
                                           status_period=0.0, publish_clock=True)
                      + ['-r', f'__ns:=/{prefix}'])
    controller = NodeProcess('trajectory_controller', ros_args(
        urdf_path=bundled_urdf(), use_sim_time=True,
        # the simulated arm's friction model, from the sim's pose and default physics
        simulated_friction=True, initial_positions=POSE)
        + ['-r', f'__ns:=/{prefix}', '-r', 'joint_states:=robot_joint_states'])
    return sim, controller


@pytest.fixture
def arm(ros2_msgs, request):
    from moveit_client import MoveItLikeClient
    prefix = f'lifecycle_{request.node.name.split("[")[-1].rstrip("]").replace(" ", "_")}'
    prefix = ''.join(c if c.isalnum() else '_' for c in prefix)
    sim, controller = start_arm(prefix)
    ros = RosClient(f'{prefix}_client')
    client = MoveItLikeClient(ros, namespace=prefix)
    client.prefix = prefix
    try:
        client.wait_ready(NAMES)
    except AssertionError:
        raise AssertionError(sim.describe() + controller.describe())
    yield client, sim, controller
    ros.close()
    controller.stop()
    sim.stop()


def far_goal(client, seconds=4.0):
    from moveit_client import quintic
    here = client.positions(NAMES)
    return client.send(quintic(NAMES, here, here + 0.5 * np.sign(0.1 - here), seconds, 4))


def call(client, srv_type, name, request):
    service = client.ros.node.create_client(srv_type, f'/{client.prefix}/sim_node/{name}')
    assert service.wait_for_service(timeout_sec=10.0), name
    return client.ros.call(service, request)


@pytest.mark.parametrize('case', ['reset', 'pause and reset all', 'reset time', 'stopped'])
def test_a_goal_under_a_jump_of_simulated_time_is_aborted(arm, case):
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import ResetSimulation
    from simulation_interfaces.srv import SetSimulationState
    from std_srvs.srv import SetBool
    from std_srvs.srv import Trigger
    client, sim, controller = arm
    handle = far_goal(client)
    client.ros.spin_for(1.5)
    if case == 'reset':
        call(client, Trigger, 'reset', Trigger.Request())
    elif case == 'pause and reset all':
        call(client, SetBool, 'pause', SetBool.Request(data=True))
        call(client, ResetSimulation, 'reset_simulation',
             ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_ALL))
    elif case == 'reset time':
        call(client, ResetSimulation, 'reset_simulation',
             ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_TIME))
    else:
        call(client, SetSimulationState, 'set_simulation_state', SetSimulationState.Request(
            state=SimulationState(state=SimulationState.STATE_STOPPED)))
    status, result = client.result(handle, timeout=10.0)
    assert status == ABORTED, (status, result, controller.output()[-2000:])
    assert 'clock jumped back' in result.error_string, result.error_string
    if case in ('pause and reset all', 'stopped'):
        state = SimulationState(state=SimulationState.STATE_PLAYING)
        call(client, SetSimulationState, 'set_simulation_state',
             SetSimulationState.Request(state=state))
    # held where the arm is: no motion resumes when the simulated time gets back there
    start = client.positions(NAMES)
    client.ros.spin_for(5.0)
    moved = np.abs(client.positions(NAMES) - start).max()
    assert moved < 0.02, f'the arm moved {moved:.3f} rad after the abort'


def test_ctrl_c_gives_the_running_goal_its_result(arm):
    client, sim, controller = arm
    handle = far_goal(client, seconds=20.0)
    future = handle.get_result_async()     # as MoveIt asks, at once
    client.ros.spin_for(1.0)
    start = time.monotonic()
    code = controller.interrupt()
    assert client.ros.spin_until(future.done, 5.0), controller.describe()
    status, result = future.result().status, future.result().result
    assert status == ABORTED, (status, result, controller.describe())
    assert result.error_string == 'shutting down'
    assert code == 0 and time.monotonic() - start < 10.0
