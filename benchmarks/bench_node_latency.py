"""
Latency of the dynamics node, joint_states in -> joint_accelerations out, over DDS.

The installed ``dynamics_node`` executable is started as a subprocess for the bundled
denoc_arm7 (parameter ``urdf_path``; every other parameter at its default), on a ROS
domain of its own (a random ROS_DOMAIN_ID in 100-200, discovery on localhost).  This
process publishes ``sensor_msgs/JointState`` on ``/joint_states`` at 500 Hz (a
publishing thread with absolute deadlines; a smooth trajectory around a pose, each
message stamped with a unique time) and subscribes to
``/dynamics_node/joint_accelerations``; the node copies the state's stamp into its
output, which matches each output to its input.

Latency = arrival of the output at this process's DDS reader (the middleware's
reception time, ``received_timestamp`` of the subscription's message info) - the
input's stamp, taken with the same clock (``time.time_ns``) just before the publish:
DDS both ways and the node's executor and callback, what any subscriber of the node
sees.  The probe takes the outputs without an executor: a thread waits on a wait set
of its one subscription and takes each serialized sample with its message info (the
stamp read from the CDR header, no Python message built).  An rclpy executor there
took half a core at 1 kHz, on the two cores that the node shares with it, and the
node's outputs then waited 10 to 80 ms for the probe's reception now and then (with
the lean reader: p99 of that leg 0.05 ms, the probe's share 0.23 of a core).  The
probe's own start-up objects are frozen out of the garbage collector's reach before
the warm-up (``gc.freeze``, as the nodes do): a full collection of them once held the
publishing thread for 10 ms and more.  The time to the probe's take is
reported apart (``latency_to_probe_callback_ms``).  After a 1 s warm-up the
messages of the measuring window are kept; p50/p90/p99/max, the number of inputs
without an output, and the CPU time of the node and of this process [fraction of one
core] are reported.

A second run (``--observer``, and in the section) drives the node at 1 kHz with the
momentum observer on (``estimate_external_torques``, the states carrying efforts: the
inverse dynamics of the motion, so the estimate is near zero): the target there is
p99 <= 1 ms and no state unanswered.

Needs the ROS environment of the colcon install (``make bench`` or ``.ci/env.sh``);
run without it, the section re-runs itself through ``.ci/env.sh`` as a subprocess.
"""

import argparse
import gc
import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'node_latency'
TITLE = 'dynamics_node latency, joint_states -> joint_accelerations (500 Hz, DDS)'
P99_TARGET_MS = 2.0
RATE_HZ = 500.0
#: The observer's run: joint states at 1 kHz, p99 within 1 ms.
OBSERVER_RATE_HZ, OBSERVER_P99_TARGET_MS = 1000.0, 1.0
OUTPUT_TOPIC = '/dynamics_node/joint_accelerations'
INPUT_TOPIC = '/joint_states'


def _not_available(reason: str) -> dict:
    return {'available': False, 'reason': reason, 'targets': []}


def run(opts) -> dict:
    """Measure in this process if the ROS env is active, else through .ci/env.sh."""
    exe = common.installed_executable('dynamics_node')
    if exe is None:
        return _not_available('not available (install/denoc_dynamics/lib/denoc_dynamics/'
                              'dynamics_node not installed)')
    duration = 3.0 if opts.quick else 10.0
    if common.ros_env_active():
        try:
            import rclpy  # noqa: F401
        except ImportError as exc:
            return _not_available(f'rclpy cannot be imported: {exc}')
        return _both(exe, duration)
    if not common.ENV_SH.is_file():
        return _not_available('no ROS environment and no .ci/env.sh')
    command = common.ros_command([sys.executable, __file__, '--json', '--both',
                                 '--duration', str(duration)])
    common.log(f'{NAME}: re-running through .ci/env.sh (ROS environment)')
    proc = subprocess.run(command, capture_output=True, text=True, timeout=2 * duration + 240,
                          cwd=str(common.REPO))
    sys.stderr.write(proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if line.startswith('{')]
    if proc.returncode != 0 or not lines:
        return _not_available(f'subprocess failed (exit {proc.returncode}): '
                              f'{proc.stderr.strip()[-500:]}')
    result = json.loads(lines[-1])
    result['ran_via'] = '.ci/env.sh subprocess'
    return result


def _both(exe, duration: float) -> dict:
    """Return the 500 Hz run, with the observer's 1 kHz run under ``observer``."""
    result = measure(exe, duration)
    observed = measure(exe, duration, rate_hz=OBSERVER_RATE_HZ, observer=True)
    result['observer'] = observed
    if observed.get('available'):
        result['targets'] = result.get('targets', []) + observed['targets']
    return result


