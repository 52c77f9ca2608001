"""
Accuracy against the distance from the base origin, ours vs Pinocchio.

Not a timing section: it prints a markdown table of relative errors, with Pinocchio's
results as the reference, for chains placed farther and farther from the base origin:

* ``translated``: a random 7-DOF chain (revolute and prismatic joints, fixed links;
  ``denoc_dynamics.sample_urdfs.random_chain_urdf``) mounted on a fixed joint d from the base;
* ``wrist``: two revolute joints carrying 10 t cubes of 1 mm, on a fixed mount d from
  the base (``heavy_wrist_urdf``);
* ``wrist on rod``: the same wrist at the end of a light rod of length d, turned by a
  third revolute joint at the base about y (across the rod) or, ``rod axis``, about x
  (along the rod: no large entry in the GIM);
* ``planar``: a 2-DOF planar arm of 1 m, 1 kg rods whose first joint is d from the base.

On ``rod axis`` the reference itself is off: Pinocchio's ``crba`` gives M_11 2e-10
(relative) away from the direct sum m (y^2 + z^2) + I_xx at 1 km, which ours matches
(``test_precision.py``); its errors there show in the GIM and FD columns.

Columns: relative errors (Frobenius / 2-norm) of the GIM (vs ``crba``), ID (vs
``rnea``), U D U^T (vs ``crba``), I^-1 (vs the inverse of ``crba``'s M by LAPACK;
Pinocchio's own ``computeMinverse`` is shown too: it loses digits far from the base
origin) and the paper-003 H;
FD's backward error eta = ||M qdd - phi|| / (||M|| ||qdd|| + ||phi||) (M from ``crba``,
phi = tau - ``rnea``(q, qd, 0)) divided by eps cond(M), ours and ``aba``'s.  The worst
of 5 random states is shown.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/precision.py
"""

import sys

import common  # noqa: F401  (first: sets the BLAS thread count)
from common import sample_urdfs
import numpy as np

EPS = np.finfo(float).eps
DISTANCES = (0.0, 1.0, 10.0, 100.0, 1000.0)


def cases():
    """Yield (case, d, urdf) for every chain and distance."""
    for d in DISTANCES:
        offset = np.ones(3) * d / np.sqrt(3.0)
        yield 'translated', d, sample_urdfs.random_chain_urdf(
            np.random.default_rng(7), 7, base_offset=offset)
    for d in DISTANCES[1:]:
        yield 'wrist', d, sample_urdfs.heavy_wrist_urdf(d)
    for d in DISTANCES[1:]:
        yield 'wrist on rod', d, sample_urdfs.heavy_wrist_urdf(d, moving=True)
    for d in DISTANCES[1:]:
        yield 'rod axis', d, sample_urdfs.heavy_wrist_urdf(d, moving=True,
                                                           shoulder_axis='1 0 0')
    for d in DISTANCES:
        yield 'planar', d, sample_urdfs.planar_urdf([1.0, 1.0], [1.0, 1.0], base_offset=d)


def backward_error(M, qdd, phi):
    """Return ||M qdd - phi|| / (||M|| ||qdd|| + ||phi||) (2-norms)."""
    return np.linalg.norm(M @ qdd - phi) / (np.linalg.norm(M, 2) * np.linalg.norm(qdd)
                                            + np.linalg.norm(phi))


def measure(pin, urdf, states=5, seed=3):
    """Return the worst errors over ``states`` random states of one chain."""
    robot = common.load_urdf(urdf)
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    idx = np.array([model.joints[model.getJointId(name)].idx_q for name in robot.joint_names])
    rng = np.random.default_rng(seed)
    worst = {}
    for _ in range(states):
        q, qd, tau = (rng.uniform(-1, 1, robot.n), rng.normal(size=robot.n),
                      rng.normal(size=robot.n))
        qp, qdp, taup = (np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv))
        qp[idx], qdp[idx], taup[idx] = q, qd, tau
        qddp = rng.normal(size=model.nv)
        M = pin.crba(model, data, qp).copy()
        M = np.triu(M) + np.triu(M, 1).T
        M = M[np.ix_(idx, idx)]
        b = pin.rnea(model, data, qp, qdp, np.zeros(model.nv))[idx]
        tau_id = pin.rnea(model, data, qp, qdp, qddp)[idx]
        Minv_pin = pin.computeMinverse(model, data, qp).copy()
        Minv_pin = (np.triu(Minv_pin) + np.triu(Minv_pin, 1).T)[np.ix_(idx, idx)]
        Minv = np.linalg.inv(M)
        qdd_pin = pin.aba(model, data, qp, qdp, taup)[idx]
        U, dd = robot.udu(q)
        H, _ = robot.composite_body(q, qd)
        scale = EPS * np.linalg.cond(M)
        row = {
            'GIM': common.rel_error(robot.inertia_matrix(q), M),
            'ID': common.rel_error(robot.inverse_dynamics(q, qd, qddp[idx]), tau_id),
            'UDU': common.rel_error(U @ np.diag(dd) @ U.T, M),
            'inv GIM': common.rel_error(robot.inverse_inertia_matrix(q), Minv),
            'pin Minv': common.rel_error(Minv_pin, Minv),
            'H (003)': common.rel_error(H, M),
            'FD eta/(eps cond)': backward_error(M, robot.forward_dynamics(q, qd, tau), tau - b)
            / scale,
            'FD denoc': backward_error(M, robot.forward_dynamics(q, qd, tau, method='denoc'),
                                       tau - b) / scale,
            'aba': backward_error(M, qdd_pin, tau - b) / scale,
            'cond(M)': np.linalg.cond(M),
        }
        for key, value in row.items():
            worst[key] = max(worst.get(key, 0.0), float(value))
    return worst


def main():
    """Print the table."""
    pin = common.import_pinocchio()
    if pin is None:
        sys.exit('Pinocchio (pin) is not installed')
    header = None
    for case, d, urdf in cases():
        worst = measure(pin, urdf)
        if header is None:
            header = ['chain', 'd [m]'] + list(worst)
            print('| ' + ' | '.join(header) + ' |')
            print('|' + '---|' * len(header))
        print(f'| {case} | {d:g} | ' + ' | '.join(f'{v:.2g}' for v in worst.values()) + ' |')


if __name__ == '__main__':
    main()
