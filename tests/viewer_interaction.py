#!/usr/bin/env python3
"""The interactive viewer driven as a person drives it: a window in an Xvfb of its own, keys and
clicks from xdotool, widgets found where the viewer says they are (NBODY_TRACE_UI=1 prints
"ui: LABEL X Y WIDTH HEIGHT" whenever a widget moves).

usage: viewer_interaction.py NBODY CASE
exit status: 0 passed, 1 failed, 77 skipped (no Xvfb or xdotool).
"""
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIPPED = 77
WIDTH, HEIGHT = 960, 640


class Failure(Exception):
    pass


def expect(condition, what):
    if not condition:
        raise Failure(what)


class Viewer:
    """One nbody viewer in one Xvfb; the log is its stderr."""

    def __init__(self, nbody, args, folder, hud_seconds=60, started=True, size=(WIDTH, HEIGHT)):
        self.folder = folder
        self.size = size  # the window's; the screen is WIDTH x HEIGHT
        read_end, write_end = os.pipe()
        self.xvfb = subprocess.Popen(
            # -noreset: the server stays up when the viewer, its only client, quits on a key press,
            # so the key's release still reaches it.
            ["Xvfb", "-displayfd", str(write_end), "-screen", "0", f"{WIDTH}x{HEIGHT}x24", "-nolisten", "tcp", "-noreset"],
            pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_end)
        self.proc = None
        self.log_file = None
        try:
            with os.fdopen(read_end) as f:
                number = f.readline().strip()
            expect(number, "Xvfb did not start")
            self.start(nbody, args, number, hud_seconds, started)
        except BaseException:
            # The caller's try starts once this returns: what was started here is closed here.
            self.close()
            raise

    def start(self, nbody, args, number, hud_seconds, started):
        self.env = dict(os.environ, DISPLAY=":" + number, NBODY_TRACE_UI="1")
        self.env.pop("WAYLAND_DISPLAY", None)
        self.log_path = os.path.join(self.folder, "stderr.txt")
        self.log_file = open(self.log_path, "w")
        self.command = [nbody, "--viewer", "--width", str(self.size[0]), "--height", str(self.size[1])] + args
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.command, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log_file)
        if hud_seconds is None:  # a recording: its first frame comes after the start-up; the window at once
            self.wait_for(self.window_ids, 30, "no window named nbody")
            return
        self.wait_for(lambda: self.widget("Keys"), hud_seconds, "the HUD never appeared")
        self.first_frame_seconds = time.monotonic() - self.started
        if started:
            # The HUD shows from the first frame, while the simulation starts; its lines (and the widgets
            # below them) settle once it has started.
            self.wait_started(60)
            time.sleep(0.5)
        # The pointer enters the window once, as a person's would, away from the HUD.
        self.xdotool("mousemove", str(self.size[0] - 20), str(self.size[1] - 20))
        time.sleep(0.3)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def widget(self, label):
        """(x, y) of the middle of LABEL's newest rectangle, or None."""
        where = None
        for m in re.finditer(r"^ui: (.+) (-?\d+) (-?\d+) (\d+) (\d+)$", self.log(), re.M):
            if m.group(1) == label:
                x, y, w, h = (int(m.group(k)) for k in range(2, 6))
                where = (x + w // 2, y + h // 2)
        return where

    def rect(self, label):
        """(x, y, w, h) of LABEL's newest rectangle, or None."""
        found = None
        for m in re.finditer(r"^ui: (.+) (-?\d+) (-?\d+) (\d+) (\d+)$", self.log(), re.M):
            if m.group(1) == label:
                found = tuple(int(m.group(k)) for k in range(2, 6))
        return found

    def value(self, label):
        """The last value the HUD traced for LABEL ("ui-value: LABEL 0|1"), or None."""
        values = re.findall(r"^ui-value: " + re.escape(label) + r" ([01])$", self.log(), re.M)
        return values[-1] if values else None

    def checked(self, label):
        """A check box's state as the HUD last drew it ("ui-value: LABEL 0|1"), after the frames in flight."""
        time.sleep(0.5)
        values = re.findall(r"^ui-value: " + re.escape(label) + r" ([01])$", self.log(), re.M)
        expect(values, f"the HUD never reported the check box {label}")
        return values[-1] == "1"

    def wait_for(self, condition, seconds, what):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if condition():
                return
            if self.proc.poll() is not None:
                raise Failure(f"{what}: nbody exited with {self.proc.returncode}\n{self.log()}")
            time.sleep(0.1)
        raise Failure(f"{what} (waited {seconds} s)\n{self.log()}")

    def xdotool(self, *args):
        subprocess.run(["xdotool"] + list(args), env=self.env, check=True)

    def click_at(self, x, y, button=1):
        self.xdotool("mousemove", str(x), str(y))
        time.sleep(0.2)
        self.xdotool("mousedown", str(button))
        time.sleep(0.2)  # held across a few frames, as a finger would
        self.xdotool("mouseup", str(button))
        time.sleep(0.5)

    def click(self, label):
        self.wait_for(lambda: self.widget(label), 10, f"no widget {label!r}")
        self.click_at(*self.widget(label))

    def drag(self, x0, y0, x1, y1, button=1):
        self.xdotool("mousemove", str(x0), str(y0))
        time.sleep(0.2)
        self.xdotool("mousedown", str(button))
        for k in range(1, 11):
            self.xdotool("mousemove", str(x0 + (x1 - x0) * k // 10), str(y0 + (y1 - y0) * k // 10))
            time.sleep(0.05)
        self.xdotool("mouseup", str(button))
        time.sleep(0.5)

    def key(self, name):
        # Held for a tenth of a second, as a finger holds it: the HUD reads keys once a frame.
        self.xdotool("keydown", name)
        time.sleep(0.1)
        self.xdotool("keyup", name)
        time.sleep(0.4)

    def tap(self, name):
        """A key pressed and let go at once, between two frames (a quick finger, a program's key)."""
        self.xdotool("key", "--delay", "0", name)
        time.sleep(0.4)

    # Tests that click the HUD's widgets start paused: a running simulation's time and energy change the
    # width of a line of the HUD, which then wraps or not from frame to frame and moves every widget
    # below it by a line between a look at a widget and the click on it.
    def click_until(self, label, shows, tries=3):
        """Clicks LABEL until SHOWS is traced: a line of the HUD that wraps as its numbers change may
        move the widget between the look and the click."""
        for _ in range(tries):
            self.click(label)
            end = time.monotonic() + 2
            while time.monotonic() < end:
                if self.widget(shows):
                    return
                time.sleep(0.1)
        raise Failure(f"clicking {label!r} never showed {shows!r}\n{self.log()}")

    def ctrl_click(self, label):
        """Ctrl+click: a slider becomes a field to type a value into."""
        self.wait_for(lambda: self.widget(label), 10, f"no widget {label!r}")
        x, y = self.widget(label)
        self.xdotool("mousemove", str(x), str(y))
        time.sleep(0.2)
        self.xdotool("keydown", "ctrl")
        self.xdotool("mousedown", "1")
        time.sleep(0.2)
        self.xdotool("mouseup", "1")
        self.xdotool("keyup", "ctrl")
        time.sleep(0.5)

    def type_value(self, text, end="Return"):
        self.key("ctrl+a")
        for c in text:
            self.key({"-": "minus", ".": "period"}.get(c, c))
        self.key(end)

    def window_ids(self):
        return subprocess.run(["xdotool", "search", "--name", "^nbody$"], env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.split()

    def close_window(self):
        """What a window manager does for the close button: WM_DELETE_WINDOW to the window."""
        ids = self.window_ids()
        expect(ids, "no window named nbody")
        x11 = ctypes.CDLL("libX11.so.6")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XInternAtom.restype = ctypes.c_ulong
        x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        x11.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
        x11.XFlush.argtypes = [ctypes.c_void_p]
        x11.XCloseDisplay.argtypes = [ctypes.c_void_p]

        class ClientMessage(ctypes.Structure):  # XClientMessageEvent, padded to sizeof(XEvent)
            _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                        ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                        ("format", ctypes.c_int), ("data", ctypes.c_long * 5), ("pad", ctypes.c_long * 12)]

        display = x11.XOpenDisplay(self.env["DISPLAY"].encode())
        expect(display, "cannot open the display")
        for window in ids:
            e = ClientMessage()
            e.type = 33  # ClientMessage
            e.window = int(window)
            e.message_type = x11.XInternAtom(display, b"WM_PROTOCOLS", 0)
            e.format = 32
            e.data[0] = x11.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
            e.data[1] = 0  # CurrentTime
            x11.XSendEvent(display, int(window), 0, 0, ctypes.byref(e))
        x11.XFlush(display)
        x11.XCloseDisplay(display)

    def timed_exit(self, seconds):
        """(exit status, seconds it took), failing past `seconds` x 10."""
        t0 = time.monotonic()
        status = self.wait_exit(max(30, 10 * seconds))
        return status, time.monotonic() - t0

    def wait_started(self, seconds=30):
        """Until the simulation says it started (the viewer goes on from the first frame meanwhile)."""
        end = time.monotonic() + seconds
        while "viewer: started" not in self.log() and time.monotonic() < end and self.alive():
            time.sleep(0.1)

    def alive(self):
        return self.proc.poll() is None

    def wait_exit(self, seconds=30):
        try:
            return self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            raise Failure(f"nbody still running {seconds} s later\n{self.log()}")

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.log_file is not None:
            self.log_file.close()
        self.xvfb.terminate()
        self.xvfb.wait()


def summary(log):
    """(bodies, frames, step ms) from the viewer's closing line; step ms None where no step was timed (none since
    a reset)."""
    m = re.search(r"viewer: N = (\d+), (\d+) frames: (?:step ([0-9.]+) ms \(mean of the (\d+) (?:block )?steps? since "
                  r"the run last started or changed\), )?render ", log)
    expect(m, "no closing summary in the log:\n" + log)
    step = float(m.group(3)) if m.group(3) else None
    expect(step is None or step > 0, "a step time of 0 in the summary:\n" + log)
    expect(step is None or int(m.group(4)) > 0, "a mean of no steps in the summary:\n" + log)
    return int(m.group(1)), int(m.group(2)), step


def pngs(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".png"))


def gray_pixels(path):
    """The picture as 8-bit grey bytes, read by ffmpeg."""
    return subprocess.run(["ffmpeg", "-loglevel", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                          check=True, stdout=subprocess.PIPE).stdout


def differing(a, b):
    expect(len(a) == len(b), "pictures of different sizes")
    return sum(1 for x, y in zip(a, b) if abs(x - y) > 8)


# Escape in a text field ends the edit, not the session; so does a 'q' typed into it. The same keys
# outside the field do quit: the control that shows they reach the viewer at all. An edit given up
# (N, and dt typed into its slider) changes nothing: no new simulation, the energy's reference kept.
def escape_in_a_text_field(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "512", "--paused"], folder)
    try:
        starts = v.log().count("viewer: started")
        v.click_until("Simulation", "N")
        v.click("N")
        v.key("q")
        v.key("7")
        v.key("Escape")
        time.sleep(1)
        expect(v.alive(), "Escape in the N field closed the viewer\n" + v.log())
        v.ctrl_click("dt")
        v.type_value("0.02", end="Escape")
        time.sleep(1)
        expect(v.log().count("viewer: started") == starts, "a cancelled edit of N started the run again\n" + v.log())
        expect("viewer: now" not in v.log(), "a cancelled edit of dt rebuilt the simulation\n" + v.log())
        v.click_at(WIDTH - 100, HEIGHT - 100)  # on the bodies: the field lets go of the keyboard
        v.key("Escape")
        expect(v.wait_exit(20) == 0, "Escape outside the HUD: exit status " + str(v.proc.returncode))
        expect(summary(v.log())[0] == 512, "N changed although the edit was cancelled")
    finally:
        v.close()


# Escape with a drop-down list open closes the list, not the viewer; the same key on the bodies quits.
def escape_in_a_popup(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "512", "--paused"], folder)
    try:
        v.click_until("Simulation", "N")
        v.click_until("scenario", "two-body")
        v.key("Escape")
        time.sleep(1)
        expect(v.alive(), "Escape in the open scenario list closed the viewer\n" + v.log())
        v.click_at(WIDTH - 100, HEIGHT - 100)
        v.key("Escape")
        expect(v.wait_exit(20) == 0, "Escape outside the HUD: exit status " + str(v.proc.returncode))
        expect(summary(v.log())[0] == 512, "N changed although no scenario was chosen")
    finally:
        v.close()


# 'p' into a folder that went away is a message in the HUD; the session goes on, and the next 'p'
# into the folder, once it is back, writes the picture.
def screenshot_that_cannot_be_written(nbody, folder):
    pictures = os.path.join(folder, "pictures")
    os.mkdir(pictures)
    v = Viewer(nbody, ["--scenario", "disk", "--bodies", "1000", "--screenshot-dir", pictures], folder)
    try:
        os.rmdir(pictures)
        v.key("p")
        v.wait_for(lambda: "screenshot not written" in v.log(), 10, "no message about the lost screenshot")
        time.sleep(0.5)
        expect(v.alive(), "a screenshot that failed closed the viewer\n" + v.log())
        os.mkdir(pictures)
        v.key("p")
        v.wait_for(lambda: len(pngs(pictures)) == 1, 10, "the second 'p' wrote no picture")
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# The scenario list in the HUD: two-body chosen, the session goes on with two bodies. Trails the user asked for
# stay on through the switch, and through a switch back; the exit summary, with no step since the reset, names none.
def scenario_switch(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "2048", "--paused", "--trails"], folder)
    try:
        v.click_until("View", "trails")
        expect(v.checked("trails"), "--trails: the box is not ticked")
        v.click_until("Simulation", "N")
        v.click_until("scenario", "two-body")
        v.click("two-body")
        time.sleep(1.5)
        expect(v.alive(), "switching to two-body closed the viewer\n" + v.log())
        v.click_until("scenario", "plummer")
        v.click("plummer")
        time.sleep(1.5)
        expect(v.checked("trails"), "switching scenario turned the trails the user asked for off\n" + v.log())
        # Back from the binary with the N the user asked for (--bodies), not the scenario's default (16,384).
        v.wait_for(lambda: len(re.findall(r"^viewer: started plummer .*, 2,048 bodies", v.log(), re.M)) == 2, 20,
                   "switching back from two-body did not start plummer with its 2,048 bodies\n" + v.log())
        v.click_until("scenario", "two-body")
        v.click("two-body")
        time.sleep(1.5)
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
        bodies, frames, step = summary(v.log())
        expect(bodies == 2, f"after the switch N = {bodies}, not 2")
        expect(step is None, f"paused since the last reset, yet the summary gives a step time of {step} ms")
    finally:
        v.close()


