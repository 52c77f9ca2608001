"""
Tracking error of the default arm on the demo trajectory: computed torque vs PD + g.

What the inertia matrix buys.  The default arm (denoc_arm7, RK4 at 1 kHz, URDF
damping and friction) follows the ``denoc_sim_arm`` demo trajectory (a 12 s loop of
quintic segments through four poses, up to 0.6 rad per joint), controlled at the
rate of ``joint_states`` (``publish_rate`` of the installed ``config/sim_arm.yaml``):

1. In process, no ROS (:func:`denoc_dynamics.computed_torque.sampled_loop`): every
   control period the state is sampled and one effort command computed and held
   until the next sample, as the trajectory_controller node does with each joint
   state.  Computed torque ``M(q) (qdd_d + K_d e' + K_p e) + b(q, qd)`` (plus the URDF
   friction at the desired velocity) against PD plus gravity compensation
   ``g(q) + D (K_p e + K_d e')`` with the same gains (K_p = 400 / s^2, K_d = 40 / s;
   D = diag M(q_0), so that each joint alone has the same natural frequency and
   damping), on the same trajectory; computed torque also at other control rates,
   and with its commands 1 and 3 control periods late.
2. Through ROS: ``denoc_sim_arm --duration T`` (sim node, dynamics node, trajectory
   controller and demo in one process, real DDS), its ``~/controller_state``
   recorded from another process; the error of every state while the demo runs.
   This one depends on the machine's load: a command that misses its physics chunk
   acts a period late.

3. At rest: a MoveIt-like 10-point, 3 s quintic move (in process, 100 Hz), with the
   controller's friction model scaled by 0.5, 1 and 1.5 (and, for comparison, without
   ``friction_feedback``): the error in motion beside the largest joint error 1 s after
   the last point (target: 1 mrad).

Errors are joint position errors q_d - q in radians, RMS over all joints and samples.
"""

import json
import os
from pathlib import Path
import random
import re
import subprocess
import sys
import time

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np

NAME = 'tracking'
TITLE = 'Trajectory tracking, denoc_arm7 demo: computed torque vs PD + gravity'
RMS_TARGET = 1e-3        # [rad]
RATIO_TARGET = 10.0
KP, KD = 225.0, 30.0
PHYSICS_RATE = 1000.0
DEFAULT_RATE = 100.0
DEMO_PERIOD = 12.0
#: The point-to-point move of :func:`point_to_point` (a reported example) [rad].
MOVE = np.array([0.3, -0.2, 0.3, 0.25, -0.3, 0.2, 0.3])
REST_TARGET = 1e-3       # [rad] every joint, 1 s after the last point
FRICTION_FEEDBACK = 15.0  # [1/s] the controller's default


def _config_value(key, default):
    """Return a number from sim_node's section of the installed (or source) sim_arm.yaml."""
    for path in (common.INSTALL_DIR / 'denoc_dynamics' / 'share' / 'denoc_dynamics' / 'config'
                 / 'sim_arm.yaml', common.REPO / 'denoc_dynamics' / 'config' / 'sim_arm.yaml'):
        if path.is_file():
            match = re.search(rf'^sim_node:.*?^\s+{key}:\s*([-+0-9.eE]+)', path.read_text(),
                              re.M | re.S)
            if match:
                return float(match.group(1)), str(path)
    return default, 'default'


def sampled(robot, law_name, rate, duration, pose, delay=0) -> dict:
    """Run the sampled control loop in process; return the error statistics."""
    from denoc_dynamics.computed_torque import ComputedTorque, PDGravity, sampled_loop
    from denoc_dynamics.sim_settings import PhysicsParameters
    from denoc_dynamics.simulation import Simulation
    from denoc_dynamics.trajectory import check_trajectory, demo_trajectory, Trajectory
    sim = Simulation(robot, PhysicsParameters(physics_rate=PHYSICS_RATE, fd_method='denoc',
                                              command_timeout=0.0),
                     initial_positions=pose, start_mode='running')
    chain = robot.chain
    checked = check_trajectory(robot.joint_names, chain.lower, chain.upper, robot.joint_names,
                               demo_trajectory(chain.lower, chain.upper, pose, DEMO_PERIOD))
    zero = np.zeros(robot.n)
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, (pose, zero, zero))
    if law_name == 'computed_torque':
        law = ComputedTorque(robot, KP, KD, friction_velocity=sim.model.friction_velocity)
    else:
        law = PDGravity(robot, KP, KD, pose)
    start = time.perf_counter()
    errors = sampled_loop(sim, law, trajectory, rate, duration, delay)
    wall = time.perf_counter() - start
    return _statistics(errors) | {'law': law_name, 'rate_hz': rate, 'duration_s': duration,
                                  'delay_periods': delay, 'wall_s': wall}


