//! The attempts. Each script exits 0 only when the escape worked; `verify` double-checks the
//! effect from outside where there is one to see.

use super::{exists, Attempt, Env, Mode};
use std::os::unix::fs::MetadataExt;

fn py(body: &str) -> String {
    format!(
        "python3 - <<'PYEOF'\nimport ctypes, os, socket, struct, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n{body}\nPYEOF"
    )
}

fn attempt(name: &'static str, script: String, verify: impl Fn(&Env) -> bool + 'static) -> Attempt {
    Attempt {
        name,
        script,
        verify: Box::new(verify),
        needs_root: false,
        exit_only: false,
        extra_flags: Vec::new(),
    }
}

fn root(mut a: Attempt) -> Attempt {
    a.needs_root = true;
    a
}

/// An attempt judged by its exit status alone (nothing visible from outside).
fn code(name: &'static str, script: String) -> Attempt {
    let mut a = attempt(name, script, |_| true);
    a.exit_only = true;
    a
}

/// Paths are the same for every fresh `Env` layout; scripts use `$OUT` and relative paths.
fn out_file(name: &'static str) -> impl Fn(&Env) -> bool {
    move |env: &Env| exists(env.out().join(name))
}

pub fn battery(mode: Mode) -> Vec<Attempt> {
    // Scripts are built against a template env; every Env has the same shape, and `$OUT` is
    // computed at run time from the workspace path.
    let out = "@OUT@";
    let troupe = env!("CARGO_BIN_EXE_troupe");
    let mut list = vec![
        attempt("write outside, absolute path", format!("echo x > {out}/abs"), out_file("abs")),
        attempt("write outside via ..", "echo x > ../out/dotdot".into(), out_file("dotdot")),
        attempt("write through a symlink out", "echo x > link/viasym".into(), out_file("viasym")),
        attempt(
            "hard link an outside file in and write it",
            format!("ln {out}/victim hl && echo pwned >> hl"),
            |env| std::fs::read_to_string(env.out().join("victim")).unwrap_or_default().contains("pwned"),
        ),
        attempt("rename a file out", format!("mv inside.txt {out}/moved"), out_file("moved")),
        attempt("rename an outside file", format!("mv {out}/victim {out}/renamed"), out_file("renamed")),
        attempt("chmod an outside file", format!("chmod 0777 {out}/victim"), |env| {
            std::fs::metadata(env.out().join("victim")).map(|m| m.mode() & 0o777 == 0o777).unwrap_or(false)
        }),
        root(attempt("chown an outside file", format!("chown 4321 {out}/victim"), |env| {
            std::fs::metadata(env.out().join("victim")).map(|m| m.uid() == 4321).unwrap_or(false)
        })),
        attempt("utime an outside file", format!("touch -d 2001-01-01 {out}/victim"), |env| {
            std::fs::metadata(env.out().join("victim")).map(|m| m.mtime() < 1_000_000_000).unwrap_or(false)
        }),
        code(
            "set an xattr on an outside file",
            py("os.setxattr(os.path.abspath('../out/victim'), 'user.troupe', b'1')")
        ),
        root(attempt(
            "create a device node",
            "mknod nulldev c 1 3 && echo x > nulldev".into(),
            |env| exists(env.ws().join("nulldev")),
        )),
        attempt("delete an outside file", format!("rm {out}/victim2"), |env| !exists(env.out().join("victim2"))),
        attempt("mkdir outside", format!("mkdir {out}/newdir"), out_file("newdir")),
        attempt("truncate an outside file", format!(": > {out}/victim"), |env| {
            std::fs::metadata(env.out().join("victim")).map(|m| m.len() == 0).unwrap_or(false)
        }),
        attempt("python writes outside", py("open('../out/py', 'w').write('x')"), out_file("py")),
        attempt("cp a file out", format!("cp inside.txt {out}/copied"), out_file("copied")),
        attempt("write via /proc/self/root", format!("echo x > /proc/self/root{out}/viaproc"), out_file("viaproc")),
        attempt(
            "write through an inherited directory fd",
            py("os.close(os.open('viafd', os.O_WRONLY | os.O_CREAT, dir_fd=5))"),
            out_file("viafd"),
        ),
        attempt("append to .git/config", "echo '[pwned]' >> .git/config".into(), |env| {
            std::fs::read_to_string(env.ws().join(".git/config")).unwrap_or_default().contains("[pwned]")
        }),
        attempt(
            "add a git hook",
            "printf '#!/bin/sh\\n' > .git/hooks/pre-commit".into(),
            |env| exists(env.ws().join(".git/hooks/pre-commit")),
        ),
        attempt("replace .git", "mv .git .git_old && mkdir .git".into(), |env| exists(env.ws().join(".git_old"))),
        attempt("delete .git", "rm -rf .git".into(), |env| !exists(env.ws().join(".git/config"))),
        code(
            "TCP to a loopback listener",
            py("socket.create_connection(('127.0.0.1', @TCP@), timeout=3)")
        ),
        code(
            "UDP to a loopback socket",
            py("socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', @UDP@))")
        ),
        root(code(
            "open a raw socket",
            py("socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)")
        )),
        code("open a netlink socket", py("socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)")),
        code(
            "DNS query to the resolver",
            py("ns = ([l.split()[1] for l in open('/etc/resolv.conf') if l.startswith('nameserver')] + ['127.0.0.1'])[0]\n\
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'\\x00' * 12, (ns, 53))")
        ),
        code(
            "io_uring_setup",
            py(&format!(
                "p = ctypes.create_string_buffer(120)\nsys.exit(0 if libc.syscall({}, 4, p) >= 0 else 1)",
                libc::SYS_io_uring_setup
            ))
        ),
        root(code(
            "ptrace an outside process",
            py("libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]\n\
                sys.exit(0 if libc.ptrace(0x4206, @PID@, None, None) == 0 else 1)")
        )),
        root(code(
            "process_vm_readv an outside process",
            py(&format!(
                "line = next(l for l in open('/proc/@PID@/maps') if l.split()[1].startswith('r'))\n\
                 start = int(line.split('-')[0], 16)\n\
                 buf = ctypes.create_string_buffer(8)\n\
                 local = struct.pack('QQ', ctypes.addressof(buf), 8)\n\
                 remote = struct.pack('QQ', start, 8)\n\
                 got = libc.syscall({}, @PID@, local, 1, remote, 1, 0)\n\
                 if got != 8: print('process_vm_readv returned', got, os.strerror(ctypes.get_errno()), 'reading', line.strip(), file=sys.stderr)\n\
                 sys.exit(0 if got == 8 else 1)",
                libc::SYS_process_vm_readv
            ))
        )),
        code("signal an outside process", "kill -0 @PID@".into()),
        root(code("mount a tmpfs", "mkdir -p m && mount -t tmpfs none m".into())),
        root(code("remount / read-write", "mount -o remount,rw /".into())),
        code("create a nested user namespace", "unshare -Ur true".into()),
        root(code("chroot", "chroot / true".into())),
        code(
            "keyctl: join a new session keyring",
            py(&format!("sys.exit(0 if libc.syscall({}, 1, None) >= 0 else 1)", libc::SYS_keyctl))
        ),
        root(code(
            "bpf: create a map",
            py(&format!(
                "a = ctypes.create_string_buffer(struct.pack('IIII', 2, 4, 4, 1), 128)\n\
                 sys.exit(0 if libc.syscall({}, 0, a, 128) >= 0 else 1)",
                libc::SYS_bpf
            ))
        )),
        root(code(
            "perf_event_open",
            py(&format!(
                "a = ctypes.create_string_buffer(struct.pack('IIQ', 1, 128, 0), 128)\n\
                 sys.exit(0 if libc.syscall({}, a, 0, -1, -1, 0) >= 0 else 1)",
                libc::SYS_perf_event_open
            ))
        )),
        root(code(
            "write /proc/sys",
            "h=$(cat /proc/sys/kernel/hostname) && echo \"$h\" > /proc/sys/kernel/hostname".into()
        )),
        root(code(
            "write /sys",
            "m=$(cat /sys/class/net/lo/mtu) && echo \"$m\" > /sys/class/net/lo/mtu".into()
        )),
        attempt("env -i then write outside", format!("env -i /bin/sh -c 'echo x > {out}/envi'"), out_file("envi")),
        attempt(
            "LD_PRELOAD then write outside",
            format!("LD_PRELOAD=libc.so.6 sh -c 'echo x > {out}/ldp'"),
            out_file("ldp"),
        ),
        attempt(
            "re-run the sandbox from inside with a wider policy",
            format!("{troupe} sandbox linux --full-auto --writable-root {out} -- sh -c 'echo x > {out}/nested'"),
            out_file("nested"),
        ),
        root(code(
            "setuid-root binary regains capabilities",
            "cp /usr/bin/grep ./sg && chmod 4755 ./sg && ./sg -qE 'CapEff:[[:space:]]+0*[1-9a-f]' /proc/self/status"
                .into()
        )),
    ];
    list.push(deny_read(
        "read a deny-read file",
        "grep -q TOPSECRET ../out/secret.txt",
        "secret.txt",
    ));
    list.push(deny_read(
        "read a deny-read directory",
        "grep -rq TOPSECRET ../out/secretdir",
        "secretdir",
    ));
    if mode == Mode::ReadOnly {
        list.push(attempt(
            "write in the workspace (read-only)",
            "echo x > newfile".into(),
            |env| exists(env.ws().join("newfile")),
        ));
        list.push(code(
            "write in /tmp (read-only)",
            "f=/tmp/troupe-ro-probe-$$ && echo x > $f && rm $f".into(),
        ));
    }
    list
}

