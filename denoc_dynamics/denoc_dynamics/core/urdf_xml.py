"""
Safe, validating reader of URDF XML: the links and joints, as plain data.

Only what the dynamics needs is read: per link the ``<inertial>`` (mass, mass centre,
inertia); per joint its type, parent and child, ``<origin>``, ``<axis>``, ``<limit>``,
``<dynamics>`` and ``<mimic>``.  Visuals, collisions, transmissions, Gazebo and other
extensions are skipped unread, as urdfdom does.

The XML is parsed by lxml with a parser that never reaches outside the given text:
no DTD is loaded, entities are not substituted, there is no network access, and
XInclude is never processed (see :data:`PARSER_OPTIONS`).  A document that declares
a DTD (the only carrier of entities) or contains ``<xi:include>`` is refused.

Every value is checked where it is read, and a bad one raises ValueError naming the
link or joint, the element and attribute, and what is wrong: duplicate names,
missing ``<parent>``/``<child>``, vectors of the wrong length, NaN or infinite
or absurdly large numbers (:data:`MAX_MAGNITUDE`), negative mass, damping,
friction, effort or velocity limits, lower > upper.
(Inertia tensors are checked by :mod:`.urdf` on the links that move: a fixed base's
links are never read.)  Why urdf_parser_py (``urdfdom-py``) is not used: it parses with lxml's
default parser unless bypassed, reports unknown or repeated elements by printing to
stderr through a module-global hook, checks with ``assert`` (gone under ``python -O``),
keeps the last of two links of the same name, accepts NaN everywhere, and its
reflection costs about 0.4 ms per link, 20 s for a 50,000-link chain.
"""

from dataclasses import dataclass
import math
import os
import re
from typing import Dict, List, Optional, Union

from lxml import etree
import numpy as np


#: The parser never loads a DTD, never substitutes entities, never touches the
#: network, keeps libxml2's limits on depth and text size (no ``huge_tree``), and
#: drops comments and processing instructions.  XInclude is processed only by an
#: explicit ``xinclude()`` call, which this module never makes.
PARSER_OPTIONS = {'load_dtd': False, 'dtd_validation': False, 'resolve_entities': False,
                  'no_network': True, 'huge_tree': False, 'remove_comments': True,
                  'remove_pis': True}

XINCLUDE_NS = '{http://www.w3.org/2001/XInclude}'

#: Bound on the magnitude of every number that enters the dynamics (SI units: kg, m,
#: kg m^2, N m s/rad, rad): 1e12 kg is a small moon, 1e12 m beyond Jupiter.  Within
#: it, products such as m r^2 qd^2 stay far from overflow; beyond it a URDF value is
#: a typo or an attack, and is refused.  Joint limits, which only bound, are exempt.
MAX_MAGNITUDE = 1e12

JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar')


@dataclass
class Inertial:
    """Mass, pose of the mass-centre frame in the link frame, inertia about it."""

    mass: float
    origin: np.ndarray          # (4, 4)
    inertia: np.ndarray         # (3, 3), in the mass-centre frame


@dataclass
class Link:
    """A URDF ``<link>``: its name and its inertial (None: massless)."""

    name: str
    inertial: Optional[Inertial]


@dataclass
class Limit:
    """A ``<limit>``: position bounds (None when absent), effort and velocity."""

    lower: Optional[float]
    upper: Optional[float]
    effort: float
    velocity: float


@dataclass
class Mimic:
    """A ``<mimic>``: q = multiplier * q_joint + offset."""

    joint: str
    multiplier: float
    offset: float


@dataclass
class Joint:
    """A URDF ``<joint>``, every value checked."""

    name: str
    kind: str                   # the type attribute
    parent: str
    child: str
    origin: np.ndarray          # (4, 4)
    axis: np.ndarray            # (3,) unit vector
    limit: Optional[Limit]
    damping: float
    friction: float
    mimic: Optional[Mimic]


