"""
Twists, wrenches and the twist-propagation matrix B, written out for the compiled loops.

A twist is t = [w; v] and a wrench is [n; f], angular part first, as in paper 000.
Each body is referred to its own joint origin O_i (see :mod:`.kinematics`), so the
twist-propagation matrix of 000 eq. 11 only moves a point, by r_i = O_i - O_lambda(i):

    B_{i,lambda(i)} = [[1, 0], [-[r_i x], 1]],     B^T = [[1, [r_i x]], [0, 1]].

These helpers apply B, B^T and B^T X B without forming B, and the cross products of
twists; they write into ``out`` (never an input) and allocate nothing, so that numba
compiles them to a few scalar operations (numba calls BLAS for ``@``, about 1 us on a
6x6 matrix).
"""

import numba

#: Every kernel of the core is compiled once and cached on disk beside its module
#: (``__pycache__``, or NUMBA_CACHE_DIR where that is read-only).  IEEE arithmetic, no
#: ``fastmath``: with it, LLVM reassociates sums differently where a kernel is inlined
#: into a caller, and a batch would not give its single states' results to the bit
#: (it is not faster here either).
njit = numba.njit(cache=True, error_model='numpy')

#: numba's inlining at its own level (``inline='always'``), or ``'never'`` before numba
#: 0.68: numba 0.58.1 (Ubuntu 24.04's ``python3-numba``) grows its compiler's memory
#: faster than linearly with each level inlined (the kinematics alone 1.35 GB, every
#: kernel inlined into :func:`.call.call_state` past 24 GB); there the helpers are
#: compiled as functions and LLVM inlines what it chooses: the same results, the core
#: compiled in about 3 minutes and 2 GB, each call slower.  Versions in between are
#: not checked and take the safe side.
INLINE = 'always' if numba.version_info.short >= (0, 68) else 'never'

#: The small helpers below, inlined into the kernels at numba's level (no call, no
#: array views passed).
njit_inline = numba.njit(cache=True, error_model='numpy', inline=INLINE)


@njit_inline
def cross(a, b, out):
    """Write a x b for 3-vectors into out."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit_inline
def dot(a, b):
    """Return a . b (any length)."""
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit_inline
def p_dot(p, x, prismatic):
    """Return p^T x for a joint's p = [e; 0] (revolute) or [0; e] (prismatic): 3 products."""
    c = 3 if prismatic else 0
    return p[c] * x[c] + p[c + 1] * x[c + 1] + p[c + 2] * x[c + 2]


@njit_inline
def add_p(p, s, prismatic, out):
    """Add p s to out for a joint's p = [e; 0] or [0; e] (its three non-zero entries)."""
    c = 3 if prismatic else 0
    for k in range(c, c + 3):
        out[k] += p[k] * s


@njit_inline
def matvec(X, s, out):
    """Write X s into out, for a square X."""
    for i in range(X.shape[0]):
        acc = 0.0
        for j in range(X.shape[1]):
            acc += X[i, j] * s[j]
        out[i] = acc


@njit_inline
def moved_twist(r0, r1, r2, w0, w1, w2, v0, v1, v2):
    """
    Return B [w; v] = [w; v + w x r], six numbers: a twist at O_lambda(i) moved to O_i.

    000 eq. 11, r = r_i = O_i - O_lambda(i); the twin of :func:`moved_wrench` and the one
    place the move is written, on numbers, for the forward sweeps (twists, their rates,
    the forward dynamics' mu_k).
    """
    return w0, w1, w2, v0 + w1 * r2 - w2 * r1, v1 + w2 * r0 - w0 * r2, v2 + w0 * r1 - w1 * r0


