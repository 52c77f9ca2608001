"""
Operation counts of forward dynamics (denoc), the GIM and UDU^T, against the papers.

The core's own code is run on numpy object arrays of :class:`Counted` scalars, a
number that counts every multiplication/division (M) and addition/subtraction (A) it
takes part in.  Nothing in the core is edited; for the duration of the count:

* ``Kinematics`` in :mod:`denoc_dynamics.core.robot` is wrapped: the kinematics is
  evaluated with floats (uncounted, as the brief of this benchmark asks), then every
  float array of it (``p``, ``M``, ``Ad``, ...) is turned into Counted scalars;
* the core modules' ``np`` is swapped for a proxy of numpy whose ``empty``/``zeros``/
  ``ones``/``eye``/``*_like`` make object arrays of Counted zeros/ones instead of
  float arrays (storing a Counted into a float array would silently drop it).

Then the public calls are made with float inputs: ``forward_dynamics(method='denoc')``
(phi = tau - ID(q, qd, 0), then the three sweeps), ``bias_forces`` (that ID alone),
``inertia_matrix`` and ``udu``; and ``articulated_bodies`` (the O(n) backward sweep of
the UDU^T, psi_k and m^_k, without forming U).  The kinematics itself is counted
separately by feeding Counted joint angles to ``Kinematics`` (sin and cos counted
apart).

Three tallies per run:

* ``all``: every operation numpy performs on a Counted, including products with the
  exact zeros of dense 6x6 matrices and of the Levi-Civita tensor that the cross
  products are written with; numpy's accumulator start (int 0 + x) is not counted;
* ``nonzero``: operations with an exact-zero operand left out (x * 0, x + 0);
* ``essential``: also multiplications by exactly +-1 left out.  This approximates
  what a structure-exploiting scalar implementation (like Saha's counts) would do.

Counts are fitted to a + b n (FD, ID, articulated sweep) and a + b n + c n^2 (GIM,
UDU with the explicit U) over random revolute chains, and compared with Saha's FD
(201n - 335)M + (193n - 361)A (paper 000 §7 / 002 Table I) and the composite-body H
(10.5n^2 + 38.5n - 85)M + (6n^2 + 39n - 70)A (paper 003).
"""

import contextlib
import math
import types

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'opcount'
TITLE = 'Operation counts (instrumented scalar run)'
TIERS = ('all', 'nonzero', 'essential')

PAPERS = {
    'FD denoc': {'source': 'Saha, paper 000 §7 / 002 Table I (O(n) FD)',
                 'M': (-335.0, 201.0), 'A': (-361.0, 193.0)},
    'GIM': {'source': 'composite-body H about the base origin, paper 003',
            'M': (-85.0, 38.5, 10.5), 'A': (-70.0, 39.0, 6.0)},
}


# --------------------------------------------------------------------------- the scalar

class Tally:
    """Operation counters, one set per tier."""

    def __init__(self):
        """Start at zero."""
        self.reset()

    def reset(self):
        """Set every counter to zero."""
        self.counts = {tier: {'M': 0, 'A': 0} for tier in TIERS}
        self.functions = 0
        self.negations = 0

    def snapshot(self) -> dict:
        """Return a copy of the counters."""
        out = {tier: dict(c) for tier, c in self.counts.items()}
        out['sin_cos'] = self.functions
        return out


TALLY = Tally()


def _value(x):
    return x.v if isinstance(x, Counted) else x


def _count(kind, a, b):
    """Count one binary operation of ``kind`` ('M' or 'A') on the operands a and b."""
    va, vb = _value(a), _value(b)
    counts = TALLY.counts
    if kind == 'A' and ((type(a) is int and a == 0) or (type(b) is int and b == 0)):
        return      # numpy's accumulator start (einsum, sum) on object arrays
    counts['all'][kind] += 1
    if va == 0 or vb == 0:
        return
    counts['nonzero'][kind] += 1
    if kind == 'M' and (abs(va) == 1 or abs(vb) == 1):
        return
    counts['essential'][kind] += 1


