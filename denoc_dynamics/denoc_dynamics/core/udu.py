"""
UDU^T decomposition of the GIM by reverse Gaussian elimination (000 §5.1; 002; 004).

Eliminating the GIM from its last row upwards leaves the articulated-body inertias
(000 eqs. 33-35; 002 eq. 11; 004), a backward sweep over the tree:

    M^_k starts at M_k;  for k = n..1:
        psi^_k = M^_k p_k,   m^_k = p_k^T psi^_k,   psi_k = psi^_k / m^_k,
        M^_lambda(k) += B_{k,lambda(k)}^T (M^_k - psi^_k psi_k^T) B_{k,lambda(k)}.

M^_k is the extended mass of the articulated body k (body k and everything beyond,
with the joints beyond k free), m^_k its moment of inertia about joint k.  Then
I = U D U^T with D = diag(m^_1 .. m^_n) and the unit upper-triangular U of

    U_ik = psi_k^T B_ki p_i    for i an ancestor of k, else 0           (000 eq. 34),

evaluated by walking psi_k from body k towards the base (Featherstone's LTDL keeps
the same branch-induced sparsity).  Every M^_k is referred to its joint origin O_k.
"""

from .kinematics import kinematics
from .model import data_arrays, model_arrays
from .spatial import inertia_to_parent, moved_wrench, njit, njit_inline


@njit
def udu(reals, ints, q, workspace, U, m_hat_out):
    """U (n, n) and D = diag(``m_hat_out``) with I = U D U^T at q (000 eqs. 32-34)."""
    m_hat_out[:] = unit_triangle(reals, ints, q, workspace, U, False)


@njit
def unit_triangle(reals, ints, q, workspace, T, eliminate):
    """
    Fill T (n, n) with U of I = U D U^T at q (000 eq. 34), or U^-1; return D's m^.

    A column per body by :func:`walk_to_base`; with ``eliminate``, U^-1 (000 eq. 38).
    m^ is a view of the workspace.
    """
    model, data = model_arrays(reals, ints), data_arrays(workspace, q.shape[0])
    kinematics(model, data, q)
    articulated_bodies(model, data)
    lam, r, p, psi = model.lam, data.r, data.p, data.psi
    for i in range(T.shape[0]):
        for k in range(T.shape[1]):
            T[i, k] = 1.0 if i == k else 0.0
    for k in range(T.shape[0]):
        walk_to_base(lam, r, p, psi, k, T, k, eliminate, 1.0)
    return data.m_hat


@njit_inline
def walk_to_base(lam, r, p, psi, k, T, column, eliminate, weight):
    """
    Walk y = weight psi_k from body k to the base, adding to T[i, column] at each ancestor i.

    Each step moves y from O_j to O_lambda(j) (B_{j,lambda(j)}^T).  Without
    ``eliminate``: T_i += p_i^T y, U_ik of 000 eq. 34.  With it: x = -p_i^T y,
    T_i += x, then y <- y + psi_i x (Psi_i^T): ``weight`` times (U^-1)_ik of 000
    eq. 38, the entries of ``weight`` U^-1 e_k above k (T_k itself is not written).
    y is six numbers and the arrays are indexed by body (no row view, which numba would
    reference-count at each step).
    """
    y0, y1, y2 = weight * psi[k, 0], weight * psi[k, 1], weight * psi[k, 2]
    y3, y4, y5 = weight * psi[k, 3], weight * psi[k, 4], weight * psi[k, 5]
    j = k
    while lam[j] >= 0:
        y0, y1, y2, y3, y4, y5 = moved_wrench(r[j, 0], r[j, 1], r[j, 2], y0, y1, y2, y3,
                                              y4, y5)              # B_{j,lambda(j)}^T
        j = lam[j]
        x = 0.0
        x += p[j, 0] * y0
        x += p[j, 1] * y1
        x += p[j, 2] * y2
        x += p[j, 3] * y3
        x += p[j, 4] * y4
        x += p[j, 5] * y5
        if eliminate:
            T[j, column] -= x
            y0 += psi[j, 0] * -x                                    # Psi_j^T
            y1 += psi[j, 1] * -x
            y2 += psi[j, 2] * -x
            y3 += psi[j, 3] * -x
            y4 += psi[j, 4] * -x
            y5 += psi[j, 5] * -x
        else:
            T[j, column] += x


@njit_inline
def articulated_bodies(model, data):
    """
    Fill psi_k, m^_k and M^_k at the kinematics in ``data`` (000 eq. 35, 002 eq. 11).

    M^_k starts at M_k and is M_k's storage: the sweep reaches body k after all of its
    children have added to it, and leaves M^ where M was.
    """
    lam, prismatic = model.lam, model.prismatic
    n = lam.shape[0]
    r, e, M_hat, psi, m_hat = data.r, data.e, data.M_hat, data.psi, data.m_hat
    for k in range(n - 1, -1, -1):
        c = 3 if prismatic[k] else 0                                # p_k = [e_k; 0] or [0; e_k]
        for a in range(6):                                          # psi^_k = M^_k p_k
            psi[k, a] = (M_hat[k, a, c] * e[k, 0] + M_hat[k, a, c + 1] * e[k, 1]
                         + M_hat[k, a, c + 2] * e[k, 2])
        m_hat[k] = e[k, 0] * psi[k, c] + e[k, 1] * psi[k, c + 1] + e[k, 2] * psi[k, c + 2]
        inverse = 1.0 / m_hat[k]
        if lam[k] >= 0:
            for a in range(6):                                      # Psi_k M^_k, symmetric:
                s = psi[k, a] * inverse                             # 21 products, not 36
                for b in range(a, 6):
                    M_hat[k, a, b] -= s * psi[k, b]
                    M_hat[k, b, a] = M_hat[k, a, b]
            inertia_to_parent(r, M_hat, k, lam[k])
        for a in range(6):
            psi[k, a] *= inverse


@njit
def eliminate(A, U, d):
    """
    U, d with A = U diag(d) U^T by reverse Gaussian elimination on A's numbers (000 §5.1).

    For a matrix given as numbers (the constrained G^T M G of mimic joints); A is
    overwritten.
    """
    n = A.shape[0]
    U[:] = 0.0
    for k in range(n - 1, -1, -1):
        d[k] = A[k, k]
        for i in range(k + 1):
            U[i, k] = A[i, k] / d[k]
        for i in range(k):
            for j in range(k):
                A[i, j] -= U[i, k] * A[k, j]