@njit_inline
def twist_to_child(r, t, out):
    """Write B t = [w; v + w x r] into out: the twist at O_lambda moved to O_i (000 eq. 11)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = moved_twist(
        r[0], r[1], r[2], t[0], t[1], t[2], t[3], t[4], t[5])


@njit_inline
def moved_wrench(r0, r1, r2, n0, n1, n2, f0, f1, f2):
    """
    Return B^T [n; f] = [n + r x f; f], six numbers: a wrench at O_i moved to O_lambda(i).

    000 eq. 18, r = r_i = O_i - O_lambda(i).  The one place the move is written: on
    numbers, not arrays, so that the sweeps call it at each body for free (numba
    reference-counts the arrays an inlined helper takes, at each call).
    """
    return (n0 + (r1 * f2 - r2 * f1), n1 + (r2 * f0 - r0 * f2), n2 + (r0 * f1 - r1 * f0),
            f0, f1, f2)


@njit_inline
def wrench_to_parent(r, f, out):
    """Add B^T f = [n + r x f; f] to out: a wrench at O_i moved to O_lambda (000 eq. 18)."""
    m = moved_wrench(r[0], r[1], r[2], f[0], f[1], f[2], f[3], f[4], f[5])
    for a in range(6):
        out[a] += m[a]


@njit_inline
def pass_to_parent(r, w, i, j):
    """
    Add B^T w_i = [n + r_i x f; f] to w_j, j = lambda(i): 000 eq. 18 on the bodies' arrays.

    ``r`` (n, 3) and ``w`` (n, 6) indexed here, not as row views: the backward sweeps
    call this at each body, where numba would reference-count every row view.
    """
    m0, m1, m2, m3, m4, m5 = moved_wrench(r[i, 0], r[i, 1], r[i, 2], w[i, 0], w[i, 1],
                                          w[i, 2], w[i, 3], w[i, 4], w[i, 5])
    w[j, 0] += m0
    w[j, 1] += m1
    w[j, 2] += m2
    w[j, 3] += m3
    w[j, 4] += m4
    w[j, 5] += m5


@njit_inline
def inertia_to_parent(r, X, k, j):
    """
    Add B^T X_k B to X_j, for a symmetric 6x6 X_k at O_k moved to O_j = O_lambda(k) (000 eq. 21).

    With X_k = [[A, H], [H^T, D]] and R = [r_k x]: B^T X_k B = [[A + R H^T - K R, K],
    [K^T, D]], K = H + R D.  ``r`` and ``X`` are the bodies' arrays (n, 3) and (n, 6, 6),
    indexed here: a row view or an array more per call costs numba's reference counting,
    at each body of the sweeps that call this.
    """
    K = (_h_plus_rd(r, X, k, 0, 0), _h_plus_rd(r, X, k, 0, 1), _h_plus_rd(r, X, k, 0, 2),
         _h_plus_rd(r, X, k, 1, 0), _h_plus_rd(r, X, k, 1, 1), _h_plus_rd(r, X, k, 1, 2),
         _h_plus_rd(r, X, k, 2, 0), _h_plus_rd(r, X, k, 2, 1), _h_plus_rd(r, X, k, 2, 2))
    for a in range(3):
        a1, a2 = (a + 1) % 3, (a + 2) % 3
        for b in range(a, 3):                      # the symmetric blocks: upper triangle
            b1, b2 = (b + 1) % 3, (b + 2) % 3
            RHt = r[k, a1] * X[k, b, 3 + a2] - r[k, a2] * X[k, b, 3 + a1]     # (R H^T)_ab
            KR = K[3 * a + b1] * r[k, b2] - K[3 * a + b2] * r[k, b1]         # (K R)_ab
            X[j, a, b] += X[k, a, b] + RHt - KR
            X[j, 3 + a, 3 + b] += X[k, 3 + a, 3 + b]
            X[j, b, a], X[j, 3 + b, 3 + a] = X[j, a, b], X[j, 3 + a, 3 + b]
        for b in range(3):
            X[j, a, 3 + b] += K[3 * a + b]
            X[j, 3 + b, a] = X[j, a, 3 + b]


@njit_inline
def rigid_inertia_to_parent(r, X, k, j):
    """
    Add B^T X_k B to X_j for a rigid body's X_k = [[I, [h x]], [-[h x], m 1]] (000 eq. 21).

    A composite body is rigid: its ten numbers m, h = m d (d its mass centre from O_k)
    and I (about O_k) move to O_j = O_k - r_k by the parallel axes,

        m_j += m,   h_j += h + m r_k,
        I_j += I - [h x][r_k x] - [r_k x][h x] - m [r_k x]^2
             = I + 2 (r_k . g) 1 - (r_k g^T + g r_k^T),   g = h + m r_k / 2,

    (-[a x][b x] = (a . b) 1 - b a^T), 21 products where the symmetric 6x6 of
    :func:`inertia_to_parent` takes 54.  The diagonal, 2 sum_{b != a} r_b g_b, is summed
    without its term a: on a 1 km rod along x, 2 (r . g) - 2 r_x g_x would cancel
    m r_x^2 ~ 1e10 down to the wrist's inertia about the rod.  Both triangles of X_j are
    written, so that X_j stays the whole 6x6 matrix.
    """
    m = X[k, 3, 3]
    h0, h1, h2 = X[k, 2, 4], X[k, 0, 5], X[k, 1, 3]                # [h x] in X_k
    r0, r1, r2 = r[k, 0], r[k, 1], r[k, 2]
    mr0, mr1, mr2 = m * r0, m * r1, m * r2
    g0, g1, g2 = h0 + 0.5 * mr0, h1 + 0.5 * mr1, h2 + 0.5 * mr2
    rg0, rg1, rg2 = r0 * g0, r1 * g1, r2 * g2       # 2 (r . g) - 2 r_a g_a, summed without
    X[j, 0, 0] += X[k, 0, 0] + 2.0 * (rg1 + rg2)   # the term a that would cancel
    X[j, 1, 1] += X[k, 1, 1] + 2.0 * (rg0 + rg2)
    X[j, 2, 2] += X[k, 2, 2] + 2.0 * (rg0 + rg1)
    X[j, 0, 1] += X[k, 0, 1] - r0 * g1 - g0 * r1
    X[j, 0, 2] += X[k, 0, 2] - r0 * g2 - g0 * r2
    X[j, 1, 2] += X[k, 1, 2] - r1 * g2 - g1 * r2
    X[j, 1, 0], X[j, 2, 0], X[j, 2, 1] = X[j, 0, 1], X[j, 0, 2], X[j, 1, 2]
    H0, H1, H2 = X[j, 2, 4] + h0 + mr0, X[j, 0, 5] + h1 + mr1, X[j, 1, 3] + h2 + mr2
    X[j, 0, 4], X[j, 0, 5], X[j, 1, 3] = -H2, H1, H2
    X[j, 1, 5], X[j, 2, 3], X[j, 2, 4] = -H0, -H1, H0
    X[j, 4, 0], X[j, 5, 0], X[j, 3, 1] = -H2, H1, H2
    X[j, 5, 1], X[j, 3, 2], X[j, 4, 2] = -H0, -H1, H0
    m_j = X[j, 3, 3] + m
    X[j, 3, 3], X[j, 4, 4], X[j, 5, 5] = m_j, m_j, m_j


@njit_inline
def _h_plus_rd(r, X, k, a, b):
    """Return (H + [r_k x] D)_ab for X_k = [[A, H], [H^T, D]]."""
    a1, a2 = (a + 1) % 3, (a + 2) % 3
    return X[k, a, 3 + b] + r[k, a1] * X[k, 3 + a2, 3 + b] - r[k, a2] * X[k, 3 + a1, 3 + b]


@njit_inline
def add_motion_cross(t, s, c, out):
    """Add c (t x s) to out: t x s = [w x s_w; w x s_v + v x s_w], a twist s carried by t."""
    w0, w1, w2, v0, v1, v2 = t[0], t[1], t[2], t[3], t[4], t[5]
    a0, a1, a2, l0, l1, l2 = s[0], s[1], s[2], s[3], s[4], s[5]
    out[0] += c * (w1 * a2 - w2 * a1)
    out[1] += c * (w2 * a0 - w0 * a2)
    out[2] += c * (w0 * a1 - w1 * a0)
    out[3] += c * (w1 * l2 - w2 * l1 + v1 * a2 - v2 * a1)
    out[4] += c * (w2 * l0 - w0 * l2 + v2 * a0 - v0 * a2)
    out[5] += c * (w0 * l1 - w1 * l0 + v0 * a1 - v1 * a0)


@njit_inline
def force_cross(t, f, out):
    """Write t x* f = [w x n + v x f; w x f] into out (000 eq. 17's W_i M_i t_i); out may be f."""
    w0, w1, w2, v0, v1, v2 = t[0], t[1], t[2], t[3], t[4], t[5]
    n0, n1, n2, f0, f1, f2 = f[0], f[1], f[2], f[3], f[4], f[5]
    out[0] = w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    out[1] = w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    out[2] = w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
    out[3] = w1 * f2 - w2 * f1
    out[4] = w2 * f0 - w0 * f2
    out[5] = w0 * f1 - w1 * f0


@njit_inline
def body_inertia_times(M, s, out, add):
    """
    Write (or with ``add``, add) M s into out for a body's M = [[I, [h x]], [-[h x], m 1]].

    The extended mass of one body about its joint origin (000 eq. 15 moved to O_i):
    M s = [I s_w + h x s_v; m s_v - h x s_w], 24 multiplications instead of 36.
    """
    h0, h1, h2, m = M[2, 4], M[0, 5], M[1, 3], M[3, 3]
    w0, w1, w2, v0, v1, v2 = s[0], s[1], s[2], s[3], s[4], s[5]
    n0 = M[0, 0] * w0 + M[0, 1] * w1 + M[0, 2] * w2 + h1 * v2 - h2 * v1
    n1 = M[1, 0] * w0 + M[1, 1] * w1 + M[1, 2] * w2 + h2 * v0 - h0 * v2
    n2 = M[2, 0] * w0 + M[2, 1] * w1 + M[2, 2] * w2 + h0 * v1 - h1 * v0
    f0 = m * v0 - h1 * w2 + h2 * w1
    f1 = m * v1 - h2 * w0 + h0 * w2
    f2 = m * v2 - h0 * w1 + h1 * w0
    if add:
        out[0] += n0
        out[1] += n1
        out[2] += n2
        out[3] += f0
        out[4] += f1
        out[5] += f2
    else:
        out[0], out[1], out[2], out[3], out[4], out[5] = n0, n1, n2, f0, f1, f2


@njit_inline
def move_wrench(r, f):
    """Move a wrench f at O_i to O_lambda(i) in place: f <- B^T f = [n + r x f; f]."""
    f[0], f[1], f[2], f[3], f[4], f[5] = moved_wrench(r[0], r[1], r[2], f[0], f[1], f[2],
                                                      f[3], f[4], f[5])
