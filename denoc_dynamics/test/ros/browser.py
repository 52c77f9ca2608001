"""
The browser side of the viewer's tests: chromium through playwright, and the page.

Without chromium or playwright a browser test skips, saying why, except under
CI=true, where it fails.  Used by test_arm_viewer.py and test_viewer_panel.py.
"""

import os
import re
import shutil

import numpy as np
import pytest
from ros_helpers import wait_for

try:
    import viser  # noqa: F401
    VISER_MISSING = None
except ImportError as exc:
    VISER_MISSING = f'arm_viewer needs viser (make venv installs it): {exc}'

#: Skips a test module's tests without viser (a module-level skip would end the
#: collection).
REQUIRES_VISER = pytest.mark.skipif(VISER_MISSING is not None, reason=str(VISER_MISSING))

URL = re.compile(r'open (http://localhost:\d+) in a browser')

#: How long the page may take to load and draw on a loaded machine [s].
PAGE_TIMEOUT = 90.0


def unavailable(reason):
    """Skip the test for ``reason``; fail it under CI=true, where the browser must run."""
    if os.environ.get('CI', '').lower() == 'true':
        pytest.fail(f'the browser test must run in CI: {reason}')
    pytest.skip(reason)


@pytest.fixture(scope='module')
def browser():
    """Yield chromium (module scope), launched for the viewer's WebGL on the CPU."""
    path = shutil.which('chromium') or shutil.which('chromium-browser')
    if path is None:
        unavailable("no chromium: `make test` installs Debian's chromium when it runs as "
                    'root; otherwise: sudo apt-get install chromium')
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        unavailable(f'playwright is not installed ({exc}): run make venv')
    # WebGL on the CPU (no GPU here); root needs --no-sandbox
    args = ['--use-angle=swiftshader', '--enable-unsafe-swiftshader']
    if os.geteuid() == 0:
        args.append('--no-sandbox')
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=args,
                                              timeout=PAGE_TIMEOUT * 1000)
        yield chromium
        chromium.close()


class Page:
    """A page of the viewer in chromium, collecting console errors."""

    def __init__(self, browser, url, shots):
        """Open ``url``; screenshots are also saved under ``shots`` (a folder)."""
        self.errors = []
        self.shots = shots
        self.count = 0
        self.page = browser.new_page(viewport={'width': 800, 'height': 600})
        self.page.set_default_timeout(PAGE_TIMEOUT * 1000)
        self.page.on('console', self._on_console)
        self.page.on('pageerror', lambda exc: self.errors.append(f'page error: {exc}'))
        self.page.goto(url)
        self.page.wait_for_selector('canvas')

    def _on_console(self, message):
        if message.type == 'error':
            self.errors.append(f'console error: {message.text}')

    def wait_for_text(self, text):
        """Wait until the page shows ``text`` (e.g. in the robot's info panel)."""
        self.page.wait_for_function('text => document.body.innerText.includes(text)',
                                    arg=text)

    def screenshot(self, label):
        """
        Return a screenshot as an (h, w, 3) int array, and save it as label.png.

        The control panel's live plots are masked (one magenta box each): their time
        axis moves with the clock, the arm still or not, and their coloured lines are
        not the robot.
        """
        from PIL import Image
        self.count += 1
        path = os.path.join(self.shots, f'{self.count:02d}-{label}.png')
        self.page.screenshot(path=path, mask=[self.page.locator('.uplot-container, .uplot')],
                             mask_color='#ff00ff')
        return np.asarray(Image.open(path).convert('RGB'), dtype=int)

    def close(self):
        """Close the page."""
        self.page.close()


def viewer_url(proc):
    """Wait for the URL the process logs and return it."""
    assert wait_for(lambda: URL.search(proc.output()) or not proc.alive(),
                    timeout=PAGE_TIMEOUT), proc.describe()
    match = URL.search(proc.output())
    assert match, proc.describe()
    return match.group(1)