class Counted:
    """
    A float that counts the arithmetic done with it (see :data:`TALLY`).

    It deliberately has no ``__float__``: storing one into a float array raises
    TypeError instead of silently dropping out of the count.
    """

    __slots__ = ('v',)

    def __init__(self, v):
        """Wrap the float ``v``."""
        self.v = float(v)

    def conjugate(self):
        """Return self: the numbers are real (np.vecdot conjugates its first argument)."""
        return self

    def __repr__(self):
        """Show the value."""
        return f'Counted({self.v!r})'

    def __add__(self, other):
        """Count an addition."""
        _count('A', self, other)
        return Counted(self.v + _value(other))

    def __radd__(self, other):
        """Count an addition."""
        _count('A', other, self)
        return Counted(_value(other) + self.v)

    def __sub__(self, other):
        """Count a subtraction."""
        _count('A', self, other)
        return Counted(self.v - _value(other))

    def __rsub__(self, other):
        """Count a subtraction."""
        _count('A', other, self)
        return Counted(_value(other) - self.v)

    def __mul__(self, other):
        """Count a multiplication."""
        _count('M', self, other)
        return Counted(self.v * _value(other))

    def __rmul__(self, other):
        """Count a multiplication."""
        _count('M', other, self)
        return Counted(_value(other) * self.v)

    def __truediv__(self, other):
        """Count a division (as a multiplication, like the papers)."""
        _count('M', self, other)
        return Counted(self.v / _value(other))

    def __rtruediv__(self, other):
        """Count a division (as a multiplication, like the papers)."""
        _count('M', other, self)
        return Counted(_value(other) / self.v)

    def __neg__(self):
        """Negate (not counted as an arithmetic operation)."""
        TALLY.negations += 1
        return Counted(-self.v)

    def __pos__(self):
        """Return self."""
        return self

    def __abs__(self):
        """Return |x| (not counted)."""
        return Counted(abs(self.v))

    def __eq__(self, other):
        """Compare values."""
        return self.v == _value(other)

    def __lt__(self, other):
        """Compare values."""
        return self.v < _value(other)

    def __le__(self, other):
        """Compare values."""
        return self.v <= _value(other)

    def __gt__(self, other):
        """Compare values."""
        return self.v > _value(other)

    def __ge__(self, other):
        """Compare values."""
        return self.v >= _value(other)

    __hash__ = None

    def sin(self):
        """Return the sine, counted apart from M and A."""
        TALLY.functions += 1
        return Counted(math.sin(self.v))

    def cos(self):
        """Return the cosine, counted apart from M and A."""
        TALLY.functions += 1
        return Counted(math.cos(self.v))

    def isfinite(self):
        """Return True for a finite value: numpy asks each object of an array."""
        return math.isfinite(self.v)


