"""The README's task-space example runs as written and brings the flange to its goal."""

from pathlib import Path
import re

import numpy as np
import pytest

README = Path(__file__).resolve().parents[3] / 'README.md'


def test_operational_space_example_converges():
    if not README.is_file():
        pytest.skip(f'no {README} (an installed package without the repository)')
    text = README.read_text()
    block = re.search(r'### Task space\n.*?```python\n(.*?)```', text, re.S)
    assert block, 'the README has no task-space example'
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(lines) <= 16, f'the example grew to {len(lines)} lines'
    namespace = {}
    exec(compile(block.group(1), str(README), 'exec'), namespace)     # noqa: S102
    robot, q, goal = namespace['robot'], namespace['q'], namespace['goal']
    error = np.linalg.norm(goal - robot.frame_placement(q, 'flange')[:3, 3])
    assert error < 1e-5, f'the flange is {error:.3g} m from its goal'
