"""
Operation counts of the core's kernels as they run, against the papers' formulas.

The kernels are run in a child process with ``NUMBA_DISABLE_JIT=1``, where numba's
decorators return the plain Python functions: the very loops that are compiled
otherwise, line for line.  Their model, workspace, state and output arrays are numpy
arrays of dtype ``object`` holding :class:`Counted` numbers, a float that counts every
multiplication or division (M) and addition or subtraction (A) it takes part in.
Nothing in the core is edited or patched.  ``math.sin`` and ``math.cos`` are counted
through :func:`sys.setprofile` (their calls are seen as C calls), which also tells
which function of the core is running, so every count is split by phase
(``kinematics``, ``newton_euler``, ``articulated_bodies``, ``solve``, ...).

What does not count: a kernel that allocates a float scratch array inside
(``np.empty``/``np.zeros`` with float dtype) turns every Counted stored into it into
a plain float (through ``__float__``, which is counted as a conversion); what it
computes from those floats alone is not counted.  That is the Cholesky factorization
of ``forward_dynamics_cholesky`` (its scratch L), the triple product of
``inverse_inertia_matrix`` (U^-1 in a float scratch) and most of ``composite_body``
(paper 003, float scratch throughout), which is therefore not counted at all.

Three tallies per run:

* ``all``: every operation the loops perform, including the start of an accumulator
  (0.0 + x) and products with exact zeros of the 6x6 matrices;
* ``nonzero``: operations with an exact-zero operand left out;
* ``essential``: also multiplications by exactly +-1 left out.  This approximates what
  a structure-exploiting scalar code, such as the papers count, would do.

The counts of the O(n) algorithms are checked for linearity (constant increments per
joint on random revolute chains) and fitted to a + b n; the GIM and UDU^T to
a + b n + c n^2.  Formulas compared (M, A):

* FD: Saha (1997) (201n - 335)M + (193n - 361)A; Featherstone's articulated-body
  algorithm (199n - 198)M + (174n - 173)A, as quoted by Saha (1999);
* GIM: the composite-body H about the base origin, (10.5n^2 + 38.5n - 85)M +
  (6n^2 + 39n - 70)A (J. Robotic Systems, 1991);
* ID at qdd = 0 (the bias): Balafoutis et al. (93n - 69)M + (81n - 66)A, as quoted
  in the same 1991 paper.

Run alone: ``python benchmarks/opcount.py`` prints the table.
"""

import json
import math
import os
import subprocess
import sys

import common  # noqa: F401  (first of these two: sets the BLAS thread count)
import numpy as np


NAME = 'opcount'
TITLE = 'Operation counts (the kernels run on counting scalars)'
TIERS = ('all', 'nonzero', 'essential')
FULL_NS = (2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20)
QUICK_NS = (2, 3, 4, 5, 6, 8)

#: kernel -> (entry function, degree of the fit)
KERNELS = {
    'FD denoc': ('forward_dynamics', 1),
    'ID': ('inverse_dynamics', 1),
    'GIM': ('inertia_matrix', 2),
    'UDU': ('udu', 2),
    'inverse GIM': ('inverse_inertia_matrix', 3),
    'FD cholesky': ('forward_dynamics_cholesky', 3),
}
#: the functions of the core whose counts are reported apart (phases)
PHASES = ('kinematics', 'newton_euler', 'articulated_bodies', 'solve',
          'composite_inertia_matrix')

PAPERS = {
    'FD denoc': [('Saha 1997 (O(n) FD)', (-335.0, 201.0), (-361.0, 193.0)),
                 ('Featherstone ABA, as quoted by Saha 1999', (-198.0, 199.0),
                  (-173.0, 174.0))],
    'GIM': [('composite-body H about the base origin (1991)', (-85.0, 38.5, 10.5),
             (-70.0, 39.0, 6.0))],
    'bias (ID at qdd = 0)': [('Balafoutis et al., as quoted in 1991', (-69.0, 93.0),
                              (-66.0, 81.0))],
}


# --------------------------------------------------------------------------- the scalar

