"""
Real-time factor of the simulated default arm (denoc_arm7, 7 DOF) at 1 kHz with RK4.

Three measurements, real-time factor = simulated seconds / wall seconds:

1. In process, no ROS, with :mod:`denoc_dynamics.simulation` when it exists: a
   :class:`Simulation` (RK4, 1 kHz, passive joint physics from the URDF) started
   ``running`` from the pose of ``config/sim_arm.yaml``, stepped as fast as possible
   by a :class:`SimulationRunner` (``real_time_factor=0``, 100 Hz chunks).  After each
   chunk a controller like the demo one of ``denoc_sim_arm`` sets a new command
   (gravity torques plus PD tracking of a slow sinusoid on joints 1, 2 and 4), so the
   arm moves; that costs one inverse-dynamics call per 10 steps.
2. In process, a bare RK4 loop over ``Robot.forward_dynamics`` (4 calls per step,
   constant torque, no passive physics): the floor that the dynamics alone sets.  It
   is also the fallback when ``simulation.py`` is missing.
3. Headless, the all-in-one executable ``denoc_sim_arm --duration T
   --real-time-factor 0`` (sim node + dynamics node + demo controller in one process,
   real DDS traffic); its closing line "overall real-time factor X" is parsed, and
   the wall time of the whole process (start-up included) is measured as well.  The
   sim node starts in ``hold`` mode by default, where time advances without any
   integration until the demo controller's first command arrives (at an unpaced
   real-time factor the whole run can end before that), so the benchmark passes a
   copy of the installed ``config/sim_arm.yaml`` with ``start_mode: running``.
"""

from pathlib import Path
import re
import subprocess
import tempfile
import threading
import time

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'sim'
TITLE = 'Simulated arm real-time factor (denoc_arm7, RK4 at 1 kHz)'
RTF_TARGET = 4.0
PHYSICS_RATE = 1000.0
INITIAL_POSE = (0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0)   # config/sim_arm.yaml


def _arm():
    from denoc_dynamics.resources import bundled_urdf
    path = bundled_urdf('denoc_arm7')
    return common.load_urdf(path), path


class DemoController:
    """Gravity compensation + PD tracking of slow sinusoids on joints 1, 2 and 4."""

    MOTION = ((0, 0.5, 8.0), (1, 0.25, 5.0), (3, 0.35, 4.0))   # (joint, rad, period s)

    def __init__(self, robot, pose, frequency=1.5):
        """Track ``pose`` plus the sinusoids with PD gains of ``frequency`` Hz."""
        self.robot = robot
        self.pose = np.asarray(pose, dtype=float)
        omega = 2.0 * np.pi * frequency
        self.kp, self.kd = omega ** 2, 2.0 * omega

    def __call__(self, t, q, qd):
        """Return the effort command at time t and state (q, qd)."""
        q_ref = self.pose.copy()
        for k, amplitude, period in self.MOTION:
            if k < self.robot.n:
                q_ref[k] += amplitude * np.sin(2.0 * np.pi * t / period)
        qdd = self.kp * (q_ref - q) - self.kd * qd
        return self.robot.inverse_dynamics(q, qd, qdd)


def simulation_api(robot, duration: float) -> dict:
    """Run the ROS-free Simulation/SimulationRunner as fast as possible; return the RTF."""
    try:
        from denoc_dynamics import simulation
    except ImportError as exc:
        return {'available': False, 'reason': f'denoc_dynamics.simulation: {exc}'}
    q0 = np.array(INITIAL_POSE[:robot.n])
    params = simulation.PhysicsParameters(physics_rate=PHYSICS_RATE, integrator='rk4',
                                          fd_method='denoc', command_timeout=0.0)
    sim = simulation.Simulation(robot, params, initial_positions=q0, start_mode='running')
    controller = DemoController(robot, q0)
    sim.set_command(controller(0.0, q0, np.zeros(robot.n)))
    runner_cls = getattr(simulation, 'SimulationRunner', None)
    start = time.perf_counter()
    if runner_cls is not None:
        runner = runner_cls(sim, publish_rate=100.0, real_time_factor=0.0)

        def on_publish(snapshot):
            with runner.lock:
                sim.set_command(controller(snapshot.t, snapshot.q, snapshot.qd))

        runner.on_publish = on_publish
        runner.run(threading.Event(), duration=duration)
        how = 'SimulationRunner(real_time_factor=0).run, command updated every chunk'
    else:
        for _ in range(int(round(duration * 100.0))):
            sim.advance(int(PHYSICS_RATE / 100.0))
            sim.set_command(controller(sim.t, sim.q, sim.qd))
        how = 'Simulation.advance in 10-step chunks, command updated every chunk'
    wall = time.perf_counter() - start
    result = {'available': True, 'how': how, 'simulated_s': sim.t, 'wall_s': wall,
              'rtf': sim.t / wall, 'steps': sim.steps, 'failure': sim.failure,
              'fd_calls_per_step': 4, 'us_per_step': 1e6 * wall / max(sim.steps, 1),
              'final_q': sim.q.tolist()}
    if runner_cls is not None:
        result['runner_meter_overall_rtf'] = runner.meter.overall
    return result


def bare_rk4(robot, duration: float) -> dict:
    """Integrate qdd = FD(q, qd, tau) with a plain RK4 loop; return the RTF."""
    h = 1.0 / PHYSICS_RATE
    n = robot.n
    q0 = np.array(INITIAL_POSE[:n])
    tau = robot.gravity_torques(q0)

    def f(x):
        return np.concatenate((x[n:], robot.forward_dynamics(x[:n], x[n:], tau)))

    x = np.concatenate((q0, np.zeros(n)))
    steps = int(round(duration * PHYSICS_RATE))
    start = time.perf_counter()
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x = x + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
    wall = time.perf_counter() - start
    return {'simulated_s': steps * h, 'wall_s': wall, 'rtf': steps * h / wall,
            'us_per_step': 1e6 * wall / steps, 'finite': bool(np.all(np.isfinite(x)))}


