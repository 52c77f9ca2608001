"""
The DeNOC dynamics core: plain Python loops compiled by numba (no ROS import).

One algorithm per module, each citing the paper and equations it implements:

=====================  =============================================================
module                 algorithm
=====================  =============================================================
``urdf_xml``           safe, validating URDF reader (no DTD, entities, XInclude)
``urdf``               URDF -> kinematic tree or chain (fixed joints merged, mimics)
``kinematics``         DeNOC quantities e_i, d_i, C_i, B_ij, p_i, M_i (000 eqs. 1-15)
``inverse_dynamics``   recursive inverse dynamics, tau = N^T w* (000 eqs. 10-18)
``gravity``            gravity efforts by the weights' backward sweep (000 eqs. 17-18)
``energy``             kinetic and potential energy in one forward sweep
``gim``                GIM by composite bodies, i_ij = p_i^T M~_i B_ij p_j (000 eq. 22)
``udu``                I = U D U^T by reverse Gaussian elimination (000 §5.1, 002, 004)
``inverse_inertia``    I^-1 in O(n^2) by the sweeps on every e_c (002 eqs. 14-19);
                       analytical I^-1 = U^-T D^-1 U^-1 (000 eqs. 36-41)
``forward_dynamics``   O(n) three-sweep forward dynamics (002 eqs. 14-19); Cholesky
``mimic``              q_b = G q + b; FD held to the leaders, O(n); G^T M G reference
``composite_body``     H and b about one fixed point (paper 003)
``fixman``             Fixman / Lee-Chirikjian O(N) inversion, planar point masses (001)
``frames``             every URDF link's frame (merged fixed links too), its placement
``frame_jacobian``     frame Jacobian, velocity, J-dot q-dot (000 eqs. 10, 14)
``task_space_inertia`` Lambda = (J I^-1 J^T)^-1 from I = U D U^T in O(n k); J-bar
``reaction_wrench``    the wrench across each joint, F/T sensors (000 eqs. 17-18)
``ft_sensor``          F/T sensors at fixed joints inside merged bodies; link placement
``momentum``           p = I qd, C^T qd and g(q) in two sweeps (000 eqs. 10, 17-19)
``momentum_observer``  external torques by the momentum observer (De Luca, Mattone 2005)
=====================  =============================================================

``model`` lays out the model and the workspace (named views), ``call`` is the one
entry of every algorithm (one state), ``batch`` runs it over many states in parallel,
``robot`` is the public face.
"""

from .robot import load_urdf, load_urdf_xml, NonFiniteResult, Robot
from .urdf import build_chain, Chain

__all__ = ['load_urdf', 'load_urdf_xml', 'NonFiniteResult', 'Robot', 'build_chain', 'Chain']