def point_to_point(robot, pose, scale, feedback, move=3.0, rest=1.0) -> dict:
    """
    A MoveIt-like move in process: errors in motion and at rest, friction model x ``scale``.

    A 10-point rest-to-rest quintic of ``move`` seconds to pose + :data:`MOVE`, at the
    control rate of 100 Hz, with the controller's friction compensation scaled by
    ``scale`` (the arm keeps its URDF friction) and ``friction_feedback`` ``feedback``;
    the at-rest error is the largest joint error ``rest`` seconds after the last point.
    """
    from denoc_dynamics.computed_torque import ComputedTorque, sampled_loop
    from denoc_dynamics.sim_settings import PhysicsParameters
    from denoc_dynamics.simulation import Simulation
    from denoc_dynamics.trajectory import check_trajectory, Trajectory, TrajectoryPoint
    sim = Simulation(robot, PhysicsParameters(physics_rate=PHYSICS_RATE, command_timeout=0.0),
                     initial_positions=pose, start_mode='running')
    goal = pose + MOVE
    points = [TrajectoryPoint(move * s, pose + (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)
                              * (goal - pose)) for s in np.arange(1, 11) / 10.0]
    chain = robot.chain
    checked = check_trajectory(robot.joint_names, chain.lower, chain.upper, robot.joint_names,
                               points)
    zero = np.zeros(robot.n)
    trajectory = Trajectory.from_checked(checked, 0.0, 0.0, (pose, zero, zero))
    law = ComputedTorque(robot, KP, KD, friction_velocity=sim.model.friction_velocity,
                         friction_feedback=feedback, friction_scale=scale)
    errors = sampled_loop(sim, law, trajectory, DEFAULT_RATE, move + rest + 0.01)
    motion = errors[:int(round(move * DEFAULT_RATE)) + 1]
    return _statistics(motion) | {
        'friction_scale': scale, 'friction_feedback': feedback, 'move_s': move,
        'rest_after_s': rest, 'rest_max_rad': float(np.abs(errors[-1]).max()),
        'rest_per_joint_rad': np.abs(errors[-1]).tolist()}


def _statistics(errors) -> dict:
    errors = np.asarray(errors, dtype=float)
    return {'samples': int(errors.shape[0]), 'rms_rad': float(np.sqrt(np.mean(errors ** 2))),
            'max_rad': float(np.abs(errors).max()),
            'rms_per_joint_rad': np.sqrt(np.mean(errors ** 2, axis=0)).tolist()}


