"""
Saha's 3-link planar arm in closed form (paper 000, §6, eqs. 42-48).

The GIM entries (43a-f), the UDU^T factors (45-46) and the inverse (47-48) are
written out by hand for uniform rods (I_i = m_i l_i^2 / 12) and compared with the
general algorithms at random lengths, masses and angles.
"""

from denoc_dynamics import load_urdf
from denoc_dynamics.resources import bundled_urdf
from denoc_dynamics.sample_urdfs import planar_urdf
import numpy as np
import pytest


def closed_form_gim(theta, l, m):
    """Return I from 000 eqs. 43a-f."""
    _, t2, t3 = theta
    l1, l2, l3 = l
    m1, m2, m3 = m
    c2, c3, c23 = np.cos(t2), np.cos(t3), np.cos(t2 + t3)
    i11 = (m1 * l1 ** 2 / 3 + m2 * (l1 ** 2 + l2 ** 2 / 3 + l1 * l2 * c2)
           + m3 * (l1 ** 2 + l2 ** 2 + l3 ** 2 / 3 + 2 * l1 * l2 * c2 + l1 * l3 * c23
                   + l2 * l3 * c3))
    i21 = (m2 * (l2 ** 2 / 3 + l1 * l2 * c2 / 2)
           + m3 * (l1 * l2 * c2 + l2 ** 2 + l2 * l3 * c3 + l1 * l3 * c23 / 2 + l3 ** 2 / 3))
    i22 = m2 * l2 ** 2 / 3 + m3 * (l2 ** 2 + l3 ** 2 / 3 + l2 * l3 * c3)
    i31 = m3 * (l1 * l3 * c23 / 2 + l2 * l3 * c3 / 2 + l3 ** 2 / 3)
    i32 = m3 * (l2 * l3 * c3 / 2 + l3 ** 2 / 3)
    i33 = m3 * l3 ** 2 / 3
    return np.array([[i11, i21, i31], [i21, i22, i32], [i31, i32, i33]])


def closed_form_udu(I):
    """
    Return (alpha12, alpha13, alpha23, m_hat) from 000 eq. 45.

    The bracketed terms of eq. 45 are the GIM entries of eq. 43, e.g.
    I_3 + m_3 d_3^T rho_13 = i_31.
    """
    m3 = I[2, 2]
    m2 = I[1, 1] - I[1, 2] ** 2 / m3
    a13, a23 = I[0, 2] / m3, I[1, 2] / m3
    a12 = (I[0, 1] - I[0, 2] * I[1, 2] / m3) / m2
    m1 = I[0, 0] - I[0, 2] ** 2 / m3 - (I[0, 1] - I[0, 2] * I[1, 2] / m3) ** 2 / m2
    return a12, a13, a23, np.array([m1, m2, m3])


def closed_form_inverse(a12, a13, a23, m_hat):
    """
    Return I^-1 from 000 eqs. 47-48, with U^-1 = [[1, u12, u13], [0, 1, u23], [0, 0, 1]].

    The OCR of eqs. 47-48 garbles the signs; the entries of U^-1 are
    u12 = -alpha12, u23 = -alpha23, u13 = alpha12 alpha23 - alpha13 (eq. 39).
    """
    u12, u23, u13 = -a12, -a23, a12 * a23 - a13
    m1, m2, m3 = m_hat
    return np.array([
        [1 / m1, u12 / m1, u13 / m1],
        [u12 / m1, u12 ** 2 / m1 + 1 / m2, u12 * u13 / m1 + u23 / m2],
        [u13 / m1, u12 * u13 / m1 + u23 / m2, u13 ** 2 / m1 + u23 ** 2 / m2 + 1 / m3]])


def random_arms(count=25, seed=3):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(0.1, 2.0, 3), rng.uniform(0.1, 10.0, 3),
               rng.uniform(-np.pi, np.pi, 3))


@pytest.mark.parametrize('l, m, theta', list(random_arms()))
def test_planar_arm_matches_closed_form(l, m, theta):
    robot = load_urdf(planar_urdf(l, m), gravity=(0.0, -9.81, 0.0))
    I = closed_form_gim(theta, l, m)
    scale = np.abs(I).max()
    np.testing.assert_allclose(robot.inertia_matrix(theta), I, rtol=0, atol=1e-13 * scale)

    a12, a13, a23, m_hat = closed_form_udu(I)
    U, d = robot.udu(theta)
    np.testing.assert_allclose(d, m_hat, rtol=1e-11)
    np.testing.assert_allclose(U, [[1, a12, a13], [0, 1, a23], [0, 0, 1]], atol=1e-11)
    # eq. 46: U D U^T reproduces eqs. 43a-f
    np.testing.assert_allclose(U @ np.diag(d) @ U.T, I, atol=1e-13 * scale)

    I_inv = closed_form_inverse(a12, a13, a23, m_hat)
    np.testing.assert_allclose(robot.inverse_inertia_matrix(theta), I_inv,
                               atol=1e-11 * np.abs(I_inv).max())


@pytest.mark.parametrize('l, m, theta', list(random_arms(count=5, seed=11)))
def test_planar_arm_denoc_quantities(l, m, theta):
    """p_i, d_i and c_{i,i-1} of 000 §6 in Saha's mass-centre form."""
    robot = load_urdf(planar_urdf(l, m))
    kin = robot.kinematics(theta)
    phi = np.cumsum(theta)                      # theta_1, theta_12, theta_13
    for i in range(3):
        expected = [0, 0, 1, -l[i] / 2 * np.sin(phi[i]), l[i] / 2 * np.cos(phi[i]), 0]
        np.testing.assert_allclose(kin.p_C[i], expected, atol=1e-14)
        np.testing.assert_allclose(kin.d[i], [l[i] / 2 * np.cos(phi[i]),
                                              l[i] / 2 * np.sin(phi[i]), 0], atol=1e-14)
    c21 = -0.5 * np.array([l[1] * np.cos(phi[1]) + l[0] * np.cos(phi[0]),
                           l[1] * np.sin(phi[1]) + l[0] * np.sin(phi[0]), 0.0])
    B21 = robot.kinematics(theta).B(1, 0)
    np.testing.assert_allclose(B21[3:, :3], [[0, -c21[2], c21[1]], [c21[2], 0, -c21[0]],
                                             [-c21[1], c21[0], 0]], atol=1e-14)


def test_bundled_planar3_is_sahas_example():
    robot = load_urdf(bundled_urdf('planar3'))
    assert robot.n == 3
    rng = np.random.default_rng(5)
    lengths = np.array([float(x) for x in robot.chain.X_tree[1:, 0, 3]])
    kin = robot.kinematics(np.zeros(3))
    # uniform rods: mass centre at mid-link, I_zz = m l^2 / 12
    l3 = 2 * kin.d[2, 0]
    l = np.array([*lengths, l3])
    m = robot.chain.mass
    # the file writes decimals, rounded at about 1e-12 relative
    np.testing.assert_allclose(robot.chain.inertia[:, 2, 2], m * l ** 2 / 12, rtol=1e-9)
    theta = rng.uniform(-np.pi, np.pi, 3)
    np.testing.assert_allclose(robot.inertia_matrix(theta), closed_form_gim(theta, l, m),
                               rtol=1e-9)
