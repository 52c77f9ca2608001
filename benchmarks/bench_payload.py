"""
Payloads: the joint-torque regressor against Pinocchio, and attaching a payload.

* ``robot.regressor(q, qd, qdd)`` against ``pin.computeJointTorqueRegressor`` on the
  Panda (7 DOF, fingers locked, both sides the same bodies): target <= 1.0x.  The two
  regressors are compared too (relative error).
* ``robot.with_payload(link, mass, com, inertia)`` on the Panda: the new Robot with the
  checks of the payload, no re-parse; target <= 50 us (absolute: Pinocchio has no such
  call; its nearest is copying the model and appending an inertia).
"""

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np

NAME = 'payload'
TITLE = 'Payloads: regressor vs pin.computeJointTorqueRegressor; with_payload (Panda)'
REGRESSOR_RATIO_TARGET = 1.0
WITH_PAYLOAD_TARGET_US = 50.0


def run(opts) -> dict:
    """Time the regressor and with_payload; return the section's results."""
    pin = common.import_pinocchio()
    robot, model, data, path = common.panda(pin)
    rng = np.random.default_rng(opts.seed)
    q, qd, qdd = rng.normal(size=(3, robot.n))
    com, inertia = np.array([0.01, 0.0, 0.05]), np.diag([0.004, 0.005, 0.003])
    calls = {'regressor': (lambda: robot.regressor(q, qd, qdd), None),
             'with_payload': (lambda: robot.with_payload('panda_hand', 2.5, com, inertia),
                              None)}
    checks = {}
    if pin is not None:
        calls['regressor'] = (calls['regressor'][0], lambda: pin.computeJointTorqueRegressor(
            model, data, q, qd, qdd))
        checks['regressor vs computeJointTorqueRegressor'] = common.rel_error(
            robot.regressor(q, qd, qdd), pin.computeJointTorqueRegressor(model, data, q, qd, qdd))
    rows, timings = common.side_by_side(calls, opts)
    result = {'robot': f'Panda {robot.n} DOF (tip panda_hand, fingers locked)', 'urdf': path,
              'rows': rows, 'max_rel_error_vs_pinocchio': checks,
              'targets': common.ratio_targets(rows, {'regressor': REGRESSOR_RATIO_TARGET})}
    with_payload_us = rows[1]['ours_us']
    result['targets'].append(common.target('with_payload', with_payload_us, 'us',
                                           f'<= {WITH_PAYLOAD_TARGET_US:g} us',
                                           with_payload_us <= WITH_PAYLOAD_TARGET_US))
    return result


if __name__ == '__main__':
    import sys
    sys.exit(common.main(sys.modules[__name__]))