# A body count that is not one, typed into N: a message, and the run goes on with its own N.
def file_body_count(nbody, folder):
    """A run loaded from a file has the file's N: a count typed is said not to be taken, and the file is not loaded
    again (its run was begun again without a word)."""
    path = os.path.join(folder, "cluster.bin")
    subprocess.run([nbody, "--run", "-q", "--backend", "cpu", "--bodies", "300", "--steps", "1", "--save", path],
                   check=True)
    v = Viewer(nbody, ["--load", path, "--paused"], folder)
    try:
        v.click_until("Simulation", "N")
        v.wait_for(lambda: re.search(r"^viewer: started .*, 300 bodies", v.log(), re.M), 20, "no start")
        starts = len(re.findall(r"^viewer: started ", v.log(), re.M))
        v.click("N")
        v.key("ctrl+a")
        for key in "4096":
            v.key(key)
        v.key("Return")
        v.wait_for(lambda: "N is the file's (300 bodies); choose a scenario to run another N" in v.log(), 10,
                   "no message about N = 4096 for a file's run\n" + v.log())
        time.sleep(1)
        expect(len(re.findall(r"^viewer: started ", v.log(), re.M)) == starts,
               "the file was loaded again for N = 4096\n" + v.log())
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


def bad_body_count(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "1000", "--paused"], folder)
    try:
        v.click_until("Simulation", "N")
        v.click("N")
        v.key("ctrl+a")
        for key in ("minus", "7", "Return"):
            v.key(key)
        v.wait_for(lambda: "-7 is not a body count" in v.log(), 10, "no message about N = -7")
        expect(v.alive(), "N = -7 closed the viewer\n" + v.log())
        # More than nbody takes: said as typed, not wrapped round into another count.
        v.click("N")
        v.key("ctrl+a")
        for key in "99999999999":
            v.key(key)
        v.key("Return")
        v.wait_for(lambda: "N = 99999999999 is not a body count" in v.log(), 10, "no message about N = 99999999999")
        expect(v.alive(), "N = 99999999999 closed the viewer\n" + v.log())
        # A count whose steps would take minutes (a zero too many: 1,000 bodies step in under a millisecond here, 2e6 in
        # about half an hour) is asked for again before it starts; entered again, it starts, and q still quits at once.
        for attempt in range(2):
            v.click("N")
            v.key("ctrl+a")
            for key in "2000000":
                v.key(key)
            v.key("Return")
            if attempt == 0:
                v.wait_for(lambda: "enter N = 2000000 again to start it" in v.log(), 10, "N = 2,000,000 was not asked again")
                # A CPU's step is given up for a new N at once (a GPU's runs to its end): said as it is.
                cpu = "running on the CPU" in v.log()
                expect(("a new N, scenario or Reset, or quitting, stops it at once" in v.log()) == cpu,
                       "the question says the wrong thing of what a long step keeps out\n" + v.log())
                time.sleep(1)
                expect("bodies of 2,000,000" not in v.log() and "2,000,000 bodies" not in v.log(),
                       "N = 2,000,000 started without being asked again\n" + v.log())
        v.wait_for(lambda: re.search(r"^ui-text: source starting: .*2,000,000 bodies", v.log(), re.M), 20,
                   "N = 2,000,000 entered again did not start")
        expect(v.log().count("again to start it") == 1, "N = 2,000,000 was asked twice\n" + v.log())
        v.click_at(WIDTH - 100, HEIGHT - 100)
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
        expect(summary(v.log())[0] == 1000, "N changed")
    finally:
        v.close()


