#!/usr/bin/env python3
"""`nbody --serve` watched and steered from headless Chromium, driven through its DevTools protocol
(over the standard-library WebSocket client of tools/serve_bench.py), as a person would use the page:
frames arrive and change while the run goes, stop changing while it is paused, a drag orbits the
view, the HUD's N field starts a new run, a still picture is said to be one (frames come on demand),
a wrong token is refused, and viewers that stall, vanish or
send garbage leave the run and the other viewers going. Screenshots of the page go to the folder
named by NBODY_SERVE_SCREENSHOTS (default: a temporary one, printed).

usage: serve_browser.py NBODY CASE      (cases: steer, security, hermite, unwatched, reconnect, duplicate; mpi, with
                                         NBODY_MPIEXEC=mpirun)
exit status: 0 passed, 1 failed, 77 skipped (no chromium).
"""
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from serve_bench import Refused, WebSocket  # noqa: E402

SKIPPED = 77
WIDTH, HEIGHT = 960, 640
HUD_RIGHT = 360  # the HUD panel is at most 330 px wide from x = 8: pixels right of this show only bodies


class Failure(Exception):
    pass


def expect(condition, what):
    if not condition:
        raise Failure(what)


def wait_for(condition, seconds, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise Failure("%s (waited %g s)" % (what, seconds))


class Server:
    """nbody --serve ADDRESS, its stderr in a file (NBODY_TRACE_UI=1: where each HUD widget is)."""

    def __init__(self, nbody, address, args, folder):
        self.log_path = os.path.join(folder, "nbody-stderr.txt")
        self.log_file = open(self.log_path, "w")
        env = dict(os.environ, NBODY_TRACE_UI="1", OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen([nbody, "--serve", address] + args, stdout=subprocess.DEVNULL,
                                     stderr=self.log_file, env=env)
        m = wait_for(lambda: self.alive_or_fail() and re.search(r"serve: open (http://([^/]+):(\d+)/(\?token=(\w+))?)",
                                                                 self.log()), 60, "nbody printed no URL")
        self.url, self.port, self.token = m.group(1), int(m.group(3)), m.group(5)
        # Browsers and clients reach it on the loopback, whatever it bound.
        self.local_url = "http://127.0.0.1:%d/%s" % (self.port, m.group(4) or "")

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def alive_or_fail(self):
        if self.proc.poll() is not None:
            raise Failure("nbody exited with %s\n%s" % (self.proc.returncode, self.log()))
        return True

    def widget(self, label):
        """(x, y) of the middle of LABEL's newest rectangle, in frame pixels, or None."""
        where = None
        for m in re.finditer(r"^ui: (.+) (-?\d+) (-?\d+) (\d+) (\d+)$", self.log(), re.M):
            if m.group(1) == label:
                x, y, w, h = (int(m.group(k)) for k in range(2, 6))
                where = (x + w // 2, y + h // 2)
        return where

    def settled(self, label, seconds, what):
        """LABEL's place once the HUD's layout has held still for a second: the first frames to a browser can move
        every widget (the panel takes its size from the page's), and a click at a place just left misses."""
        seen = {"lines": None, "since": time.monotonic()}

        def still_and_there():
            lines = re.findall(r"^ui: .+$", self.log(), re.M)
            if lines != seen["lines"]:
                seen["lines"], seen["since"] = lines, time.monotonic()
                return None
            return time.monotonic() - seen["since"] >= 1.0 and self.widget(label)
        return wait_for(still_and_there, seconds, what)

    def stop(self, sig, code):
        """Ends it with `sig`: it must exit with `code` within 10 s."""
        self.proc.send_signal(sig)
        start = time.monotonic()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            raise Failure("nbody --serve still running 10 s after signal %d\n%s" % (sig, self.log()))
        expect(self.proc.returncode == code, "signal %d: exit status %d, not %d\n%s" %
               (sig, self.proc.returncode, code, self.log()))
        return time.monotonic() - start

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log_file.close()


class Browser:
    """Headless Chromium with one page, driven through the DevTools protocol."""

    def __init__(self, folder):
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=folder)
        command = ["chromium", "--headless=new", "--remote-debugging-port=0", "--user-data-dir=" + self.profile,
                   "--window-size=%d,%d" % (WIDTH, HEIGHT), "--force-device-scale-factor=1", "--no-first-run",
                   "--disable-gpu", "--no-default-browser-check", "--disable-extensions", "about:blank"]
        if os.geteuid() == 0:
            command.insert(1, "--no-sandbox")  # root in CI containers: Chromium refuses its sandbox there
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        wait_for(lambda: os.path.exists(port_file) and open(port_file).read().count("\n") >= 1, 60,
                 "Chromium did not start")
        port = int(open(port_file).read().split("\n")[0])
        self.port = port
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10))
        page = [t for t in targets if t["type"] == "page"][0]
        self.ws = WebSocket("127.0.0.1", port, page["webSocketDebuggerUrl"].split(str(port), 1)[1], timeout=30)
        self.next_id = 0
        self.call("Page.enable")

    def another_tab(self, before_load=None):
        """A second tab of this browser (the same profile: its pages share localStorage), driven as this one is;
        `before_load`, a script each of its documents runs before its own."""
        target = json.load(urllib.request.urlopen(
            urllib.request.Request("http://127.0.0.1:%d/json/new?about:blank" % self.port, method="PUT"), timeout=10))
        other = Browser.__new__(Browser)
        other.proc, other.profile, other.port, other.next_id = None, self.profile, self.port, 0
        other.target = target["id"]
        other.ws = WebSocket("127.0.0.1", self.port, target["webSocketDebuggerUrl"].split(str(self.port), 1)[1],
                             timeout=30)
        other.call("Page.enable")
        if before_load:
            other.call("Page.addScriptToEvaluateOnNewDocument", source=before_load)
        return other

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            _, payload = self.ws.receive()
            message = json.loads(payload)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise Failure("%s: %s" % (method, message["error"]))
                return message.get("result", {})

    def open(self, url):
        self.call("Page.navigate", url=url)
        time.sleep(0.5)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise Failure("page script failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def state(self):
        return self.evaluate("window.nbody ? JSON.parse(JSON.stringify(window.nbody)) : null") or {}

    def header(self):
        return self.state().get("header") or {}

    def sample(self):
        """Every 61st pixel of the frame right of the HUD, as the page shows it."""
        return self.evaluate(
            "(() => { const c = document.getElementById('view');"
            " const d = c.getContext('2d').getImageData(%d, 0, c.width - %d, c.height).data;"
            " const s = []; for (let i = 0; i < d.length; i += 4 * 61) s.push(d[i] + d[i + 1] + d[i + 2]);"
            " return s; })()" % (HUD_RIGHT, HUD_RIGHT))

    def page_point(self, fx, fy):
        """Frame pixel (fx, fy) -> page coordinates (the canvas shows the frame scaled to fit)."""
        return self.evaluate(
            "(() => { const c = document.getElementById('view'); const r = c.getBoundingClientRect();"
            " const s = Math.min(r.width / c.width, r.height / c.height);"
            " return [r.left + (r.width - c.width * s) / 2 + %f * s, r.top + (r.height - c.height * s) / 2 + %f * s]; })()"
            % (fx, fy))

    def mouse(self, kind, x, y, buttons=0):
        params = {"type": kind, "x": x, "y": y, "button": "left" if kind != "mouseMoved" or buttons else "none",
                  "buttons": buttons, "clickCount": 1 if kind != "mouseMoved" else 0}
        self.call("Input.dispatchMouseEvent", **params)

    def click(self, fx, fy):
        x, y = self.page_point(fx, fy)
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, 1)
        time.sleep(0.15)  # held across frames, as a finger holds it
        self.mouse("mouseReleased", x, y, 0)
        time.sleep(0.4)

    def ctrl(self, key):
        """Ctrl+KEY as typed: Control down, KEY down and up with it held, Control up."""
        control = {"key": "Control", "code": "ControlLeft", "windowsVirtualKeyCode": 17}
        self.call("Input.dispatchKeyEvent", type="rawKeyDown", modifiers=2, **control)
        time.sleep(0.05)
        code = ord(key.upper())
        self.call("Input.dispatchKeyEvent", type="rawKeyDown", key=key, windowsVirtualKeyCode=code, modifiers=2)
        time.sleep(0.05)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, windowsVirtualKeyCode=code, modifiers=2)
        time.sleep(0.05)
        self.call("Input.dispatchKeyEvent", type="keyUp", modifiers=0, **control)
        time.sleep(0.1)

    def ctrl_click(self, fx, fy):
        """A click with Ctrl held (Control pressed first, let go after)."""
        control = {"key": "Control", "code": "ControlLeft", "windowsVirtualKeyCode": 17}
        self.call("Input.dispatchKeyEvent", type="rawKeyDown", modifiers=2, **control)
        x, y = self.page_point(fx, fy)
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y, modifiers=2)
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", buttons=1, clickCount=1,
                  modifiers=2)
        time.sleep(0.15)
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", buttons=0, clickCount=1,
                  modifiers=2)
        time.sleep(0.1)
        self.call("Input.dispatchKeyEvent", type="keyUp", modifiers=0, **control)
        time.sleep(0.3)

    def drag(self, f0, f1, steps=10):
        x0, y0 = self.page_point(*f0)
        x1, y1 = self.page_point(*f1)
        self.mouse("mouseMoved", x0, y0)
        self.mouse("mousePressed", x0, y0, 1)
        for k in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps, 1)
            time.sleep(0.03)
        self.mouse("mouseReleased", x1, y1, 0)
        time.sleep(0.5)

    def type(self, text):
        for ch in text:
            code = {"\n": 13, " ": 32}.get(ch, ord(ch.upper()))
            key = {"\n": "Enter", " ": " "}.get(ch, ch)
            down = {"type": "keyDown", "key": key, "windowsVirtualKeyCode": code}
            if ch != "\n":
                down["text"] = ch
            self.call("Input.dispatchKeyEvent", **down)
            time.sleep(0.05)
            self.call("Input.dispatchKeyEvent", type="keyUp", key=key, windowsVirtualKeyCode=code)
            time.sleep(0.1)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        except OSError:
            pass
        if self.proc is None:  # another tab: closed; the browser is its first tab's to end
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/json/close/%s" % (self.port, self.target), timeout=10)
            except OSError:
                pass
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def differing(a, b, tolerance=6):
    """The fraction of samples that differ by more than `tolerance` grey levels between two pictures of one size."""
    expect(a and b and len(a) == len(b), "samples of different sizes: %d, %d" % (len(a or []), len(b or [])))
    return sum(1 for x, y in zip(a, b) if abs(x - y) > tolerance) / len(a)