def to_counted(array) -> np.ndarray:
    """Return a float array as an object array of Counted scalars."""
    array = np.asarray(array, dtype=float)
    out = np.empty(array.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(array.reshape(-1)):
        flat[i] = Counted(v)
    return out


def to_float(array) -> np.ndarray:
    """Return an object array of Counted (or numbers) as floats."""
    array = np.asarray(array, dtype=object)
    return np.array([_value(x) for x in array.reshape(-1)], dtype=float).reshape(array.shape)


# --------------------------------------------------------------------------- numpy proxy

def _is_float_dtype(dtype) -> bool:
    return dtype is None or dtype is float or np.dtype(dtype) == np.float64


def _filled(shape, value):
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = Counted(value)
    return out


class NumpyProxy(types.ModuleType):
    """numpy, except that float allocations make object arrays of Counted while active."""

    def __init__(self):
        """Delegate to numpy; start inactive."""
        super().__init__('numpy_counted_proxy')
        self.active = False

    def __getattr__(self, name):
        """Return numpy's attribute (only called for what is not overridden here)."""
        return getattr(np, name)

    def _make(self, name, shape, dtype, value, **kwargs):
        if not self.active or not _is_float_dtype(dtype):
            return getattr(np, name)(shape, dtype=dtype, **kwargs)
        return _filled(shape, value)

    def empty(self, shape, dtype=None, **kwargs):
        """np.empty, object Counted(0) while active."""
        return self._make('empty', shape, dtype, 0.0, **kwargs)

    def zeros(self, shape, dtype=None, **kwargs):
        """np.zeros, object Counted(0) while active."""
        return self._make('zeros', shape, dtype, 0.0, **kwargs)

    def ones(self, shape, dtype=None, **kwargs):
        """np.ones, object Counted(1) while active."""
        return self._make('ones', shape, dtype, 1.0, **kwargs)

    def full(self, shape, fill_value, dtype=None, **kwargs):
        """np.full, object Counted(fill) while active."""
        if not self.active or not _is_float_dtype(dtype):
            return np.full(shape, fill_value, dtype=dtype, **kwargs)
        return _filled(shape, _value(fill_value))

    def _like(self, name, a, dtype, value, **kwargs):
        a = np.asarray(a)
        if not self.active or not (a.dtype == object or a.dtype == np.float64) \
                or not (dtype is None or _is_float_dtype(dtype)):
            return getattr(np, name)(a, dtype=dtype, **kwargs)
        return _filled(kwargs.get('shape', a.shape), value)

    def empty_like(self, a, dtype=None, **kwargs):
        """np.empty_like, object Counted(0) while active."""
        return self._like('empty_like', a, dtype, 0.0, **kwargs)

    def zeros_like(self, a, dtype=None, **kwargs):
        """np.zeros_like, object Counted(0) while active."""
        return self._like('zeros_like', a, dtype, 0.0, **kwargs)

    def ones_like(self, a, dtype=None, **kwargs):
        """np.ones_like, object Counted(1) while active."""
        return self._like('ones_like', a, dtype, 1.0, **kwargs)

    def eye(self, N, M=None, k=0, dtype=None, **kwargs):
        """np.eye, object Counted(0/1) while active."""
        base = np.eye(N, M, k, dtype=float if _is_float_dtype(dtype) else dtype, **kwargs)
        return to_counted(base) if self.active and _is_float_dtype(dtype) else base

    def identity(self, n, dtype=None, **kwargs):
        """np.identity, object Counted(0/1) while active."""
        return self.eye(n, dtype=dtype, **kwargs)


CORE_MODULES = ('spatial', 'kinematics', 'inverse_dynamics', 'gim', 'udu',
                'forward_dynamics', 'inverse_inertia', 'robot')


@contextlib.contextmanager
def instrumented():
    """
    Install the numpy proxy in the core modules and the counting Kinematics wrapper.

    Yields (proxy, original Kinematics class); everything is restored on exit.
    """
    import importlib
    proxy = NumpyProxy()
    modules = {}
    for name in CORE_MODULES:
        try:
            modules[name] = importlib.import_module(f'denoc_dynamics.core.{name}')
        except ImportError:
            continue
    saved_np = {name: m.np for name, m in modules.items() if getattr(m, 'np', None) is np}
    robot_module = modules['robot']
    original = robot_module.Kinematics

    def counted_kinematics(chain, basis, q):
        active, proxy.active = proxy.active, False
        try:
            kin = original(chain, basis, q)
        finally:
            proxy.active = active
        for attr, value in list(vars(kin).items()):
            if isinstance(value, np.ndarray) and value.dtype == np.float64:
                setattr(kin, attr, to_counted(value))
        return kin

    for name in saved_np:
        modules[name].np = proxy
    robot_module.Kinematics = counted_kinematics
    try:
        yield proxy, original
    finally:
        robot_module.Kinematics = original
        for name in saved_np:
            modules[name].np = np
        proxy.active = False


# --------------------------------------------------------------------------- counting

def count_chain(n: int, seed: int) -> dict:
    """Count every operation group on one random n-joint revolute chain."""
    robot = common.load_urdf(common.random_chain_urdf(n, seed=seed))
    rng = np.random.default_rng(seed)
    q, qd, tau = common.random_states(rng, robot)
    reference = {
        'FD denoc': robot.forward_dynamics(q, qd, tau, method='denoc'),
        'ID (bias)': robot.bias_forces(q, qd),
        'GIM': robot.inertia_matrix(q),
        'UDU (U, d)': robot.udu(q)[0],
    }
    calls = {
        'FD denoc': lambda: robot.forward_dynamics(q, qd, tau, method='denoc'),
        'ID (bias)': lambda: robot.bias_forces(q, qd),
        'GIM': lambda: robot.inertia_matrix(q),
        'UDU (U, d)': lambda: robot.udu(q)[0],
        'articulated sweep': None,
        'kinematics': None,
    }
    results, errors = {}, {}
    with instrumented() as (proxy, kinematics_cls):
        from denoc_dynamics.core import udu as udu_module

        def articulated():
            return udu_module.articulated_bodies(robot.kinematics(q))[0]

        def kinematics():
            kin = kinematics_cls(robot.chain, robot._basis, to_counted(q))
            return kin.M

        calls['articulated sweep'] = articulated
        calls['kinematics'] = kinematics
        for name, call in calls.items():
            TALLY.reset()
            proxy.active = True
            try:
                out = call()
            except Exception as exc:  # noqa: B902  (report which numpy op fails)
                errors[name] = f'{type(exc).__name__}: {exc}'
                continue
            finally:
                proxy.active = False
            results[name] = TALLY.snapshot()
            if name in reference:
                err = common.rel_error(to_float(out), reference[name])
                results[name]['rel_error_vs_float'] = err
    return {'n': n, 'counts': results, 'errors': errors}


def fit(ns, values, degree):
    """Return least-squares coefficients (a, b[, c]) of a + b n (+ c n^2)."""
    X = np.vander(np.asarray(ns, float), degree + 1, increasing=True)
    coef, *_ = np.linalg.lstsq(X, np.asarray(values, float), rcond=None)
    return [float(c) for c in coef]


def _poly(coef, n):
    return sum(c * n ** k for k, c in enumerate(coef))


def _format_poly(coef) -> str:
    names = ('', 'n', 'n^2')
    terms = []
    for k in range(len(coef) - 1, -1, -1):
        c = coef[k]
        if abs(c) < (5e-3 if k else 1e-6):
            continue
        text = f'{abs(c):.4g}{names[k]}'
        terms.append(('- ' if c < 0 else '+ ') + text if terms else ('-' if c < 0 else '')
                     + text)
    return ' '.join(terms) if terms else '0'


DEGREES = {'FD denoc': 1, 'ID (bias)': 1, 'articulated sweep': 1, 'solve sweeps': 1,
           'GIM': 2, 'UDU (U, d)': 2, 'kinematics': 1, 'FD denoc + kinematics': 1}


def _derive(entry):
    """Add the derived groups: the solve sweeps, and FD with the kinematics."""
    counts = entry['counts']

    def combine(sign, *names):
        if not all(name in counts for name in names):
            return None
        out = {}
        for tier in TIERS:
            out[tier] = {kind: sum(s * counts[name][tier][kind]
                                   for s, name in zip(sign, names)) for kind in ('M', 'A')}
        return out

    solve = combine((1, -1, -1), 'FD denoc', 'ID (bias)', 'articulated sweep')
    if solve is not None:
        counts['solve sweeps'] = solve     # + the n subtractions of phi = tau - ID
    total = combine((1, 1), 'FD denoc', 'kinematics')
    if total is not None:
        counts['FD denoc + kinematics'] = total


def run(opts) -> dict:
    """Count the operations for n = 2..12 (2..8 with --quick), fit, compare."""
    ns = list(range(2, 9) if opts.quick else range(2, 13))
    progress = common.Progress(len(ns), NAME)
    per_n = []
    for n in ns:
        entry = count_chain(n, seed=opts.seed + 100 + n)
        _derive(entry)
        per_n.append(entry)
        progress.step(f'n={n}')
    errors = {}
    for entry in per_n:
        for name, message in entry['errors'].items():
            errors.setdefault(name, message)
    fits = {}
    for name, degree in DEGREES.items():
        rows = [e for e in per_n if name in e['counts']]
        if len(rows) < degree + 2:
            continue
        x = [e['n'] for e in rows]
        fits[name] = {'degree': degree}
        for tier in TIERS:
            for kind in ('M', 'A'):
                coef = fit(x, [e['counts'][name][tier][kind] for e in rows], degree)
                resid = max(abs(_poly(coef, e['n']) - e['counts'][name][tier][kind])
                            for e in rows)
                fits[name][f'{tier}_{kind}'] = {'coef': coef, 'formula': _format_poly(coef),
                                                'max_residual': resid}
    comparison = {}
    for name, paper_name in (('FD denoc', 'FD denoc'), ('FD denoc + kinematics', 'FD denoc'),
                             ('GIM', 'GIM')):
        paper = PAPERS[paper_name]
        if name not in fits:
            continue
        rows = {}
        for n in (7, 12, 100):
            row = {'paper_M': _poly(paper['M'], n), 'paper_A': _poly(paper['A'], n)}
            for tier in TIERS:
                for kind in ('M', 'A'):
                    ours = _poly(fits[name][f'{tier}_{kind}']['coef'], n)
                    row[f'{tier}_{kind}'] = ours
                    row[f'{tier}_{kind}_over_paper'] = ours / row[f'paper_{kind}']
            rows[n] = row
        comparison[name] = {'source': paper['source'],
                            'paper_M': _format_poly(paper['M']),
                            'paper_A': _format_poly(paper['A']), 'at_n': rows}
    return {'ns': ns, 'per_n': per_n, 'fits': fits, 'papers': comparison,
            'numpy_object_dtype_errors': errors,
            'explanation': measured_summary(fits, comparison) + '\n' + EXPLANATION,
            'targets': []}


def measured_summary(fits, comparison) -> str:
    """Return the measured differences from the papers as markdown bullet points."""
    lines = ['Measured differences (essential tier, per joint = the n coefficient):', '']

    def slope(name, kind, tier='essential'):
        return fits[name][f'{tier}_{kind}']['coef'][1] if name in fits else float('nan')

    parts = ('ID (bias)', 'articulated sweep', 'solve sweeps', 'kinematics')
    if all(p in fits for p in parts):
        lines.append('* FD per joint: ' + ', '.join(
            f'{p} {slope(p, "M"):.0f} M / {slope(p, "A"):.0f} A' for p in parts)
            + f' (all tier: ID {slope("ID (bias)", "M", "all"):.0f} M, kinematics '
            f'{slope("kinematics", "M", "all"):.0f} M); Saha: 201 M / 193 A per joint for '
            'the whole algorithm.')
    for name, entry in comparison.items():
        for n, row in entry['at_n'].items():
            off = [f'{kind} {row[f"essential_{kind}_over_paper"]:.2f}x'
                   for kind in ('M', 'A')
                   if abs(row[f'essential_{kind}_over_paper'] - 1.0) > 0.10]
            if off:
                lines.append(f'* {name} at n = {n}: ' + ', '.join(off) + ' of the paper '
                             f'(all tier: M {row["all_M_over_paper"]:.2f}x, A '
                             f'{row["all_A_over_paper"]:.2f}x)')
    return '\n'.join(lines) + '\n'


EXPLANATION = """\
Why they differ:

* Dense numpy algebra.  Every 6x6 extended mass M_i, articulated inertia M^_i and
  matrix-vector product is a full dense product (36 M + 30 A for M p), and symmetric
  results (M^_k, M~_k) are computed in all 36 entries instead of 21.  Saha's scalar
  forms exploit the block structure of M_i = [[I, m c x], [-m c x, m 1]] and of
  B_ij = [[1, 0], [c x, 1]].  Rotated into the base frame, M_i has no exact zeros
  left, so the 'nonzero' tier cannot recover
  that structure: it only removes the zeros of constant tensors and fresh arrays.
* Cross products as matrices.  The core writes a x b as one einsum with the 3x3x3
  permutation tensor (27 two-factor products) and the spatial t x s and t x* f as
  products with the 6x6 matrix [t x] = t E, formed by one matrix product with a
  constant 6x36 table of 0 and +-1 (216 products) and then applied as a dense 6x6
  matrix-vector product (36 M + 30 A, with 15 structural zeros).  The 'all' tier
  counts every one of them, which is why the all-tier ID and FD are several times
  the papers' counts; 'nonzero' drops the zero terms and 'essential' the products
  with +-1.  The matrix form costs more arithmetic but far fewer numpy calls per
  state, and one BLAS product for a whole batch.
* Reference point.  Body i is referred to its joint origin O_i (for precision far
  from the base origin, issue 9), so B_{i,i-1} shifts the point by r_i: the running
  sums gain a second pass with the w x r_i terms (3x3 products with [r_i x]), the
  composite bodies a third (the parallel-axis terms), and the articulated sweep and
  the solve sweeps apply B_{i,i-1} as dense 6x6 products.  The kinematics rotates
  every M_i into the base frame with dense 6x6 products (diag(R, R) M_body
  diag(R, R)^T) and forms the body rotations by a Hillis-Steele prefix product:
  O(n log n) 3x3 products instead of n sequential ones, hence the poor linear fit of
  the kinematics and its large per-joint count.
* What is counted.  'FD denoc' is phi = tau - ID(q, qd, 0) (the Newton-Euler bias,
  the largest part) plus the articulated sweep and the three solve sweeps, without the
  kinematics; Saha's count (like Featherstone's 199n - 198 it is compared with) is for
  the whole algorithm, so 'FD denoc + kinematics' is the like-for-like row.  The GIM
  precomputes y_i = M~_i p_i once per joint (36 M) and then needs one 6-term dot
  product per entry; it forms all n^2 entries and keeps the lower triangle, so 6n^2 M
  where 3n^2 would do, and yet fewer than paper 003's 10.5n^2, whose 3-vector formulas
  spend about 21 M per entry; its additions carry the reverse running sum of the
  dense 6x6 M_i (36 A per joint).  Paper 003 also leaves out the rotation matrices,
  as the kinematics is left out here.  'UDU (U, d)' forms U explicitly (n^2 more dot
  products); the O(n) articulated sweep is what FD needs.
* Conventions.  Divisions count as multiplications and sign changes are not counted,
  as in the papers; numpy's internal accumulator start (0 + x) is not counted.
"""


if __name__ == '__main__':
    import json
    result = run(common.Options(quick=True))
    print(json.dumps({k: result[k] for k in ('fits', 'papers', 'numpy_object_dtype_errors')},
                     indent=1, default=str))
