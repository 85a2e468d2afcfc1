#!/usr/bin/env python3
"""tools/serve_bench.py - measures `nbody --serve` with a WebSocket client of its own (Python's
standard library only, for GPU machines without a browser), acknowledging frames as the page does.
The server draws a frame only when the picture changes (docs/architecture.md, "Frames on demand"), and
sends the last one again each second while nothing does; those repeats are counted apart.
- watching (the first half of --seconds), no input: new frames/s received at the frame size (how often
  the picture changes: the simulation's frames, the HUD's figures), and the simulation's step rate
  with a viewer attached (the server's own time per step, as the frames carry it), against
  `nbody --offscreen` running the same steps with nobody watching (its own time per step, the same
  measure); the steps counted over the wall clock too, which include the viewer's energy passes;
- steering (the second half): a drag, the pointer moving 60 times a second from a thread of its own
  (as a browser reports one, once a display frame): new frames/s (what the server can draw, encode
  and send: the stream's capacity), the step rate meanwhile, and the time from each input event to
  the first frame that shows it (the frames carry the id of the newest input they reflect).

usage: serve_bench.py NBODY [--seconds 20] [--width 1280 --height 720] [-- NBODY_ARGS...]
  e.g. tools/serve_bench.py build/app/nbody -- --bodies 1048576
Prints one JSON object; --json FILE writes it too.
"""
import argparse
import base64
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

HEADER = struct.Struct("<4s8Q3I")  # app/serve_protocol.h FrameHeader, 80 bytes


def parse_header(payload):
    if len(payload) < HEADER.size:
        return None
    magic, seq, last_input, rendered_us, encoded_us, step, bodies, time_bits, rate_bits, w, h, flags = \
        HEADER.unpack_from(payload)
    if magic != b"NBF1":
        return None
    as_double = lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0]
    return {"sequence": seq, "last_input": last_input, "rendered_us": rendered_us, "encoded_us": encoded_us,
            "step": step, "bodies": bodies, "time": as_double(time_bits), "steps_per_s": as_double(rate_bits),
            "width": w, "height": h, "paused": bool(flags & 1), "jpeg_bytes": len(payload) - HEADER.size}


class Refused(Exception):
    """The server answered the upgrade with an HTTP status other than 101."""

    def __init__(self, status, body):
        super().__init__("HTTP %d: %s" % (status, body.strip()))
        self.status = status


