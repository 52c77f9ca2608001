"""
denoc_sim_arm: the simulated arm, the dynamics node and the trajectory controller in one process.

The nodes are composed by hand in one single-threaded executor, rclpy's
EventsExecutor where rclpy has it (:class:`~denoc_dynamics.ros.node_main.RosSession`):
the sim node's physics timer and every other callback run in one thread, with no
competition for the GIL, and a shutdown signal ends the spin cleanly.  Parameters
come from the same YAML file as the launch file uses (``--params-file``, default the
installed ``config/sim_arm.yaml``); ``--urdf``, ``--real-time-factor`` and
``--integrator`` override it.  A status line shows the simulated time, the real-time
factor and a few joint positions (updated in place on a terminal, one line a second
otherwise).

The demo (on by default, ``--no-demo`` to switch it off) adds the trajectory
controller (:mod:`.trajectory_controller`, computed torque through the core) and
makes it follow the demo trajectory (:func:`denoc_dynamics.trajectory.demo_trajectory`,
a 12 s loop through four poses around the initial one) over and over, until a
trajectory arrives from elsewhere on ``/trajectory_controller/joint_trajectory``; the
arm follows that one and then holds.  The controller's friction compensation gets
the simulated arm's own friction regularization.  The sim node publishes /clock and
stamps joint_states with the simulated time; the controller runs on the simulated
time, whatever the real-time factor, handed to it as its clock (never read from a
stamp), so that a reset or a stop of the simulation is a jump of its clock, which
drops the running trajectory.  Without the demo the arm holds its initial pose
(``start_mode: hold``) until something publishes ``effort_commands``.

The dynamics node and the controller take the sim node's joint states in-process
(:func:`follow_simulation`), not from the ``joint_states`` topic: other publishers
there (a second arm on the domain, joint_state_publisher's GUI, a bag) cannot steer
them.

With a gripper (a joint whose name has 'finger' in it: ``--urdf denoc_arm7_gripper``)
the gripper controller (:mod:`.gripper_controller`) drives the finger and serves the
gripper actions; the other nodes' effort commands cover the arm's joints, and the demo
opens and closes the gripper through it every few seconds.

The 3D view (:mod:`.arm_viewer`, on by default, ``--no-viewer`` to switch it off)
serves the moving arm and its control panel on http://localhost:8080
(``--viewer-port``), to this machine only unless ``--viewer-host 0.0.0.0``.

Examples::

    denoc_sim_arm                                # demo, real time, until Ctrl-C
    denoc_sim_arm --duration 10 --plot arm.png   # 10 s of simulated time, then a plot
    denoc_sim_arm --no-demo --start-mode running --real-time-factor 0 --duration 5
                                                 # headless benchmark: the arm falls
"""

import argparse
import math
import os
import sys
import time

from ament_index_python.packages import get_package_share_directory
from ament_index_python.packages import PackageNotFoundError
import numpy as np
from rclpy.clock import Clock as RclClock
from rclpy.clock import ClockType
from rclpy.parameter import Parameter
from rclpy.utilities import remove_ros_args

from .dynamics_node import DynamicsNode
from .gripper_controller import GripperController
from .launch_support import gripper_layout
from .node_main import RosSession
from .sim_node import SimNode
from .trajectory_controller import trajectory_msg
from .trajectory_controller import TrajectoryController
from ..resources import bundled_urdf
from ..sim_settings import INTEGRATORS
from ..sim_settings import leading_pose
from ..sim_settings import START_MODES
from ..trajectory import demo_trajectory

PACKAGE = 'denoc_dynamics'


def default_params_file():
    """Return the installed config/sim_arm.yaml (or the source tree's one)."""
    try:
        share = get_package_share_directory(PACKAGE)
        path = os.path.join(share, 'config', 'sim_arm.yaml')
        if os.path.isfile(path):
            return path
    except PackageNotFoundError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, '..', '..', 'config', 'sim_arm.yaml')


def follow_simulation(node, sim, callback):
    """
    Hand ``node`` the joint states of ``sim`` in-process, instead of its topic's.

    ``callback(msg)`` gets every JointState the sim node publishes, as it publishes
    it: the node follows its own arm whatever else publishes ``joint_states`` on the
    domain (a second denoc_sim_arm, a GUI, a bag), as joint_trajectory_controller
    reads only the state interfaces it owns.
    """
    node.destroy_subscription(node.state_sub)
    node.state_sub = None
    sim.state_listeners.append(callback)


