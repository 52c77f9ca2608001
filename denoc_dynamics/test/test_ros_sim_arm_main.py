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
