"""
The one entry of every Robot call, the O(n^2) inverse, the gravity and energy passes.

* I^-1 by n unit solves on the articulated bodies (O(n^2)) equals the analytical
  U^-T D^-1 U^-1 of 000 eqs. 36-41, and I^-1 I = 1, on every robot of the tests:
  the bundled arms, the planar arm, random chains and trees (with mimic joints);
* the gravity pass equals ID(q, 0, 0), and the energies equal qd^T I qd / 2 and
  -sum m_i g . C_i from the kinematics;
* the one-state route and the checked route give the same numbers to the bit, for
  arrays that are read-only, strided, of integers, lists, and on a new thread; bad
  input takes the checked route and its errors, whatever the call;
* the mimic map is public and gives q_b = G q + b;
* the entries' buffers without reference counts (``unowned``) are the same memory, and
  a kernel on them gives the numbers of the same kernel on counted arrays, to the bit;
  a workspace that an entry allocates lives while its unowned view is read
  (``hold``), and numba would free it before without;
* the model's buffer holds its reals and ints as views: a payload written into
  ``model.reals`` in place (as the simulation node does) is what the entries read.
"""

import threading

from denoc_dynamics import load_urdf
from denoc_dynamics.core import call
from denoc_dynamics.core.model import hold, unowned
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import random_chain_urdf, random_tree_urdf
import numba
import numpy as np
import pytest


def _robots():
    robots = {name: load_urdf(bundled_urdf(name))
              for name in ('denoc_arm7', 'denoc_arm7_gripper', 'planar3')}
    for seed, n in enumerate((2, 7, 15, 30)):
        robots[f'chain{n}'] = load_urdf(random_chain_urdf(np.random.default_rng(seed), n))
        robots[f'tree{n}'] = load_urdf(random_tree_urdf(np.random.default_rng(seed), n,
                                                        mimic=0.3))
    return robots


ROBOTS = _robots()


def _stacked(pair):
    """Return a (..., n, n) matrix with the (..., n) vector of ``pair`` below it."""
    return np.concatenate((pair[0], pair[1][..., None, :]), axis=-2)


#: Every public call with its state arrays, by name.
CALLS = {
    'inverse_dynamics': lambda r, q, qd, x: r.inverse_dynamics(q, qd, x),
    'bias_forces': lambda r, q, qd, x: r.bias_forces(q, qd),
    'gravity_torques': lambda r, q, qd, x: r.gravity_torques(q),
    'forward_dynamics': lambda r, q, qd, x: r.forward_dynamics(q, qd, x),
    'forward_dynamics cholesky': lambda r, q, qd, x: r.forward_dynamics(q, qd, x, 'cholesky'),
    'inertia_matrix': lambda r, q, qd, x: r.inertia_matrix(q),
    'udu': lambda r, q, qd, x: _stacked(r.udu(q)),
    'inverse_inertia_matrix': lambda r, q, qd, x: r.inverse_inertia_matrix(q),
    'analytical inverse': lambda r, q, qd, x: r.inverse_inertia_matrix(q, 'analytical'),
    'composite_body': lambda r, q, qd, x: _stacked(r.composite_body(q, qd)),
    'kinetic_energy': lambda r, q, qd, x: r.kinetic_energy(q, qd),
    'potential_energy': lambda r, q, qd, x: r.potential_energy(q),
}


@pytest.mark.parametrize('name', sorted(ROBOTS))
def test_the_quadratic_inverse_is_the_analytical_one_and_inverts_the_gim(name):
    robot = ROBOTS[name]
    rng = np.random.default_rng(1)
    for q in rng.uniform(-1.5, 1.5, (3, robot.n)):
        I = robot.inertia_matrix(q)
        I_inv = robot.inverse_inertia_matrix(q)
        analytical = robot.inverse_inertia_matrix(q, method='analytical')
        scale = np.abs(analytical).max()
        assert np.abs(I_inv - analytical).max() <= 1e-12 * scale * np.linalg.cond(I)
        assert np.abs(I_inv @ I - np.eye(robot.n)).max() <= 1e-13 * np.linalg.cond(I)
        np.testing.assert_array_equal(I_inv, I_inv.T)
    Q = rng.uniform(-1.5, 1.5, (2, 2, robot.n))
    np.testing.assert_array_equal(robot.inverse_inertia_matrix(Q)[1, 0],
                                  robot.inverse_inertia_matrix(Q[1, 0]))


