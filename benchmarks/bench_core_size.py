"""
Size of the core: lines of ``denoc_dynamics/core/*.py`` and the longest function.

Not a timing: it reads the source files of the package as imported (the install
space under ``make bench``).  Per module: physical lines, code lines (not blank, not
a comment, not a docstring) and the longest function or method in lines
(``def`` to its last line, docstring included), found with :mod:`ast`.
"""

import ast
from pathlib import Path

import common

NAME = 'core_size'
TITLE = 'Core size: lines of core/*.py and the longest function'
LINES_TARGET = 2800
FUNCTION_TARGET = 60


def _docstring_lines(tree) -> set:
    """Return the line numbers of every docstring in ``tree``."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], 'value', None), ast.Constant) and isinstance(
                    body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def module_size(path: Path) -> dict:
    """Return the line counts and the functions (name, lines) of one module."""
    text = path.read_text()
    tree = ast.parse(text)
    docs = _docstring_lines(tree)
    code = sum(1 for k, line in enumerate(text.splitlines(), start=1)
               if line.strip() and not line.strip().startswith('#') and k not in docs)
    functions = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            functions.append((node.name, node.end_lineno - node.lineno + 1, first))
    return {'lines': len(text.splitlines()), 'code_lines': code, 'functions': functions}


def run(opts) -> dict:
    """Count the core's lines; return the section's results."""
    core = Path(common.denoc_dynamics.__file__).resolve().parent / 'core'
    modules = {p.name: module_size(p) for p in sorted(core.glob('*.py'))}
    longest = sorted(((f[1], name, f[0]) for name, m in modules.items()
                      for f in m['functions']), reverse=True)
    total = sum(m['lines'] for m in modules.values())
    code = sum(m['code_lines'] for m in modules.values())
    top = longest[0] if longest else (0, '', '')
    return {
        'core_dir': str(core),
        'modules': {name: {'lines': m['lines'], 'code_lines': m['code_lines'],
                           'functions': len(m['functions']),
                           'longest': max(m['functions'], key=lambda f: f[1])[:2]
                           if m['functions'] else None}
                    for name, m in modules.items()},
        'total_lines': total, 'total_code_lines': code,
        'longest_functions': [{'module': mod, 'function': fn, 'lines': n}
                              for n, mod, fn in longest[:8]],
        'functions_over_target': [{'module': mod, 'function': fn, 'lines': n}
                                  for n, mod, fn in longest if n > FUNCTION_TARGET],
        'targets': [
            common.target('core size: lines of core/*.py', total, 'lines',
                          f'< {LINES_TARGET}', total < LINES_TARGET,
                          spread=f'{code} code lines'),
            common.target(f'longest function in core/*.py ({top[1]}:{top[2]})', top[0],
                          'lines', f'<= {FUNCTION_TARGET}', top[0] <= FUNCTION_TARGET)],
    }


if __name__ == '__main__':
    import json
    print(json.dumps(run(common.Options(quick=True)), indent=2, default=str))
