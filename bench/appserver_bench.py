#!/usr/bin/env python3
"""Codex's app-server under load (scenario 6): idle threads and concurrent turns.

Usage: bench/appserver_bench.py [--codex BIN] [--troupe BIN] [--mock BIN --raw DIR]
                                [--troupe-output FILE] [--threads 1000] [--turns 100] [--calls 5]
                                [--reader-slice-us N]

With --troupe, the same two halves drive `troupe app-server` (the same wire) against the same
mock, and both servers' notification latency is measured: for every notification received
during the turns, client receive time (wall clock, stamped when the `read` that brought it
returned, before any parsing, by a process that does nothing else) minus the server's
`emittedAtMs`; p50/p99 over all of them.

Drives `codex app-server` (JSON-RPC lines over stdio: `initialize`, `thread/start`,
`turn/start`, notifications until `turn/completed`) against mock-model, two fresh servers:

1. idle: `initialize`, then `thread/start` x THREADS (16 in flight; the server refuses more
   with "Server overloaded; retry later", and those are sent again);
   server RSS (VmRSS of the app-server process) after start-up and after the threads, once
   it has settled; per thread = the difference / THREADS. No model request may happen.
2. turns: `thread/start` x TURNS, then `turn/start` on every thread at once (refused ones
   again after 20 ms); the mock makes
   each turn run CALLS `exec_command` calls of `true`, then answer `done`. Wall = first
   `turn/start` sent -> last `turn/completed` received; peak RSS = the server's VmHWM, and the
   process tree's RSS (server + its tool processes) sampled every 20 ms. Every turn must
   complete with status `completed`, CALLS command items and the answer `done`, and the mock
   must have served TURNS x (CALLS + 1) requests.
Prints a Markdown table on stdout, next to Troupe's figures for the same workload parsed from
--troupe-output (the output of the runtime benchmarks `idle_threads` and `concurrent_turns`:
in-process runtime level). Raw files go to DIR/appserver/{codex,troupe}/, among them
latencies.tsv: every measured notification's receive time, `emittedAtMs` and method.
"""
import argparse, json, os, queue, re, struct, subprocess, sys, threading, time

from resume_bench import codex_config, start_mock, troupe_config

OVERLOADED = -32001  # "Server overloaded; retry later."

# The receiving end of the server's stdout, in a process of its own: it only reads and
# stamps (one `read` of up to 1 MiB per wake-up, wall ms and monotonic s), and forwards each
# chunk framed as `<ddI` + bytes. In the bench process itself the stamp waited for the GIL
# behind routing, JSON parsing and the RSS sampler: that delay is the client's, not the
# server's.
STAMPER = r"""
import os, struct, sys, time
slice_ns = int(os.environ.get("STAMPER_SLICE_NS", "0"))
if slice_ns:
    # A short EEVDF slice (Linux 6.12+, no privilege): as a latency-minded client's reader
    # would ask; policy and nice unchanged.
    import ctypes
    attr = struct.pack("<IIQiIQQQII", 56, 0, 0, os.getpriority(os.PRIO_PROCESS, 0), 0, slice_ns,
                       0, 0, 0, 0)
    ctypes.CDLL(None, use_errno=True).syscall(314, 0, ctypes.create_string_buffer(attr, 56), 0)
out = sys.stdout.buffer
while True:
    data = os.read(0, 1 << 20)
    out.write(struct.pack("<ddI", time.time() * 1000, time.monotonic(), len(data)) + data)
    out.flush()
    if not data:
        break
"""
FRAME = struct.Struct("<ddI")
READER_SLICE_NS = 0  # --reader-slice-us, for both servers alike


def proc_status(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(root):
    """VmRSS summed over `root` and its descendants."""
    children = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(pid))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += proc_status(pid, "VmRSS")
        todo.extend(children.get(pid, []))
    return total