def test_the_quadratic_inverse_on_a_long_chain():
    robot = load_urdf(random_chain_urdf(np.random.default_rng(5), 120))
    q = np.random.default_rng(2).uniform(-1.5, 1.5, robot.n)
    I, I_inv = robot.inertia_matrix(q), robot.inverse_inertia_matrix(q)
    cond = np.linalg.cond(I)
    assert np.abs(I_inv @ I - np.eye(robot.n)).max() <= 1e-13 * cond
    analytical = robot.inverse_inertia_matrix(q, method='analytical')
    assert np.abs(I_inv - analytical).max() <= 1e-12 * cond * np.abs(analytical).max()


def test_an_unknown_inverse_method_is_refused():
    with pytest.raises(ValueError, match='analytical'):
        ROBOTS['denoc_arm7'].inverse_inertia_matrix(np.zeros(7), method='cholesky')


@pytest.mark.parametrize('name', sorted(ROBOTS))
def test_gravity_and_energies_by_their_own_passes(name):
    robot = ROBOTS[name]
    rng = np.random.default_rng(2)
    zero = np.zeros(robot.n)
    for q, qd in rng.uniform(-1.5, 1.5, (3, 2, robot.n)):
        g = robot.gravity_torques(q)
        assert np.abs(g - robot.inverse_dynamics(q, zero, zero)).max() <= 1e-13 * (
            np.abs(g).max() + 1.0)
        T = robot.kinetic_energy(q, qd)
        assert abs(T - 0.5 * qd @ robot.inertia_matrix(q) @ qd) <= 1e-13 * (abs(T) + 1.0)
        C = robot.kinematics(q).C
        V = -np.einsum('i,ij,j->', robot.chain.mass, C, robot.gravity)
        assert abs(robot.potential_energy(q) - V) <= 1e-13 * (abs(V) + 1.0)
        both = robot._call(call.ENERGIES, q, qd, qd)     # T and V in one sweep
        assert both[0, 0] == T and abs(both[1, 0] - V) <= 1e-13 * (abs(V) + 1.0)


@pytest.mark.parametrize('call', sorted(CALLS))
@pytest.mark.parametrize('name', ['denoc_arm7', 'denoc_arm7_gripper', 'tree15'])
def test_every_route_of_the_entry_gives_the_same_numbers(name, call):
    robot, f = ROBOTS[name], CALLS[call]
    rng = np.random.default_rng(3)
    q, qd, x = rng.uniform(-1.0, 1.0, (3, robot.n))
    expected = np.asarray(f(robot, q, qd, x))
    read_only = [a.copy() for a in (q, qd, x)]
    for a in read_only:
        a.flags.writeable = False
    strided = [np.repeat(a, 2)[::2] for a in (q, qd, x)]
    variants = {'read-only': read_only, 'strided': strided,
                'lists': [a.tolist() for a in (q, qd, x)],
                'big-endian': [a.astype('>f8') for a in (q, qd, x)]}
    for variant, args in variants.items():
        np.testing.assert_array_equal(np.asarray(f(robot, *args)), expected, err_msg=variant)
    results = []
    thread = threading.Thread(target=lambda: results.append(f(robot, q, qd, x)))
    thread.start()
    thread.join()
    np.testing.assert_array_equal(np.asarray(results[0]), expected, err_msg='new thread')
    batch = np.asarray(f(robot, *(np.stack([a, a]) for a in (q, qd, x))))
    np.testing.assert_array_equal(batch[1], expected, err_msg='batch')


@pytest.mark.parametrize('call', sorted(CALLS))
def test_bad_input_gets_the_checked_errors_on_every_call(call):
    robot, f = ROBOTS['denoc_arm7'], CALLS[call]
    good = np.full(7, 0.1)
    for bad, message in ((np.full(8, 0.1), r'shape \(\.\.\., 7\)'),
                         (np.array([0.1] * 6 + [np.nan]), 'NaN or Inf'),
                         (np.full(7, np.inf), 'NaN or Inf')):
        with pytest.raises(ValueError, match=message):
            f(robot, bad, good, good)
    if call not in ('gravity_torques', 'inertia_matrix', 'udu', 'inverse_inertia_matrix',
                    'analytical inverse', 'potential_energy'):
        with pytest.raises(ValueError, match='qd'):
            f(robot, good, np.full(6, 0.1), good)


def test_the_mimic_map_is_public():
    robot = ROBOTS['denoc_arm7_gripper']
    mimic = robot.mimic_map
    G = mimic.G
    assert G.shape == (robot.n_bodies, robot.n)
    q = np.random.default_rng(4).uniform(-1.0, 1.0, robot.n)
    np.testing.assert_allclose(robot.body_positions(q), G @ q + mimic.b, rtol=0, atol=1e-15)
    followers = np.flatnonzero(mimic.leader >= 0)
    assert followers.size == robot.n_bodies - robot.n
    for m in followers:
        leader = robot.body_joint_names[mimic.leader[m]]
        assert robot.mimic_joints[robot.body_joint_names[m]] == (leader, mimic.a[m], mimic.b[m])


