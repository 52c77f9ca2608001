"""
A setting described once: default, description, bounds and choices, and its one check.

The ROS parameter tables (:mod:`denoc_dynamics.ros.parameters`) and the library's own
settings (:class:`denoc_dynamics.simulation.PhysicsParameters`) are made of these, so
that a value is checked by the same rule whether it comes from a node's parameter or
from Python: the validation rules of joint_trajectory_controller's parameter YAML
(``gt<>``, ``gt_eq<>``, ``lt_eq<>``, ``one_of<>``) as data.
"""

from dataclasses import field, fields
import math
from typing import Any, Dict, NamedTuple, Optional, Tuple


class Setting(NamedTuple):
    """
    One setting: ``default``, ``description`` and the rule its value must follow.

    ``gt`` (exclusive), ``ge`` and ``le`` (inclusive) bound a number; ``choices`` lists
    the values a string (or each string of a list) may take; ``finite`` refuses NaN and
    infinities; ``unique`` refuses a list that names an entry twice.
    """

    default: Any
    description: str
    gt: Optional[float] = None
    ge: Optional[float] = None
    le: Optional[float] = None
    choices: Tuple = ()
    finite: bool = False
    unique: bool = False

    def problem(self, value) -> Optional[str]:
        """Return what is wrong with ``value`` (a phrase), or None if it follows the rule."""
        if value is None:   # a parameter declared without a value (an empty list's type)
            return None
        if isinstance(value, (list, tuple)):
            return self._list_problem(list(value))
        if self.choices and value not in self.choices:
            return f'must be one of {self.choices}, got {value!r}'
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if self.finite and not math.isfinite(value):
            return f'must be a finite number, got {value!r}'
        if self.gt is not None and not value > self.gt:
            return f'must be > {self.gt:g}, got {value!r}'
        if self.ge is not None and not value >= self.ge:
            return f'must be >= {self.ge:g}, got {value!r}'
        if self.le is not None and not value <= self.le:
            return f'must be <= {self.le:g}, got {value!r}'
        if math.isnan(value):
            return 'must be a number, got nan'
        return None

    def _list_problem(self, values) -> Optional[str]:
        bad = [v for v in values if self.choices and v not in self.choices]
        if bad:
            return f'must name entries of {self.choices}, got {bad}'
        twice = sorted({v for v in values if values.count(v) > 1})
        if self.unique and twice:
            return f'names {twice} more than once'
        numbers = [v for v in values if isinstance(v, float)]
        if self.finite and not all(math.isfinite(v) for v in numbers):
            return f'must be finite numbers, got {values}'
        return None

    def check(self, name: str, value):
        """Raise ValueError naming ``name`` if ``value`` breaks the rule."""
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(f'{name} {problem}')

    def constraints(self) -> str:
        """Return the rule in words, for a parameter descriptor (empty: none)."""
        words = []
        if self.choices:
            words.append(f'one of {self.choices}')
        for word, bound in (('>', self.gt), ('>=', self.ge), ('<=', self.le)):
            if bound is not None:
                words.append(f'{word} {bound:g}')
        if self.finite:
            words.append('finite')
        if self.unique:
            words.append('no entry twice')
        return ', '.join(words)


def setting_field(default, description, **rule):
    """Return a dataclass field with ``default`` that carries its :class:`Setting`."""
    return field(default=default, metadata={'setting': Setting(default, description, **rule)})


def field_settings(cls) -> Dict[str, Setting]:
    """Return {name: Setting} of the fields of the dataclass ``cls`` made by setting_field."""
    return {f.name: f.metadata['setting'] for f in fields(cls) if 'setting' in f.metadata}


def check_fields(obj):
    """Raise ValueError naming the first field of ``obj`` that breaks its setting's rule."""
    for name, setting in field_settings(type(obj)).items():
        setting.check(name, getattr(obj, name))
