"""
denoc_dynamics: robot dynamics by Saha's Decoupled Natural Orthogonal Complement.

``from denoc_dynamics import load_urdf`` gives the pure-Python core; the ROS 2 nodes
live in :mod:`denoc_dynamics.ros` and are imported only when used.
"""

from .core import load_urdf, load_urdf_xml, NonFiniteResult, Robot

__all__ = ['load_urdf', 'load_urdf_xml', 'NonFiniteResult', 'Robot']
__version__ = '0.1.0'
