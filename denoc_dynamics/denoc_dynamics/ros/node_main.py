"""The ``main()`` of the node executables, shared by dynamics_node and sim_node."""

import sys

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.executors import SingleThreadedExecutor


def run_node(node_class, name, spin=None, args=None):
    """
    Run one node in a SingleThreadedExecutor until shutdown; return the exit code.

    ``spin(node, executor)`` replaces ``executor.spin()``.  A RuntimeError or a
    ParameterException (a parameter of the wrong type or out of its range) raised
    while the node is constructed is printed in one line and gives exit code 1; rclpy
    is shut down in every case.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = node_class()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        if spin is None:
            executor.spin()
        else:
            spin(node, executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (RuntimeError, ParameterException) as exc:
        if node is None:
            print(f'{name}: {exc}', file=sys.stderr)
            return 1
        raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