# The presentation mode by key: h cycles the HUD through full, minimal (the legend, time and scale
# bar, no widget: the panel's "Keys" header can no longer be clicked) and none, then full again.
def hud_key_cycles(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "1000"], folder)
    try:
        for mode in ("minimal", "none", "full"):
            v.click_at(WIDTH - 100, HEIGHT - 100)  # the keys go to the window, not to a widget
            v.key("h")
            v.wait_for(lambda: f"viewer: HUD {mode}" in v.log(), 10, f"h did not switch the HUD to {mode}")
        expect(v.log().count("viewer: HUD ") == 3, "one switch per key press\n" + v.log())
        expect(v.alive(), "h closed the viewer")
        # The keys that flip a box of the folded View panel say what they did.
        # + and - double and halve the steps per update, saying so (the HUD's slider is folded away too).
        for key, said in (("t", "trails on (t)"), ("t", "trails off (t)"), ("o", "follow on: "), ("o", "follow off (o)"),
                          ("plus", "steps per update 2 (+ doubles, - halves)"),
                          ("plus", "steps per update 4 (+ doubles, - halves)"),
                          ("minus", "steps per update 2 (+ doubles, - halves)")):
            before = v.log().count("viewer: " + said)
            v.key(key)
            v.wait_for(lambda: v.log().count("viewer: " + said) == before + 1, 10, f"{key} did not say {said!r}")
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# Steps of about two seconds (fp64 on one thread; 24,000 bodies took four, eight with another test beside it on two
# cores, and once none ended within the 10 s watched): the window stays live meanwhile (the simulation has
# a thread of its own). It draws on demand (a frame when something in it changes): while the pointer
# moves over it, as here, every event is drawn at once, tens of frames per step (a frame with no new
# positions re-shows the last picture); with no input only the HUD's figures, a few times a second
# (tests/test_viewer_pacing.cpp). The frame rate itself is a benchmark (docs/benchmarks.md), not asserted.
def redraws_during_a_slow_step(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "17000", "--precision", "fp64", "--kernel", "reference",
                       "--threads", "1"],
               folder)
    try:
        seconds = 10
        end, k = time.monotonic() + seconds, 0
        while time.monotonic() < end:  # over the bodies, away from the HUD, 20 px to and fro
            v.xdotool("mousemove", str(WIDTH - 200 + 20 * (k % 2)), str(HEIGHT - 200))
            k += 1
            time.sleep(0.03)
        v.proc.send_signal(signal.SIGINT)
        expect(v.wait_exit() == 130, "Ctrl-C: exit status " + str(v.proc.returncode))
        _, frames, step_ms = summary(v.log())
        expect(step_ms is not None, "no step was timed:\n" + v.log())
        fps = frames / seconds
        print(f"step {step_ms:.0f} ms, {frames} frames in about {seconds} s ({fps:.1f} per second), {k} pointer moves")
        expect(step_ms > 500, f"a step took {step_ms} ms: too fast to show anything (more --bodies)")
        expect(fps * step_ms / 1e3 >= 10, f"{fps:.1f} frames per second with {step_ms:.0f} ms steps")
    finally:
        v.close()