class DemoLoop:
    """
    Send the demo trajectory to the trajectory controller, again each time it ends.

    The loop (:func:`denoc_dynamics.trajectory.demo_trajectory` around ``pose``) goes
    straight to the controller (:meth:`TrajectoryController.follow`), as a message on
    its ``~/joint_trajectory`` would.  Once a trajectory from elsewhere has been
    accepted, the demo stops: the arm follows that one and then holds.
    """

    def __init__(self, controller, pose, period=0.1):
        """Check every ``period`` seconds whether ``controller`` needs the demo again."""
        robot = controller.law.robot
        joints = robot.joints
        pose = leading_pose(robot, pose)
        self.controller = controller
        self.msg = trajectory_msg(robot.joint_names,
                                  demo_trajectory(joints.lower, joints.upper, pose))
        self.sent = 0
        controller.create_timer(period, self._check)

    def _check(self):
        controller = self.controller
        if controller.trajectory is None or (controller.source not in (None, 'demo')):
            return  # no joint state yet, or someone else's trajectory was accepted
        if controller.finished and controller.follow(self.msg, 'demo'):
            self.sent += 1


class GripperDemo:
    """Open and close the gripper (``gripper.command``) every ``period`` seconds."""

    def __init__(self, gripper, period=3.0):
        """Alternate the finger between its limits, a margin inside them."""
        lower, upper = gripper.limits[:2]
        margin = 0.1 * (upper - lower)
        self.positions = (upper - margin, lower + margin)
        self.gripper = gripper
        self.count = 0
        gripper.create_timer(period, self._toggle)

    def _toggle(self):
        if self.gripper.target is not None and self.gripper.target.handle is not None:
            return   # a goal from an action client: the demo leaves the gripper alone
        self.gripper.command(self.positions[self.count % 2])
        self.count += 1


class StatusLine:
    """Print the status in place on a terminal, else one line per second."""

    def __init__(self, stream=sys.stdout, period=1.0, joints=3):
        """Write to ``stream``; show the first ``joints`` joint positions."""
        self.stream = stream
        self.tty = stream.isatty()
        self.period = 0.1 if self.tty else period
        self.joints = joints
        self._last = -math.inf
        self._width = 0

    def update(self, status, names, force=False):
        """Print ``status()`` = (t, rtf, mode, q) if a period passed (or ``force``)."""
        now = time.monotonic()
        if not force and now - self._last < self.period:
            return
        status = status()
        if status is None:
            return
        self._last = now
        t, rtf, mode, q = status
        rtf_text = '  n/a' if math.isnan(rtf) else f'{rtf:5.2f}'
        joints = ' '.join(f'{name}={value:+.3f}'
                          for name, value in zip(names[:self.joints], q[:self.joints]))
        line = f'sim {t:8.2f} s | RTF {rtf_text} | {mode:<7} | {joints}'
        if self.tty:
            self.stream.write('\r' + line.ljust(self._width))
            self._width = len(line)
        else:
            self.stream.write(line + '\n')
        self.stream.flush()

    def close(self):
        """End the in-place line."""
        if self.tty and self._width:
            self.stream.write('\n')
            self.stream.flush()
            self._width = 0


