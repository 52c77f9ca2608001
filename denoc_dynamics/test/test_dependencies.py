"""
The package's declared dependencies match what its code imports.

Every third-party import of the package (its modules and launch files, read with
``ast``, not imported) must be declared where each kind of install resolves it:

* a ROS package (rclpy, the message packages, launch): an ``<exec_depend>`` of
  package.xml under its own name (``rosdep install`` brings it);
* a Python library: its rosdep key (``python3-numba``) in package.xml where rosdep
  has one, and its PyPI name in setup.py: ``install_requires`` when a module imports
  it at its top, an ``extras_require`` entry when only a function does (an optional
  feature: the browser view, the plot, example-robot-data's URDFs).

And the other way round: nothing is declared that nothing uses (a ROS package may
also be used as an executable that a launch file starts).
"""

import ast
from pathlib import Path
import sys
import xml.etree.ElementTree as ET

PACKAGE_DIR = Path(__file__).resolve().parents[1]
OWN = {'denoc_dynamics'}

#: Python libraries (not ROS packages): import name -> (rosdep key or None, PyPI name).
#: None: rosdep has no key; a pip-only optional extra (README: the browser view).
LIBRARIES = {
    'numpy': ('python3-numpy', 'numpy'),
    'numba': ('python3-numba', 'numba'),
    'lxml': ('python3-lxml', 'lxml'),
    'yaml': ('python3-yaml', 'PyYAML'),
    'matplotlib': ('python3-matplotlib', 'matplotlib'),
    'example_robot_data': (None, 'example-robot-data'),
    'viser': (None, 'viser'),
    'yourdfpy': (None, 'yourdfpy'),
    'trimesh': (None, 'trimesh'),
}

#: PyPI packages an extra needs without the package importing them by that name
#: (trimesh reads .dae meshes through pycollada).
INDIRECT = {'pycollada': 'trimesh'}


def sources():
    """Return the package's Python files: its modules and its launch files."""
    return sorted((PACKAGE_DIR / 'denoc_dynamics').rglob('*.py')) + \
        sorted((PACKAGE_DIR / 'launch').glob('*.py'))


def _module_names(node):
    """Return the absolute module names that an ast node imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        return [node.module]
    if (isinstance(node, ast.Call) and node.args
            and getattr(node.func, 'attr', getattr(node.func, 'id', None)) == 'import_module'):
        name = node.args[0]  # import_module('x.y') or import_module(f'x.{kind}')
        if isinstance(name, ast.JoinedStr) and isinstance(name.values[0], ast.Constant):
            name = name.values[0]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return [name.value]
    return []


def third_party_imports(paths):
    """
    Return {top-level name: 'top' or 'lazy'} of the third-party imports in ``paths``.

    'top': imported by some module at its top level (also within a module-level
    ``try`` or ``if``); 'lazy': only inside functions.
    """
    found = {}
    for path in paths:
        tree = ast.parse(path.read_text(), filename=str(path))
        lazy_nodes = {id(inner) for node in ast.walk(tree)
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                      for inner in ast.walk(node) if inner is not node}
        for node in ast.walk(tree):
            for name in _module_names(node):
                top = name.split('.')[0]
                if top in sys.stdlib_module_names or top in OWN:
                    continue
                where = 'lazy' if id(node) in lazy_nodes else 'top'
                if found.get(top) != 'top':
                    found[top] = where
    return found


def package_xml(path=PACKAGE_DIR / 'package.xml'):
    """Return {tag: [names]} of package.xml's dependency tags."""
    root = ET.parse(path).getroot()
    tags = {}
    for element in root:
        if element.tag.endswith('depend'):
            tags.setdefault(element.tag, []).append(element.text.strip())
    return tags


