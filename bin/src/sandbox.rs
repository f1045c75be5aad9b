//! `troupe sandbox linux … -- CMD ARGS`: runs one command under the sandbox policy, for
//! debugging policies and for tests; `troupe sandbox bench` times spawns per backend.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use troupe_actors::sandbox_linux::zygote::ZygotePool;
use troupe_actors::sandbox_linux::{run_confined, LinuxSandboxArgs};
use troupe_messages::policy::{
    PermissionProfile, SandboxBackendKind, SandboxMode, SandboxSettings,
};
use troupe_messages::tools::ExecRequest;
use troupe_sandbox::helper::{helper_argv, HelperBackend, HelperSpec};
use troupe_sandbox::probe;
use troupe_sandbox::process::{run_process, LiveGroups};
use troupe_sandbox::profile::resolve_profile;

#[derive(Debug, Args)]
pub struct SandboxArgs {
    #[command(subcommand)]
    command: SandboxCommand,
}

#[derive(Debug, Subcommand)]
enum SandboxCommand {
    /// Run CMD under the Linux sandbox (cwd = workspace; default read-only).
    Linux(LinuxArgs),
    /// Time spawning `true` COUNT times with no sandbox and with each backend.
    #[command(hide = true)]
    Bench {
        #[arg(long, default_value_t = 1000)]
        count: u32,
    },
}

#[derive(Debug, Args)]
struct LinuxArgs {
    /// workspace-write: the cwd, writable roots and temp dirs are writable.
    #[arg(long, conflicts_with = "read_only")]
    full_auto: bool,
    /// Nothing is writable (the default).
    #[arg(long)]
    read_only: bool,
    /// An extra writable root (with --full-auto).
    #[arg(long = "writable-root", value_name = "PATH")]
    writable_roots: Vec<PathBuf>,
    /// A path nothing may read.
    #[arg(long = "deny-read", value_name = "PATH")]
    deny_read: Vec<PathBuf>,
    /// A host Unix socket (or a directory of them) that stays reachable with the network
    /// off; every other one bound on the host is masked.
    #[arg(long = "allow-unix-socket", value_name = "PATH")]
    allow_unix_sockets: Vec<PathBuf>,
    /// Allow network access.
    #[arg(long)]
    network: bool,
    /// Which backend; default: linux when namespaces work, else landlock.
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Run through a zygote, as the runtime does, instead of exec'ing the helper (output is
    /// relayed once the command ends); for tests of that path.
    #[arg(long, hide = true)]
    zygote: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BackendArg {
    Linux,
    Landlock,
}

pub async fn run(args: SandboxArgs) -> Result<ExitCode> {
    match args.command {
        SandboxCommand::Linux(args) => run_linux(args).await,
        SandboxCommand::Bench { count } => bench(count).await,
    }
}

async fn run_linux(args: LinuxArgs) -> Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mode = if args.full_auto {
        SandboxMode::WorkspaceWrite
    } else {
        SandboxMode::ReadOnly
    };
    if !args.full_auto && !args.writable_roots.is_empty() {
        bail!("--writable-root needs --full-auto (read-only has no writable roots)");
    }
    let settings = SandboxSettings {
        writable_roots: args.writable_roots,
        network_access: args.network,
        deny_read: args.deny_read,
        protected_paths: troupe_config::home::troupe_home().into_iter().collect(),
        stored_keys: troupe_config::home::troupe_home()
            .map(|home| troupe_config::home::stored_key_paths(&home))
            .unwrap_or_default(),
        allow_unix_sockets: args.allow_unix_sockets,
        ..SandboxSettings::default()
    };
    let mut profile = resolve_profile(mode, &settings, &cwd)?;
    if args.network {
        // Read-only with --network: keep the filesystem policy, open the network.
        if let PermissionProfile::Managed { network, .. } = &mut profile {
            *network = troupe_messages::policy::NetworkPolicy::Enabled;
        }
    }
    let kind = match args.backend {
        None => SandboxBackendKind::Auto,
        Some(BackendArg::Linux) => SandboxBackendKind::Linux,
        Some(BackendArg::Landlock) => SandboxBackendKind::Landlock,
    };
    let backend = probe::choose(kind).map_err(anyhow::Error::msg)?;
    let exe = probe::helper_exe().map_err(anyhow::Error::msg)?;
    if args.zygote {
        return run_in_zygote(exe, backend, profile, cwd, args.command).await;
    }
    let spec = HelperSpec {
        backend,
        profile,
        cwd,
        network_proxy: None,
    };
    let argv = helper_argv(&exe, &spec, &args.command).map_err(anyhow::Error::msg)?;
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    bail!("cannot start the sandbox helper {}: {err}", exe.display())
}