# Paused, a drag turns the camera: the picture changes although no body moves. Control: two
# pictures without a drag between them are the same.
def drag_while_paused(nbody, folder):
    pictures = os.path.join(folder, "pictures")
    os.mkdir(pictures)
    v = Viewer(nbody, ["--scenario", "collision", "--bodies", "2000", "--paused", "--screenshot-dir", pictures],
               folder)
    try:
        for _ in range(2):  # the HUD off (full -> minimal -> none): its numbers change from frame to frame
            v.key("h")
        time.sleep(2)  # the automatic exposure settles
        for expected in (1, 2):
            v.key("p")
            v.wait_for(lambda: len(pngs(pictures)) == expected, 10, "'p' wrote no picture")
        v.drag(WIDTH // 2, HEIGHT // 2, WIDTH // 2 + 200, HEIGHT // 2 + 60)
        time.sleep(2)
        v.key("p")
        v.wait_for(lambda: len(pngs(pictures)) == 3, 10, "'p' wrote no picture")
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
        first, second, dragged = (gray_pixels(os.path.join(pictures, p)) for p in pngs(pictures))
        still = differing(first, second)
        moved = differing(second, dragged)
        print(f"pixels changed: {still} without a drag, {moved} after it")
        expect(still < len(first) // 1000, f"{still} pixels changed while paused without a drag")
        expect(moved > len(first) // 100, f"the drag changed only {moved} pixels")
    finally:
        v.close()


# A message that goes (the start's, after 8 s) leaves the HUD's panel fitted to what is left, though the run is paused
# and nothing else draws a frame: ImGui fits an auto-sized panel a frame after its content changed, and the one frame
# drawn for the message's going left a blank band where it was.
def message_gone_while_paused(nbody, folder):
    v = Viewer(nbody, ["--bodies", "1000", "--paused"], folder)
    try:
        v.wait_for(lambda: "viewer: started" in v.log() and v.rect("panel"), 30, "no panel traced")
        # The message is logged as it comes; the panel grows over the frames after: its tallest in the next 2 s.
        time.sleep(2)
        after = v.log().split("viewer: started", 1)[1]
        heights = [int(h) for h in re.findall(r"^ui: panel -?\d+ -?\d+ \d+ (\d+)$", after, re.M)]
        heights = heights or [v.rect("panel")[3]]
        time.sleep(8)  # the message shows for 8 s from the start
        without = v.rect("panel")
        print(f"the panel's heights: {heights} with the start's message, {without[3]} after it went")
        expect(without[3] < max(heights), f"the panel kept its height {max(heights)} after the message went")
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# The first frame shows at once although the start-up (the first forces and the initial energy of
# 65,536 bodies on one thread: about 20 s) has just begun, and a quit during the start-up is at once.
# Measured: the first frame after 0.5 s (before: 15 s), the quit 0.07 s.
FIRST_FRAME_SECONDS = 5
QUIT_SECONDS = 1.5


def first_frame_at_once(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "65536", "--threads", "1"], folder,
               hud_seconds=FIRST_FRAME_SECONDS, started=False)
    try:
        print(f"first frame after {v.first_frame_seconds:.2f} s")
        expect("viewer: started" not in v.log(), "the start-up was over before the first frame:\n" + v.log())
        v.xdotool("key", "q")
        status, seconds = v.timed_exit(QUIT_SECONDS)
        print(f"q during the start-up: exit {status} after {seconds:.2f} s")
        expect(status == 0, f"q during the start-up: exit status {status}")
        expect(seconds < QUIT_SECONDS, f"q during the start-up took {seconds:.2f} s")
    finally:
        v.close()


# At 2,000,000 bodies (one thread: the first forces alone take 15 minutes) the window's close button and
# SIGTERM end the viewer at once. Measured: 0.1 to 0.2 s each.
def close_and_sigterm_during_a_long_start_up(nbody, folder):
    args = ["--scenario", "plummer", "--bodies", "2000000", "--threads", "1"]
    for how in ("close", "sigterm"):
        v = Viewer(nbody, args, folder, hud_seconds=FIRST_FRAME_SECONDS, started=False)
        try:
            # The bodies made (2,000,000 in about 1.5 s, longer on a loaded machine; their generation is
            # interrupted as promptly: Scenarios.GenerationGivesUpWhenCancelled), the first forces under way.
            time.sleep(6)
            if how == "close":
                v.close_window()
            else:
                v.proc.send_signal(signal.SIGTERM)
            status, seconds = v.timed_exit(QUIT_SECONDS)
            print(f"{how} during the start-up: exit {status} after {seconds:.2f} s")
            expect(status == (0 if how == "close" else 143), f"{how}: exit status {status}")
            expect(seconds < QUIT_SECONDS, f"{how} during the start-up took {seconds:.2f} s")
        finally:
            v.close()


# A recording in a window (--screenshot) starts on the simulation's thread too: during the start-up of
# 65,536 bodies on one thread (the first forces and the initial energy, about 20 s, then the first
# step) the window manager's close, q and SIGTERM end it at once: 0 for the close and q, 143 for
# SIGTERM, and no picture, for there is no state to show yet. Measured 0.03 to 0.06 s (before: the
# close 20.9 s and q 18.2 s, waiting for the start-up and the first step; SIGTERM 0.37 s, for the
# initial energy already looked for signals).
def recording_ends_during_its_start_up(nbody, folder):
    shot = os.path.join(folder, "shot.png")
    args = ["--scenario", "plummer", "--bodies", "65536", "--threads", "1", "--screenshot", shot]
    for how in ("close", "q", "sigterm"):
        v = Viewer(nbody, args, folder, hud_seconds=None, started=False)
        try:
            time.sleep(1.5)  # the start-up under way
            expect(v.alive(), "the recording ended by itself\n" + v.log())
            if how == "close":
                v.close_window()
            elif how == "q":
                # The pointer into the window, then the key as a person types it (to the window under the
                # pointer: Xvfb has no window manager). Sent by window id, it once met a window id that no
                # longer was one (BadWindow).
                v.xdotool("mousemove", str(WIDTH - 20), str(HEIGHT - 20))
                time.sleep(0.3)
                v.key("q")
            else:
                v.proc.send_signal(signal.SIGTERM)
            status, seconds = v.timed_exit(QUIT_SECONDS)
            print(f"{how} during a recording's start-up: exit {status} after {seconds:.2f} s")
            expect(status == (143 if how == "sigterm" else 0), f"{how}: exit status {status}\n{v.log()}")
            expect(seconds < QUIT_SECONDS, f"{how} during a recording's start-up took {seconds:.2f} s")
            expect(not os.path.exists(shot), f"{how}: a picture was written before any state existed")
            expect("viewer: started" not in v.log(), "the start-up was over: too fast to test (more bodies)")
        finally:
            v.close()


# q or the window's close during a recording, past its start-up: --screenshot gets the latest frame, as
# after Ctrl-C (before: nothing, and not a word).
def recording_closed_keeps_its_screenshot(nbody, folder):
    shot = os.path.join(folder, "shot.png")
    for how in ("q", "close"):
        v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "1024", "--frames", "100000", "--screenshot", shot],
                   folder, hud_seconds=None, started=False)
        try:
            v.wait_started(60)
            time.sleep(1.0)  # frames recorded
            if how == "q":
                v.xdotool("mousemove", str(WIDTH - 20), str(HEIGHT - 20))
                time.sleep(0.3)
                v.key("q")
            else:
                v.close_window()
            status, _ = v.timed_exit(QUIT_SECONDS)
            expect(status == 0, f"{how}: exit status {status}\n{v.log()}")
            expect(os.path.exists(shot), f"{how}: --screenshot was not written\n{v.log()}")
            expect(f"viewer: wrote {shot}" in v.log(), f"{how}: the picture written was not said\n{v.log()}")
            os.remove(shot)
        finally:
            v.close()