@dataclass
class Description:
    """A parsed URDF: robot name, links and joints by name, in document order."""

    name: str
    links: Dict[str, Link]
    joints: Dict[str, Joint]


Source = Union[str, bytes, os.PathLike]


def parse(source: Source) -> Description:
    """
    Read a URDF given as XML (str or bytes) or as a file path.

    A str is XML when, after an optional byte-order mark and white space, it starts
    with ``<``; otherwise it is a path.  bytes are always XML.
    """
    if isinstance(source, (bytes, bytearray)) or looks_like_xml(source):
        return parse_xml(source)
    if isinstance(source, str) and is_blank(source):
        raise ValueError(EMPTY)
    path = os.fsdecode(source)
    if '\n' in path or '<' in path or len(path) > 4096:
        raise ValueError('the URDF is neither XML (it does not start with "<") nor a '
                         f'file path: {_excerpt(path)}')
    try:
        with open(path, 'rb') as stream:
            data = stream.read()
    except OSError as exc:
        raise ValueError(f'cannot read URDF file {path!r}: {exc}') from exc
    if is_blank(data):
        raise ValueError(f'URDF file {path!r} is empty')
    return parse_xml(data)


#: What an empty robot description (``''``, white space only) is told.
EMPTY = 'the robot description is empty: it is not URDF XML, nor a file path'


_BLANK_TEXT = re.compile(r'\ufeff?[ \t\r\n]*\Z')
_BLANK_BYTES = re.compile(rb'(?:\xef\xbb\xbf)?[ \t\r\n]*\Z')


def is_blank(text) -> bool:
    """Return True for a str or bytes that is empty, or only a BOM and white space."""
    blank = _BLANK_BYTES if isinstance(text, (bytes, bytearray)) else _BLANK_TEXT
    return blank.match(text) is not None


def looks_like_xml(text) -> bool:
    """Return True for a str that starts, after a BOM and white space, with '<'."""
    return isinstance(text, str) and text.lstrip('\ufeff \t\r\n').startswith('<')


def parse_xml(xml: Union[str, bytes]) -> Description:
    """
    Read URDF XML (str or bytes); never open a file.

    bytes are decoded as their BOM or XML declaration says (UTF-8 by default).  A str
    is already decoded: a BOM is dropped and an ``encoding=`` in its declaration is
    ignored.
    """
    if isinstance(xml, (str, bytes, bytearray)) and is_blank(xml):
        raise ValueError(EMPTY)
    if isinstance(xml, str):
        if not looks_like_xml(xml):
            raise ValueError('the robot description is not URDF XML: it must start '
                             f'with "<" (a file path is not accepted here): {_excerpt(xml)}')
        data = xml.lstrip('\ufeff').encode('utf-8', 'surrogatepass')
        parser = etree.XMLParser(encoding='utf-8', **PARSER_OPTIONS)
    elif isinstance(xml, (bytes, bytearray)):
        data = bytes(xml)
        parser = etree.XMLParser(**PARSER_OPTIONS)
    else:
        raise ValueError(f'URDF XML must be str or bytes, not {type(xml).__name__}')
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, UnicodeError, ValueError) as exc:
        raise ValueError(f'malformed URDF XML: {exc}') from exc
    if root is None:
        raise ValueError('malformed URDF XML: no root element')
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise ValueError('URDF with a <!DOCTYPE>: DTDs and entities are not processed, '
                         'and a URDF needs none')
    return _robot(root)


# --- elements ---------------------------------------------------------------------
def _robot(root) -> Description:
    if root.tag != 'robot':
        raise ValueError(f'the root element is <{_tag(root)}>, not <robot>: not a URDF')
    for element in root.iter(f'{XINCLUDE_NS}*'):
        raise ValueError(f'<xi:include> at line {element.sourceline}: XInclude is not '
                         'processed; expand the URDF first (xacro)')
    links = _unique(root, 'link', _link)
    joints = _unique(root, 'joint', _joint)
    if not links:
        raise ValueError('URDF has no <link> elements')
    return Description(name=root.get('name', ''), links=links, joints=joints)


