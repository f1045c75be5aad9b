#!/usr/bin/env python3
"""The interactive UI's latency and idle cost: Troupe's TUI next to Codex 0.169's.

Each UI runs in a pseudo-terminal (80x24, TERM=xterm-256color) that this script reads
directly, timestamping bytes as they arrive; it answers the terminal queries a real
terminal would (cursor position, device attributes, colours) so neither UI waits on a
timeout. Both talk to the same local `mock-model`.

  first frame   process start -> the first output that draws visible text
  keystroke     a printable key written -> the key's character drawn (median of K keys)
  idle CPU      user+sys ticks of the UI process over an idle window, as % of one core

  bench/tui_bench.py --troupe target/release/troupe --mock target/release/mock-model \
      [--codex $CODEX_BIN] [--reps 5] [--idle-secs 10] [--out bench/results/tui.md]
  bench/tui_bench.py --smoke --troupe target/debug/troupe --mock target/debug/mock-model

--smoke: 1 rep, 2 s idle window, 5 keys, Troupe only; exits non-zero if a measurement fails.
"""

import argparse
import fcntl
import os
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

COLS, ROWS = 80, 24
CLK_TCK = os.sysconf("SC_CLK_TCK")
# CSI / OSC / other escape sequences, to find the text a chunk draws.
ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")


def visible(data: bytes) -> bytes:
    return ESCAPES.sub(b"", data)


