"""
Real-time factor of the simulated default arm (denoc_arm7, 7 DOF) at 1 kHz with RK4.

Real-time factor (RTF) = simulated seconds / wall seconds.  The targets:

1. The simulation's physics alone, in process, no ROS: a :class:`Simulation` (RK4,
   1 kHz, Saha's O(n) forward dynamics, passive joint physics from the URDF) started
   ``running`` from the pose of ``config/sim_arm.yaml`` with the gravity torques of
   that pose held as its effort command, advanced in chunks of one publish period
   (10 steps, as the sim node's runner does): the compiled physics plus
   ``Simulation.advance`` (target: RTF >= 100); the same for the gripper arm
   (denoc_arm7_gripper, its finger a mimic joint; target: RTF >= 100).
2. Headless, the all-in-one executable ``denoc_sim_arm --duration T
   --real-time-factor 0 --no-viewer`` (sim node + dynamics node + demo trajectory
   controller in one process, real DDS traffic); its closing line "overall real-time
   factor X" is parsed, and the wall time of the whole process (start-up included) is
   measured as well (target: RTF >= 4).  The sim node starts in ``hold`` mode by
   default, where time advances without any integration until the controller's first
   command arrives, so the benchmark passes a copy of the installed
   ``config/sim_arm.yaml`` with ``start_mode: running``.
3. ``make run``: ``denoc_sim_arm`` as ``make run`` starts it (real time, demo and 3D
   view on; the view on any free port), left to settle, then the CPU time of its
   process tree over a window of wall time, as a share of one core, with the RTF it
   reports (on pace: 1).  A websocket client stands in for a browser on the view's
   page where the ``websockets`` package is there (target: <= 35 % of one core).

The ROS processes run in a domain of their own, localhost only
(:func:`common.isolated_ros_environment`): on the default domain another arm or
dynamics node on the machine would add its messages to the measured run.

For comparison, not targets: the :class:`Simulation` stepped by a
:class:`SimulationRunner` (``real_time_factor=0``, 100 Hz chunks) with a controller
like the demo one of ``denoc_sim_arm`` setting a new command after each chunk (gravity
torques plus PD tracking of a slow sinusoid on joints 1, 2 and 4, one inverse dynamics
per chunk); and a bare RK4 loop over ``Robot.forward_dynamics`` (4 calls per step,
constant torque, no passive physics), the floor that the Python API sets.
"""

import gc
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
PHYSICS_TARGET = 100.0
CPU_TARGET = 35.0          # [% of one core] make run, on pace
PHYSICS_RATE = 1000.0
PUBLISH_RATE = 100.0       # config/sim_arm.yaml: one chunk of physics per joint state
INITIAL_POSE = (0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0)   # config/sim_arm.yaml


def _arm(name='denoc_arm7'):
    from denoc_dynamics.resources import bundled_urdf
    path = bundled_urdf(name)
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
        from denoc_dynamics import sim_settings, simulation
    except ImportError as exc:
        return {'available': False, 'reason': f'denoc_dynamics.simulation: {exc}'}
    q0 = np.array(INITIAL_POSE[:robot.n])
    params = sim_settings.PhysicsParameters(physics_rate=PHYSICS_RATE, integrator='rk4',
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


def physics_alone(robot, duration: float) -> dict:
    """Advance a Simulation in publish-period chunks on a held command; return the RTF."""
    from denoc_dynamics import sim_settings, simulation
    q0 = np.zeros(robot.n)
    q0[:len(INITIAL_POSE)] = INITIAL_POSE[:robot.n]         # the gripper's finger at 0
    params = sim_settings.PhysicsParameters(physics_rate=PHYSICS_RATE, integrator='rk4',
                                          fd_method='denoc', command_timeout=0.0)
    sim = simulation.Simulation(robot, params, initial_positions=q0, start_mode='running')
    sim.set_command(robot.gravity_torques(q0))
    chunk = int(round(PHYSICS_RATE / PUBLISH_RATE))
    sim.advance(chunk)                      # the kernels loaded before the clock starts
    steps = int(round(duration * PHYSICS_RATE))
    done = 0
    gc.collect()                            # no collection of the benchmark's heap inside the
    gc.disable()                            # clock, as timeit does (the sim node freezes it)
    try:
        start = time.perf_counter()
        while done < steps and sim.failure is None:
            done += sim.advance(chunk)
        wall = time.perf_counter() - start
    finally:
        gc.enable()
    return {'how': f'Simulation.advance({chunk}) on a held effort command (the gravity '
                   'torques of the initial pose), garbage collector off as in timeit',
            'simulated_s': done / PHYSICS_RATE, 'wall_s': wall,
            'rtf': done / PHYSICS_RATE / wall, 'steps': done, 'failure': sim.failure,
            'us_per_step': 1e6 * wall / max(done, 1), 'describe': sim.model.describe()}


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
                                  timeout=timeout, cwd=str(common.REPO),
                                  env=common.isolated_ros_environment())
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


