#!/usr/bin/env python3
"""Resume by id prefix among 1,000 threads: wall time of `troupe exec resume <prefix> PROMPT`
(the lookup of the thread by a unique prefix of its id, then one turn against the mock).

Usage: bench/resume_prefix_bench.py [TARGET_DIR] [--reps N]   (default: target/debug, 5 reps)
Needs the `troupe` and `mock-model` binaries of TARGET_DIR. The 1,000 rollouts (20 items
each, Troupe's format) are generated into a temp TROUPE_HOME; `troupe list` builds the index
once; then each run resumes a different thread by the first 13 characters of its id (unique
among uuid7 ids made in the same millisecond only by their random part, so the prefix is
checked unique first). Prints each run and the median.
"""
import os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from threads_bench import write_rollout  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
REPS = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 5
if "--reps" in sys.argv:
    args.remove(str(REPS))
TARGET = args[0] if args else "target/debug"
TROUPE = os.path.abspath(os.path.join(TARGET, "troupe"))
MOCK = os.path.abspath(os.path.join(TARGET, "mock-model"))


def unique_prefix(tid, ids):
    for n in range(8, 37):
        if sum(1 for other in ids if other.startswith(tid[:n])) == 1:
            return tid[:n]
    return tid


def main():
    mock = subprocess.Popen([MOCK, "--tool-calls", "0"], stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().split()[1]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home, work = os.path.join(tmp, "home"), os.path.join(tmp, "work")
            os.makedirs(work)
            os.makedirs(home)
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(f'model = "mock-model"\nmodel_provider = "mock"\n[model_providers.mock]\n'
                        f'name = "Mock"\nbase_url = "{url}"\nenv_key = "BENCH_KEY"\n')
            env = dict(os.environ, TROUPE_HOME=home, BENCH_KEY="x")
            ids = [write_rollout(home, work, 20, f"thread {k}")[0] for k in range(1000)]
            subprocess.run([TROUPE, "list"], env=env, cwd=work, check=True, stdout=subprocess.DEVNULL)
            walls = []
            for run in range(REPS):
                prefix = unique_prefix(ids[run * 97 % len(ids)], ids)
                start = time.time()
                proc = subprocess.run([TROUPE, "exec", "--skip-git-repo-check", "-s", "danger-full-access",
                                       "resume", prefix, "one more"], env=env, cwd=work,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                wall = time.time() - start
                if proc.returncode != 0:
                    sys.exit(f"resume {prefix} failed: {proc.stderr[-2000:]}")
                walls.append(wall)
                print(f"exec resume {prefix} among 1,000 threads, run {run + 1}: {wall * 1000:.0f} ms")
            print(f"median: {statistics.median(walls) * 1000:.0f} ms over {REPS} runs")
    finally:
        mock.kill()
        mock.wait()


if __name__ == "__main__":
    main()