@numba.njit
def _write_through_unowned(a, b):
    """Write through unowned views of a and of the tuple (a, None, b, 2.0); return sums."""
    view = unowned(a)
    view[0] = 5.0
    items = unowned((a, None, b, 2.0))
    items[2][1, 1] = -1.0
    return view.sum() + items[0][1] + items[3], items[1] is None


def test_unowned_views_are_the_same_memory():
    a, b = np.arange(4.0), np.zeros((2, 3))
    total, none_kept = _write_through_unowned(a, b)
    assert a.tolist() == [5.0, 1.0, 2.0, 3.0]
    assert b[1, 1] == -1.0 and np.count_nonzero(b) == 1
    assert total == 11.0 + 1.0 + 2.0 and none_kept


@numba.njit
def _sum_held(size):
    """Sum an unowned view of a new array of 1s, allocating a second (of 2s) meanwhile."""
    owned = np.empty(size)
    view = unowned(owned)
    view[:] = 1.0
    other = np.zeros(size)      # numba's allocator hands out owned's memory if it is freed
    other[:] = 2.0
    total = 0.0
    for x in view:
        total += x
    return hold(owned, total) + 0.0 * other[0]


@numba.njit
def _sum_unheld(size):
    """Sum the same view without ``hold``: owned's last use is before the view is read."""
    owned = np.empty(size)
    view = unowned(owned)
    view[:] = 1.0
    other = np.zeros(size)
    other[:] = 2.0
    total = 0.0
    for x in view:
        total += x
    return total + 0.0 * other[0]


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason='without the JIT nothing is freed early')
def test_hold_keeps_an_allocated_workspace_while_its_view_is_read():
    assert _sum_held(1000) == 1000.0
    # without hold numba frees owned after its last use, before the view is read: this
    # checks that the test can see an early free (the other array's 2s in the view)
    assert _sum_unheld(1000) == 2000.0


def test_a_payload_written_into_the_model_in_place_is_what_the_entries_read():
    robot = load_urdf(bundled_urdf('denoc_arm7'))
    loaded = robot.with_payload('flange', 2.0, [0.0, 0.0, 0.05], 0.01 * np.eye(3))
    q = np.random.default_rng(3).uniform(-1.0, 1.0, robot.n)
    assert not np.array_equal(robot.gravity_torques(q), loaded.gravity_torques(q))
    assert np.shares_memory(robot.model.buffer, robot.model.reals)
    assert np.shares_memory(robot.model.buffer, robot.model.ints)
    assert not np.shares_memory(robot.model.buffer, loaded.model.buffer)
    robot.model.reals[:] = loaded.model.reals
    assert np.array_equal(robot.gravity_torques(q), loaded.gravity_torques(q))
    assert np.array_equal(robot.inverse_dynamics(q, q, q), loaded.inverse_dynamics(q, q, q))
    assert np.array_equal(robot.task_space_inertia(q, 'flange'),
                          loaded.task_space_inertia(q, 'flange'))


@pytest.mark.parametrize('name', ['denoc_arm7', 'denoc_arm7_gripper', 'tree15', 'tree30'])
@pytest.mark.parametrize('call_name', ['inverse_dynamics', 'forward_dynamics', 'udu',
                                       'inverse_inertia_matrix', 'gravity_torques'])
def test_the_entries_uncounted_buffers_give_the_counted_numbers(name, call_name):
    """call.run on the robot's own (counted) arrays against the API's entry."""
    robot = ROBOTS[name]
    code = {'inverse_dynamics': call.INVERSE_DYNAMICS, 'forward_dynamics':
            robot.fd_algorithms['denoc'], 'udu': call.UDU,
            'inverse_inertia_matrix': call.INVERSE_INERTIA,
            'gravity_torques': call.GRAVITY}[call_name]
    rng = np.random.default_rng(7)
    q, qd, x = rng.uniform(-1.0, 1.0, (3, robot.n))
    counted = np.empty((max(robot._rows[code], 1), robot.n))     # a vector as one row
    no_wrenches = np.zeros((robot.n_bodies, 6))         # w - 0 = w: as None, to the bit
    call.run(code, robot.model.reals, robot.model.ints, q, qd, x, no_wrenches,
             robot.model.data(), counted)
    api = CALLS[call_name](robot, q, qd, x)
    api = api.reshape(counted.shape)
    assert np.array_equal(api, counted)