def setup_requirements(path=PACKAGE_DIR / 'setup.py'):
    """Return (install_requires, {extra: [requirements]}) read from setup.py's setup() call."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'setup':
            keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords
                        if k.arg in ('install_requires', 'extras_require')}
            return keywords.get('install_requires', []), keywords.get('extras_require', {})
    raise AssertionError('setup.py has no setup() call')


def _name(requirement):
    """Return the project name of a requirement string ('numba>=0.58' -> 'numba')."""
    for separator in '<>=!~[; ':
        requirement = requirement.split(separator)[0]
    return requirement


def launched_packages():
    """Return the ROS packages whose executables the launch files start (package='x')."""
    packages = set()
    for path in sorted((PACKAGE_DIR / 'launch').glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.keyword) and node.arg == 'package'
                    and isinstance(node.value, ast.Constant)):
                packages.add(node.value.value)
    return packages


def dependency_problems(imports, xml_tags, install_requires, extras):
    """Return what is missing or unused, one line each (empty: all declared, all used)."""
    exec_depends = set(xml_tags.get('exec_depend', [])) | set(xml_tags.get('depend', []))
    required = {_name(r) for r in install_requires}
    optional = {_name(r) for values in extras.values() for r in values}
    problems = []
    for module, where in sorted(imports.items()):
        if module in LIBRARIES:
            key, pypi = LIBRARIES[module]
            if key is not None and key not in exec_depends:
                problems.append(f'{module}: package.xml lacks <exec_depend>{key}</exec_depend>')
            if where == 'top' and pypi not in required:
                problems.append(f'{module}: imported at a module top, but {pypi!r} is not '
                                'in setup.py install_requires')
            if where == 'lazy' and pypi not in required | optional:
                problems.append(f'{module}: {pypi!r} is in neither install_requires nor an '
                                'extra of setup.py')
        elif module not in exec_depends:
            problems.append(f'{module}: not declared (a ROS package: <exec_depend>{module}'
                            '</exec_depend>; a Python library: add it to LIBRARIES here, '
                            'package.xml and setup.py)')
    used_keys = {LIBRARIES[m][0] for m in imports if m in LIBRARIES}
    used = set(imports) | used_keys | launched_packages() | OWN
    for depend in sorted(exec_depends - used - {'denoc_dynamics_interfaces'}):
        problems.append(f'package.xml declares {depend}, which nothing imports or launches')
    used_pypi = {LIBRARIES[m][1] for m in imports if m in LIBRARIES}
    for name in sorted(required - used_pypi - {'setuptools'}):
        problems.append(f'setup.py install_requires {name!r}, which no module imports')
    for extra, values in sorted(extras.items()):
        if extra == 'test':
            continue
        for name in sorted({_name(r) for r in values} - used_pypi - set(INDIRECT)):
            problems.append(f'setup.py extra {extra!r} requires {name!r}, which no module '
                            'imports')
    return problems


def test_every_third_party_import_is_declared_and_nothing_more():
    imports = third_party_imports(sources())
    # the scan sees what it must: top-level, lazy and import_module imports
    assert imports.get('numba') == 'top' and imports.get('rclpy') == 'top', imports
    assert imports.get('viser') == 'lazy', imports
    assert 'simulation_interfaces' in imports, imports
    install_requires, extras = setup_requirements()
    problems = dependency_problems(imports, package_xml(), install_requires, extras)
    assert not problems, '\n'.join(problems)


def test_a_dependency_removed_from_package_xml_or_setup_py_is_found(tmp_path):
    imports = third_party_imports(sources())
    tags = package_xml()
    install_requires, extras = setup_requirements()
    without_numba = {tag: [n for n in names if n != 'python3-numba']
                     for tag, names in tags.items()}
    assert dependency_problems(imports, without_numba, install_requires, extras) == [
        'numba: package.xml lacks <exec_depend>python3-numba</exec_depend>']
    problems = dependency_problems(imports, tags, [r for r in install_requires
                                                   if _name(r) != 'numba'], extras)
    assert problems == ["numba: imported at a module top, but 'numba' is not in setup.py "
                        'install_requires']
    without_rclpy = {tag: [n for n in names if n != 'rclpy'] for tag, names in tags.items()}
    assert [p.split(':')[0] for p in dependency_problems(
        imports, without_rclpy, install_requires, extras)] == ['rclpy']
    # a new lazy import of a library in no extra, and a declared dependency nobody uses
    problems = dependency_problems(dict(imports, trimesh='lazy'), tags, install_requires,
                                   {k: [r for r in v if _name(r) != 'trimesh']
                                    for k, v in extras.items()})
    assert problems == ["trimesh: 'trimesh' is in neither install_requires nor an extra of "
                        'setup.py']
    unused = dict(tags, exec_depend=tags['exec_depend'] + ['python3-scipy'])
    assert dependency_problems(imports, unused, install_requires, extras) == [
        'package.xml declares python3-scipy, which nothing imports or launches']


def test_the_scan_reads_lazy_and_dynamic_imports(tmp_path):
    module = tmp_path / 'module.py'
    module.write_text('import os\nimport numpy as np\nfrom rclpy.node import Node\n'
                      'try:\n    import yaml\nexcept ImportError:\n    yaml = None\n'
                      'def f():\n    import viser\n    from lxml import etree\n'
                      "    importlib.import_module(f'control_msgs.{kind}')\n"
                      'from . import sibling\nimport denoc_dynamics.core\n')
    assert third_party_imports([module]) == {
        'numpy': 'top', 'rclpy': 'top', 'yaml': 'top', 'viser': 'lazy', 'lxml': 'lazy',
        'control_msgs': 'lazy'}