class WebSocket:
    """A minimal RFC 6455 client: masked text frames out; text, binary, ping and close in."""

    def __init__(self, host, port, path="/ws", origin=None, timeout=10.0, receive_buffer=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        key = base64.b64encode(os.urandom(16)).decode()
        request = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n" % (path, host, port, key))
        if origin:
            request += "Origin: %s\r\n" % origin
        self.sock.sendall((request + "\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise Refused(0, "connection closed during the handshake")
            self.buffer += chunk
        self.send_lock = threading.Lock()  # acknowledgements and input may go from two threads
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ")[1])
        if status != 101:
            raise Refused(status, self.buffer.decode(errors="replace"))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, payload, opcode=1):
        if isinstance(payload, str):
            payload = payload.encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self.send_lock:
            self.sock.sendall(head + mask + masked)

    def receive(self):
        """(opcode, payload) of the next data message, its fragments joined; answers pings on the way."""
        message_opcode, parts = None, []
        while True:
            b0, b1 = self._read(2)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            if opcode in (0, 1, 2):  # a data frame, or a continuation of one
                message_opcode = message_opcode or opcode
                parts.append(payload)
                if fin:
                    return message_opcode, b"".join(parts)
            elif opcode == 9:
                self.send(payload, opcode=10)
            elif opcode == 8:  # the closing handshake answered, as RFC 6455 asks
                try:
                    self.send(payload[:2], opcode=8)
                except OSError:
                    pass
                raise ConnectionError("closed by the server (%s)" % (struct.unpack(">H", payload[:2])[0]
                                                                    if len(payload) >= 2 else "no code"))

    def frame(self):
        """The next frame's header, acknowledged as the page does (text messages, such as control
        notices, are kept in .notices)."""
        while True:
            opcode, payload = self.receive()
            if opcode == 2:
                header = parse_header(payload)
                if header:
                    self.send("a %d" % header["sequence"])
                return header
            self.notices = getattr(self, "notices", []) + [payload.decode(errors="replace")]

    def close(self):
        self.sock.close()


def start_server(nbody, args, env=None):
    """nbody --serve on a free port; returns (process, host, port, token)."""
    proc = subprocess.Popen([nbody, "--serve", "0"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"serve: open http://([^/]+):(\d+)/(\?token=(\w+))?", line)
        if m:
            return proc, m.group(1), int(m.group(2)), m.group(4)
    proc.kill()
    sys.exit("serve_bench: nbody --serve printed no URL")


def frames_of_size(ws, width, height):
    ws.send("s 1 %d %d" % (width, height))
    header = ws.frame()
    while header["width"] != width or header["height"] != height:  # frames of the new size from here
        header = ws.frame()
    return header


class Counter:
    """New frames (a sequence number not seen last) and the server's repeats of a still picture; the
    step rates the new frames carry."""

    def __init__(self):
        self.frames, self.repeats, self.rates, self.sequence = 0, 0, [], None

    def add(self, header):
        if header["sequence"] == self.sequence:
            self.repeats += 1
            return False
        self.sequence = header["sequence"]
        self.frames += 1
        if header["steps_per_s"] > 0:
            self.rates.append(header["steps_per_s"])
        return True

    def step_rate(self):
        rates = sorted(self.rates)
        return rates[len(rates) // 2] if rates else 0.0


def watch(ws, seconds):
    """New frames/s and the step rate with nobody touching anything (the run as a talk's audience sees it)."""
    first = ws.frame()
    counter = Counter()
    counter.sequence = first["sequence"]
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        header = ws.frame()
        counter.add(header)
    elapsed = time.monotonic() - start
    steps = header["step"] - first["step"]
    # Two step rates. "steps_per_s": steps counted over the wall clock, so it includes what the viewer does
    # between steps in either mode (the energy it measures every few seconds, the frame captures).
    # "step_rate": the server's own, 1 / its mean time per step while steps run (as the frames carry it),
    # which is what --offscreen reports: the two compare the steps alone, with and without viewers.
    return {"frames_per_s": counter.frames / elapsed, "frames": counter.frames, "repeats": counter.repeats,
            "seconds": elapsed, "steps": steps, "steps_per_s": steps / elapsed, "step_rate": counter.step_rate(),
            "jpeg_bytes_last": header["jpeg_bytes"], "bodies": header["bodies"],
            "server_encode_ms_last": (header["encoded_us"] - header["rendered_us"]) / 1e3}


def steer(ws, seconds, width, height, rate=60.0):
    """New frames/s, the step rate and input-to-frame latencies (ms) during a drag: the left button held,
    the pointer moving 20 pixels to and fro `rate` times a second from a thread of its own, so every
    frame shows a new view and the frames come as fast as the server makes and sends them, not at the
    pace of this client's replies."""
    lock, sent, stop = threading.Lock(), {}, threading.Event()
    x, y = width * 0.75, height / 2
    ws.send("d 1 0 %.1f %.1f" % (x, y))
    ids = [1]

    def move():
        while not stop.is_set():
            with lock:
                ids[0] += 1
                sent[ids[0]] = time.monotonic()
            ws.send("p %d %.1f %.1f" % (ids[0], x + (10 if ids[0] % 2 else -10), y))
            stop.wait(1.0 / rate)

    mover = threading.Thread(target=move, daemon=True)
    first = ws.frame()
    counter, latencies = Counter(), []
    counter.sequence = first["sequence"]
    start = time.monotonic()
    mover.start()
    try:
        while time.monotonic() - start < seconds:
            header = ws.frame()
            if not counter.add(header):
                continue
            arrived = time.monotonic()
            with lock:
                shown = sorted(k for k in sent if k <= header["last_input"])
                for i in shown:
                    latencies.append(1e3 * (arrived - sent.pop(i)))
    finally:
        stop.set()
        mover.join()
    elapsed = time.monotonic() - start
    ws.send("u %d 0 %.1f %.1f" % (ids[0] + 1, x, y))
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else None
    steps = header["step"] - first["step"]
    return {"frames_per_s": counter.frames / elapsed, "frames": counter.frames, "seconds": elapsed,
            "inputs_per_s": rate, "steps": steps, "steps_per_s": steps / elapsed, "step_rate": counter.step_rate(),
            "latency_ms_median": pick(0.5), "latency_ms_p90": pick(0.9), "latency_ms_max": pick(1.0),
            "inputs_measured": len(latencies)}


def offscreen_step_rate(nbody, args, frames, width, height):
    """Steps per second of `nbody --offscreen --frames K` (nobody watching), from its summary line."""
    out = subprocess.run([nbody, "--offscreen", "--frames", str(frames), "--width", str(width), "--height",
                          str(height)] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         timeout=3600)
    m = re.search(r"step ([0-9.]+) ms \(mean of the \d+ (?:block )?steps? [^)]*\), render ([0-9.]+) ms", out.stderr)
    if not m:
        return {"error": out.stderr[-2000:]}
    step_ms, render_ms = float(m.group(1)), float(m.group(2))
    return {"step_ms": step_ms, "render_ms": render_ms, "steps_per_s": 1e3 / step_ms}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("nbody")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--offscreen-frames", type=int, default=20,
                        help="frames of the --offscreen comparison (each one batch of steps)")
    parser.add_argument("--json")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    o = parser.parse_args(argv[:split])
    o.args = argv[split + 1:]  # nbody's options, e.g. --bodies 1048576
    proc, host, port, token = start_server(o.nbody, o.args)
    try:
        path = "/ws" + ("?token=" + token if token else "")
        ws = WebSocket("127.0.0.1" if host in ("0.0.0.0", "::") else host, port, path)
        frames_of_size(ws, o.width, o.height)
        warm_end = time.monotonic() + 3  # warm-up: the first steps and frames set things up
        while time.monotonic() < warm_end:
            ws.frame()
        result = {"watching": watch(ws, o.seconds / 2), "steering": steer(ws, o.seconds / 2, o.width, o.height)}
        ws.close()
    finally:
        proc.send_signal(2)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    result["offscreen"] = offscreen_step_rate(o.nbody, o.args, o.offscreen_frames, o.width, o.height)
    if "steps_per_s" in result["offscreen"]:
        offscreen = result["offscreen"]["steps_per_s"]
        # Watching (no input: frames only when the picture changes) and steering (a frame for every view).
        result["step_rate_serve_over_offscreen"] = result["watching"]["step_rate"] / offscreen
        result["wall_step_rate_serve_over_offscreen"] = result["watching"]["steps_per_s"] / offscreen
        result["step_rate_steering_over_offscreen"] = result["steering"]["step_rate"] / offscreen
        result["wall_step_rate_steering_over_offscreen"] = result["steering"]["steps_per_s"] / offscreen
    text = json.dumps(result, indent=2)
    print(text)
    if o.json:
        with open(o.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
