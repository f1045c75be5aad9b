#!/usr/bin/env python3
"""Benchmark: one 1,000-hunk patch over 100 files, Troupe's apply_patch vs Codex's.

usage: bench/apply_patch_bench.py TROUPE_APPLY_PATCH CODEX_APPLY_PATCH [RUNS]

Both arguments are executables named `apply_patch` (symlinks to `troupe` and to Codex's
native binary). Each run gets a fresh copy of the tree; the patch goes on stdin (at ~370 KB
it is over Linux's 128 KB limit for one argument). Prints the median and min wall time of each, and checks that both
produce byte-identical trees.
"""
import hashlib, os, shutil, statistics, subprocess, sys, tempfile, time

FILES, HUNKS_PER_FILE, LINES = 100, 10, 400


def make_tree(root):
    for f in range(FILES):
        lines = [f"file {f} line {i}: some code here = value_{i};" for i in range(LINES)]
        with open(os.path.join(root, f"src_{f:03}.txt"), "w") as out:
            out.write("\n".join(lines) + "\n")


def make_patch():
    parts = ["*** Begin Patch"]
    step = LINES // HUNKS_PER_FILE
    for f in range(FILES):
        parts.append(f"*** Update File: src_{f:03}.txt")
        for h in range(HUNKS_PER_FILE):
            i = h * step + step // 2
            parts.append("@@")
            for c in range(i - 3, i):
                parts.append(f" file {f} line {c}: some code here = value_{c};")
            parts.append(f"-file {f} line {i}: some code here = value_{i};")
            parts.append(f"+file {f} line {i}: CHANGED = patched_{i};")
            for c in range(i + 1, i + 4):
                parts.append(f" file {f} line {c}: some code here = value_{c};")
    parts.append("*** End Patch")
    return "\n".join(parts) + "\n"


def digest(root):
    h = hashlib.sha256()
    for name in sorted(os.listdir(root)):
        h.update(name.encode())
        with open(os.path.join(root, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def run(binary, patch, template, runs):
    times, result = [], None
    for _ in range(runs):
        work = tempfile.mkdtemp()
        shutil.rmtree(work)
        shutil.copytree(template, work)
        start = time.perf_counter()
        proc = subprocess.run([binary], input=patch.encode(), cwd=work, capture_output=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"{binary} failed: {proc.stderr.decode()}")
        result = digest(work)
        shutil.rmtree(work)
    return times, result


def main():
    troupe, codex = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    template = tempfile.mkdtemp()
    make_tree(template)
    patch = make_patch()
    print(f"patch: {FILES} files, {FILES * HUNKS_PER_FILE} hunks, {len(patch)} bytes; {runs} runs each")
    results = {}
    for name, binary in [("troupe", troupe), ("codex", codex)]:
        times, tree = run(binary, patch, template, runs)
        results[name] = tree
        print(f"{name:7} median {statistics.median(times) * 1000:7.1f} ms   min {min(times) * 1000:7.1f} ms")
    print("identical results:", results["troupe"] == results["codex"])
    shutil.rmtree(template)


if __name__ == "__main__":
    main()
