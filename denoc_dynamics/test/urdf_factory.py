"""URDF strings for tests: Saha's planar arm and random serial chains."""

import numpy as np


def _v(x):
    """Return a vector as URDF text."""
    return ' '.join(repr(float(v)) for v in x)


def _inertial(m, com, I, rpy=(0.0, 0.0, 0.0)):
    return (f'<inertial><origin xyz="{_v(com)}" rpy="{_v(rpy)}"/>'
            f'<mass value="{float(m)!r}"/><inertia ixx="{float(I[0, 0])!r}" '
            f'ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
            f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" '
            f'izz="{float(I[2, 2])!r}"/></inertial>')


def planar_urdf(lengths, masses, rod=True):
    """
    Saha's planar arm (000 §6): revolute z joints, links along x.

    With ``rod`` each link is a uniform rod (mass centre at l/2, I_zz = m l^2/12);
    otherwise all of its mass sits at the distal joint with zero rotational inertia.
    """
    parts = ['<robot name="planar"><link name="base_link"/>']
    parent, offset = 'base_link', 0.0
    for i, (l, m) in enumerate(zip(lengths, masses), start=1):
        if rod:
            I = np.diag([0.0, m * l * l / 12.0, m * l * l / 12.0])
            com = (l / 2.0, 0.0, 0.0)
        else:
            I, com = np.zeros((3, 3)), (l, 0.0, 0.0)
        parts.append(f'<link name="link{i}">{_inertial(m, com, I)}</link>')
        parts.append(f'<joint name="joint{i}" type="revolute"><parent link="{parent}"/>'
                     f'<child link="link{i}"/><origin xyz="{float(offset)!r} 0 0"/>'
                     f'<axis xyz="0 0 1"/>'
                     f'<limit lower="-3.14" upper="3.14" effort="100" velocity="5"/></joint>')
        parent, offset = f'link{i}', l
    parts.append(f'<link name="tip"/><joint name="tip_joint" type="fixed"><parent '
                 f'link="{parent}"/><child link="tip"/><origin xyz="{float(offset)!r} 0 0"/>'
                 f'</joint>')
    parts.append('</robot>')
    return ''.join(parts)


def random_inertia(rng, m):
    """Return a physically consistent inertia tensor (about the mass centre) of mass m."""
    a, b, c = rng.uniform(0.02, 0.2, 3)
    principal = m / 5.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q @ np.diag(principal) @ Q.T


def random_chain_urdf(rng, n, prismatic=0.2, fixed=0.3, name='random_chain'):
    """
    Return a random serial chain of n movable joints, with fixed joints sprinkled in.

    Axes, joint origins (xyz and rpy), masses, mass centres, inertial rpy and full
    inertia tensors are random; a fraction of joints is prismatic.
    """
    parts = [f'<robot name="{name}"><link name="base_link"/>']
    parent = 'base_link'
    count = 0
    for i in range(1, n + 1):
        kind = 'prismatic' if rng.random() < prismatic else 'revolute'
        if i == 1 and kind == 'prismatic':
            kind = 'revolute'
        m = float(rng.uniform(0.2, 3.0))
        I = random_inertia(rng, m)
        com = rng.uniform(-0.1, 0.1, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        parts.append(f'<link name="link{i}">{_inertial(m, com, I, rpy)}</link>')
        xyz = rng.uniform(-0.2, 0.2, 3)
        orpy = rng.uniform(-np.pi, np.pi, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        limit = ('<limit lower="-0.5" upper="0.5" effort="100" velocity="2"/>'
                 if kind == 'prismatic' else
                 '<limit lower="-3" upper="3" effort="100" velocity="2"/>')
        parts.append(f'<joint name="joint{i}" type="{kind}"><parent link="{parent}"/>'
                     f'<child link="link{i}"/><origin xyz="{_v(xyz)}" rpy="{_v(orpy)}"/>'
                     f'<axis xyz="{_v(axis)}"/>{limit}</joint>')
        parent = f'link{i}'
        if rng.random() < fixed:
            count += 1
            m2 = float(rng.uniform(0.1, 1.0))
            xyz = rng.uniform(-0.1, 0.1, 3)
            orpy = rng.uniform(-np.pi, np.pi, 3)
            parts.append(f'<link name="fixed{count}">'
                         f'{_inertial(m2, rng.uniform(-0.05, 0.05, 3), random_inertia(rng, m2))}'
                         f'</link><joint name="weld{count}" type="fixed"><parent link="{parent}"/>'
                         f'<child link="fixed{count}"/><origin xyz="{_v(xyz)}" '
                         f'rpy="{_v(orpy)}"/></joint>')
            parent = f'fixed{count}'
    parts.append('</robot>')
    return ''.join(parts)