def node_level(duration: float, timeout: float) -> dict:
    """Run :func:`_record` in the ROS environment (a child process); return its JSON."""
    if common.installed_executable('denoc_sim_arm') is None:
        return {'available': False, 'reason': 'denoc_sim_arm not installed (make build)'}
    argv = [sys.executable, str(Path(__file__).resolve()), '--record', f'{duration:g}']
    env = dict(os.environ, ROS_DOMAIN_ID=str(random.randint(100, 200)),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    try:
        proc = subprocess.run(common.ros_command(argv), capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=str(common.REPO))
    except subprocess.TimeoutExpired:
        return {'available': True, 'error': f'timed out after {timeout:g} s'}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {'available': True, 'error': f'exit {proc.returncode}',
                'stderr_tail': '\n'.join(proc.stderr.strip().splitlines()[-6:])}


def _record(duration: float) -> dict:
    """In the ROS env: run denoc_sim_arm, record ~/controller_state while the demo runs."""
    import rclpy
    from denoc_dynamics_interfaces.msg import TrajectoryControllerState
    exe = common.installed_executable('denoc_sim_arm')
    child = subprocess.Popen([str(exe), '--duration', f'{duration + 1.0:g}'],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    rclpy.init()
    node = rclpy.create_node('bench_tracking')
    states = []
    node.create_subscription(TrajectoryControllerState,
                             '/trajectory_controller/controller_state', states.append, 1000)
    try:
        end = time.monotonic() + 60.0 + 4.0 * duration
        while child.poll() is None and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        if child.poll() is None:
            child.terminate()
        output = child.communicate(timeout=30)[0]
        node.destroy_node()
        rclpy.try_shutdown()
    active = [s for s in states if s.trajectory_active]
    if not active:
        return {'available': True, 'error': 'no controller state with an active trajectory',
                'states': len(states), 'output_tail': output[-600:]}
    stamps = np.array([s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec for s in active])
    rtf = re.findall(r'overall real[- ]time factor\s*([0-9.]+)', output)
    return _statistics([s.error.positions for s in active]) | {
        'available': True, 'command': f'denoc_sim_arm --duration {duration + 1.0:g}',
        'states_recorded': len(states), 'controller_rate_hz': float(1.0 / np.median(
            np.diff(stamps))) if len(stamps) > 1 else None,
        'simulated_s_with_demo': float(stamps[-1] - stamps[0]),
        'overall_rtf': float(rtf[-1]) if rtf else None}


def run(opts) -> dict:
    """Measure the tracking errors; return the section's results."""
    from denoc_dynamics.resources import bundled_urdf
    robot = common.load_urdf(bundled_urdf('denoc_arm7'))
    rate, rate_source = _config_value('publish_rate', DEFAULT_RATE)
    pose = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])
    duration = DEMO_PERIOD / 2.0 if opts.quick else DEMO_PERIOD
    rates = [rate] if opts.quick else sorted({50.0, rate, 250.0, 1000.0})
    delays = [] if opts.quick else [1, 3]
    cases = [(scale, FRICTION_FEEDBACK) for scale in (0.5, 1.0, 1.5)] + \
        ([] if opts.quick else [(0.5, 0.0), (1.5, 0.0)])
    progress = common.Progress(len(rates) + len(delays) + len(cases) + 2, NAME)
    ct = {}
    for r in rates:
        ct[r] = sampled(robot, 'computed_torque', r, duration, pose)
        progress.step(f'computed torque at {r:g} Hz: RMS {ct[r]["rms_rad"] * 1e3:.3f} mrad')
    late = []
    for d in delays:
        late.append(sampled(robot, 'computed_torque', rate, duration, pose, delay=d))
        progress.step(f'computed torque {d} period(s) late: RMS '
                      f'{late[-1]["rms_rad"] * 1e3:.3f} mrad')
    at_rest = []
    for scale, feedback in cases:
        at_rest.append(point_to_point(robot, pose, scale, feedback))
        progress.step(f'move, friction x{scale:g}, lambda {feedback:g}: in motion max '
                      f'{at_rest[-1]["max_rad"] * 1e3:.2f} mrad, at rest '
                      f'{at_rest[-1]["rest_max_rad"] * 1e3:.4f} mrad')
    pd = sampled(robot, 'pd_gravity', rate, duration, pose)
    progress.step(f'PD + g at {rate:g} Hz: RMS {pd["rms_rad"] * 1e3:.2f} mrad')
    node = node_level(duration, timeout=120.0 + 6.0 * duration)
    progress.step(f'denoc_sim_arm: RMS {node.get("rms_rad", float("nan")) * 1e3:.3f} mrad')
    main = ct[rate]
    ratio = pd['rms_rad'] / main['rms_rad']
    result = {
        'robot': f'denoc_arm7 ({robot.n} DOF)', 'physics': f'RK4 at {PHYSICS_RATE:g} Hz',
        'controller_rate_hz': rate, 'rate_from': rate_source, 'kp': KP, 'kd': KD,
        'demo_period_s': DEMO_PERIOD, 'duration_s': duration,
        'computed_torque': [ct[r] for r in rates], 'computed_torque_late': late,
        'pd_gravity': pd, 'point_to_point': at_rest,
        'ratio_pd_over_ct': ratio, 'denoc_sim_arm': node,
        'targets': [
            {'name': f'computed torque RMS error at {rate:g} Hz (in process, sampled loop)',
             'value': main['rms_rad'] * 1e3, 'unit': 'mrad',
             'target': f'<= {RMS_TARGET * 1e3:g}', 'pass': main['rms_rad'] <= RMS_TARGET},
            {'name': f'PD + g RMS / computed torque RMS, same gains, {rate:g} Hz',
             'value': ratio, 'unit': 'x', 'target': f'>= {RATIO_TARGET:g}',
             'pass': ratio >= RATIO_TARGET}],
    }
    for r in at_rest:
        if r['friction_feedback'] > 0.0:
            result['targets'].append({
                'name': f'at rest 1 s after a 3 s move, friction model x{r["friction_scale"]:g} '
                        '(in process, largest joint error)',
                'value': r['rest_max_rad'] * 1e3, 'unit': 'mrad',
                'target': f'<= {REST_TARGET * 1e3:g}', 'pass': r['rest_max_rad'] <= REST_TARGET})
    if node.get('rms_rad') is not None:
        result['targets'].append({
            'name': 'computed torque RMS error through denoc_sim_arm (DDS, real time)',
            'value': node['rms_rad'] * 1e3, 'unit': 'mrad',
            'target': f'<= {RMS_TARGET * 1e3:g}', 'pass': node['rms_rad'] <= RMS_TARGET})
    return result


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--record':
        print(json.dumps(_record(float(sys.argv[2]))))
    else:
        sys.exit(common.main(sys.modules[__name__]))