def answer_queries(fd: int, data: bytes) -> None:
    """Replies as a terminal would to the queries crossterm/ratatui send."""
    if b"\x1b[6n" in data:  # cursor position
        os.write(fd, b"\x1b[1;1R")
    if b"\x1b[c" in data or b"\x1b[0c" in data:  # primary device attributes
        os.write(fd, b"\x1b[?62;22c")
    if b"\x1b[?u" in data:  # keyboard enhancement flags
        os.write(fd, b"\x1b[?0u")
    if b"\x1b]10;?" in data:  # foreground colour
        os.write(fd, b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\")
    if b"\x1b]11;?" in data:  # background colour
        os.write(fd, b"\x1b]11;rgb:0000/0000/0000\x1b\\")


class PtyRun:
    """One UI process in a pty of its own."""

    def __init__(self, argv, env, cwd):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.start = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.output = b""

    def read_until(self, predicate, timeout):
        """Reads (answering queries) until predicate(new bytes) holds; the time it did."""
        deadline = time.monotonic() + timeout
        fresh = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return None
            now = time.monotonic()
            answer_queries(self.master, chunk)
            fresh += chunk
            self.output += chunk
            if predicate(fresh):
                return now
        return None

    def drain(self, secs):
        self.read_until(lambda _: False, secs)

    def cpu_ticks(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def measure(argv, env, cwd, keys, idle_secs):
    run = PtyRun(argv, env, cwd)
    try:
        drawn = run.read_until(lambda b: re.search(rb"[A-Za-z]{3}", visible(b)), 60)
        if drawn is None:
            raise RuntimeError("no frame within 60 s; output: %r" % run.output[-2000:])
        first_frame = drawn - run.start
        # Let start-up work (file listing, model list, MCP) settle before the idle window.
        run.drain(2.0)
        # Codex may open on a one-time dialog (a model migration notice): Esc takes its
        # default and leaves the composer, where keys are echoed.
        if b"enter/esc" in visible(run.output[-4000:]):
            os.write(run.master, b"\x1b")
            run.drain(2.0)
        before = run.cpu_ticks()
        t0 = time.monotonic()
        run.drain(idle_secs)
        idle_cpu = (run.cpu_ticks() - before) / CLK_TCK / (time.monotonic() - t0) * 100
        latencies = []
        for i in range(keys):
            ch = b"qwertyuiopasdfghjklz"[i % 20 : i % 20 + 1]
            sent = time.monotonic()
            os.write(run.master, ch)
            seen = run.read_until(lambda b, ch=ch: ch in visible(b), 10)
            if seen is None:
                print("[tui-bench] key %r never drawn; screen tail: %r" % (ch, run.output[-300:]),
                      file=sys.stderr)
                return first_frame, idle_cpu, None
            latencies.append(seen - sent)
            run.drain(0.1)
        return first_frame, idle_cpu, statistics.median(latencies)
    finally:
        run.stop()


def start_mock(mock, tmp):
    out = os.path.join(tmp, "mock.out")
    proc = subprocess.Popen(
        [mock, "--port", "0", "--answer", "done", "--log", os.path.join(tmp, "mock.log")],
        stdout=open(out, "w"),
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        with open(out) as f:
            for line in f:
                if line.startswith("listening "):
                    return proc, line.split()[1]
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("mock-model did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--troupe", required=True)
    parser.add_argument("--mock", required=True)
    parser.add_argument("--codex")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--idle-secs", type=float, default=10.0)
    parser.add_argument("--out")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        args.reps, args.keys, args.idle_secs, args.codex = 1, 5, 2.0, None

    tmp = tempfile.mkdtemp(prefix="troupe-tui-bench-")
    mock, url = start_mock(os.path.abspath(args.mock), tmp)
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    troupe_home = os.path.join(tmp, "troupe-home")
    os.makedirs(troupe_home)
    with open(os.path.join(troupe_home, "config.toml"), "w") as f:
        f.write(
            f'model_provider = "mock"\n\n[model_providers.mock]\nbase_url = "{url}"\n'
            'env_key = "MOCK_MODEL_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
        )
    # Codex's home must be outside /tmp (see /work/shared/spec/codex-offline.md).
    codex_home = tempfile.mkdtemp(prefix="codex-tui-bench-", dir=os.path.expanduser("~"))
    with open(os.path.join(codex_home, "config.toml"), "w") as f:
        f.write(
            'model = "gpt-5.5"\nmodel_provider = "mock"\napproval_policy = "never"\n'
            'check_for_update_on_startup = false\nweb_search = "disabled"\n'
            "[analytics]\nenabled = false\n[feedback]\nenabled = false\n"
            "[features]\nplugins = false\n"
            f'[projects."{work}"]\ntrust_level = "trusted"\n'
            f'[model_providers.mock]\nname = "Mock model"\nbase_url = "{url}"\n'
            'wire_api = "responses"\nenv_key = "MOCK_MODEL_API_KEY"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
        )
    base_env = dict(os.environ, TERM="xterm-256color", MOCK_MODEL_API_KEY="bench", HOME=tmp)
    base_env.pop("NO_COLOR", None)
    tools = [
        ("troupe", [os.path.abspath(args.troupe), "--skip-git-repo-check", "-s", "danger-full-access"],
         dict(base_env, TROUPE_HOME=troupe_home)),
    ]
    if args.codex:
        tools.append(("codex 0.169", [args.codex, "-s", "danger-full-access"],
                      dict(base_env, CODEX_HOME=codex_home)))
    results = {}
    failed = False
    try:
        for name, argv, env in tools:
            rows = []
            for rep in range(args.reps + (0 if args.smoke else 1)):
                try:
                    row = measure(argv, env, work, args.keys, args.idle_secs)
                except RuntimeError as err:
                    print(f"[tui-bench] {name}: {err}", file=sys.stderr)
                    failed = True
                    continue
                if rep == 0 and not args.smoke:
                    continue  # warm-up (page cache, Codex's first-run setup)
                rows.append(row)
                if row[2] is None and name == "troupe":
                    failed = True
                key = "-" if row[2] is None else f"{row[2]*1000:.1f} ms"
                print(f"[tui-bench] {name} rep {rep}: first frame {row[0]*1000:.1f} ms, "
                      f"idle CPU {row[1]:.2f} %, keystroke {key}", file=sys.stderr)
            results[name] = rows
    finally:
        mock.kill()
        mock.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(codex_home, ignore_errors=True)

    lines = [
        "| UI | first frame (median) | keystroke → screen (median) | idle CPU (median) | runs |",
        "|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        if not rows:
            lines.append(f"| {name} | failed | failed | failed | 0 |")
            continue
        ff = statistics.median(r[0] for r in rows) * 1000
        keyed = [r[2] for r in rows if r[2] is not None]
        ks = f"{statistics.median(keyed) * 1000:.2f} ms" if keyed else "not measured"
        cpu = statistics.median(r[1] for r in rows)
        lines.append(f"| {name} | {ff:.1f} ms | {ks} | {cpu:.2f} % | {len(rows)} |")
    if "troupe" in results and "codex 0.169" in results and results["troupe"] and results["codex 0.169"]:
        t = statistics.median(r[0] for r in results["troupe"])
        c = statistics.median(r[0] for r in results["codex 0.169"])
        lines.append("")
        lines.append(f"First frame, Troupe / Codex: {t / c:.2f}x")
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# TUI: first frame, keystroke latency, idle CPU\n\n")
            f.write(f"`bench/tui_bench.py` ({args.reps} reps after a warm-up, {args.keys} keys, "
                    f"{args.idle_secs:g} s idle window, {COLS}x{ROWS} pty)\n\n")
            f.write(table + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