class AppServer:
    """A `codex app-server` child and a reader thread that routes its output."""

    def __init__(self, codex, env, cwd, log_path):
        argv = [codex, "app-server"]
        if os.path.basename(codex).startswith("troupe"):
            argv += ["--idle-unload-secs", "0"]  # the idle half measures loaded threads
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=open(log_path, "w"), bufsize=0)
        self.stamper = subprocess.Popen([sys.executable, "-c", STAMPER], stdin=self.proc.stdout,
                                        stdout=subprocess.PIPE, bufsize=0,
                                        env=dict(os.environ, STAMPER_SLICE_NS=str(READER_SLICE_NS)))
        self.proc.stdout.close()  # the stamper holds the only read end now
        self.received = []  # (receive wall ms, emittedAtMs, method) of every notification
        self.measure = False
        self.next_id = 0
        self.pending = {}  # id -> Queue for the response
        self.notes = queue.Queue()  # (time, method, params) of every notification
        self.lock = threading.Lock()
        self.chunks = queue.Queue()  # (wall ms, monotonic s, bytes) of every read
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._route, daemon=True).start()

    def _read(self):
        """Unframes the stamper's chunks: each keeps the stamp of the `read` that brought it
        (see STAMPER), so what is measured is when the bytes reached the client, not how fast
        Python parses. (Iterating a `bufsize=0` pipe would read one byte per system call: at
        ~0.5 ms per notification under load that measured the client, not the server.)"""
        stream = self.stamper.stdout
        def exactly(n):
            buf = b""
            while len(buf) < n:
                more = stream.read(n - len(buf))
                if not more:
                    return None
                buf += more
            return buf
        while True:
            head = exactly(FRAME.size)
            if head is None:
                self.chunks.put((0, time.monotonic(), b""))
                return
            wall_ms, now, size = FRAME.unpack(head)
            data = exactly(size) if size else b""
            self.chunks.put((wall_ms, now, data or b""))
            if not data:
                return

    def _route(self):
        """Splits the stamped reads into lines; each line carries the stamp of the read that
        brought its last byte."""
        partial = b""
        while True:
            wall_ms, now, data = self.chunks.get()
            if not data:
                break
            lines = (partial + data).split(b"\n")
            partial = lines.pop()
            for raw in lines:
                self._dispatch(raw, wall_ms, now)
        self.notes.put((time.monotonic(), "eof", None))

    def _dispatch(self, raw, wall_ms, now):
        try:
            msg = json.loads(raw)
        except ValueError:
            return
        if "id" in msg and "method" not in msg:
            with self.lock:
                q = self.pending.pop(msg["id"], None)
            if q:
                q.put(msg)
        elif "method" in msg and "id" in msg:
            # A server request (approval...): not expected with approval_policy "never".
            self.notes.put((now, "server-request:" + msg["method"], msg.get("params")))
        elif "method" in msg:
            if self.measure and "emittedAtMs" in msg:
                self.received.append((wall_ms, msg["emittedAtMs"], msg["method"]))
            self.notes.put((now, msg["method"], msg.get("params")))

    def send(self, method, params=None):
        """Sends a request; returns a Queue that will hold the response."""
        with self.lock:
            rid = self.next_id
            self.next_id += 1
            q = queue.Queue()
            self.pending[rid] = q
        msg = {"id": rid, "method": method, "params": params or {}}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        return q

    def call(self, method, params=None, timeout=60):
        resp = self.send(method, params).get(timeout=timeout)
        if "error" in resp:
            raise RuntimeError(f"{method}: {resp['error']}")
        return resp["result"]

    def notify(self, method):
        self.proc.stdin.write((json.dumps({"method": method}) + "\n").encode())

    def start(self):
        self.call("initialize", {"clientInfo": {"name": "troupe-bench", "title": "Troupe bench",
                                                "version": "0.1.0"}})
        self.notify("initialized")

    def call_all(self, method, params_list, window=16):
        """Sends every request, at most `window` in flight, retrying those the server refuses
        with "Server overloaded" (-32001, its back-pressure); returns the results in order."""
        results = [None] * len(params_list)
        todo = list(range(len(params_list)))
        flying = []  # (index, queue)
        while todo or flying:
            while todo and len(flying) < window:
                i = todo.pop(0)
                flying.append((i, self.send(method, params_list[i])))
            i, q = flying.pop(0)
            resp = q.get(timeout=600)
            if resp.get("error", {}).get("code") == OVERLOADED:
                time.sleep(0.02)
                todo.append(i)
            elif "error" in resp:
                raise RuntimeError(f"{method}: {resp['error']}")
            else:
                results[i] = resp["result"]
        return results

    def start_threads(self, n, cwd):
        params = {"cwd": cwd, "sandbox": "danger-full-access", "approvalPolicy": "never"}
        return [r["thread"]["id"] for r in self.call_all("thread/start", [params] * n)]

    def stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            self.stamper.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.stamper.kill()
            self.stamper.wait()