RTF_LINE = re.compile(r'overall real[- ]time factor\s*[:=]?\s*([-+0-9.eE]+|nan)', re.I)
SIMULATED_LINE = re.compile(r'simulated\s+([0-9.]+)\s*s', re.I)
MODE_FIELD = re.compile(r'\|\s*(hold|running|paused|failed)\s*\|')


def headless(duration: float, timeout: float) -> dict:
    """Run the installed ``denoc_sim_arm`` headless; return its parsed output."""
    exe = common.installed_executable('denoc_sim_arm')
    if exe is None:
        return {'available': False, 'reason': 'not available (install/denoc_dynamics/lib/'
                                              'denoc_dynamics/denoc_sim_arm not installed)'}
    # headless: no browser view (the demo's controller stays: it is the default job)
    argv = [str(exe), '--duration', f'{duration:g}', '--real-time-factor', '0', '--no-viewer']
    with tempfile.TemporaryDirectory() as tmp:
        params = _running_params_file(Path(tmp))
        if params is not None:
            argv += ['--params-file', str(params)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(common.ros_command(argv), capture_output=True, text=True,
                                  timeout=timeout, cwd=str(common.REPO))
        except subprocess.TimeoutExpired as exc:
            return {'available': True, 'command': ' '.join(argv), 'error':
                    f'timed out after {timeout:g} s', 'stdout_tail': _tail(exc.stdout)}
        wall = time.perf_counter() - start
    output = proc.stdout + '\n' + proc.stderr
    if params is not None:
        argv[-1] = '<installed sim_arm.yaml with start_mode: running>'
    result = {'available': True, 'command': ' '.join(argv), 'returncode': proc.returncode,
              'start_mode': 'running' if params is not None else 'default (hold)',
              'process_wall_s': wall, 'stdout_tail': _tail(proc.stdout),
              'stderr_tail': _tail(proc.stderr)}
    modes = MODE_FIELD.findall(output)
    if modes:
        result['final_mode'] = modes[-1]
    matches = RTF_LINE.findall(output)
    if matches:
        result['rtf'] = float(matches[-1])
        if modes and modes[-1] != 'running':
            result['rtf_note'] = (f'ended in {modes[-1]!r} mode: the physics did not run, '
                                  'the RTF is not that of the dynamics')
    simulated = SIMULATED_LINE.findall(output)
    if simulated:
        result['simulated_s'] = float(simulated[-1])
        result['rtf_including_startup'] = float(simulated[-1]) / wall
    return result


def _running_params_file(folder: Path):
    """Write the installed sim_arm.yaml with ``start_mode: running``; None if absent."""
    source = (common.INSTALL_DIR / 'denoc_dynamics' / 'share' / 'denoc_dynamics' / 'config'
              / 'sim_arm.yaml')
    if not source.is_file():
        return None
    text = source.read_text()
    if re.search(r'^\s*start_mode:', text, re.M):
        text = re.sub(r'^(\s*start_mode:\s*)\w+', r'\1running', text, flags=re.M)
    else:
        text = re.sub(r'^(sim_node:\s*\n\s*ros__parameters:\s*\n)',
                      r'\1    start_mode: running\n', text, flags=re.M)
    target = folder / 'sim_arm_running.yaml'
    target.write_text(text)
    return target


def _tail(text, lines=6) -> str:
    if not text:
        return ''
    if isinstance(text, bytes):
        text = text.decode(errors='replace')
    return '\n'.join(text.strip().splitlines()[-lines:])


def run(opts) -> dict:
    """Measure the three real-time factors; return the section's results."""
    robot, path = _arm()
    duration = 1.0 if opts.quick else 5.0
    progress = common.Progress(3, NAME)
    api = simulation_api(robot, duration)
    progress.step(f'Simulation API: RTF {api.get("rtf", float("nan")):.2f}')
    bare = bare_rk4(robot, duration)
    progress.step(f'bare RK4: RTF {bare["rtf"]:.2f}')
    exe = headless(duration, timeout=120.0)
    progress.step(f'denoc_sim_arm: RTF {exe.get("rtf", float("nan")):.2f}')
    in_process = api if api.get('available') else bare
    result = {
        'robot': f'denoc_arm7 ({robot.n} DOF)', 'urdf': path,
        'physics_rate_hz': PHYSICS_RATE, 'integrator': 'rk4', 'duration_s': duration,
        'simulation_api': api, 'bare_rk4_loop': bare, 'denoc_sim_arm': exe,
        'in_process_measure': 'simulation_api' if api.get('available')
        else 'bare_rk4_loop (simulation.py not available)',
        'targets': [{
            'name': 'simulated arm RTF in process (1 kHz RK4, denoc_arm7)',
            'value': in_process['rtf'], 'unit': 'x', 'target': f'>= {RTF_TARGET:g}',
            'pass': in_process['rtf'] >= RTF_TARGET}],
    }
    if exe.get('rtf') is not None:
        result['targets'].append({
            'name': 'simulated arm RTF, denoc_sim_arm headless (its overall RTF)',
            'value': exe['rtf'], 'unit': 'x', 'target': f'>= {RTF_TARGET:g}',
            'pass': exe['rtf'] >= RTF_TARGET})
    return result


if __name__ == '__main__':
    import json
    print(json.dumps(run(common.Options(quick=True)), indent=2, default=str))