fn deny_read(name: &'static str, script: &str, target: &'static str) -> Attempt {
    // `@OUT@` is replaced by the fresh environment's absolute path at run time.
    let mut a = code(name, script.to_string());
    a.extra_flags = vec!["--deny-read".into(), format!("@OUT@/{target}")];
    a
}

/// Things that must keep working under each mode.
pub fn controls() -> Vec<(Mode, &'static str)> {
    vec![
        (Mode::WorkspaceWrite, "echo hi > f && grep -q hi f && rm f"),
        (
            Mode::WorkspaceWrite,
            "mkdir -p d/e && touch d/e/f && rm -r d",
        ),
        (
            Mode::WorkspaceWrite,
            "t=/tmp/troupe-ctl-$$ && echo t > $t && cat $t && rm $t",
        ),
        (Mode::WorkspaceWrite, "git status --short"),
        (Mode::WorkspaceWrite, "echo a | tr a b | grep -q b"),
        (Mode::WorkspaceWrite, "python3 -c 'print(1)'"),
        (
            Mode::WorkspaceWrite,
            "ls /proc/self/fd > /dev/null && echo ok > /dev/null",
        ),
        (Mode::ReadOnly, "cat inside.txt"),
        (Mode::ReadOnly, "git status --short"),
        (Mode::ReadOnly, "ls -la / > /dev/null"),
        (Mode::ReadOnly, "python3 -c 'print(1)'"),
    ]
}