class Tally:
    """Operation counters per phase and tier, and the phase now running."""

    def __init__(self):
        """Start at zero."""
        self.reset()

    def reset(self):
        """Set every counter to zero."""
        self.phase = 'entry'
        self.stack = []
        self.counts = {}
        self.extra = {'sin': 0, 'cos': 0, 'sqrt': 0, 'neg': 0, 'to_float': 0}

    def add(self, tier, kind):
        """Count one operation of ``kind`` ('M' or 'A') in ``tier`` for the phase."""
        phase = self.counts.setdefault(self.phase, {t: {'M': 0, 'A': 0} for t in TIERS})
        phase[tier][kind] += 1

    def totals(self) -> dict:
        """Return {tier: {M, A}} over all phases, the phases, and the extra counts."""
        total = {t: {k: sum(p[t][k] for p in self.counts.values()) for k in 'MA'}
                 for t in TIERS}
        return {'total': total, 'phases': self.counts, 'extra': dict(self.extra)}

    def profile(self, frame, event, arg):
        """sys.setprofile hook: follow the phases, count sin and cos."""
        if event == 'call' and frame.f_code.co_name in PHASES:
            self.stack.append(self.phase)
            self.phase = frame.f_code.co_name
        elif event == 'return' and frame.f_code.co_name in PHASES and self.stack:
            self.phase = self.stack.pop()
        elif event == 'c_call' and arg in (math.sin, math.cos):
            self.extra[arg.__name__] += 1


TALLY = Tally()


def _value(x):
    return x.v if isinstance(x, Counted) else float(x)


def _count(kind, a, b):
    """Count one binary operation of ``kind`` on the operand values a and b."""
    TALLY.add('all', kind)
    if a == 0.0 or b == 0.0:
        return
    TALLY.add('nonzero', kind)
    if kind == 'M' and (abs(a) == 1.0 or abs(b) == 1.0):
        return
    TALLY.add('essential', kind)


class Counted:
    """A float that counts the arithmetic done with it (see :data:`TALLY`)."""

    __slots__ = ('v',)

    def __init__(self, v):
        """Wrap the float ``v``."""
        self.v = float(v)

    def __repr__(self):
        """Show the value."""
        return f'Counted({self.v!r})'

    def __float__(self):
        """Leave the count (stored into a float array): counted as a conversion."""
        TALLY.extra['to_float'] += 1
        return self.v

    def _binary(self, other, kind, func, reflected=False):
        a, b = (_value(other), self.v) if reflected else (self.v, _value(other))
        _count(kind, a, b)
        return Counted(func(a, b))

    def __add__(self, other):
        """Count an addition."""
        return self._binary(other, 'A', float.__add__)

    def __radd__(self, other):
        """Count an addition."""
        return self._binary(other, 'A', float.__add__, True)

    def __sub__(self, other):
        """Count a subtraction."""
        return self._binary(other, 'A', float.__sub__)

    def __rsub__(self, other):
        """Count a subtraction."""
        return self._binary(other, 'A', float.__sub__, True)

    def __mul__(self, other):
        """Count a multiplication."""
        return self._binary(other, 'M', float.__mul__)

    def __rmul__(self, other):
        """Count a multiplication."""
        return self._binary(other, 'M', float.__mul__, True)

    def __truediv__(self, other):
        """Count a division (as M, like the papers)."""
        return self._binary(other, 'M', float.__truediv__)

    def __rtruediv__(self, other):
        """Count a division (as M, like the papers)."""
        return self._binary(other, 'M', float.__truediv__, True)

    def __pow__(self, other):
        """Count a square root (x ** 0.5) or a power apart."""
        TALLY.extra['sqrt'] += 1
        return Counted(self.v ** _value(other))

    def __neg__(self):
        """Count a negation apart (not an M or an A)."""
        TALLY.extra['neg'] += 1
        return Counted(-self.v)

    def __abs__(self):
        """Return |x| (not counted)."""
        return Counted(abs(self.v))

    def __eq__(self, other):
        """Compare values (not counted)."""
        return self.v == _value(other)

    def __lt__(self, other):
        """Compare values (not counted)."""
        return self.v < _value(other)

    def __le__(self, other):
        """Compare values (not counted)."""
        return self.v <= _value(other)

    def __gt__(self, other):
        """Compare values (not counted)."""
        return self.v > _value(other)

    def __ge__(self, other):
        """Compare values (not counted)."""
        return self.v >= _value(other)

    __hash__ = None


