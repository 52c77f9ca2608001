"""
denoc_dynamics: robot dynamics by Saha's Decoupled Natural Orthogonal Complement.

``from denoc_dynamics import load_urdf`` gives the pure-Python core; the ROS 2 nodes
live in :mod:`denoc_dynamics.ros` and are imported only when used.
"""

import gc

# The import (the compiler's and the first kernel's) creates about 100,000 objects that live
# as long as the process: the cyclic garbage collector, which would walk them over and
# over while they are made, waits until it is done (0.03 to 0.1 s of a fresh process).
_collecting = gc.isenabled()
gc.disable()
try:
    from .core import load_urdf, load_urdf_xml, NonFiniteResult, Robot
finally:
    if _collecting:
        gc.enable()
    del _collecting

__all__ = ['load_urdf', 'load_urdf_xml', 'NonFiniteResult', 'Robot']
__version__ = '0.1.0'