STATUS_LINE = re.compile(r'sim\s+([0-9.]+) s \| RTF\s+([0-9.]+|n/a)')
VIEW_LINE = re.compile(r'open (http://\S+) in a browser')


def make_run_cpu(settle: float, window: float, timeout: float = 120.0) -> dict:
    """Run ``denoc_sim_arm`` as ``make run`` does; return its CPU share of one core."""
    exe = common.installed_executable('denoc_sim_arm')
    if exe is None:
        return {'available': False, 'reason': 'denoc_sim_arm not installed (make build)'}
    try:
        import psutil
    except ImportError as exc:
        return {'available': False, 'reason': f'psutil: {exc}'}
    argv = [str(exe), '--viewer-port', '0']       # make run's defaults; any free port
    proc = subprocess.Popen(common.ros_command(argv), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=str(common.REPO),
                            env=common.isolated_ros_environment())
    lines, started, view = [], threading.Event(), {}

    def read():
        for line in proc.stdout:
            lines.append(line.rstrip())
            match = VIEW_LINE.search(line)
            if match:
                view['url'] = match.group(1)
            if 'Ctrl-C to stop' in line:
                started.set()

    threading.Thread(target=read, daemon=True).start()
    result = {'available': True, 'command': ' '.join(['denoc_sim_arm'] + argv[1:]),
              'settle_s': settle, 'window_s': window}
    client = None
    try:
        if not started.wait(timeout):
            return dict(result, error=f'did not start within {timeout:g} s',
                        output_tail='\n'.join(lines[-6:]))
        client = ViewerClient(view.get('url'))
        result['viewer'] = view.get('url', 'no 3D view')
        result['viewer_client'] = client.describe()
        time.sleep(settle)
        tree = psutil.Process(proc.pid)
        cpu0, wall0, first = _tree_cpu(tree, psutil), time.monotonic(), len(lines)
        time.sleep(window)
        cpu1, wall1 = _tree_cpu(tree, psutil), time.monotonic()
        if proc.poll() is not None:
            return dict(result, error=f'exited ({proc.returncode}) during the window',
                        output_tail='\n'.join(lines[-6:]))
        rtfs = [float(m.group(2)) for m in map(STATUS_LINE.search, lines[first:])
                if m and m.group(2) != 'n/a']
        result.update(cpu_s=cpu1 - cpu0, wall_s=wall1 - wall0,
                      cpu_percent=100.0 * (cpu1 - cpu0) / (wall1 - wall0),
                      rtf_during_window=rtfs[-1] if rtfs else None,
                      messages_to_viewer_client=client.received)
        return result
    finally:
        if client is not None:
            client.close()
        common.interrupt(proc)


def _tree_cpu(process, psutil) -> float:
    """Return the user + system CPU seconds of ``process`` and its descendants."""
    total = 0.0
    for p in [process] + process.children(recursive=True):
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


