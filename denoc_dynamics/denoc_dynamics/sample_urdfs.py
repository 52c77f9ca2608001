"""
Sample robots as URDF text, for tests, benchmarks and experiments.

Saha's planar arm, random serial chains and trees (mimic joints among them), a heavy
wrist far from the base, a gripper with a mimic finger, and the small building blocks
(:func:`link`, :func:`joint`, :func:`robot`) from which a test writes its own tree.
Like Pinocchio's ``buildSampleModelManipulator``, they live in the package so that the
tests and the benchmarks build the same robots.
"""

import numpy as np

#: The inertia tensor of :func:`link` unless one is given.
INERTIA = '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'


def link(name, mass=1.0, xyz='0 0 0', rpy='0 0 0', inertia=INERTIA):
    """Return a ``<link>`` with a mass at ``xyz`` (inertial frame turned by ``rpy``)."""
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<mass value="{mass}"/>{inertia}</inertial></link>')


def joint(name, parent, child, kind='revolute', xyz='0 0 0.1', axis='0 1 0', extra=''):
    """Return a ``<joint>`` of ``kind`` from ``parent`` to ``child``, limited to +-1."""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
            f'<limit lower="-1" upper="1" effort="10" velocity="1"/>{extra}</joint>')


def robot(*parts):
    """Return a ``<robot>`` of ``parts`` below a massless link named ``base``."""
    return '<robot name="t"><link name="base"/>' + ''.join(parts) + '</robot>'


def hand_robot():
    """Return a 2-joint arm whose 'hand' carries two prismatic fingers, 'fr' mimics 'fl'."""
    return robot(
        link('a'), joint('j1', 'base', 'a', axis='0 0 1'),
        link('hand', xyz='0.05 0 0'), joint('j2', 'a', 'hand', xyz='0.3 0 0'),
        link('left', mass=0.5, xyz='0 0.02 0'),
        joint('fl', 'hand', 'left', kind='prismatic', xyz='0.1 0 0', axis='0 1 0'),
        link('right', mass=0.5, xyz='0 -0.02 0'),
        joint('fr', 'hand', 'right', kind='prismatic', xyz='0.1 0 0', axis='0 -1 0',
              extra='<mimic joint="fl" multiplier="1" offset="0"/>'))


def _v(x):
    """Return a vector as URDF text."""
    return ' '.join(repr(float(v)) for v in x)


def _inertial(m, com, I, rpy=(0.0, 0.0, 0.0)):
    return (f'<inertial><origin xyz="{_v(com)}" rpy="{_v(rpy)}"/>'
            f'<mass value="{float(m)!r}"/><inertia ixx="{float(I[0, 0])!r}" '
            f'ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
            f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" '
            f'izz="{float(I[2, 2])!r}"/></inertial>')


def planar_urdf(lengths, masses, rod=True, base_offset=0.0):
    """
    Saha's planar arm (000 §6): revolute z joints, links along x.

    With ``rod`` each link is a uniform rod (mass centre at l/2, I_zz = m l^2/12);
    otherwise all of its mass sits at the distal joint with zero rotational inertia.
    The first joint sits ``base_offset`` along x from the base origin.
    """
    parts = ['<robot name="planar"><link name="base_link"/>']
    parent, offset = 'base_link', base_offset
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