def measure(exe, duration: float, warmup: float = 1.0, rate_hz: float = RATE_HZ,
            observer: bool = False) -> dict:
    """
    Start the node, drive it at ``rate_hz`` for ``duration`` s, return latency stats.

    ``observer``: the node estimates the external torques (the states carry efforts).
    """
    import rclpy
    from rclpy.impl.implementation_singleton import rclpy_implementation
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from denoc_dynamics.resources import bundled_urdf
    from denoc_dynamics_interfaces.msg import JointAccelerations

    urdf = bundled_urdf('denoc_arm7')
    robot = common.load_urdf(urdf)
    # a ROS domain of its own, on this machine only (read by rclpy.init and inherited by
    # the node): another ROS process of the machine on the default domain (``make run``
    # publishes /joint_states at 1 kHz) would feed the node and the probe besides
    isolation = {'ROS_DOMAIN_ID': str(random.randint(100, 200)),
                 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    saved = {key: os.environ.get(key) for key in isolation}
    os.environ.update(isolation)
    argv = [str(exe), '--ros-args', '-p', f'urdf_path:={urdf}', '--log-level', 'warn']
    if observer:
        argv[2:2] = ['-p', 'estimate_external_torques:=true']
    node_proc = subprocess.Popen(common.ros_command(argv), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, cwd=str(common.REPO))
    progress = common.Progress(4, NAME)
    context = rclpy.Context()
    rclpy.init(context=context)
    reader = None
    stop = threading.Event()
    try:
        # no parameter services and no rosout: the probe's reader waits on its one
        # subscription only, and takes less of the CPU that the node needs
        node = rclpy.create_node('denoc_latency_probe', context=context,
                                 start_parameter_services=False, enable_rosout=False)
        publisher = node.create_publisher(JointState, INPUT_TOPIC, 10)
        received = {}
        lock = threading.Lock()
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        subscription = node.create_subscription(JointAccelerations, OUTPUT_TOPIC,
                                                lambda data: None, qos, raw=True)
        reader = threading.Thread(target=_read_outputs, daemon=True, args=(
            rclpy_implementation, context, subscription, JointAccelerations, received, lock,
            stop))
        reader.start()

        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            if node_proc.poll() is not None:
                return _not_available(f'dynamics_node exited with {node_proc.returncode}: '
                                      f'{node_proc.stderr.read()[-500:]}')
            if (publisher.get_subscription_count() > 0
                    and node.count_publishers(OUTPUT_TOPIC) > 0):
                break
            time.sleep(0.05)
        else:
            return _not_available('dynamics_node not discovered within 60 s')
        progress.step('node discovered')

        pose = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.2, 0.0])[:robot.n]
        names = robot.joint_names
        sent = {}

        def publish_for(seconds, record):
            period = 1.0 / rate_hz
            start = time.perf_counter()
            count = int(seconds * rate_hz)
            late = 0
            for k in range(count):
                target = start + k * period
                wait = target - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                elif wait < -period:
                    late += 1
                t = k * period
                msg = JointState(name=names)
                msg.position = (pose + 0.3 * np.sin(2.0 * np.pi * 0.5 * t)).tolist()
                msg.velocity = (0.3 * np.pi * np.cos(2.0 * np.pi * 0.5 * t)
                                * np.ones(robot.n)).tolist()
                if observer:   # the torques of this motion: no external torque
                    w = 2.0 * np.pi * 0.5
                    msg.effort = robot.inverse_dynamics(
                        np.array(msg.position), np.array(msg.velocity),
                        -0.3 * w * w * np.sin(w * t) * np.ones(robot.n)).tolist()
                ns = time.time_ns()
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
                publisher.publish(msg)
                if record:
                    sent[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = ns
            return count / (time.perf_counter() - start), late

        # the start-up objects (rclpy, numpy, numba's: about 10^5) out of the collector's
        # reach, as the node does with its own: a full collection of them in the publishing
        # thread held it for 10 ms and more, then the backlog went out in a burst at 6 to 8
        # kHz (the input leg's stalls of up to 14 ms, the same moment in every run)
        gc.collect()
        gc.freeze()
        publish_for(warmup, record=False)
        progress.step('warm-up done')
        cpu_start = _cpu_seconds(node_proc.pid), time.process_time()
        rate, late = publish_for(duration, record=True)
        cpu = [(_cpu_seconds(node_proc.pid) - cpu_start[0]) / duration,
               (time.process_time() - cpu_start[1]) / duration]
        progress.step(f'{len(sent)} states sent at {rate:.0f} Hz')
        time.sleep(0.5)
        with lock:
            pairs = [(received[key], t) for key, t in sent.items() if key in received]
        matched = [1e-6 * (arrived - t) for (arrived, _), t in pairs]
        at_callback = [1e-6 * (called - t) for (_, called), t in pairs]
        progress.step(f'{len(matched)} matched')
    finally:
        stop.set()
        gc.unfreeze()
        if reader is not None:
            reader.join(timeout=1.0)
        rclpy.try_shutdown(context=context)
        _stop(node_proc)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    if not matched:
        return _not_available(f'no output on {OUTPUT_TOPIC} matched the {len(sent)} inputs')
    lat = np.array(matched)
    p50, p90, p99 = np.percentile(lat, [50, 90, 99])
    p50_cb, p99_cb = np.percentile(at_callback, [50, 99])
    return {
        'available': True, 'executable': str(exe), 'urdf': urdf,
        'input_topic': INPUT_TOPIC, 'output_topic': OUTPUT_TOPIC,
        'rmw': os.environ.get('RMW_IMPLEMENTATION'), 'ros_domain_id': isolation['ROS_DOMAIN_ID'],
        'rate_hz': rate_hz, 'achieved_rate_hz': rate, 'late_publishes': late,
        'observer': observer,
        'duration_s': duration, 'sent': len(sent), 'matched': len(matched),
        'unanswered': len(sent) - len(matched),
        'latency_ms': {'p50': p50, 'p90': p90, 'p99': p99, 'max': float(lat.max()),
                       'mean': float(lat.mean()), 'min': float(lat.min())},
        'latency_to_probe_callback_ms': {'p50': p50_cb, 'p99': p99_cb},
        'cpu_cores': {'node': cpu[0], 'probe': cpu[1]},
        'load_average': os.getloadavg(),
        'targets': [_target(p99, len(sent) - len(matched), rate_hz, observer)],
    }


def _read_outputs(implementation, context, subscription, msg_type, received, lock, stop):
    """
    Take the node's outputs until ``stop``: received[stamp] = (reception time, take time).

    The stamp (sec, nanosec) is read from the serialized sample as the node's own reader
    reads its input's (:mod:`denoc_dynamics.ros.joint_state_cdr`): the encapsulation
    header names the byte order, std_msgs/Header's stamp follows it.
    """
    from denoc_dynamics.ros.joint_state_cdr import BYTE_ORDERS, HEADER_SIZE
    stamp_of = {identifier: struct.Struct(order + 'iI').unpack_from
                for identifier, order in BYTE_ORDERS.items()}
    with context.handle:
        wait_set = implementation.WaitSet(1, 0, 0, 0, 0, 0, context.handle)
    while not stop.is_set():
        with subscription.handle:
            wait_set.clear_entities()
            wait_set.add_subscription(subscription.handle)
            wait_set.wait(100_000_000)   # [ns]: a look at ``stop`` at least every 0.1 s
            while True:
                taken = subscription.handle.take_message(msg_type, True)
                if taken is None:
                    break
                now = time.time_ns()
                data, info = taken
                stamp = stamp_of[bytes(data[:2])](data, HEADER_SIZE)
                with lock:
                    received[stamp] = (info['received_timestamp'], now)


def _target(p99, unanswered, rate_hz, observer) -> dict:
    """Return the run's target: p99 (and, with the observer, no state unanswered)."""
    if not observer:
        return {'name': f'dynamics_node p99 latency at {rate_hz:g} Hz', 'value': p99,
                'unit': 'ms', 'target': f'<= {P99_TARGET_MS:g} ms',
                'pass': p99 <= P99_TARGET_MS}
    return {'name': f'dynamics_node with the observer at {rate_hz:g} Hz: p99 latency',
            'value': p99, 'unit': 'ms',
            'target': f'<= {OBSERVER_P99_TARGET_MS:g} ms, no state unanswered',
            'figures': f'{unanswered} unanswered',
            'pass': p99 <= OBSERVER_P99_TARGET_MS and unanswered == 0}


def _cpu_seconds(pid) -> float:
    """Return the CPU time [s] (user + system) of the process ``pid`` (Linux /proc)."""
    try:
        with open(f'/proc/{pid}/stat') as stat:
            fields = stat.read().rsplit(')', 1)[1].split()
    except OSError:
        return float('nan')
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def _stop(proc):
    """Stop the node subprocess that this module started (SIGINT, then SIGKILL)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main(argv=None):
    """Run the section in the current (ROS) environment and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--json', action='store_true', help='print the result as JSON')
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--observer', action='store_true',
                        help='only the 1 kHz run with the momentum observer on')
    parser.add_argument('--both', action='store_true',
                        help='the 500 Hz run and the observer run (the section)')
    args = parser.parse_args(argv)
    exe = common.installed_executable('dynamics_node')
    if exe is None:
        result = _not_available('dynamics_node not installed')
    elif args.both:
        result = _both(exe, args.duration)
    elif args.observer:
        result = measure(exe, args.duration, rate_hz=OBSERVER_RATE_HZ, observer=True)
    else:
        result = measure(exe, args.duration)
    print(json.dumps(common._clean(result)))


if __name__ == '__main__':
    main()