class ViewerClient:
    """A websocket client on the 3D view's page, receiving what a browser would."""

    def __init__(self, url):
        """Connect to the viser server at ``url`` (http://host:port); nothing if None."""
        self.received = 0
        self.reason = None
        self._socket = None
        if url is None:
            self.reason = 'no 3D view'
            return
        try:
            import msgspec
            import viser
            from viser._messages import ViewerCameraMessage
            from websockets.sync.client import connect
            self._socket = connect(url.replace('http://', 'ws://', 1),
                                   subprotocols=[f'viser-v{viser.__version__}'],
                                   max_size=None, open_timeout=10.0)
            # viser counts a client as connected from its first camera message on
            camera = ViewerCameraMessage(
                wxyz=(1.0, 0.0, 0.0, 0.0), position=(2.0, 0.0, 1.0), fov=1.0, near=0.01,
                far=100.0, image_height=720, image_width=1280, look_at=(0.0, 0.0, 0.5),
                up_direction=(0.0, 0.0, 1.0))
            self._socket.send(msgspec.msgpack.encode(camera.as_serializable_dict()))
        except Exception as exc:  # noqa: B902  (no client: the share without one)
            self.reason = f'{type(exc).__name__}: {exc}'
            self._socket = None
            return
        threading.Thread(target=self._receive, daemon=True).start()

    def _receive(self):
        try:
            for _ in self._socket:
                self.received += 1
        except Exception:  # noqa: B902  (closed)
            pass

    def describe(self) -> str:
        """Return what stands in for the browser."""
        if self._socket is None:
            return f'none ({self.reason})'
        return "a websocket client receiving the page's messages (as a browser would)"

    def close(self):
        """Disconnect."""
        if self._socket is not None:
            self._socket.close()


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
    """Measure the real-time factors and the CPU share of ``make run``; return the results."""
    robot, path = _arm()
    duration = 1.0 if opts.quick else 5.0
    progress = common.Progress(6, NAME)
    alone = physics_alone(robot, duration)
    progress.step(f'physics alone: RTF {alone["rtf"]:.1f}')
    gripper_robot, _ = _arm('denoc_arm7_gripper')
    gripper = physics_alone(gripper_robot, duration)
    progress.step(f'physics alone, gripper arm (mimic): RTF {gripper["rtf"]:.1f}')
    api = simulation_api(robot, duration)
    progress.step(f'Simulation API: RTF {api.get("rtf", float("nan")):.2f}')
    bare = bare_rk4(robot, duration)
    progress.step(f'bare RK4: RTF {bare["rtf"]:.2f}')
    exe = headless(duration, timeout=120.0)
    progress.step(f'denoc_sim_arm: RTF {exe.get("rtf", float("nan")):.2f}')
    cpu = make_run_cpu(settle=5.0 if opts.quick else 10.0, window=10.0 if opts.quick else 20.0)
    progress.step(f'make run: {cpu.get("cpu_percent", float("nan")):.0f} % of one core')
    result = {
        'robot': f'denoc_arm7 ({robot.n} DOF)', 'urdf': path,
        'physics_rate_hz': PHYSICS_RATE, 'integrator': 'rk4', 'duration_s': duration,
        'physics_alone': alone, 'physics_alone_gripper': gripper, 'simulation_api': api,
        'bare_rk4_loop': bare,
        'denoc_sim_arm': exe, 'make_run': cpu,
        'targets': [common.target(
            "the simulation's physics alone, in process (1 kHz RK4, O(n), denoc_arm7)",
            alone['rtf'], 'x', f'>= {PHYSICS_TARGET:g}', alone['rtf'] >= PHYSICS_TARGET,
            figures=f'{alone["us_per_step"]:.1f} us a step'),
            common.target(
                "the simulation's physics alone, gripper arm with its mimic finger (1 kHz RK4, "
                'O(n), denoc_arm7_gripper)', gripper['rtf'], 'x', f'>= {PHYSICS_TARGET:g}',
                gripper['rtf'] >= PHYSICS_TARGET,
                figures=f'{gripper["us_per_step"]:.1f} us a step')],
    }
    if exe.get('rtf') is not None:
        result['targets'].append(common.target(
            'headless denoc_sim_arm (sim, dynamics node, controller; no viewer), 1 kHz RK4, '
            'O(n): real-time factor', exe['rtf'], 'x', f'>= {RTF_TARGET:g}',
            exe['rtf'] >= RTF_TARGET,
            figures=f'{exe.get("simulated_s", float("nan")):g} s simulated'))
    if cpu.get('cpu_percent') is not None:
        on_pace = cpu.get('rtf_during_window')
        result['targets'].append(common.target(
            '`make run` (with viewer) on pace: CPU share of one core', cpu['cpu_percent'], '%',
            f'<= {CPU_TARGET:g}', cpu['cpu_percent'] <= CPU_TARGET,
            figures=f'{cpu["cpu_s"]:.1f} s CPU in {cpu["wall_s"]:.1f} s at RTF '
                    f'{on_pace if on_pace is not None else "?"}; viewer client: '
                    f'{"yes" if cpu.get("messages_to_viewer_client") else "none"}'))
    return result


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