def counted(array) -> np.ndarray:
    """Return an object array of Counted numbers with the values and shape of ``array``."""
    array = np.asarray(array, dtype=float)
    out = np.empty(array.shape, dtype=object)
    out.reshape(-1)[:] = [Counted(x) for x in array.reshape(-1)]
    return out


# --------------------------------------------------------------------------- the child

def count_kernels(n: int, seed: int) -> dict:
    """Run every kernel once on Counted arrays of a random n-joint chain; return counts."""
    import numba
    from denoc_dynamics.core import forward_dynamics, gim, gravity, inverse_dynamics
    from denoc_dynamics.core import inverse_inertia, model as model_module, udu
    if not numba.config.DISABLE_JIT:
        raise RuntimeError('opcount must run with NUMBA_DISABLE_JIT=1')
    robot = common.load_urdf(common.random_chain_urdf(n, seed=seed))
    rng = np.random.default_rng(seed)
    q, qd, qdd, tau = (counted(rng.uniform(-2.0, 2.0, n)) for _ in range(4))
    reals, ints = counted(robot.model.reals), robot.model.ints
    size = model_module.DATA_REALS * n
    entries = {
        'forward_dynamics': (forward_dynamics.forward_dynamics,
                             lambda w: (reals, ints, q, qd, tau, None, w, _out(n))),
        'forward_dynamics_cholesky': (forward_dynamics.forward_dynamics_cholesky,
                                      lambda w: (reals, ints, q, qd, tau, None, w, _out(n))),
        'inverse_dynamics': (inverse_dynamics.inverse_dynamics,
                             lambda w: (reals, ints, q, qd, qdd, None, w, _out(n))),
        'bias': (inverse_dynamics.inverse_dynamics,
                 lambda w: (reals, ints, q, qd, None, None, w, _out(n))),
        'inertia_matrix': (gim.inertia_matrix, lambda w: (reals, ints, q, w, _out(n, n))),
        'udu': (udu.udu, lambda w: (reals, ints, q, w, _out(n, n), _out(n))),
        'inverse_inertia_matrix': (inverse_inertia.inverse_inertia_matrix,
                                   lambda w: (reals, ints, q, w, _out(n, n))),
        'analytical_inverse_inertia_matrix': (
            inverse_inertia.analytical_inverse_inertia_matrix,
            lambda w: (reals, ints, q, w, _out(n, n))),
        'gravity': (gravity.gravity_torques, lambda w: (reals, ints, q, w, _out(n))),
    }
    out = {}
    for name, (kernel, arguments) in entries.items():
        args = arguments(counted(np.zeros(size)))
        TALLY.reset()
        sys.setprofile(TALLY.profile)
        try:
            kernel(*args)
        finally:
            sys.setprofile(None)
        out[name] = TALLY.totals()
    return out


def _out(*shape):
    return np.zeros(shape, dtype=object)


def child(ns, seed) -> dict:
    """Count every kernel at every n (run with NUMBA_DISABLE_JIT=1)."""
    return {str(n): count_kernels(n, seed + n) for n in ns}


# --------------------------------------------------------------------------- the parent

def _fit(ns, values, degree):
    """Return (coefficients low to high, max residual) of a least-squares polynomial."""
    coef = np.polynomial.polynomial.polyfit(np.array(ns, float), np.array(values, float),
                                            degree)
    fitted = np.polynomial.polynomial.polyval(np.array(ns, float), coef)
    return [float(c) for c in coef], float(np.max(np.abs(fitted - np.array(values))))


def formula(coef) -> str:
    """Return a + b n + c n^2 as text, highest power first."""
    terms = []
    for power in range(len(coef) - 1, -1, -1):
        c = coef[power]
        if abs(c) < 5e-3:
            continue
        text = f'{abs(c):.4g}' + ('' if power == 0 else ' n' if power == 1 else f' n^{power}')
        terms.append(('- ' if c < 0 else '+ ') + text)
    if not terms:
        return '0'
    head = terms[0]
    return (head[2:] if head.startswith('+') else '-' + head[2:]) + ' ' + ' '.join(terms[1:])


