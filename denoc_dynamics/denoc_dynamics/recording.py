"""
Recorded joint states for identification, without rosbag: CSV or NPZ (no ROS here).

CSV: a header row and one row per sample, columns ``time`` and, per joint,
``position.<joint>``, ``velocity.<joint>``, ``effort.<joint>`` and optionally
``acceleration.<joint>`` (what ``sensor_msgs/JointState`` carries, by joint name).
NPZ: arrays ``t`` (N,), ``q``, ``qd``, ``tau`` (N, n), optionally ``qdd`` and
``joint_names`` (n,) giving the columns' order.

Where no accelerations are recorded, each pair of consecutive samples k, k + 1 gives
one sample at the middle of the interval: q and qd the means of the two, qdd =
(qd_k+1 - qd_k) / (t_k+1 - t_k), the mean acceleration over the interval, and the
effort published at k + 1, which sim_node applied over that interval (its
``joint_states`` carry the effort of the publish period that ends at the stamp);
``effort_timing='sample'`` takes the mean of the two efforts instead (efforts
measured at the stamps).  Each is second-order accurate in the interval.  An
interval longer than ``GAP`` times the median one (a sample lost on the way) is left
out.
"""

import csv
from typing import NamedTuple, Sequence

import numpy as np

FIELDS = ('position', 'velocity', 'acceleration', 'effort')


class Recording(NamedTuple):
    """Samples (N, n) in the robot's joint order; ``t`` (N,) [s]."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray


EFFORT_TIMINGS = ('interval', 'sample')

#: Intervals longer than this many median intervals are left out (a lost sample).
GAP = 1.5


def load_recording(path: str, joint_names: Sequence[str],
                   effort_timing: str = 'interval') -> Recording:
    """Read ``path`` (.csv or .npz) in the order of ``joint_names``; ValueError if unusable."""
    if effort_timing not in EFFORT_TIMINGS:
        raise ValueError(f'effort_timing must be one of {EFFORT_TIMINGS}, got {effort_timing!r}')
    if str(path).endswith('.npz'):
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: np.asarray(f[k]) for k in f.files}
        missing = {'t', 'q', 'qd', 'tau'} - set(arrays)
        if missing:
            raise ValueError(f'{path}: missing arrays {sorted(missing)} (have {sorted(arrays)})')
        names = [str(x) for x in arrays.get('joint_names', joint_names)]
        columns = _columns(path, names, joint_names)
        data = {k: np.asarray(arrays[k], dtype=float) for k in ('q', 'qd', 'tau', 'qdd')
                if k in arrays}
        for key in data:
            if data[key].ndim != 2 or data[key].shape[1] != len(names):
                raise ValueError(f'{path}: {key} must be (N, {len(names)}), got '
                                 f'{data[key].shape}')
            data[key] = data[key][:, columns]
        t = np.asarray(arrays['t'], dtype=float).reshape(-1)
        return _finish(path, t, data['q'], data['qd'], data.get('qdd'), data['tau'],
                       effort_timing)
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise ValueError(f'{path}: no samples (a header row and one row per sample)')
    header = [h.strip() for h in rows[0]]
    try:
        values = np.array([[float(x) for x in row] for row in rows[1:] if row], dtype=float)
    except ValueError as exc:
        raise ValueError(f'{path}: not a number: {exc}') from exc
    if values.shape[1] != len(header):
        raise ValueError(f'{path}: rows have {values.shape[1]} values, the header '
                         f'{len(header)}')
    index = {name: k for k, name in enumerate(header)}
    needed = ['time'] + [f'{field}.{joint}' for field in ('position', 'velocity', 'effort')
                         for joint in joint_names]
    missing = [name for name in needed if name not in index]
    if missing:
        raise ValueError(f'{path}: missing columns {missing}')

    def block(field):
        return values[:, [index[f'{field}.{joint}'] for joint in joint_names]]

    qdd = block('acceleration') if all(f'acceleration.{j}' in index for j in joint_names) \
        else None
    return _finish(path, values[:, index['time']], block('position'), block('velocity'), qdd,
                   block('effort'), effort_timing)


def _columns(path, names, joint_names):
    missing = [j for j in joint_names if j not in names]
    if missing:
        raise ValueError(f'{path}: no columns for joints {missing} (joint_names {names})')
    return [names.index(j) for j in joint_names]


def _finish(path, t, q, qd, qdd, tau, effort_timing) -> Recording:
    """Check the samples; differentiate qd over each interval where no qdd was recorded."""
    if not all(x.shape == q.shape for x in (qd, tau)) or t.shape != (q.shape[0],):
        raise ValueError(f'{path}: t, q, qd and tau must have one row per sample')
    if not all(np.all(np.isfinite(x)) for x in (t, q, qd, tau)):
        raise ValueError(f'{path}: NaN or Inf in the samples')
    if q.shape[0] < 3 or not np.all(np.diff(t) > 0.0):
        raise ValueError(f'{path}: need at least 3 samples at increasing times')
    if qdd is None:
        h = np.diff(t)
        kept = h <= GAP * np.median(h)
        effort = tau[1:] if effort_timing == 'interval' else 0.5 * (tau[1:] + tau[:-1])
        return Recording(0.5 * (t[1:] + t[:-1])[kept], 0.5 * (q[1:] + q[:-1])[kept],
                         0.5 * (qd[1:] + qd[:-1])[kept],
                         (np.diff(qd, axis=0) / h[:, None])[kept], effort[kept])
    return Recording(t, q, qd, qdd, tau)


def save_recording(path: str, joint_names: Sequence[str], t, q, qd, tau, qdd=None):
    """Write samples as :func:`load_recording` reads them (.csv or .npz by the suffix)."""
    arrays = {'t': np.asarray(t, dtype=float), 'q': np.asarray(q, dtype=float),
              'qd': np.asarray(qd, dtype=float), 'tau': np.asarray(tau, dtype=float)}
    if qdd is not None:
        arrays['qdd'] = np.asarray(qdd, dtype=float)
    if str(path).endswith('.npz'):
        np.savez(path, joint_names=np.array(list(joint_names)), **arrays)
        return
    keys = (('q', 'position'), ('qd', 'velocity')) + (
        (('qdd', 'acceleration'),) if qdd is not None else ()) + (('tau', 'effort'),)
    header = ['time'] + [f'{field}.{j}' for key, field in keys for j in joint_names]
    table = np.column_stack([arrays['t']] + [arrays[key] for key, _ in keys])
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(table.tolist())