def random_chain_urdf(rng, n, prismatic=0.2, fixed=0.3, name='random_chain',
                      mass_scale=None, length_scale=None, base_offset=None):
    """
    Return a random serial chain of n movable joints, with fixed joints sprinkled in.

    Axes, joint origins (xyz and rpy), masses, mass centres, inertial rpy and full
    inertia tensors are random; a fraction of joints is prismatic.  Extreme chains:
    ``mass_scale`` and ``length_scale`` (n factors each) multiply link i's masses and
    its lengths (joint offset, mass centre, body size: inertia ~ m l^2); ``base_offset``
    (xyz) mounts the chain on a fixed joint that far from the base origin.  Without
    them the chain (and the draws from ``rng``) are those of the default.
    """
    mass_scale = np.ones(n) if mass_scale is None else np.asarray(mass_scale, float)
    length_scale = np.ones(n) if length_scale is None else np.asarray(length_scale, float)
    parts = [f'<robot name="{name}"><link name="base_link"/>']
    parent = 'base_link'
    if base_offset is not None:
        parts.append(f'<link name="mount"/><joint name="mount_joint" type="fixed"><parent '
                     f'link="base_link"/><child link="mount"/><origin xyz="{_v(base_offset)}"'
                     f'/></joint>')
        parent = 'mount'
    count = 0
    for i in range(1, n + 1):
        ms, ls = mass_scale[i - 1], length_scale[i - 1]
        kind = 'prismatic' if rng.random() < prismatic else 'revolute'
        if i == 1 and kind == 'prismatic':
            kind = 'revolute'
        m = float(rng.uniform(0.2, 3.0))
        I = random_inertia(rng, m) * (ms * ls * ls)
        com = rng.uniform(-0.1, 0.1, 3) * ls
        rpy = rng.uniform(-np.pi, np.pi, 3)
        parts.append(f'<link name="link{i}">{_inertial(m * ms, com, I, rpy)}</link>')
        xyz = rng.uniform(-0.2, 0.2, 3) * ls
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
            xyz = rng.uniform(-0.1, 0.1, 3) * ls
            orpy = rng.uniform(-np.pi, np.pi, 3)
            com2 = rng.uniform(-0.05, 0.05, 3) * ls
            I2 = random_inertia(rng, m2) * (ms * ls * ls)
            parts.append(f'<link name="fixed{count}">{_inertial(m2 * ms, com2, I2)}'
                         f'</link><joint name="weld{count}" type="fixed"><parent link="{parent}"/>'
                         f'<child link="fixed{count}"/><origin xyz="{_v(xyz)}" '
                         f'rpy="{_v(orpy)}"/></joint>')
            parent = f'fixed{count}'
    parts.append('</robot>')
    return ''.join(parts)


def box_inertia(m, size):
    """Return the inertia tensor of a solid cube of mass m and edge ``size`` about its centre."""
    return np.eye(3) * (m * size * size / 6.0)


def heavy_wrist_urdf(distance, mass=1e4, size=1e-3, moving=False, shoulder_axis='0 1 0'):
    """
    Return a chain whose last two joints carry a small, heavy body far from the base.

    Two revolute joints 2 ``size`` apart (axes z and x) each carry a cube of ``mass`` and
    edge ``size``.  The first of them sits ``distance`` from the base origin: on a fixed
    mount (``moving`` False, a 2-DOF chain), or at the end of a light 1 kg rod of that
    length along x, turned by a revolute joint at the base (``moving`` True, 3 DOF)
    about ``shoulder_axis``.  About x (along the rod) the wrist stays near the
    shoulder axis, and no entry of the GIM is large.
    """
    I = box_inertia(mass, size)
    parts = ['<robot name="heavy_wrist"><link name="base_link"/>']
    parent, origin = 'base_link', (distance, 0.0, 0.0)
    if moving:
        rod = np.diag([1e-4, distance ** 2 / 12.0, distance ** 2 / 12.0])
        parts.append(f'<link name="rod">{_inertial(1.0, (distance / 2, 0.0, 0.0), rod)}</link>'
                     '<joint name="shoulder" type="revolute"><parent link="base_link"/>'
                     f'<child link="rod"/><origin xyz="0 0 0"/><axis xyz="{shoulder_axis}"/>'
                     '<limit lower="-3" upper="3" effort="100" velocity="2"/></joint>')
        parent = 'rod'
    for k, axis in enumerate(('0 0 1', '1 0 0'), start=1):
        parts.append(f'<link name="body{k}">{_inertial(mass, (size / 2, 0.0, 0.0), I)}</link>'
                     f'<joint name="wrist{k}" type="revolute"><parent link="{parent}"/>'
                     f'<child link="body{k}"/><origin xyz="{_v(origin)}"/>'
                     f'<axis xyz="{axis}"/>'
                     '<limit lower="-3" upper="3" effort="100" velocity="2"/></joint>')
        parent, origin = f'body{k}', (2 * size, 0.0, 0.0)
    parts.append('</robot>')
    return ''.join(parts)