def _unique(root, tag: str, read) -> dict:
    """Return ``read(element)`` of every child ``<tag>`` by name; a name twice is an error."""
    out = {}
    for element in root.iterchildren(tag):
        item = read(element)
        if item.name in out:
            raise ValueError(f'{tag} {item.name!r} is defined twice (second at line '
                             f'{element.sourceline}); {tag} names must be unique')
        out[item.name] = item
    return out


def _link(element) -> Link:
    name = _name(element, 'link')
    where = f'link {name!r}'
    inertial = _single(_children(element), 'inertial', where)
    if inertial is None:
        return Link(name, None)
    parts = _children(inertial)
    mass_element = _single(parts, 'mass', where + ' <inertial>')
    mass = 0.0
    if mass_element is not None:
        mass = _number(mass_element, 'value', where + ' <mass>', required=True)
        if mass < 0.0:
            raise ValueError(f'{where}: negative mass {mass}')
    origin = _origin(_single(parts, 'origin', where + ' <inertial>'),
                     where + ' <inertial><origin>')
    inertia_element = _single(parts, 'inertia', where + ' <inertial>')
    inertia = np.zeros((3, 3))
    if inertia_element is not None:
        ixx, ixy, ixz, iyy, iyz, izz = (
            _number(inertia_element, key, where + ' <inertia>', default=0.0)
            for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return Link(name, Inertial(mass, origin, inertia))


def _joint(element) -> Joint:
    name = _name(element, 'joint')
    where = f'joint {name!r}'
    kind = element.get('type')
    if kind is None:
        raise ValueError(f'{where}: no type attribute')
    if kind not in JOINT_TYPES:
        raise ValueError(f'{where} has unknown type {kind!r}; URDF types are '
                         f'{", ".join(JOINT_TYPES)}')
    parts = _children(element)
    parent, child = (_link_reference(parts, role, where) for role in ('parent', 'child'))
    origin = _origin(_single(parts, 'origin', where), where + ' <origin>')
    axis_element = _single(parts, 'axis', where)
    axis = np.array([1.0, 0.0, 0.0])
    if axis_element is not None and kind not in ('fixed', 'floating'):  # as urdfdom
        axis = _vector(axis_element, 'xyz', where + ' <axis>', default=(1.0, 0.0, 0.0))
        norm = float(np.linalg.norm(axis))
        if not norm > 1e-9:
            raise ValueError(f'{where}: <axis xyz> {axis} is not a nonzero vector')
        axis = axis / norm
    limit = _limit(_single(parts, 'limit', where), where, kind)
    dynamics = _single(parts, 'dynamics', where)
    damping = friction = 0.0
    if dynamics is not None:
        damping, friction = (_number(dynamics, key, where + ' <dynamics>', default=0.0,
                                     minimum=0.0) for key in ('damping', 'friction'))
    mimic = None
    mimic_element = _single(parts, 'mimic', where)
    if mimic_element is not None:
        source = mimic_element.get('joint')
        if not source:
            raise ValueError(f'{where}: <mimic> names no joint')
        mimic = Mimic(source,
                      _number(mimic_element, 'multiplier', where + ' <mimic>', default=1.0),
                      _number(mimic_element, 'offset', where + ' <mimic>', default=0.0))
    return Joint(name, kind, parent, child, origin, axis, limit, damping, friction, mimic)


def _limit(element, where: str, kind: str) -> Optional[Limit]:
    if element is None:
        return None
    where += ' <limit>'
    lower = _number(element, 'lower', where, default=None, bound=None)
    upper = _number(element, 'upper', where, default=None, bound=None)
    if lower is not None and upper is not None and lower > upper and kind != 'continuous':
        raise ValueError(f'{where}: lower {lower} > upper {upper}')
    effort, velocity = (_number(element, key, where, default=math.inf, minimum=0.0,
                                allow_inf=True, bound=None) for key in ('effort', 'velocity'))
    return Limit(lower, upper, effort, velocity)


def _link_reference(parts, role: str, where: str) -> str:
    found = _single(parts, role, where)
    if found is None:
        raise ValueError(f'{where}: missing <{role} link="..."/>')
    link = found.get('link')
    if not link:
        raise ValueError(f'{where}: <{role}> has no link attribute')
    return link


def _origin(element, where: str) -> np.ndarray:
    """Return the 4x4 pose of an ``<origin xyz rpy>`` (identity when absent)."""
    T = np.eye(4)
    if element is None:
        return T
    T[:3, 3] = _vector(element, 'xyz', where, default=(0.0, 0.0, 0.0))
    if element.get('rpy') is not None:
        T[:3, :3] = rpy_matrix(*_vector(element, 'rpy', where, default=(0.0, 0.0, 0.0)))
    return T


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Return R = Rz(yaw) Ry(pitch) Rx(roll), URDF's fixed-axis roll-pitch-yaw."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def rotation(axis, angle: float) -> np.ndarray:
    """Return the rotation by ``angle`` about the unit ``axis`` (Rodrigues' formula)."""
    a = np.asarray(axis, dtype=float)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


# --- attributes -------------------------------------------------------------------
def _name(element, kind: str) -> str:
    name = element.get('name')
    if not name:
        raise ValueError(f'a <{kind}> at line {element.sourceline} has no name')
    return name


def _children(element) -> Dict[str, list]:
    """Return the child elements of ``element`` by tag."""
    out: Dict[str, list] = {}
    for child in element:
        out.setdefault(child.tag, []).append(child)
    return out


def _single(children: Dict[str, list], tag: str, where: str):
    """Return the one child ``<tag>`` (None if absent); two of them is an error."""
    found = children.get(tag)
    if found is None:
        return None
    if len(found) > 1:
        raise ValueError(f'{where}: <{tag}> is given {len(found)} times')
    return found[0]


def _number(element, key: str, where: str, default=None, required=False, **checks):
    text = element.get(key)
    if text is None:
        if required:
            raise ValueError(f'{where}: missing {key} attribute')
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f'{where}: {key}={_excerpt(text)} is not a number') from None
    return _checked([value], text, key, where, **checks)[0]


