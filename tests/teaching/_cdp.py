"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``: no websocket,
no new dependency. Chromium reads commands from its fd 3 and writes replies and events to
its fd 4, each one JSON message ended by a NUL byte.

``Browser`` launches a headless Chromium in a fresh profile, opens one page and attaches
to it (flat session mode: page commands carry the ``sessionId``). Every wait has a
deadline; ``close()`` (also on ``with`` exit) always ends the process.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio"]


def find_chromium():
    """The Chromium executable: $DUALAD_CHROMIUM, else chromium / chromium-browser /
    google-chrome on PATH; None when there is none."""
    env = os.environ.get("DUALAD_CHROMIUM")
    if env:
        return env if os.path.exists(env) else shutil.which(env)
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _above_9(fd):
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class CDPError(RuntimeError):
    """A protocol error reply, a JavaScript exception, a timeout or a dead browser."""


class Browser:
    def __init__(self, executable, width=1280, height=860, timeout=30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="dualad-chromium-")
        self._log = tempfile.TemporaryFile()   # not a pipe: a full pipe would stall Chromium
        cmd_r, self._cmd_w = os.pipe()      # we write commands, Chromium reads on its fd 3
        self._out_r, out_w = os.pipe()      # Chromium writes on its fd 4, we read
        # The child's ends, moved above 9 so that placing them at 3 and 4 cannot clobber one.
        cmd_r, out_w = (_above_9(fd) for fd in (cmd_r, out_w))
        args = [executable, *FLAGS, f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"]
        # The pipe ends must be fds 3 and 4 in the child: bash moves them there and closes
        # the originals, so no preexec_fn (not fork-safe) is needed. (Not dash: it only
        # redirects fds 0-9.)
        script = f'exec "$0" "$@" 3<&{cmd_r} 4>&{out_w} {cmd_r}<&- {out_w}>&-'
        bash = shutil.which("bash") or "/bin/bash"
        self.proc = subprocess.Popen([bash, "-c", script, *args], pass_fds=(cmd_r, out_w),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self._log)
        os.close(cmd_r)
        os.close(out_w)
        self._buf, self._next, self._events = b"", 0, []
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.send("Target.attachToTarget", targetId=target,
                                     flatten=True)["sessionId"]
            self.page("Page.enable")
            self.page("Runtime.enable")
            self.page("Emulation.setDeviceMetricsOverride", width=width, height=height,
                      deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    # --- transport ------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError(f"no reply from Chromium within {self.timeout:.0f} s")
            ready, _, _ = select.select([self._out_r], [], [], left)
            if ready:
                chunk = os.read(self._out_r, 1 << 20)
                if not chunk:
                    self._log.seek(0)
                    err = self._log.read().decode(errors="replace")[-2000:]
                    raise CDPError(f"Chromium closed the pipe (exit {self.proc.poll()}): {err}")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, session=None, **params):
        """Send one command and wait for its reply (events meanwhile are kept)."""
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def page(self, method, **params):
        return self.send(method, session=self.session, **params)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for k, ev in enumerate(self._events):
                if ev["method"] == method:
                    return self._events.pop(k)
            self._events.append(self._read_message(deadline))

    # --- page helpers -----------------------------------------------------------
    def navigate(self, url):
        self._events.clear()
        reply = self.page("Page.navigate", url=url)
        if reply.get("errorText"):
            raise CDPError(f"navigating to {url}: {reply['errorText']}")
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression):
        """The JSON value of a JavaScript expression in the page."""
        reply = self.page("Runtime.evaluate", expression=expression, returnByValue=True,
                          awaitPromise=True)
        if "exceptionDetails" in reply:
            raise CDPError(f"{expression[:80]}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def page_errors(self):
        """The uncaught exceptions and console errors the page reported so far."""
        self.page("Runtime.evaluate", expression="0")   # flush pending events
        return [e["params"] for e in self._events
                if e["method"] == "Runtime.exceptionThrown"
                or (e["method"] == "Runtime.consoleAPICalled"
                    and e["params"].get("type") in ("error", "assert"))]

    def click(self, x, y):
        """A real mouse click (press and release) at page coordinates (x, y)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def key(self, key, code, keycode):
        """A real key press (down and up), e.g. ``key("ArrowRight", "ArrowRight", 39)``."""
        for kind in ("rawKeyDown", "keyUp"):
            self.page("Input.dispatchKeyEvent", type=kind, key=key, code=code,
                      windowsVirtualKeyCode=keycode, nativeVirtualKeyCode=keycode)

    def screenshot(self):
        """The viewport as PNG bytes."""
        return base64.b64decode(self.page("Page.captureScreenshot", format="png")["data"])

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close")
                except (CDPError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
            for fd in (self._cmd_w, self._out_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._log.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