# q during a step of seconds (120,000 bodies on one thread: about 3 s) ends the viewer at once: the
# step is abandoned between two bodies. Measured 0.06 to 0.12 s (before: the rest of the step; at
# 300,000 bodies on two threads, 13 s).
def quit_during_a_long_step(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "120000", "--threads", "1"], folder)
    try:
        v.wait_started(60)
        time.sleep(1)  # the first step under way
        v.xdotool("key", "q")
        status, seconds = v.timed_exit(QUIT_SECONDS)
        print(f"q during a step: exit {status} after {seconds:.2f} s")
        expect(status == 0, f"q during a step: exit status {status}")
        expect(seconds < QUIT_SECONDS, f"q during a step took {seconds:.2f} s")
        _, _, step_ms = summary(v.log())
        expect(step_ms is None or step_ms > 1e3 * QUIT_SECONDS, f"steps of {step_ms} ms: too short to test (more bodies)")
    finally:
        v.close()


# Fifteen quick scenario switches, ending on two-body: the last one wins whole. Its softening, its
# sprites and its opening view are those of a viewer started on two-body (paused, both at t = 0).
def quick_scenario_switches(nbody, folder):
    pictures = []
    softenings = []
    for switches in (True, False):
        shots = os.path.join(folder, f"pictures-{switches}")
        os.mkdir(shots)
        start = ["--scenario", "plummer", "--bodies", "20000"] if switches else ["--scenario", "two-body"]
        v = Viewer(nbody, start + ["--threads", "1", "--paused", "--screenshot-dir", shots], folder)
        try:
            if switches:
                v.click_until("Simulation", "N")
                v.click_until("scenario", "two-body")
                names = ["collision", "two-body", "disk", "two-body", "collision", "plummer", "two-body", "collision",
                         "disk", "two-body", "collision", "plummer", "disk", "collision", "two-body"]
                # Each item clicked once the list shows (the HUD traces it open): a click at an item's place
                # while the list is still closed would land on the widget beneath it (the softening slider).
                for k, name in enumerate(names):
                    if k > 0:
                        v.xdotool("mousemove", *map(str, v.widget("scenario")), "click", "1")
                        v.wait_for(lambda: v.value("scenario") == "1", 10, "the scenario list did not open")
                    v.xdotool("mousemove", *map(str, v.widget(name)), "click", "1")
                    v.wait_for(lambda: v.value("scenario") == "0", 10, f"clicking {name} did not close the list")
                v.click_at(WIDTH - 100, HEIGHT - 100)
            if switches:
                # Settled: two-body the last run started, and no other for 5 s (longer than a run of
                # 20,000 bodies takes to start: its first forces and energy, about 3 s).
                last = [v.log().count("viewer: started"), time.monotonic()]

                def settled():
                    count = v.log().count("viewer: started")
                    if count != last[0]:
                        last[:] = [count, time.monotonic()]
                    tail = [line for line in v.log().splitlines() if line.startswith("viewer: started")][-1:]
                    return tail and tail[0].startswith("viewer: started two-body") and time.monotonic() - last[1] > 5

                v.wait_for(settled, 120, "the switches never settled on two-body")
            else:
                v.wait_started()
            time.sleep(2)
            started = [line for line in v.log().splitlines() if line.startswith("viewer: started")]
            if switches:
                expect(started[-1].startswith("viewer: started two-body"), "the last run is not two-body:\n" + v.log())
            said = re.search(r"softening (\S+)", started[-1]) if started else None
            softenings.append(said.group(1) if said else "not said")
            v.key("h")  # the HUD hidden: its numbers differ
            time.sleep(2)  # the automatic exposure settles
            v.key("p")
            v.wait_for(lambda: len(pngs(shots)) == 1, 10, "'p' wrote no picture")
            v.key("q")
            expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
            pictures.append(gray_pixels(os.path.join(shots, pngs(shots)[0])))
        finally:
            v.close()
    print(f"softening after the switches {softenings[0]}, started on two-body {softenings[1]}")
    expect(softenings[0] == softenings[1], f"softening {softenings[0]} after the switches, {softenings[1]} on two-body")
    changed = differing(pictures[0], pictures[1])
    print(f"pixels that differ from two-body started alone: {changed}")
    # Measured 0 (before: 959, the collision's view and sprites 20,000 bodies wide); two bodies cover few pixels.
    expect(changed <= 50, f"{changed} pixels differ: other sprites or another view")