async fn run_in_zygote(
    exe: PathBuf,
    backend: HelperBackend,
    profile: PermissionProfile,
    cwd: PathBuf,
    argv: Vec<String>,
) -> Result<ExitCode> {
    use std::io::Write;
    let request = ExecRequest {
        argv,
        cwd,
        env: std::env::vars().collect(),
        timeout: std::time::Duration::from_secs(600),
        max_output_bytes: 1 << 20,
        profile,
        network_proxy: None,
    };
    let args = LinuxSandboxArgs {
        helper_exe: exe.clone(),
        backend,
    };
    let zygotes = ZygotePool::new(exe);
    let live = LiveGroups::default();
    let result = run_confined(&args, &request, &live, Some(&zygotes), None)
        .await
        .map_err(anyhow::Error::msg)?;
    zygotes.shutdown().await;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(result.stdout.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(troupe_cli::output::StdoutError)?;
    let _ = std::io::stderr().write_all(result.stderr.as_bytes());
    let code = result.exit_code.unwrap_or(128 + 9);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

async fn bench(count: u32) -> Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let settings = SandboxSettings::default();
    let confined = resolve_profile(SandboxMode::WorkspaceWrite, &settings, &cwd)?;
    let request = |profile: PermissionProfile| ExecRequest {
        argv: vec!["true".into()],
        cwd: cwd.clone(),
        env: std::env::vars().collect(),
        timeout: std::time::Duration::from_secs(10),
        max_output_bytes: 1024,
        profile,
        network_proxy: None,
    };
    // As the `none` backend starts its commands.
    let unconfined = LiveGroups::new(troupe_sandbox::process::Containment::Group);
    let started = Instant::now();
    for _ in 0..count {
        let result = run_process(&request(PermissionProfile::Disabled), &unconfined, None)
            .await
            .map_err(anyhow::Error::msg)?;
        if result.exit_code != Some(0) {
            bail!("`true` failed without a sandbox: {result:?}");
        }
    }
    let base = started.elapsed();
    troupe_cli::output::line(format_args!(
        "none       {count} spawns: {:>8.1} ms ({:.3} ms each)",
        ms(base),
        ms(base) / f64::from(count)
    ))?;
    let exe = probe::helper_exe().map_err(anyhow::Error::msg)?;
    let live = LiveGroups::default();
    // `linux` is what the backend actor does (a zygote per profile, reused); `linux-exec`
    // starts the one-shot helper for every command (PTY sessions, huge commands).
    for (name, kind, reuse) in [
        ("linux", SandboxBackendKind::Linux, true),
        ("linux-exec", SandboxBackendKind::Linux, false),
        ("landlock", SandboxBackendKind::Landlock, false),
    ] {
        let backend = match probe::choose(kind) {
            Ok(backend) => backend,
            Err(why) => {
                troupe_cli::output::line(format_args!("{name:<10} unavailable: {why}"))?;
                continue;
            }
        };
        let args = LinuxSandboxArgs {
            helper_exe: exe.clone(),
            backend,
        };
        let zygotes = ZygotePool::new(exe.clone());
        let zygotes = reuse.then_some(&zygotes);
        let started = Instant::now();
        for _ in 0..count {
            let result = run_confined(&args, &request(confined.clone()), &live, zygotes, None)
                .await
                .map_err(anyhow::Error::msg)?;
            if result.exit_code != Some(0) {
                bail!("`true` failed under {name}: {}", result.aggregated_output);
            }
        }
        let took = started.elapsed();
        if let Some(zygotes) = zygotes {
            zygotes.shutdown().await;
        }
        troupe_cli::output::line(format_args!(
            "{name:<10} {count} spawns: {:>8.1} ms ({:.3} ms each, {:.2}x none)",
            ms(took),
            ms(took) / f64::from(count),
            ms(took) / ms(base)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