def _vector(element, key: str, where: str, default) -> np.ndarray:
    text = element.get(key)
    if text is None:
        return np.array(default, dtype=float)
    parts = text.split()
    if len(parts) != 3:
        raise ValueError(f'{where}: {key}={_excerpt(text)} must be 3 numbers, '
                         f'got {len(parts)}')
    try:
        vector = [float(part) for part in parts]
    except ValueError:
        raise ValueError(f'{where}: {key}={_excerpt(text)} is not 3 numbers') from None
    return np.array(_checked(vector, text, key, where))


def _checked(values, text: str, key: str, where: str, minimum=None, allow_inf=False,
             bound=MAX_MAGNITUDE):
    """Return ``values``, read from ``key``; ValueError for NaN, Inf, < minimum, > bound."""
    what = f'{where}: {key}={_excerpt(text)}'
    if any(math.isnan(v) or (math.isinf(v) and not allow_inf) for v in values):
        raise ValueError(f'{what} is not finite')
    if minimum is not None and min(values) < minimum:
        raise ValueError(f'{what} is negative')
    if bound is not None and max(abs(v) for v in values) > bound:
        raise ValueError(f'{what} is beyond {bound:g} in magnitude')
    return values


def _tag(element) -> str:
    return element.tag if isinstance(element.tag, str) else repr(element.tag)


def _excerpt(text: str, size: int = 60) -> str:
    return repr(text if len(text) <= size else text[:size] + '...')


__all__: List[str] = ['Description', 'Inertial', 'Joint', 'Limit', 'Link', 'Mimic',
                      'looks_like_xml', 'parse', 'parse_xml', 'rotation',
                      'rpy_matrix']