def settle_rss(pid, seconds=2.0):
    """VmRSS once it has stopped moving (or after `seconds`), KiB."""
    last, deadline = proc_status(pid, "VmRSS"), time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = proc_status(pid, "VmRSS")
        if abs(now - last) < 256:
            return now
        last = now
    return last


def requests_in(log):
    with open(log) as f:
        return sum(1 for line in f if " POST " in line and "/responses " in line)


def idle(args, env, work, log):
    server = AppServer(args.server_bin, env, work, os.path.join(args.raw, "idle.err"))
    try:
        server.start()
        time.sleep(1.0)
        before = settle_rss(server.proc.pid)
        before_reqs = requests_in(log)
        t0 = time.monotonic()
        ids = server.start_threads(args.threads, work)
        started = time.monotonic() - t0
        after = settle_rss(server.proc.pid, 5.0)
        tree = tree_rss_kib(server.proc.pid)
        if len(set(ids)) != args.threads or requests_in(log) != before_reqs:
            raise RuntimeError("idle: wrong thread count or unexpected model requests")
        return {"before": before, "after": after, "tree": tree, "start_s": started}
    finally:
        server.stop()


def turns(args, env, work, log):
    server = AppServer(args.server_bin, env, work, os.path.join(args.raw, "turns.err"))
    try:
        server.start()
        ids = server.start_threads(args.turns, work)
        time.sleep(0.5)
        before_reqs = requests_in(log)
        rss_before = proc_status(server.proc.pid, "VmRSS")
        peak_tree = [0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak_tree[0] = max(peak_tree[0], tree_rss_kib(server.proc.pid))
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.monotonic()
        server.measure = True
        prompt = [{"type": "text", "text": "Run the commands, then say done."}]
        server.call_all("turn/start", [{"threadId": t, "input": prompt} for t in ids], window=len(ids))
        completed, commands, answers = {}, {}, {}
        while len(completed) < len(ids):
            at, method, params = server.notes.get(timeout=600)
            if method == "eof" or method.startswith("server-request:"):
                raise RuntimeError(f"turns: unexpected {method}")
            tid = (params or {}).get("threadId")
            if method == "item/completed":
                item = params["item"]
                if item.get("type") == "commandExecution" and item.get("exitCode") == 0:
                    commands[tid] = commands.get(tid, 0) + 1
                elif item.get("type") == "agentMessage":
                    answers[tid] = item.get("text")
            elif method == "turn/completed":
                completed[tid] = (at, params["turn"]["status"])
        wall = max(at for at, _ in completed.values()) - t0
        done.set()
        sampler.join()
        hwm = proc_status(server.proc.pid, "VmHWM")
        ok = (all(s == "completed" for _, s in completed.values())
              and all(commands.get(t) == args.calls and answers.get(t) == "done" for t in ids)
              and requests_in(log) - before_reqs == args.turns * (args.calls + 1))
        if not ok:
            bad = [t for t in ids if commands.get(t) != args.calls or answers.get(t) != "done"]
            raise RuntimeError(f"turns: {len(bad)} threads wrong (e.g. {bad[:1]}: "
                               f"{commands.get(bad[0]) if bad else ''} commands), "
                               f"{requests_in(log) - before_reqs} model requests")
        with open(os.path.join(args.raw, "latencies.tsv"), "w") as f:
            f.write("received_ms\temitted_ms\tmethod\n")
            f.writelines(f"{r:.3f}\t{e}\t{m}\n" for r, e, m in server.received)
        lat = sorted(r - e for r, e, _ in server.received)
        pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")
        return {"wall_s": wall, "hwm": hwm, "rss_before": rss_before, "tree_peak": peak_tree[0],
                "lat_p50": pct(0.50), "lat_p99": pct(0.99), "lat_n": len(lat)}
    finally:
        server.stop()


def troupe_figures(path):
    """Troupe's figures from the runtime benchmarks' output (see actors/benches)."""
    text = open(path).read() if path and os.path.exists(path) else ""
    idle = re.search(r"(\d+) idle threads: RSS ([\d.]+) MiB → ([\d.]+) MiB \(([\d.]+) KiB per thread\)", text)
    turns = re.search(r"wall ([\d.]+) s; RSS ([\d.]+) MiB before the turns, peak ([\d.]+) MiB", text)
    out = {}
    if idle:
        out.update(before=float(idle[2]) * 1024, after=float(idle[3]) * 1024, per=float(idle[4]))
    if turns:
        out.update(wall_s=float(turns[1]), rss_before=float(turns[2]) * 1024, hwm=float(turns[3]) * 1024)
    return out


def table(args, troupe, codex):
    mib = lambda kib: f"{kib / 1024:.1f}"

    def row(label, t, c, ratio=True):
        r = "—"
        if ratio and t and c and c[0]:
            r = f"{t[0] / c[0]:.3f}"
        cells = [x[1] if x else "—" for x in (t, c)]
        print(f"| {label} | {cells[0]} | {cells[1]} | {r} |")

    def get(d, *keys, fmt):
        return (d[keys[0]], fmt(*[d[k] for k in keys])) if d and all(k in d for k in keys) else None

    note = args.codex_note or "—"
    print("| | Troupe: runtime level, in-process | Codex `app-server` | Troupe/Codex |")
    print("|---|---|---|---|")
    c = codex or {}
    row(f"{args.threads:,} idle threads: RSS per thread, KiB",
        get(troupe, "per", fmt=lambda p: f"{p:.1f}"),
        get(c, "per", fmt=lambda p: f"{p:.1f}") or (None, note))
    row(f"{args.threads:,} idle threads: RSS before → after, MiB",
        get(troupe, "before", "after", fmt=lambda b, a: f"{mib(b)} → {mib(a)}"),
        get(c, "before", "after", "start_s", fmt=lambda b, a, s: f"{mib(b)} → {mib(a)} (started in {s:.1f} s)")
        or (None, note), ratio=False)
    row(f"{args.turns} concurrent turns × {args.calls} tool calls: wall, s",
        get(troupe, "wall_s", fmt=lambda w: f"{w:.2f}"),
        get(c, "wall_s", fmt=lambda w: f"{w:.2f}") or (None, note))
    row(f"{args.turns} concurrent turns × {args.calls} tool calls: peak RSS of the process, MiB",
        get(troupe, "hwm", "rss_before", fmt=lambda h, b: f"{mib(h)} ({mib(b)} before the turns)"),
        get(c, "hwm", "rss_before", fmt=lambda h, b: f"{mib(h)} ({mib(b)} before the turns)") or (None, note))
    if codex:
        print()
        print(f"Codex's process tree (server + tool processes) peaked at {mib(codex['tree_peak'])} MiB during "
              f"the turns (sampled every 20 ms); with {args.threads:,} idle threads it held {mib(codex['tree'])} MiB.")


def server_table(args, troupe, codex):
    """App-server against app-server: the same wire, workload and mock."""
    mib = lambda kib: f"{kib / 1024:.1f}"
    c = codex or {}
    rows = [
        (f"{args.threads:,} idle threads: RSS per thread, KiB", "per", lambda d: f"{d['per']:.1f}"),
        (f"{args.turns} concurrent turns × {args.calls} tool calls: wall, s", "wall_s",
         lambda d: f"{d['wall_s']:.2f}"),
        (f"{args.turns} concurrent turns × {args.calls} tool calls: peak RSS of the server, MiB", "hwm",
         lambda d: mib(d["hwm"])),
        ("notification latency server→client p50, ms", "lat_p50", lambda d: f"{d['lat_p50']:.1f}"),
        ("notification latency server→client p99, ms", "lat_p99", lambda d: f"{d['lat_p99']:.1f}"),
    ]
    print()
    print("| | Troupe `app-server` | Codex `app-server` | Troupe/Codex |")
    print("|---|---|---|---|")
    for label, key, fmt in rows:
        ours = fmt(troupe) if key in troupe else "—"
        theirs = fmt(c) if key in c else (args.codex_note or "—")
        ratio = f"{troupe[key] / c[key]:.3f}" if key in c and c[key] else "—"
        print(f"| {label} | {ours} | {theirs} | {ratio} |")
    print()
    print(f"Latency over {troupe.get('lat_n', 0)} notifications (Troupe) and {c.get('lat_n', 0)} (Codex): "
          "client receive wall time minus the server's `emittedAtMs`.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codex")
    ap.add_argument("--troupe", help="troupe binary: also drive `troupe app-server`")
    ap.add_argument("--codex-note", help="what to print in Codex's cells without --codex")
    ap.add_argument("--mock")
    ap.add_argument("--raw")
    ap.add_argument("--troupe-output")
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--reader-slice-us", type=int, default=0,
                    help="the stamper asks for this EEVDF slice (Linux 6.12+; 100 is the least)")
    args = ap.parse_args()
    global READER_SLICE_NS
    READER_SLICE_NS = args.reader_slice_us * 1000
    # The reader thread stamps a read as soon as it holds the GIL again; the other threads
    # (routing, the turn bookkeeping) must not keep it waiting the default 5 ms.
    sys.setswitchinterval(0.0002)
    troupe = troupe_figures(args.troupe_output)
    codex = None
    if args.codex:
        if not (args.mock and args.raw):
            ap.error("--codex needs --mock and --raw")
        try:
            codex = run_codex(args)
        except Exception as e:  # Codex is the reference: report its failure, keep Troupe's figures
            print(f"appserver_bench: Codex failed: {e}", file=sys.stderr)
            args.codex_note = f"failed: {str(e)[:120]}"
    server = None
    if args.troupe:
        if not (args.mock and args.raw):
            ap.error("--troupe needs --mock and --raw")
        try:
            server = run_server(args, "troupe", args.troupe)
        except Exception as e:
            print(f"appserver_bench: troupe app-server failed: {e}", file=sys.stderr)
            sys.exit(1)
    table(args, troupe, codex)
    if server:
        server_table(args, server, codex)
    if args.troupe_output and not {"per", "wall_s"} <= troupe.keys():
        sys.exit("appserver_bench: Troupe's runtime benchmarks gave no figures")


def run_codex(args):
    return run_server(args, "codex", args.codex)


def run_server(args, name, binary):
    """Both halves against `binary app-server` (Codex's or Troupe's), fresh dirs and mock."""
    raw = os.path.abspath(os.path.join(args.raw, "appserver", name))
    work = os.path.join(raw, "work")
    home = os.path.join(raw, f"{name}-home")
    for d in (work, home, os.path.join(raw, "home")):
        os.makedirs(d)
    log = os.path.join(raw, "mock.log")
    mock, url = start_mock(args.mock, log, args.calls, "true")
    try:
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(codex_config(url) if name == "codex" else troupe_config(url))
        env = dict(os.environ, HOME=os.path.join(raw, "home"), MOCK_MODEL_API_KEY="x",
                   **{"CODEX_HOME" if name == "codex" else "TROUPE_HOME": home})
        saved, args.raw, args.server_bin = args.raw, raw, binary
        try:
            i = idle(args, env, work, log)
            t = turns(args, env, work, log)
        finally:
            args.raw = saved
    finally:
        mock.kill()
        mock.wait()
    return {"per": (i["after"] - i["before"]) / args.threads, **i, **t}


if __name__ == "__main__":
    main()
