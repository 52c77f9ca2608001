"""Typed parameter declaration shared by the denoc_dynamics nodes."""

from rcl_interfaces.msg import FloatingPointRange
from rcl_interfaces.msg import IntegerRange
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter


def declare(node, name, ptype, default, description, read_only=False,
            min_value=None, max_value=None, additional_constraints=''):
    """
    Declare a statically typed parameter with a descriptor and return its value.

    ``ptype`` is a :class:`rclpy.parameter.Parameter.Type`.  An empty array default
    cannot carry its type in rclpy, so such a parameter is declared uninitialized
    with its type and ``default`` is returned while nobody sets it.  ``min_value`` /
    ``max_value`` add a range constraint for INTEGER and DOUBLE parameters.
    """
    descriptor = ParameterDescriptor(
        type=ptype.value, description=description, read_only=read_only,
        additional_constraints=additional_constraints)
    if min_value is not None or max_value is not None:
        if ptype == Parameter.Type.DOUBLE:
            descriptor.floating_point_range = [FloatingPointRange(
                from_value=float(min_value if min_value is not None else -1e300),
                to_value=float(max_value if max_value is not None else 1e300), step=0.0)]
        elif ptype == Parameter.Type.INTEGER:
            descriptor.integer_range = [IntegerRange(
                from_value=int(min_value if min_value is not None else -2 ** 62),
                to_value=int(max_value if max_value is not None else 2 ** 62), step=0)]
    if isinstance(default, (list, tuple)) and len(default) == 0:
        node.declare_parameter(name, ptype, descriptor)
    else:
        node.declare_parameter(name, default, descriptor)
    return value(node, name, default)


def value(node, name, default=None):
    """Return a declared parameter's value, or ``default`` if it is uninitialized."""
    try:
        result = node.get_parameter(name).value
    except ParameterUninitializedException:
        return default
    return default if result is None else result