def _poly(coef, n):
    return sum(c * n ** k for k, c in enumerate(coef))


def analyse(ns, raw) -> dict:
    """Fit the counts, check linearity, compare with the papers."""
    series = {}            # name -> {tier_kind: [counts over ns]}
    names = {'FD denoc': 'forward_dynamics', 'FD cholesky': 'forward_dynamics_cholesky',
             'ID': 'inverse_dynamics', 'bias (ID at qdd = 0)': 'bias', 'GIM': 'inertia_matrix',
             'UDU': 'udu', 'inverse GIM': 'inverse_inertia_matrix',
             'inverse GIM, analytical': 'analytical_inverse_inertia_matrix',
             'gravity': 'gravity'}
    degree = {'FD denoc': 1, 'ID': 1, 'bias (ID at qdd = 0)': 1, 'GIM': 2, 'UDU': 2,
              'inverse GIM': 2, 'inverse GIM, analytical': 3, 'FD cholesky': 2,
              'gravity': 1}
    for name, entry in names.items():
        series[name] = {f'{t}_{k}': [raw[str(n)][entry]['total'][t][k] for n in ns]
                        for t in TIERS for k in 'MA'}
    phase_entry = {'kinematics': 'forward_dynamics', 'newton_euler (bias)': 'forward_dynamics',
                   'articulated_bodies': 'forward_dynamics', 'solve': 'forward_dynamics',
                   'composite_inertia_matrix': 'inertia_matrix'}
    for label, entry in phase_entry.items():
        phase = label.split()[0]
        series[f'  {label}'] = {f'{t}_{k}': [raw[str(n)][entry]['phases'].get(phase, {}).get(
            t, {}).get(k, 0) for n in ns] for t in TIERS for k in 'MA'}
        degree[f'  {label}'] = 2 if phase == 'composite_inertia_matrix' else 1
    series['FD denoc without kinematics'] = {
        key: [a - b for a, b in zip(series['FD denoc'][key], series['  kinematics'][key])]
        for key in series['FD denoc']}
    degree['FD denoc without kinematics'] = 1
    fits = {}
    for name, s in series.items():
        fits[name] = {}
        for key, values in s.items():
            coef, residual = _fit(ns, values, degree[name])
            fits[name][key] = {'coef': coef, 'formula': formula(coef),
                               'max_residual': residual}
        if degree[name] == 1:      # exact increments per joint (beyond the first body)
            dn = np.diff(ns[1:])
            steps = {key: sorted(set((np.diff(values[1:]) / dn).tolist())) for key, values
                     in s.items() if key.startswith('all_')}
            fits[name]['increments_per_joint'] = steps
            fits[name]['linear'] = all(len(v) == 1 for v in steps.values())
    papers = {}
    for name, refs in PAPERS.items():
        ours = fits[name]
        for source, coef_m, coef_a in refs:
            at = {}
            for n in (6, 7, 12, 50, 200):
                row = {'paper_M': _poly(coef_m, n), 'paper_A': _poly(coef_a, n)}
                for t in TIERS:
                    for k, coef in (('M', coef_m), ('A', coef_a)):
                        value = _poly(ours[f'{t}_{k}']['coef'], n)
                        row[f'{t}_{k}'] = value
                        row[f'{t}_{k}_over_paper'] = value / _poly(coef, n)
                at[n] = row
            papers[f'{name} vs {source}'] = {
                'ours': name, 'paper_M': formula(coef_m), 'paper_A': formula(coef_a), 'at_n': at}
    extra = {name: {n: raw[str(n)][entry]['extra'] for n in (ns[0], ns[-1])}
             for name, entry in names.items()}
    for name, by_n in extra.items():
        for e in by_n.values():         # math.sin and math.cos convert through __float__
            e['stored_as_float'] = e['to_float'] - e['sin'] - e['cos']
    partial = {name: any(e['stored_as_float'] for e in extra[name].values()) for name in names}
    return {'fits': fits, 'papers': papers, 'extra': extra, 'partial_count': partial,
            'per_n': {name: {k: dict(zip(ns, v)) for k, v in s.items()}
                      for name, s in series.items()}}


