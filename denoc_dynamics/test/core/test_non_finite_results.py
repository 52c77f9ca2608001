"""The Robot API never returns NaN or Inf: finite input that overflows raises instead."""

from denoc_dynamics import load_urdf, NonFiniteResult
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import random_chain_urdf
import numpy as np
import pytest

Q = np.array([0.3, 0.7, -0.4, -1.3, 0.5, 1.1, -0.2])
ZERO = np.zeros(7)


@pytest.fixture(scope='module')
def arm():
    return load_urdf(bundled_urdf('denoc_arm7'))


def _one_fast_state(count, k):
    qd = np.zeros((count, 7))
    qd[k] = 1e200
    return qd


# Finite input far beyond anything physical: joint speeds of 1e155 and 1e200 rad/s
# (their squares overflow), efforts and accelerations of 1e308.
OVERFLOWS = {
    'FD, qd 1e155': lambda r: r.forward_dynamics(Q, np.full(7, 1e155), ZERO),
    'FD, qd 1e200': lambda r: r.forward_dynamics(Q, np.full(7, 1e200), ZERO),
    'FD, tau 1e308': lambda r: r.forward_dynamics(Q, ZERO, np.full(7, 1e308)),
    'FD denoc, tau 1e308': lambda r: r.forward_dynamics(Q, ZERO, np.full(7, 1e308),
                                                        method='denoc'),
    'ID, qdd 1e308': lambda r: r.inverse_dynamics(Q, ZERO, np.full(7, 1e308)),
    'bias forces, qd 1e200': lambda r: r.bias_forces(Q, np.full(7, 1e200)),
    'composite body, qd 1e200': lambda r: r.composite_body(Q, np.full(7, 1e200)),
    'kinetic energy, qd 1e200': lambda r: r.kinetic_energy(Q, np.full(7, 1e200)),
    'regressor, qd 1e200': lambda r: r.regressor(Q, np.full(7, 1e200), ZERO),
    # one bad state in a batch larger than a block: the whole call raises
    'batched FD, one state': lambda r: r.forward_dynamics(
        np.tile(Q, (300, 1)), _one_fast_state(300, 257), np.zeros((300, 7))),
}


@pytest.mark.filterwarnings('ignore::RuntimeWarning')  # numpy's overflow warnings
@pytest.mark.parametrize('what', sorted(OVERFLOWS))
def test_overflow_raises_instead_of_returning_nan(arm, what):
    with pytest.raises(NonFiniteResult, match='not finite'):
        OVERFLOWS[what](arm)


def test_non_finite_result_is_a_value_error():
    # callers that catch ValueError (the nodes, the simulation) catch it too
    assert issubclass(NonFiniteResult, ValueError)


@pytest.mark.filterwarnings('ignore::RuntimeWarning')
def test_prismatic_positions_that_overflow_raise():
    rng = np.random.default_rng(3)
    robot = load_urdf(random_chain_urdf(rng, 6, prismatic=0.6))
    prismatic = robot.chain.prismatic
    assert prismatic.any()
    q = np.where(prismatic, 1e300, 0.1)
    for call in (robot.inertia_matrix, robot.udu, robot.inverse_inertia_matrix):
        with pytest.raises(NonFiniteResult):
            call(q)
    # the gravity torque of a mass 1e300 m away, m g d, is representable: each body is
    # referred to its own joint origin, so nothing squares the distance and it is returned
    g = robot.gravity_torques(q)
    assert np.all(np.isfinite(g)) and np.abs(g).max() > 1e299


def test_large_but_representable_input_still_works(arm):
    # 1e100 rad/s squares to 1e200: absurd, but the result is finite and returned
    qdd = arm.forward_dynamics(Q, np.full(7, 1e100), ZERO)
    assert np.all(np.isfinite(qdd)) and np.abs(qdd).max() > 1e150
    tau = np.full(7, 1e300)
    assert np.allclose(arm.inverse_dynamics(Q, ZERO, arm.forward_dynamics(Q, ZERO, tau)),
                       tau, rtol=1e-8)


def test_max_dof_refuses_a_long_chain_before_building_it():
    text = random_chain_urdf(np.random.default_rng(0), 9)
    assert load_urdf(text, max_dof=9).n == 9
    with pytest.raises(ValueError, match='9 joints, more than max_dof = 8'):
        load_urdf(text, max_dof=8)


@pytest.mark.parametrize('shape', [(7,), (3,), (1, 7), (7, 7), (7, 70), (3, 5)])
@pytest.mark.parametrize('strided', [False, True])
def test_the_finite_check_finds_every_non_finite_entry(shape, strided):
    """The one-test check (sums of x - x) sees a NaN or an infinity anywhere, any layout."""
    from denoc_dynamics.core.frames import not_finite
    X = np.random.default_rng(3).normal(size=shape) * 1e300
    assert not not_finite(X[..., ::2] if strided else X)
    for bad in (np.nan, np.inf, -np.inf):
        for index in np.ndindex(*shape):
            Y = X.copy()
            Y[index] = bad
            if strided:                 # every other entry of the last axis (a view)
                Y = np.repeat(Y, 2, axis=-1)[..., ::2]
            assert not_finite(Y), (bad, index)
