"""
Live plots of the browser view: positions, efforts, external torques, tracking error.

:class:`Trace` keeps the last ``window`` seconds of a set of named signals, at most
``rate`` samples a second (joint states come at 100 Hz or more; a plot needs
fewer).  :class:`Plots` shows them in uPlot charts (viser's ``add_uplot``), updated
once a second while a browser is connected, each chart only once its signal has
arrived: joint positions and efforts (``joint_states``), the external torques that
dynamics_node estimates (``~/external_torques``, values in ``effort``) and the
tracking error of the trajectory controller (its ``~/status``, while a trajectory
runs).  ``Save PNG`` draws the same data with matplotlib (Agg, in the browser's
callback thread), writes it to ``plot_directory`` and sends it to the browser that
asked as a download.
"""

from collections import deque
import io
import os
import time
from typing import Dict, List, Optional

import numpy as np


class Trace:
    """The last ``window`` seconds of named signals, at most ``rate`` samples a second."""

    def __init__(self, window: float = 10.0, rate: float = 20.0):
        """Keep ``window`` seconds, one sample per 1/``rate`` s at most."""
        self.window = window
        self.period = 1.0 / rate
        self.names: List[str] = []
        self.samples = deque()           # (t, values)
        self.version = 0

    def due(self, t: float) -> bool:
        """Return True if a sample at ``t`` would be kept."""
        return not self.samples or t - self.samples[-1][0] >= self.period

    def add(self, t: float, names, values) -> bool:
        """Add a sample at wall time ``t``; return False if too soon after the last."""
        if not self.due(t):
            return False
        names = list(names)
        if names != self.names:          # another robot, or other joints: start over
            self.names = names
            self.samples.clear()
        self.samples.append((t, np.asarray(values, dtype=float)))
        while self.samples and t - self.samples[0][0] > self.window:
            self.samples.popleft()
        self.version += 1
        return True

    def arrays(self, now: Optional[float] = None):
        """Return (t - now [s], values (samples x signals)), or None if empty."""
        if not self.samples:
            return None
        now = self.samples[-1][0] if now is None else now
        t = np.array([s[0] for s in self.samples]) - now
        return t, np.vstack([s[1] for s in self.samples])


#: uPlot's series colours, one per signal (cycled).
COLORS = ('#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
          '#7f7f7f', '#bcbd22', '#17becf')

#: The charts: key, title, unit.
CHARTS = (('position', 'Joint positions', 'rad, m'),
          ('effort', 'Efforts', 'N m, N'),
          ('external', 'External torques', 'N m, N'),
          ('error', 'Tracking error', 'rad, m'))


class Plots:
    """The charts on the viewer's GUI; :meth:`update` runs in the executor."""

    def __init__(self, server, window: float, directory: str, logger):
        """Add the Plots folder (charts added as their data arrive)."""
        self.server = server
        self.directory = directory
        self.logger = logger
        self.traces: Dict[str, Trace] = {key: Trace(window) for key, _, _ in CHARTS}
        self.charts: Dict[str, object] = {}
        self.shown: Dict[str, int] = {}
        self.folder = server.gui.add_folder('Plots', order=4.0)
        with self.folder:
            self.hint = server.gui.add_markdown('waiting for joint states')
            self.save = server.gui.add_button('Save PNG', visible=False,
                                              hint=f'write the plots to {directory}')
            self.saved = server.gui.add_markdown('')
        self.save.on_click(self._on_save)
        self.saves = 0

    def add(self, key: str, names, values, now: Optional[float] = None):
        """Add a sample of chart ``key``."""
        self.traces[key].add(time.monotonic() if now is None else now, names, values)

    def update(self):
        """Send the charts whose data changed (once a second, with a browser watching)."""
        now = time.monotonic()
        for key, title, unit in CHARTS:
            trace = self.traces[key]
            if not trace.samples or self.shown.get(key) == trace.version:
                continue
            t, y = trace.arrays(now)
            data = (t,) + tuple(y[:, j] for j in range(y.shape[1]))
            chart = self.charts.get(key)
            if chart is None or len(chart.data) != len(data):
                if chart is not None:
                    chart.remove()
                chart = self.charts[key] = self._chart(key, title, unit, trace.names, data)
            else:
                chart.data = data
            self.shown[key] = trace.version
        if self.charts and not self.save.visible:
            self.hint.visible = False
            self.save.visible = True

    def _chart(self, key, title, unit, names, data):
        from viser import uplot
        series = (uplot.Series(label='t [s]'),) + tuple(
            uplot.Series(label=name, stroke=COLORS[j % len(COLORS)], width=1.5)
            for j, name in enumerate(names))
        order = 1.0 + [k for k, _, _ in CHARTS].index(key)
        with self.folder:
            return self.server.gui.add_uplot(
                data, series, title=f'{title} [{unit}]', aspect=1.6, order=order,
                scales={'x': uplot.Scale(time=False)},
                legend=uplot.Legend(show=len(names) <= 10))

    # --- PNG -------------------------------------------------------------------------
    def figure_png(self) -> bytes:
        """Return the charts drawn by matplotlib as PNG bytes."""
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib.figure import Figure
        keys = [(key, title, unit) for key, title, unit in CHARTS
                if self.traces[key].samples]
        figure = Figure(figsize=(8.0, 2.4 * max(len(keys), 1)), dpi=100)
        now = time.monotonic()
        for k, (key, title, unit) in enumerate(keys):
            axes = figure.add_subplot(len(keys), 1, k + 1)
            trace = self.traces[key]
            t, y = trace.arrays(now)
            for j, name in enumerate(trace.names):
                axes.plot(t, y[:, j], label=name, color=COLORS[j % len(COLORS)])
            axes.set_title(f'{title} [{unit}]', fontsize=9)
            axes.grid(True, alpha=0.3)
            axes.legend(fontsize=6, loc='upper left', ncol=4)
        if keys:
            figure.axes[-1].set_xlabel('time [s] (0: now)')
        figure.tight_layout()
        stream = io.BytesIO()
        figure.savefig(stream, format='png')
        return stream.getvalue()

    def save_png(self) -> str:
        """Write the plots to a new PNG in ``directory``; return its path."""
        data = self.figure_png()
        os.makedirs(self.directory, exist_ok=True)
        stamp = time.strftime('%Y%m%d-%H%M%S')
        path = os.path.join(self.directory, f'arm_viewer-{stamp}-{self.saves + 1}.png')
        with open(path, 'wb') as stream:
            stream.write(data)
        self.saves += 1
        return path, data

    def _on_save(self, event):
        try:
            path, data = self.save_png()
        except (OSError, ValueError) as exc:
            self.saved.content = f'not saved: {exc}'
            self.logger.error(f'plot not saved: {exc}')
            return
        self.saved.content = f'saved `{path}`'
        self.logger.info(f'plots saved to {path}')
        if event.client is not None:
            event.client.send_file_download(os.path.basename(path), data)
