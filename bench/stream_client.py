#!/usr/bin/env python3
"""Runs a command and timestamps its stdout as it arrives (the `stream-2mb` client side).

Usage: bench/stream_client.py --out FILE --stamp FILE (--answer-bytes N | --at-eof) -- CMD...

The command's stdout is read through a pipe in chunks of up to 64 KiB; each read is
stamped with CLOCK_REALTIME nanoseconds (the clock the mock's request log uses) and the
bytes go to --out. stdin is /dev/null; stderr is inherited.

"Complete" is the moment the read that brought the last byte of the answer returned: with
--answer-bytes N, the answer is the mock's generated text of N bytes (found verbatim in the
output; if it is missing, complete is `-`); with --at-eof, the last byte before EOF.

--stamp gets one line: `start_ns=<t> end_ns=<t> complete_ns=<t|-> reads=<k>`, where start
is just before the command is spawned and end just after it has been reaped. Exits with the
command's exit status.
"""
import argparse, os, subprocess, sys, time

FILLER = "The quick brown fox jumps over the lazy dog. "  # tests/mock_model auto::generate_text


def generated_answer(n):
    return (FILLER * (n // len(FILLER) + 1))[:n].encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--stamp", required=True)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--answer-bytes", type=int)
    what.add_argument("--at-eof", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command")

    stamps = []  # (time_ns after the read, total bytes so far)
    chunks = []
    total = 0
    start = time.time_ns()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    fd = proc.stdout.fileno()
    while True:
        data = os.read(fd, 65536)
        now = time.time_ns()
        if not data:
            break
        total += len(data)
        chunks.append(data)
        stamps.append((now, total))
    rc = proc.wait()
    end = time.time_ns()

    out = b"".join(chunks)
    with open(args.out, "wb") as f:
        f.write(out)
    if args.at_eof:
        last = total if total else None
    else:
        answer = generated_answer(args.answer_bytes)
        pos = out.find(answer)
        last = pos + len(answer) if pos >= 0 else None
    complete = next((t for t, n in stamps if last is not None and n >= last), None)
    with open(args.stamp, "w") as f:
        f.write(f"start_ns={start} end_ns={end} complete_ns={complete if complete else '-'} reads={len(stamps)}\n")
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