EXPLANATION = """
Why the counts differ from the papers:

* The papers count hand-specialized scalar code on DH frames.  The model here also
  turns each body frame so that its joint axis is the local z (a turn about z costs
  12 M), but a URDF joint keeps a fixed rotation R_tree,i before it, so R_i costs a
  full 3x3 product (27 M), and M_i = R I_O R^T is formed in base-frame components
  (the kinematics phase, a third to a half of the FD count).
* The 6x6 products (M_i t_i, M^_k p_k) and the articulated-inertia update are general
  dense loops: 36 M + 36 A each, where the papers exploit the block structure
  [[I, h x], [-h x, m 1]] and the sparsity of p_i = [e_i; 0].  The ``nonzero`` tier
  removes the products with exact zeros that structure creates, which is why it
  is closer to the papers.
* Saha's count is for the forward dynamics given the kinematics of DH frames; compare
  "FD denoc without kinematics" for the sweeps alone.
* The ``essential`` tier (also without products by +-1, in the JSON) differs from
  ``nonzero`` only where a frame has entries of exactly +-1.
"""


def run(opts) -> dict:
    """Count in a child process with NUMBA_DISABLE_JIT=1; return the section's results."""
    ns = QUICK_NS if opts.quick else FULL_NS
    env = dict(os.environ, NUMBA_DISABLE_JIT='1')
    proc = subprocess.run([sys.executable, __file__, '--child', str(opts.seed)]
                          + [str(n) for n in ns], capture_output=True, text=True, env=env,
                          cwd=str(common.BENCH_DIR))
    if proc.returncode != 0:
        raise RuntimeError(f'opcount child failed: {proc.stderr.strip()[-800:]}')
    raw = json.loads(proc.stdout)
    result = {'ns': list(ns), 'how': 'kernels run with NUMBA_DISABLE_JIT=1 on object '
                                     'arrays of counting scalars (see opcount.py)'}
    result.update(analyse(ns, raw))
    result['explanation'] = EXPLANATION
    result['targets'] = []
    return result


def table(result) -> str:
    """Return the fits and the comparison with the papers as markdown."""
    lines = ['| kernel | tier | M | A | exactly linear (per joint: M, A) |',
             '|---|---|---|---|---|']
    partial = result.get('partial_count', {})
    for name, f in result['fits'].items():
        label = name + (' (partial: float scratch)' if partial.get(name) else '')
        for t in TIERS[:2]:
            linear = ''
            if t == 'all' and 'linear' in f:
                inc = f['increments_per_joint']
                linear = ('yes' if f['linear'] else 'no') + (
                    f': {inc["all_M"]}, {inc["all_A"]}')
            lines.append(f'| {label if t == "all" else ""} | {t} | {f[f"{t}_M"]["formula"]} | '
                         f'{f[f"{t}_A"]["formula"]} | {linear} |')
    for title, p in result['papers'].items():
        lines += ['', f'**{title}**: ({p["paper_M"]})M + ({p["paper_A"]})A', '',
                  '| n | paper M / A | all M / A | nonzero M / A |', '|---|---|---|---|']
        for n, r in p['at_n'].items():
            cells = [f'{r[f"{t}_M"]:.0f} ({r[f"{t}_M_over_paper"]:.2f}x) / {r[f"{t}_A"]:.0f} '
                     f'({r[f"{t}_A_over_paper"]:.2f}x)' for t in TIERS[:2]]
            lines.append(f'| {n} | {r["paper_M"]:.0f} / {r["paper_A"]:.0f} | '
                         + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[1] == '--child':
        seed, ns = int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
        print(json.dumps(child(ns, seed)))
    else:
        out = run(common.Options(quick='--quick' in sys.argv))
        print(table(out))
        print(json.dumps({'extra': out['extra'],
                          'partial_count': out['partial_count']}, indent=1))