def save_plot(path, times, positions, names, title):
    """Save the joint trajectories as a PNG (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    positions = np.asarray(positions).reshape(len(times), -1)
    for k, name in enumerate(names):
        ax.plot(times, positions[:, k], label=name)
    ax.set_xlabel('simulated time [s]')
    ax.set_ylabel('joint position [rad]')
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc='upper right', fontsize='small', ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv):
    """Parse the command line (ROS arguments after --ros-args are left to rclpy)."""
    parser = argparse.ArgumentParser(
        prog='denoc_sim_arm',
        description='Simulated arm + DeNOC dynamics node in one process.')
    parser.add_argument('--params-file', default=None,
                        help='YAML parameters of sim_node and dynamics_node '
                             '(default: the installed config/sim_arm.yaml)')
    parser.add_argument('--urdf', default=None,
                        help='URDF file, or the name of a bundled one (default: denoc_arm7; '
                             'denoc_arm7_gripper: with a two-finger gripper)')
    parser.add_argument('--duration', type=float, default=None,
                        help='stop after this many seconds of simulated time')
    parser.add_argument('--plot', default=None, metavar='FILE.png',
                        help='save a plot of the joint trajectories at exit')
    parser.add_argument('--real-time-factor', type=float, default=None,
                        help='simulated seconds per wall second; 0: as fast as possible')
    parser.add_argument('--integrator', default=None, choices=INTEGRATORS)
    parser.add_argument('--start-mode', default=None, choices=START_MODES,
                        help="sim_node start_mode ('running' for a benchmark without --demo)")
    parser.add_argument('--demo', action=argparse.BooleanOptionalAction, default=True,
                        help='the trajectory controller, following the demo trajectory '
                             '(default: on)')
    parser.add_argument('--viewer', action=argparse.BooleanOptionalAction, default=True,
                        help='serve a live 3D view of the arm in the browser (arm_viewer; '
                             'default: on)')
    parser.add_argument('--viewer-port', type=int, default=8080, metavar='PORT',
                        help='port of the 3D view (default 8080; 0: any free port; '
                             'if busy, the next free one)')
    parser.add_argument('--viewer-host', default='127.0.0.1', metavar='ADDRESS',
                        help='address the 3D view listens on (default 127.0.0.1: this '
                             'machine only; 0.0.0.0: the network, which then drives the '
                             'arm)')
    return parser.parse_args(argv)


def node_overrides(args, urdf):
    """Return the parameters (every node's, sim_node's) that the command line sets."""
    typed = Parameter.Type
    overrides = [Parameter('urdf_path', typed.STRING, urdf),
                 Parameter('robot_description', typed.STRING, '')]
    if args.integrator is not None:   # the controller's friction model follows it
        overrides.append(Parameter('integrator', typed.STRING, args.integrator))
    sim_overrides = list(overrides)
    if args.real_time_factor is not None:
        sim_overrides.append(Parameter('real_time_factor', typed.DOUBLE,
                                       float(args.real_time_factor)))
    if args.start_mode is not None:
        sim_overrides.append(Parameter('start_mode', typed.STRING, args.start_mode))
    if args.demo:
        # joint_states stamped with the simulated time, which the controller runs on
        sim_overrides.append(Parameter('publish_clock', typed.BOOL, True))
    return overrides, sim_overrides


def main(argv=None):
    """Run the all-in-one simulated arm; return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(remove_ros_args(['denoc_sim_arm'] + argv)[1:])
    params_file = args.params_file or default_params_file()
    if not os.path.isfile(params_file):
        print(f'denoc_sim_arm: no parameters file {params_file}', file=sys.stderr)
        return 2
    urdf = args.urdf or bundled_urdf()
    if not os.path.exists(urdf) and not os.path.splitext(urdf)[1]:
        urdf = bundled_urdf(urdf)           # a bundled model by name
    overrides, sim_overrides = node_overrides(args, urdf)
    try:
        finger, arm = gripper_layout(urdf)
    except (OSError, ValueError) as exc:
        print(f'denoc_sim_arm: {exc}', file=sys.stderr)
        return 1
    joints = [Parameter('joints', Parameter.Type.STRING_ARRAY, arm)] if finger else []
    sim_overrides += joints
    status_line = StatusLine()
    times, positions = [], []
    # The YAML first: --ros-args given by the user come later and take precedence.
    with RosSession(['denoc_sim_arm', '--ros-args', '--params-file', params_file, '--']
                    + argv, executor='events') as session:
        try:
            sim = session.add(SimNode(parameter_overrides=sim_overrides))
            if sim.model.robot is None:
                raise RuntimeError(f'no robot model from {urdf}')
            # a shutdown signal during start-up: the nodes still to come are not
            # created (the 3D view alone takes seconds to import and start)
            if not session.signals.requested:
                dynamics = session.add(DynamicsNode(parameter_overrides=overrides + joints))
                follow_simulation(dynamics, sim, dynamics._on_joint_state)
            if args.demo and not session.signals.requested:
                # the simulated arm's friction model (simulated_friction in the YAML)
                controller = session.add(
                    TrajectoryController(parameter_overrides=overrides + joints))
                # the controller runs on the simulated time, handed over as /clock
                # would hand it (a state's stamp is never its time)
                controller.clock = sim.sim_clock
                follow_simulation(controller, sim, controller.on_joint_state)
                DemoLoop(controller, sim.initial_positions)
            if finger and not session.signals.requested:
                gripper = session.add(GripperController(parameter_overrides=overrides + [
                    Parameter('joint', Parameter.Type.STRING, finger)]))
                follow_simulation(gripper, sim, gripper._on_joint_state)
                if args.demo:
                    GripperDemo(gripper)
            if args.viewer and not session.signals.requested:
                from .arm_viewer import start_viewer  # viser is imported only if wanted
                for viewer in start_viewer(overrides, args.viewer_port,
                                           args.viewer_host):
                    session.add(viewer)
        except RuntimeError as exc:
            print(f'denoc_sim_arm: {exc}', file=sys.stderr, flush=True)
            return 1
        if args.plot:
            sim.listeners.append(lambda s: (times.append(s.t), positions.append(s.q)))
        robot = sim.model.robot
        names = robot.joint_names
        sim.duration = args.duration
        # the status line limits itself to its period; the first one shows at once
        sim.create_timer(0.1, lambda: status_line.update(sim.status, names),
                         clock=RclClock(clock_type=ClockType.STEADY_TIME))
        print(f'denoc_sim_arm: {robot.chain.name} ({robot.n} joints) from {urdf}; '
              f'parameters {params_file}; demo {"on" if args.demo else "off"}; '
              'Ctrl-C to stop', flush=True)
        finished = session.spin(done=lambda: sim.finished or sim.failure is not None)
        status_line.update(sim.status, names, force=True)
        status_line.close()
    if sim.failure is not None:
        print(f'denoc_sim_arm: the simulation failed: {sim.failure}', file=sys.stderr,
              flush=True)
        return 1
    print(f'denoc_sim_arm: {sim.summary()}' + ('' if finished else ' (interrupted)'),
          flush=True)
    if args.plot and times:
        save_plot(args.plot, times, positions, names, f'{robot.chain.name}: joint positions')
        print(f'denoc_sim_arm: plot saved to {args.plot}', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
