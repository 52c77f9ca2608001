"""
Lists of names in error messages and log lines: the first few, then how many more.

A message naming 5,000 unknown joints made a 320 KB log line; :func:`name_list`
keeps any such line short, whatever the input: at most ``SHOWN`` names, each cut to
``LONGEST`` characters.
"""

from collections import Counter
from typing import Iterable, List

#: Names shown before "... and N more".
SHOWN = 8
#: A longer name is cut to this many characters (and '...').
LONGEST = 64


def name_list(names: Iterable, shown: int = SHOWN) -> str:
    """Return ``names`` as a short list: ``['a', 'b', ... and 4998 more]``."""
    names = [str(name) for name in names]
    parts = [repr(name if len(name) <= LONGEST else name[:LONGEST] + '...')
             for name in names[:shown]]
    if len(names) > shown:
        parts.append(f'... and {len(names) - shown} more')
    return '[' + ', '.join(parts) + ']'


def repeated(names: Iterable) -> List[str]:
    """Return the names that appear more than once, sorted (linear in the count)."""
    return sorted(name for name, count in Counter(names).items() if count > 1)