# Values typed into the HUD are held to what the command line accepts (core/bounds.h): dt 0 and
# steps/update 0 are refused with a message, and change nothing; dt 0.1, beyond the slider but a dt the
# command line takes, is taken.
def hud_values_held_to_command_line_bounds(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "512", "--paused"], folder)
    try:
        v.wait_started()
        v.click_until("Simulation", "N")
        v.ctrl_click("dt")
        v.type_value("0")
        v.wait_for(lambda: "dt 0 refused" in v.log(), 10, "no message about dt 0")
        expect("viewer: now" not in v.log(), "dt 0 was applied\n" + v.log())
        v.ctrl_click("steps/update")
        v.type_value("0")
        v.wait_for(lambda: "steps/update 0 refused" in v.log(), 10, "no message about steps/update 0")
        v.ctrl_click("dt")
        v.type_value("0.1")
        v.wait_for(lambda: re.search(r"viewer: now .*dt 0\.10*\b", v.log()), 10, "dt 0.1 was not applied")
        v.click_at(WIDTH - 100, HEIGHT - 100)
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# A click on a slider, with no drag, sets the value under the pointer in the frame of the click: the run
# takes it when the click ends, as it takes a drag's.
def click_on_a_slider_applies(nbody, folder):
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "512", "--paused"], folder)
    try:
        v.wait_started()
        v.click_until("Simulation", "N")
        x, y, _, h = v.rect("dt")
        # Near the left end of the slider: the small end of its logarithmic range, far from dt 0.01.
        v.click_at(x + 6, y + h // 2)
        v.wait_for(lambda: re.search(r"viewer: now .*dt 0\.00[0-9]", v.log()), 10,
                   "the dt clicked on the slider was not applied")
        v.click_at(WIDTH - 100, HEIGHT - 100)
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# A setting changed while the run is still starting (its first forces) changes nothing, and is said to: before, the
# slider showed the new dt and the run started with its own, unsaid.
def a_change_during_the_start_up_is_made_once_it_runs(nbody, folder):
    # A start-up of some seconds (fp64 on one thread): the dt slider pulled to its end meanwhile is said, and made
    # once the run has started (it was dropped unsaid, then said to change nothing).
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "60000", "--precision", "fp64", "--threads", "1"], folder,
               hud_seconds=FIRST_FRAME_SECONDS, started=False)
    try:
        v.click_until("Simulation", "N")
        expect("viewer: started" not in v.log(), "the run started before the change could be tried\n" + v.log())
        x, y, _, h = v.rect("dt")
        v.click_at(x + 6, y + h // 2)  # the slider's lowest value, 1e-4
        v.wait_for(lambda: "the run is still starting: the change is made once it runs" in v.log(), 10,
                   "a change during the start-up was not said")
        expect("viewer: started" not in v.log(), "the run started before the change was made\n" + v.log())
        v.wait_for(lambda: re.search(r"^viewer: now .* dt 0\.000100$", v.log(), re.M), 180,
                   "the change made during the start-up was not made once it ran")
        v.close_window()
        status, _ = v.timed_exit(QUIT_SECONDS)
        expect(status == 0, f"close: exit status {status}")
    finally:
        v.close()


# A file that turns out to hold a hermite4 run: during its start-up the panel shows a fixed step's dt, and a dt
# edited there is none of this run's (its control is dt max once it runs). The change is dropped and said to be,
# and the run keeps its own dt max; the other settings edited with it are made.
def a_dt_of_the_other_kind_edited_during_the_start_up_is_dropped(nbody, folder):
    checkpoint = os.path.join(folder, "hermite.h5")
    subprocess.run([nbody, "--backend", "cpu", "--integrator", "hermite4", "--bodies", "60000", "--run", "--steps", "0",
                    "--checkpoint", checkpoint, "--quiet"], check=True, timeout=120)
    v = Viewer(nbody, ["--restart", checkpoint, "--threads", "1"], folder, hud_seconds=FIRST_FRAME_SECONDS,
               started=False)
    try:
        v.click_until("Simulation", "N")
        expect("viewer: started" not in v.log(), "the run started before the change could be tried\n" + v.log())
        x, y, _, h = v.rect("dt")
        v.click_at(x + 6, y + h // 2)  # the fixed dt slider's lowest value
        v.wait_for(lambda: "the run is still starting: the change is made once it runs" in v.log(), 10,
                   "a change during the start-up was not said")
        expect("viewer: started" not in v.log(), "the run started before the change was made\n" + v.log())
        v.wait_for(lambda: "the dt edited during the start-up is not this run's (hermite4's dt max): not changed"
                   in v.log(), 180, "a dt of the other kind was not said to be dropped\n" + v.log())
        time.sleep(1.0)
        expect(not re.search(r"^viewer: now .*dt max 0\.0001", v.log(), re.M), "the dt was made hermite4's dt max\n" +
               v.log())
        v.close_window()
        status, _ = v.timed_exit(QUIT_SECONDS)
        expect(status == 0, f"close: exit status {status}")
    finally:
        v.close()


def rgb_pixels(path):
    """The picture as 8-bit RGB triples, read by ffmpeg."""
    raw = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, stdout=subprocess.PIPE).stdout
    return [raw[k:k + 3] for k in range(0, len(raw), 3)]


# hermite4 coloured by time-step level: viridis over a fixed span of levels, from dt max's step (purple) to 2^-11 of
# it (yellow); a Plummer sphere's bodies take the longer steps, purple and blue. A frame captured without the levels
# shows every body in the map's middle ("one shared time step", a green): nothing blue in it.
def level_colours_while_paused(nbody, folder):
    def by_level(path):  # pixels in the long steps' colours: blue above green
        return sum(1 for r, g, b in rgb_pixels(path) if b > 60 and b > g + 10)
    # A recording's first frame, made with the simulation's first block step, has them too.
    first = os.path.join(folder, "first.png")
    subprocess.run([nbody, "--offscreen", "--bodies", "1024", "--integrator", "hermite4", "--color", "level", "--hud",
                    "none", "--width", str(WIDTH), "--height", str(HEIGHT), "--screenshot", first, "--quiet"],
                   check=True, timeout=120)
    expect(by_level(first) > 100, f"{by_level(first)} blue pixels: the first frame is coloured as one shared time step")
    os.remove(first)
    v = Viewer(nbody, ["--scenario", "plummer", "--bodies", "1024", "--integrator", "hermite4", "--paused", "--hud",
                       "none", "--screenshot-dir", folder], folder, hud_seconds=None)  # no HUD to wait for
    try:
        v.wait_started(60)
        time.sleep(0.5)
        v.click_at(WIDTH - 100, HEIGHT - 100)  # the keys go to the window
        for _ in range(3):  # speed -> type -> device -> level
            v.key("c")
        v.key("p")
        v.wait_for(lambda: pngs(folder), 10, "p wrote no screenshot")
        time.sleep(0.5)
        shown = by_level(os.path.join(folder, pngs(folder)[0]))
        expect(shown > 100, f"{shown} blue pixels: the paused frame is coloured as one shared time step")
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# An Enter pressed and let go between two frames (a quick finger, a program's key) while a slow run steps: the value
# typed still applies (ImGui 1.86 reads a key's state once a frame; the release waits for the frame that saw it down).
def tapped_enter_while_running(nbody, folder):
    v = Viewer(nbody, ["--backend", "cpu", "--scenario", "plummer", "--bodies", "16384"], folder)
    try:
        v.click_until("Simulation", "N")
        v.click("N")
        v.key("ctrl+a")
        for key in ("minus", "7"):
            v.key(key)
        v.tap("Return")
        v.wait_for(lambda: "-7 is not a body count" in v.log(), 10, "a tapped Enter did not apply N = -7")
        v.click_at(WIDTH - 100, HEIGHT - 100)
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


# A window of 640 x 400 (a small laptop window, a projector's corner): the panel is narrow, and each control of the
# Simulation and View sections is whole inside it, its label included (they were cut to "scenari" and "steps/u").
def narrow_window_keeps_the_labels(nbody, folder):
    v = Viewer(nbody, ["--bodies", "1024", "--paused"], folder, size=(640, 400))
    try:
        v.click_until("Simulation", "N")
        header = v.rect("Simulation")
        for label in ("N", "dt", "softening", "steps/update"):
            r = v.rect(label)
            expect(r is not None, f"no {label} in the Simulation section\n" + v.log())
            expect(r[0] + r[2] <= header[0] + header[2] + 1,
                   f"{label} (with its label) reaches x = {r[0] + r[2]}, past the panel's {header[0] + header[2]}")
        v.key("q")
        expect(v.wait_exit() == 0, "q: exit status " + str(v.proc.returncode))
    finally:
        v.close()


CASES = {f.__name__: f for f in (escape_in_a_text_field, escape_in_a_popup, screenshot_that_cannot_be_written, scenario_switch,
                                  bad_body_count, redraws_during_a_slow_step, drag_while_paused,
                                  message_gone_while_paused, hud_key_cycles,
                                  first_frame_at_once, recording_ends_during_its_start_up,
                                  close_and_sigterm_during_a_long_start_up, quit_during_a_long_step,
                                  quick_scenario_switches, hud_values_held_to_command_line_bounds,
                                  click_on_a_slider_applies, level_colours_while_paused,
                                  recording_closed_keeps_its_screenshot, tapped_enter_while_running,
                                  narrow_window_keeps_the_labels, file_body_count,
                                  a_change_during_the_start_up_is_made_once_it_runs,
                                  a_dt_of_the_other_kind_edited_during_the_start_up_is_dropped)}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(__doc__ + "cases: " + ", ".join(CASES), file=sys.stderr)
        return 2
    for tool in ("Xvfb", "xdotool", "ffmpeg"):
        if not shutil.which(tool):
            print(f"skipped: needs {tool} (scripts/install-deps.sh installs it)")
            return SKIPPED
    folder = tempfile.mkdtemp(prefix="nbody-ui-")
    try:
        CASES[sys.argv[2]](os.path.abspath(sys.argv[1]), folder)
    except Failure as e:
        print("FAILED: " + str(e), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
