"""The all-in-one denoc_sim_arm executable: demo run with plot, and Ctrl-C."""

import re

import pytest
from ros_helpers import NodeProcess
from ros_helpers import wait_for

pytestmark = pytest.mark.ros

STATUS = re.compile(r'sim +([0-9.]+) s \| RTF +([0-9.]+|n/a) \| (\w+) +\| joint1=([-+0-9.]+)')


def test_demo_run_with_duration_and_plot(tmp_path):
    plot = tmp_path / 'arm.png'
    proc = NodeProcess('denoc_sim_arm', ['--duration', '2', '--real-time-factor', '2',
                                         '--plot', str(plot)])
    try:
        code = proc.proc.wait(60)
        out = proc.output()
        assert code == 0, proc.describe()
        lines = STATUS.findall(out)
        assert len(lines) >= 2, out  # a line a second (stdout is not a terminal)
        t, _, mode, joint1 = lines[-1]
        assert float(t) == pytest.approx(2.0) and mode == 'running', out
        assert abs(float(joint1)) > 0.05, 'the demo should move the arm'
        assert 'simulated 2.000 s' in out
        assert plot.is_file() and plot.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    finally:
        proc.stop()


@pytest.mark.parametrize('args', [['--no-demo'], []], ids=['holding', 'demo-running'])
def test_ctrl_c_exits_cleanly(args):
    proc = NodeProcess('denoc_sim_arm', args)
    try:
        # interrupt a second into the run, while physics and ROS callbacks interleave
        assert wait_for(lambda: any(float(t) >= 1.0 for t, *_ in STATUS.findall(proc.output())),
                        timeout=20.0), proc.describe()
        assert proc.interrupt(timeout=10.0) == 0, proc.describe()
        out = proc.output()
        assert 'interrupted' in out and 'Traceback' not in out, proc.describe()
        assert 'failed' not in out, proc.describe()
    finally:
        proc.stop()


def test_events_session_runs_timers_and_messages():
    """RosSession(executor='events'): rclpy's EventsExecutor where it exists; callbacks run."""
    import signal

    from denoc_dynamics.ros.node_main import RosSession
    import rclpy
    from rclpy.clock import Clock, ClockType
    from std_msgs.msg import Float64

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    received, ticks = [], []
    try:
        with RosSession(['test_events_session'], executor='events') as session:
            assert type(session.executor).__name__ == 'EventsExecutor'   # rclpy >= Jazzy
            node = session.add(rclpy.create_node('events_session_test'))
            pub = node.create_publisher(Float64, 'events_session_topic', 10)
            node.create_subscription(Float64, 'events_session_topic',
                                     lambda msg: received.append(msg.data), 10)
            node.create_timer(0.01, lambda: (ticks.append(1), pub.publish(
                Float64(data=float(len(ticks))))), clock=Clock(clock_type=ClockType.STEADY_TIME))
            assert session.spin(done=lambda: len(received) >= 5)
        assert received[:5] == sorted(received[:5]) and len(ticks) >= 5
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