PICTURE_SIZE = "(() => { const r = document.getElementById('view').getBoundingClientRect();" \
               " return [Math.round(r.width), Math.round(r.height)]; })()"


def frames_of_page_size(browser):
    """Waits for frames of the picture's size on the page (the browser's viewport less the status bar below it), and
    checks that the status bar is below the picture, covering none of it (the legend, the scale bar)."""
    size = browser.evaluate(PICTURE_SIZE)
    view, bar = browser.evaluate(
        "['view', 'bar'].map((id) => { const r = document.getElementById(id).getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom]; })")
    expect(bar[1] >= view[3] and bar[3] <= browser.evaluate("window.innerHeight"),
           "the status bar %s is not below the picture %s" % (bar, view))

    def arrived():
        h = browser.header()
        return [h.get("width"), h.get("height")] == size and browser.state().get("frames", 0) > 3
    wait_for(arrived, 60, "no frames of the picture's size (%dx%d) arrived" % tuple(size))
    return size


# The page on a loopback bind (no token), steering the run as in the desktop viewer.
def steer(nbody, folder, shots):
    server = Server(nbody, "127.0.0.1:0", ["--backend", "cpu", "--scenario", "plummer", "--bodies", "1000"], folder)
    browser = Browser(folder)
    try:
        expect(server.token is None, "a loopback bind printed a token: " + server.url)
        browser.open(server.local_url)
        frames_of_page_size(browser)
        expect(browser.state().get("steering"), "the first viewer does not steer")
        browser.screenshot(os.path.join(shots, "serve_running.png"))
        # Running: the bodies move, the step count rises.
        a, step_a = browser.sample(), browser.header()["step"]
        time.sleep(1.0)
        b, step_b = browser.sample(), browser.header()["step"]
        expect(step_b > step_a, "the step count did not rise while running: %d, %d" % (step_a, step_b))
        print("running: %.4f of the samples changed in 1 s" % differing(a, b))
        expect(differing(a, b) > 0.01, "frames did not change while running (%.4f differ)" % differing(a, b))
        # Paused (space, typed into the page): the step count and the picture stay.
        browser.type(" ")
        wait_for(lambda: browser.header().get("paused"), 10, "space in the page did not pause the run")
        # The automatic exposure settles on the still picture (time constant 0.5 s: the last of its
        # changes reach a few pixels after 3 to 7 s), then nothing may change: 1.5 s without a change
        # first, then the check.
        previous, still_for = [browser.sample()], [0]

        def still():
            time.sleep(0.5)
            now, before = browser.sample(), previous[0]
            previous[0] = now
            still_for[0] = still_for[0] + 1 if differing(before, now) == 0 else 0
            return still_for[0] >= 3
        wait_for(still, 20, "frames kept changing while paused")
        a, step_a = browser.sample(), browser.header()["step"]
        time.sleep(1.0)
        b, step_b = browser.sample(), browser.header()["step"]
        expect(step_a == step_b, "steps went on while paused: %d, %d" % (step_a, step_b))
        expect(differing(a, b) == 0, "frames changed while paused (%.4f of the samples)" % differing(a, b))
        # The pointer moving over the still picture draws frames (for the HUD's hover) but changes no pixel
        # of the bodies: the automatic exposure, settled, does not move on frames drawn for the HUD alone.
        for k in range(5):
            x, y = browser.page_point(600 + 20 * k, 300)
            browser.mouse("mouseMoved", x, y)
            time.sleep(0.1)
        time.sleep(0.5)
        c = browser.sample()
        moved = differing(b, c, tolerance=0)  # a settled exposure moving by 1% shifts levels by 1 to 3
        expect(moved == 0, "the pointer moving over a paused run changed the picture (%.4f of the samples)" % moved)
        # A drag right of the HUD orbits the camera: the picture changes while the run stays paused.
        browser.drag((700, 320), (820, 360))
        time.sleep(1.0)
        c = browser.sample()
        expect(differing(b, c) > 0.001, "a drag did not change the view (%.4f differ)" % differing(b, c))
        expect(browser.header()["step"] == step_b, "the drag stepped the paused run")
        browser.screenshot(os.path.join(shots, "serve_after_drag.png"))
        # The HUD's N field, as a person uses it: open Simulation, click N, select all (Ctrl+A), type, Enter. Ctrl
        # let go before the typing must reach the server, or it holds Ctrl down and drops every character.
        browser.click(*server.settled("Simulation", 10, "no Simulation header traced"))
        browser.click(*server.settled("N", 10, "opening Simulation showed no N field"))
        browser.ctrl("a")
        browser.type("2048\n")
        wait_for(lambda: browser.header().get("bodies") == 2048, 30,
                 "N = 2048 typed into the HUD after Ctrl+A did not apply: %s\n%s" % (browser.header(), server.log()))
        time.sleep(1.0)
        browser.screenshot(os.path.join(shots, "serve_n_2048.png"))
        # Ctrl+click on a slider types a value into it, as in the window (a plain click would set the value under
        # the pointer): dt becomes exactly what was typed.
        browser.ctrl_click(*server.settled("dt", 10, "Simulation showed no dt slider"))
        browser.type("0.005\n")
        wait_for(lambda: "dt 0.005000\n" in server.log(), 30,
                 "dt 0.005 typed after Ctrl+click on its slider did not apply:\n" + server.log()[-1500:])
        expect(re.findall(r", dt ([0-9.e+-]+)\n", server.log())[-1] == "0.005000",
               "dt moved after the typed 0.005: " + server.log()[-800:])
        # Paused with the HUD hidden (h twice: minimal, then none), nothing in the picture changes: the
        # server draws no new frame, sends the last one again each second, and the page's corner says
        # the picture is still (frames are drawn on demand) instead of counting frames/s.
        browser.click(820, 120)  # on the bodies: the N field lets go of the keyboard
        if not browser.header().get("paused"):
            browser.type(" ")
            wait_for(lambda: browser.header().get("paused"), 10, "space did not pause the new run")
        browser.type("hh")
        wait_for(lambda: browser.state().get("still"), 15, "the page never said the picture was still: %r"
                 % browser.state().get("status"))
        before = browser.state()
        time.sleep(3.5)  # repeats 1 to 1.2 s apart: at least 2
        after = browser.state()
        print("still: %d new frames and %d repeats in 3.5 s; the corner says %r" %
              (after["frames"] - before["frames"], after["repeats"] - before["repeats"], after["status"]))
        expect(after["frames"] == before["frames"],
               "%d new frames while nothing changed" % (after["frames"] - before["frames"]))
        expect(after["repeats"] >= before["repeats"] + 2, "the still picture was not sent again each second")
        expect("still picture" in after["status"] and "frames/s" not in after["status"],
               "the corner does not say the picture is still: %r" % after["status"])
        browser.screenshot(os.path.join(shots, "serve_still.png"))
        latencies = browser.state().get("latencies") or []
        expect(latencies, "the page measured no input-to-frame latency")
        print("input to frame: median %.1f ms over %d events" % (sorted(latencies)[len(latencies) // 2], len(latencies)))
        seconds = server.stop(signal.SIGINT, 130)
        print("Ctrl-C: exit 130 after %.2f s" % seconds)
        said = "closed by the server (1001): the server stopped: interrupted (Ctrl-C)"
        wait_for(lambda: said in (browser.state().get("status") or ""), 10,
                 "the page of a stopped server did not say why: %r" % browser.state().get("status"))
    finally:
        browser.close()
        server.close()


def downloads(browser, server, written, shots):
    """The 'p' key's screenshot and the 's' key's checkpoint are written on the server; the page offers the newest
    as a link, which downloads the very bytes written (with the page's token; without it the server refuses)."""
    for key, extension, kind in (("p", ".png", "image/png"), ("s", ".h5", "application/x-hdf5")):
        count = len(browser.state().get("files") or [])
        browser.type(key)
        files = wait_for(lambda: (browser.state().get("files") or [])[count:], 30,
                         "'%s' in the page offered no file:\n%s" % (key, server.log()[-1500:]))
        name = files[0]
        expect(name.endswith(extension) and os.path.isfile(os.path.join(written, name)),
               "'%s' offered %r, which is not a %s in the server's folder %s" % (key, name, extension, os.listdir(written)))
        got = browser.evaluate(
            "(async () => { const a = document.getElementById('file'); const r = await fetch(a.href);"
            " const b = await r.arrayBuffer(); const h = await crypto.subtle.digest('SHA-256', b);"
            " return [r.status, r.headers.get('content-type'), Array.from(new Uint8Array(h))"
            ".map((x) => x.toString(16).padStart(2, '0')).join(''), a.hidden, a.textContent, a.download]; })()")
        with open(os.path.join(written, name), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        expect(got[:3] == [200, kind, digest],
               "the page's link to %s fetched %s, not the file written (HTTP 200, %s, sha256 %s)" % (name, got, kind, digest))
        expect(not got[3] and name in got[4] and got[5] == name, "the link is not shown as a download of %s: %s" % (name, got))
        try:
            status = urllib.request.urlopen("http://127.0.0.1:%d/files/%s" % (server.port, name), timeout=10).status
        except urllib.error.HTTPError as e:
            status = e.code
        expect(status == 403, "%s without the token: HTTP %d, not 403" % (name, status))
    browser.screenshot(os.path.join(shots, "serve_download_link.png"))
    print("downloads: the page's link fetched the screenshot and the checkpoint written on the server")


# Another interface: the token on every request; hostile viewers refused, the run and the others going.
def security(nbody, folder, shots):
    written = os.path.join(folder, "written")  # where the keys' screenshots and checkpoints go, on the server
    os.makedirs(written)
    server = Server(nbody, "0.0.0.0:0", ["--backend", "cpu", "--scenario", "plummer", "--bodies", "1000",
                                        "--screenshot-dir", written], folder)
    browser = Browser(folder)
    stalled = []
    try:
        expect(server.token and re.fullmatch(r"[0-9a-f]{32}", server.token),
               "a bind to every interface printed no 128-bit token: " + server.url)
        wrong = "0" * 32 if server.token != "0" * 32 else "1" * 32
        base = "http://127.0.0.1:%d/" % server.port
        for query, status in (("", 403), ("?token=" + wrong, 403), ("?token=" + server.token[:-1], 403),
                              ("nothing-here?token=" + server.token, 404), ("?token=" + server.token, 200)):
            try:
                got = urllib.request.urlopen(base + query, timeout=10).status
            except urllib.error.HTTPError as e:
                got = e.code
            expect(got == status, "GET /%s: HTTP %d, not %d" % (query, got, status))
        for path in ("/ws", "/ws?token=" + wrong):
            try:
                WebSocket("127.0.0.1", server.port, path).close()
                raise Failure("a WebSocket with %s was accepted" % path)
            except Refused as e:
                expect(e.status == 403, "WebSocket %s: HTTP %d, not 403" % (path, e.status))
        expect("wrong token" in server.log(), "the refusals were not logged:\n" + server.log())
        # The start's URLs: the machine's name, and its own addresses (which another machine can open where the name
        # does not resolve): each serves the page with the token.
        start, later = server.log().split("serve: open", 1)[1].split("\n", 1)
        if later.startswith("serve: or by this machine's address: "):
            addresses, later = later.split("\n", 1)
            for url in re.findall(r"http://\S+?/\?token=\w+", addresses):
                expect(url.endswith("/?token=" + server.token), "an address URL without the token: " + url)
                expect(urllib.request.urlopen(url, timeout=10).status == 200, "the page is not served at " + url)
        expect(server.token[:16] not in later, "the log shows the token (or half of it) beyond the URLs printed at start")
        browser.open(base + "?token=" + wrong)
        expect("wrong token" in (browser.evaluate("document.body.innerText") or ""), "the page with a wrong token loaded")
        browser.screenshot(os.path.join(shots, "serve_wrong_token.png"))
        browser.open(server.local_url)
        frames_of_page_size(browser)
        downloads(browser, server, written, shots)
        # Viewers that stop reading (a small receive buffer, never read) and one that vanishes mid-stream.
        path = "/ws?token=" + server.token
        for _ in range(2):
            stalled.append(WebSocket("127.0.0.1", server.port, path, receive_buffer=4096))
        gone = WebSocket("127.0.0.1", server.port, path)
        gone.frame()
        gone.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        gone.close()  # a reset, not a goodbye
        # Garbage from a viewer: refused and logged, the viewer stays; an oversized message closes it.
        rude = WebSocket("127.0.0.1", server.port, path)
        for bad in ("x 1 2", "p 1 nan 3", "p 1 1e9 3", "s 2 100000 100000", "k 3 1 F13 0", "d 4 7 1 1", "", "p"):
            rude.send(bad)
        rude.send(b"\x00\x01binary", opcode=2)
        rude.frame()  # still served
        rude.send("p " + "9" * 600)
        try:
            for _ in range(200):
                rude.frame()
            raise Failure("an oversized message did not close the viewer that sent it")
        except (ConnectionError, OSError):
            pass
        wait_for(lambda: "refused a message over" in server.log(), 10, "the oversized message was not logged")
        log = server.log()
        for what in ("refused unknown message", "refused the position", "refused the frame size", "refused unknown key",
                     "refused the button", "refused a binary message", "refused a message over"):
            expect(what in log, "not logged: %r\n%s" % (what, log))
        # The run and the page go on meanwhile.
        f0, s0 = browser.state()["frames"], browser.header()["step"]
        time.sleep(4.0)
        f1, s1 = browser.state()["frames"], browser.header()["step"]
        expect(f1 - f0 >= 8, "the page got %d frames in 4 s beside stalled viewers" % (f1 - f0))
        expect(s1 > s0, "the run stopped beside stalled viewers: step %d, then %d" % (s0, s1))
        server.alive_or_fail()
        # Another viewer takes control; the page then watches (and shows its 'take control' button).
        other = WebSocket("127.0.0.1", server.port, path)
        other.send("t 1")
        wait_for(lambda: not browser.state().get("steering"), 10, "taking control left the page steering")
        browser.screenshot(os.path.join(shots, "serve_watching.png"))
        # In a narrow window the status line gives way to the button, which stays whole in the window.
        browser.call("Emulation.setDeviceMetricsOverride", width=360, height=480, deviceScaleFactor=1, mobile=False)
        time.sleep(0.5)
        button = browser.evaluate("(() => { const r = document.getElementById('take').getBoundingClientRect();"
                                  " return [r.left, r.right, r.width, window.innerWidth]; })()")
        expect(button[2] > 40 and button[0] >= 0 and button[1] <= button[3],
               "the 'take control' button is not whole in a 360 px window: %s" % button)
        browser.screenshot(os.path.join(shots, "serve_watching_narrow.png"))
        browser.call("Emulation.clearDeviceMetricsOverride")
        other.close()
        print("page: %d frames in 4 s beside 2 stalled viewers" % (f1 - f0))
        # A full server says so on the page (its close reason), not a bare code that blames the token.
        for s in stalled:
            s.close()
        stalled.clear()
        browser.open("about:blank")
        time.sleep(1.0)  # the page's viewer gone
        stalled.extend(WebSocket("127.0.0.1", server.port, path) for _ in range(16))
        time.sleep(0.5)  # the server counts a viewer once its side of the handshake is done, after the client's
        browser.open(server.local_url)
        wait_for(lambda: "16 viewers already" in (browser.state().get("status") or ""), 10,
                 "a full server's page did not say it was full: %r" % browser.state().get("status"))
        browser.screenshot(os.path.join(shots, "serve_full.png"))
        for s in stalled:
            s.close()
        stalled.clear()
        time.sleep(1.0)
        browser.open(server.local_url)
        frames_of_page_size(browser)
        seconds = server.stop(signal.SIGTERM, 143)
        print("SIGTERM: exit 143 after %.2f s" % seconds)
        # The page then says the server stopped, and why, in the server's own words (its WebSocket close, 1001);
        # not a bare 1006 that leaves the page to guess at an unreachable server.
        said = "closed by the server (1001): the server stopped: terminated (SIGTERM)"
        wait_for(lambda: said in (browser.state().get("status") or ""), 10,
                 "the page of a stopped server did not say why: %r" % browser.state().get("status"))
        # Its picture is dimmed, no longer live, and the download of the file written before (which this reloaded page
        # was offered) is no longer there: the server that served it stopped.
        opacity = browser.evaluate("getComputedStyle(document.getElementById('view')).opacity")
        expect(float(opacity) < 1, "the stopped server's last picture is shown as if live (opacity %s)" % opacity)
        expect(browser.evaluate("document.getElementById('file').hidden") is True,
               "the page still offers a download from the stopped server")
    finally:
        for s in stalled:
            s.close()
        browser.close()
        server.close()


# Under MPI (mpirun given as NBODY_MPIEXEC): rank 0 serves every rank's bodies, the others follow
# its steps and its pause; no browser needed, the standard-library client is the viewer.
def mpi(nbody, folder, shots):
    mpirun = os.environ.get("NBODY_MPIEXEC")
    if not mpirun:
        print("skipped: NBODY_MPIEXEC names no mpirun")
        sys.exit(SKIPPED)
    log_path = os.path.join(folder, "mpirun-stderr.txt")
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen([mpirun, "-np", "2", "--oversubscribe", nbody, "--serve", "127.0.0.1:0", "--backend", "cpu",
                                 "--bodies", "2000", "--threads", "1"], stdout=subprocess.DEVNULL, stderr=log_file)
    log = lambda: open(log_path, errors="replace").read()
    try:
        m = wait_for(lambda: re.search(r"serve: open http://127.0.0.1:(\d+)/", log()), 60, "no URL from rank 0")
        expect(log().count("serve: open") == 1, "more than one rank serves:\n" + log())
        viewer = WebSocket("127.0.0.1", int(m.group(1)), "/ws")
        viewer.send("s 1 320 200")
        first = viewer.frame()
        end = time.monotonic() + 3
        last = first
        while time.monotonic() < end:
            last = viewer.frame()
        expect(last["bodies"] == 2000 and last["step"] > first["step"], "2 ranks: %s, then %s" % (first, last))
        viewer.send("c 2 32")  # space: pause, which the other rank follows
        def newest_after(seconds):  # read (and acknowledge) frames for `seconds`: the newest then
            end = time.monotonic() + seconds
            header = viewer.frame()
            while time.monotonic() < end:
                header = viewer.frame()
            return header
        wait_for(lambda: viewer.frame()["paused"], 10, "space did not pause")
        paused = newest_after(0.5)  # the batch of steps under way when the pause came ends first
        later = newest_after(1.0)
        expect(later["step"] == paused["step"], "steps went on while paused: %d, %d" % (paused["step"], later["step"]))
        viewer.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            raise Failure("mpirun still running 30 s after SIGTERM\n" + log())
        expect(proc.returncode != 0, "a terminated job reports success")
        print("2 ranks: served %d steps, paused at step %d" % (last["step"], paused["step"]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def hermite(nbody, folder, shots):
    """hermite4 chooses each body's step: the panel's step slider is the longest, "dt max", and a value typed into it
    (Ctrl+click) is applied as --dt-max, not refused as a --dt hermite4 does not take. Then the page on a HiDPI
    screen: frames of its CSS size."""
    server = Server(nbody, "127.0.0.1:0", ["--backend", "cpu", "--integrator", "hermite4", "--bodies", "512"], folder)
    browser = Browser(folder)
    try:
        browser.open(server.local_url)
        frames_of_page_size(browser)
        browser.click(*server.settled("Simulation", 10, "no Simulation header traced"))
        slider = server.settled("dt max", 10, "hermite4's Simulation showed no 'dt max' slider:\n" + server.log()[-1500:])
        expect(server.widget("dt") is None, "hermite4's Simulation shows a 'dt' slider, which it cannot take")
        browser.ctrl_click(*slider)
        browser.type("0.03125\n")
        wait_for(lambda: "dt max 0.031250\n" in server.log(), 30,
                 "dt max 0.03125 typed into its slider did not apply:\n" + server.log()[-1500:])
        expect("could not apply" not in server.log(), "the change was refused:\n" + server.log()[-1500:])
        browser.screenshot(os.path.join(shots, "serve_hermite_dt_max.png"))
        # A HiDPI screen (two device pixels a CSS pixel): frames of the page's CSS size, so that the HUD's text is
        # its usual size on the screen, not half of it.
        browser.call("Emulation.setDeviceMetricsOverride", width=800, height=560, deviceScaleFactor=2, mobile=False)
        wait_for(lambda: [browser.header().get("width"), browser.header().get("height")] ==
                 browser.evaluate(PICTURE_SIZE), 30,
                 "frames not of the page's CSS size at 2 device pixels a CSS pixel: %s" % browser.header())
        browser.screenshot(os.path.join(shots, "serve_hermite_hidpi.png"))
        server.stop(signal.SIGINT, 130)
    finally:
        browser.close()
        server.close()


def unwatched(nbody, folder, shots):
    """With no browser connected no frame is drawn (each would be read back and encoded for nobody), and the run goes
    on: a browser that connects later sees it at a later step, and frames at once."""
    server = Server(nbody, "127.0.0.1:0", ["--backend", "cpu", "--bodies", "256"], folder)
    browser = Browser(folder)
    try:
        time.sleep(3.0)  # unwatched: the full HUD's running figures drew about 60 frames a second
        browser.open(server.local_url)
        frames_of_page_size(browser)
        step = browser.header()["step"]
        expect(step > 30, "the run did not go on unwatched: step %d after 3 s" % step)
        browser.type(" ")
        wait_for(lambda: browser.header().get("paused"), 10, "space in the page did not pause the run")
        # Paused and still, no frame is drawn: every frame drawn while watched was sent (its sequence number).
        seen = {"sequence": None, "since": time.monotonic()}

        def still():
            now = browser.header().get("sequence")
            if now != seen["sequence"]:
                seen["sequence"], seen["since"] = now, time.monotonic()
            return time.monotonic() - seen["since"] >= 2.0
        wait_for(still, 30, "frames kept coming while paused")
        sent = seen["sequence"]
        server.stop(signal.SIGINT, 130)
        m = re.search(r"^viewer: N = \d+, (\d+) frames", server.log(), re.M)
        expect(m is not None, "no frame count at the end:\n" + server.log()[-1500:])
        drawn = int(m.group(1))
        print("unwatched: %d frames drawn, %d sent; step %d when the browser came" % (drawn, sent, step))
        expect(drawn - sent <= 3, "%d frames drawn with no browser connected (%d drawn, %d sent)" %
               (drawn - sent, drawn, sent))
    finally:
        browser.close()
        server.close()


def reconnect(nbody, folder, shots):
    """Keys typed with the focus off the picture (a click on the status bar) reach the run; a page whose server stopped
    says it will reconnect, and does when the server is started again at its address (a lecture's page comes back by
    itself: it stayed dimmed for good before)."""
    server = Server(nbody, "127.0.0.1:0", ["--backend", "cpu", "--bodies", "256"], folder)
    browser = Browser(folder)
    again = None
    try:
        browser.open(server.local_url)
        frames_of_page_size(browser)
        browser.evaluate("document.activeElement.blur(), true")  # the focus on the page, off the picture
        browser.type(" ")
        wait_for(lambda: browser.header().get("paused"), 10, "space typed with the focus off the picture did nothing")
        # The browser's own keys stay the browser's: F5 (reload) was taken for the character 'F', its default prevented.
        prevented = browser.evaluate("(() => { const e = new KeyboardEvent('keydown', {key: 'F5', cancelable: true});"
                                     " window.dispatchEvent(e); return e.defaultPrevented; })()")
        expect(prevented is False, "the page kept F5 from the browser")
        port = server.port
        server.stop(signal.SIGTERM, 143)
        said = "the page reconnects when the server is back"
        wait_for(lambda: said in (browser.state().get("status") or ""), 10,
                 "the page of a stopped server did not say it reconnects: %r" % browser.state().get("status"))
        later = os.path.join(folder, "again")
        os.makedirs(later)
        again = Server(nbody, "127.0.0.1:%d" % port, ["--backend", "cpu", "--bodies", "256"], later)
        wait_for(lambda: browser.state().get("connected") and browser.state().get("frames", 0) > 0, 30,
                 "the page did not reconnect to the server started again: %r" % browser.state().get("status"))
        browser.screenshot(os.path.join(shots, "serve_reconnected.png"))
        again.stop(signal.SIGINT, 130)
    finally:
        browser.close()
        server.close()
        if again:
            again.close()


def duplicate(nbody, folder, shots):
    """A duplicated tab (the browser copies its sessionStorage, the tab id with it) is a tab of its own: a watcher,
    the steering tab steering on. It used to share the id, and the server gave it control at once, as it does to the
    steering tab's own reload, which still steers (the control)."""
    server = Server(nbody, "127.0.0.1:0", ["--backend", "cpu", "--bodies", "256"], folder)
    browser = Browser(folder)
    copy = None
    try:
        browser.open(server.local_url)
        frames_of_page_size(browser)
        wait_for(lambda: browser.state().get("steering"), 10, "the first page does not steer")
        tab_of = lambda page: page.evaluate("sessionStorage.getItem('nbody-tab')")  # noqa: E731
        first = tab_of(browser)
        expect(first, "the page has no tab id")
        # The steering tab remembers it steers (a server started again gives it control back).
        steered = lambda page: page.evaluate("sessionStorage.getItem('nbody-steered')")  # noqa: E731
        expect(steered(browser) == "1", "the steering tab does not remember it steers: %r" % steered(browser))
        # The copy's document starts with the first tab's sessionStorage, as a duplicated tab's does.
        copy = browser.another_tab("sessionStorage.setItem('nbody-tab', %s); sessionStorage.setItem('nbody-steered', '1')"
                                   % json.dumps(first))
        copy.open(server.local_url)
        wait_for(lambda: copy.state().get("connected") and copy.state().get("frames", 0) > 0, 20,
                 "the duplicated tab shows no frames: %r" % copy.state())
        time.sleep(1.0)
        expect(tab_of(copy) not in (None, first), "the duplicated tab kept the id %r" % first)
        expect(not copy.state().get("steering"), "the duplicated tab took control")
        expect(steered(copy) is None, "the duplicated tab claims to have steered: %r" % steered(copy))
        expect(browser.state().get("steering"), "the first tab lost control to its duplicate")
        copy.screenshot(os.path.join(shots, "serve_duplicate_tab.png"))
        # The Keys the HUD lists are those a page has: not F11 (the browser's) nor quit (a page ends nothing).
        browser.click(*server.settled("Keys", 10, "no Keys header traced"))
        server.settled("key space", 10, "opening Keys listed no space key")
        expect(server.widget("key F11") is None and server.widget("key Esc or q") is None,
               "the served HUD lists F11 or quit among its keys")
        copy.close()
        copy = None
        # The control: the first tab reloaded keeps its id and steers (the state read is the new page's: the old
        # one's marker is gone).
        browser.evaluate("window.oldPage = true")
        browser.call("Page.reload")
        wait_for(lambda: browser.evaluate("window.oldPage === undefined && !!window.nbody"), 20, "the tab did not reload")
        wait_for(lambda: browser.state().get("connected") and browser.state().get("frames", 0) > 0, 20,
                 "the reloaded tab shows no frames")
        expect(tab_of(browser) == first, "the reloaded tab took another id: %r, was %r" % (tab_of(browser), first))
        wait_for(lambda: browser.state().get("steering"), 10, "the reloaded steering tab does not steer")
        server.stop(signal.SIGINT, 130)
    finally:
        if copy:
            copy.close()
        browser.close()
        server.close()


CASES = {"steer": steer, "security": security, "mpi": mpi, "hermite": hermite, "unwatched": unwatched,
         "reconnect": reconnect, "duplicate": duplicate}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[2] != "mpi" and not shutil.which("chromium"):
        print("skipped: needs chromium (scripts/install-deps.sh installs it)")
        return SKIPPED
    folder = tempfile.mkdtemp(prefix="nbody-serve-")
    shots = os.environ.get("NBODY_SERVE_SCREENSHOTS") or folder
    os.makedirs(shots, exist_ok=True)
    try:
        CASES[sys.argv[2]](os.path.abspath(sys.argv[1]), folder, shots)
    except Failure as e:
        print("FAILED: " + str(e), file=sys.stderr)
        return 1
    print("screenshots in " + shots)
    if not os.environ.get("NBODY_SERVE_SCREENSHOTS"):
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