def random_tree_urdf(rng, n, fixed=0.3, prismatic=0.2, mimic=0.15, name='random_tree'):
    """
    Return a random tree of n movable joints, its joints declared in a shuffled order.

    Each new link hangs from a random earlier link, by a fixed joint with probability
    ``fixed`` (not counted in n) or a movable one; a fraction of the movable joints is
    prismatic, and a fraction ``mimic`` mimics a random earlier movable joint (so
    mimics of mimics occur) with a random multiplier and offset.  Joint names are
    random, so that the depth-first order by name differs from the order of creation.
    """
    links = ['<link name="base_link"/>']
    joints = []
    names, movable = ['base_link'], []
    count = 0
    while count < n:
        parent = names[int(rng.integers(len(names)))]
        child = f'l{len(names)}'
        m = float(rng.uniform(0.2, 3.0))
        com = rng.uniform(-0.1, 0.1, 3)
        links.append(f'<link name="{child}">'
                     f'{_inertial(m, com, random_inertia(rng, m), rng.uniform(-3, 3, 3))}</link>')
        joint = f'j{int(rng.integers(10 ** 6)):06d}_{len(names)}'
        origin = (f'<origin xyz="{_v(rng.uniform(-0.2, 0.2, 3))}" '
                  f'rpy="{_v(rng.uniform(-np.pi, np.pi, 3))}"/>')
        names.append(child)
        if rng.random() < fixed:
            joints.append(f'<joint name="{joint}" type="fixed"><parent link="{parent}"/>'
                          f'<child link="{child}"/>{origin}</joint>')
            continue
        kind = 'prismatic' if rng.random() < prismatic else 'revolute'
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        extra = ''
        if movable and rng.random() < mimic:
            leader = movable[int(rng.integers(len(movable)))]
            extra = (f'<mimic joint="{leader}" multiplier="{float(rng.uniform(-2, 2))!r}" '
                     f'offset="{float(rng.uniform(-0.3, 0.3))!r}"/>')
        joints.append(f'<joint name="{joint}" type="{kind}"><parent link="{parent}"/>'
                      f'<child link="{child}"/>{origin}<axis xyz="{_v(axis)}"/>'
                      f'<limit lower="-1" upper="1" effort="100" velocity="2"/>{extra}</joint>')
        movable.append(joint)
        count += 1
    order = rng.permutation(len(joints))
    return (f'<robot name="{name}">' + ''.join(links)
            + ''.join(joints[i] for i in order) + '</robot>')


def mimic_gripper_urdf(leader_mass=1.0, follower_mass=1.0):
    """
    Return a wrist joint carrying two prismatic fingers, the second mimicking the first.

    A finger link of mass 0 has no ``<inertial>`` at all.
    """
    def link(name, m):
        body = _inertial(m, (0.05, 0.0, 0.0), random_inertia(np.random.default_rng(1), m)) \
            if m else ''
        return f'<link name="{name}">{body}</link>'

    def joint(name, kind, child, axis, extra=''):
        return (f'<joint name="{name}" type="{kind}"><parent link="'
                f'{"base" if name == "wrist" else "palm"}"/><child link="{child}"/>'
                f'<origin xyz="0 0 0.1"/><axis xyz="{axis}"/>'
                f'<limit lower="-0.5" upper="0.5" effort="10" velocity="1"/>{extra}</joint>')

    return ('<robot name="mimic_gripper"><link name="base"/>' + link('palm', 2.0)
            + link('finger_a', leader_mass) + link('finger_b', follower_mass)
            + joint('wrist', 'revolute', 'palm', '1 0 0')
            + joint('finger_a_joint', 'prismatic', 'finger_a', '0 1 0')
            + joint('finger_b_joint', 'prismatic', 'finger_b', '0 -1 0',
                    '<mimic joint="finger_a_joint" multiplier="1" offset="0"/>')
            + '</robot>')
