//! The flags `exec` and the interactive UI share (`-m`, `-s`, `-a`, `-c`, `-p`, `--cd`,
//! `--full-auto`, `--oss`, …) and how they resolve into the session's settings.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::SessionSettings;

#[derive(Debug, Default, Args)]
pub struct SessionFlags {
    /// Model to use.
    #[arg(short = 'm', long = "model")]
    pub model: Option<String>,
    /// Override a config value: `-c key=value` (value parsed as TOML, else a string).
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    pub config: Vec<String>,
    /// Use the named `[profiles.<name>]` of config.toml.
    #[arg(short = 'p', long = "profile")]
    pub profile: Option<String>,
    /// Run as if started in DIR (also after `resume`: `--last` picks DIR's thread).
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    pub cd: Option<PathBuf>,
    /// Sandbox mode for commands.
    #[arg(short = 's', long = "sandbox", value_enum)]
    pub sandbox: Option<SandboxArg>,
    /// When to ask before running a command.
    #[arg(short = 'a', long = "ask-for-approval", value_enum)]
    pub ask_for_approval: Option<ApprovalArg>,
    /// Let `exec` run outside a Git repository (the interactive UI opens anywhere and asks
    /// whether to trust a new folder instead).
    #[arg(long = "skip-git-repo-check")]
    pub skip_git_repo_check: bool,
    /// Shortcut for `-s workspace-write` with low-friction approvals (`-a never` in `exec`,
    /// `-a on-request` in the interactive UI).
    #[arg(long = "full-auto")]
    pub full_auto: bool,
    /// Run commands without sandbox or approvals. Dangerous.
    #[arg(long = "dangerously-bypass-approvals-and-sandbox", alias = "yolo")]
    pub yolo: bool,
    /// Use a local model server (built-in provider `oss`: Chat Completions on
    /// 127.0.0.1:11434, no key); checks that it answers first.
    #[arg(long = "oss")]
    pub oss: bool,
    /// Which local server `--oss` talks to (picks its default port); implies `--oss`.
    #[arg(long = "local-provider", value_enum)]
    pub local_provider: Option<LocalProviderArg>,
    /// Enable a feature (repeatable); `troupe features list` shows them.
    #[arg(long = "enable", value_name = "FEATURE")]
    pub enable: Vec<String>,
    /// Disable a feature (repeatable).
    #[arg(long = "disable", value_name = "FEATURE")]
    pub disable: Vec<String>,
    /// An unknown key or feature in config.toml (or a `-c`) is an error, not a warning.
    #[arg(long = "strict-config")]
    pub strict_config: bool,
    /// Do not read `$TROUPE_HOME/config.toml` (auth still comes from `TROUPE_HOME`).
    #[arg(long = "ignore-user-config")]
    pub ignore_user_config: bool,
}

/// The local servers `--local-provider` knows (built-in providers of the same ids).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LocalProviderArg {
    Ollama,
    Lmstudio,
    Vllm,
    Llamacpp,
}

impl LocalProviderArg {
    fn provider_id(self) -> &'static str {
        match self {
            LocalProviderArg::Ollama => "ollama",
            LocalProviderArg::Lmstudio => "lmstudio",
            LocalProviderArg::Vllm => "vllm",
            LocalProviderArg::Llamacpp => "llamacpp",
        }
    }
}

/// The model `--oss` uses when `-m` names none (as Codex's `--oss`).
const DEFAULT_OSS_MODEL: &str = "gpt-oss:20b";

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ApprovalArg {
    Untrusted,
    OnRequest,
    OnFailure,
    Never,
}

impl From<ApprovalArg> for AskForApproval {
    fn from(arg: ApprovalArg) -> Self {
        match arg {
            ApprovalArg::Untrusted => AskForApproval::UnlessTrusted,
            ApprovalArg::OnRequest => AskForApproval::OnRequest,
            ApprovalArg::OnFailure => AskForApproval::OnFailure,
            ApprovalArg::Never => AskForApproval::Never,
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SandboxArg {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

impl From<SandboxArg> for SandboxMode {
    fn from(arg: SandboxArg) -> Self {
        match arg {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::DangerFullAccess => SandboxMode::DangerFullAccess,
        }
    }
}

/// The session's settings and the prompt-history settings they came with.
pub struct LoadedSession {
    pub settings: SessionSettings,
    pub history: troupe_config::file::HistoryToml,
    /// Whether the session's directory is trusted.
    pub trusted: bool,
    /// The sandbox mode an interactive session starts in when the directory is trusted and
    /// nothing chose one (see `LoadedConfig::trusted_sandbox_default`).
    pub trusted_sandbox_default: Option<SandboxMode>,
}

impl SessionFlags {
    /// Takes the flags given after a subcommand (`exec resume ID -m …`): a flag set there
    /// wins, `-c`/`--enable`/`--disable` add to the ones before it.
    pub fn absorb(&mut self, later: SessionFlags) {
        let SessionFlags {
            model,
            config,
            profile,
            cd,
            sandbox,
            ask_for_approval,
            skip_git_repo_check,
            full_auto,
            yolo,
            oss,
            local_provider,
            enable,
            disable,
            strict_config,
            ignore_user_config,
        } = later;
        self.model = model.or(self.model.take());
        self.config.extend(config);
        self.profile = profile.or(self.profile.take());
        self.cd = cd.or(self.cd.take());
        self.sandbox = sandbox.or(self.sandbox);
        self.ask_for_approval = ask_for_approval.or(self.ask_for_approval);
        self.skip_git_repo_check |= skip_git_repo_check;
        self.full_auto |= full_auto;
        self.yolo |= yolo;
        self.oss |= oss;
        self.local_provider = local_provider.or(self.local_provider);
        self.enable.extend(enable);
        self.disable.extend(disable);
        self.strict_config |= strict_config;
        self.ignore_user_config |= ignore_user_config;
    }

    /// Refuses a directory outside Git unless `--skip-git-repo-check`.
    pub fn check_git_repo(&self, cwd: &Path) -> Result<()> {
        if !self.skip_git_repo_check && !inside_git_repo(cwd) {
            bail!(
                "{} is not inside a Git repository; pass --skip-git-repo-check to run here anyway",
                cwd.display()
            );
        }
        Ok(())
    }

    /// Whether a flag chose the sandbox or the approval policy (then the UI asks no trust
    /// question: the user already said how careful to be).
    pub fn chose_permissions(&self) -> bool {
        self.sandbox.is_some() || self.ask_for_approval.is_some() || self.full_auto || self.yolo
    }

    /// `--cd DIR`, checked and made absolute.
    pub fn cd_dir(&self) -> Result<Option<PathBuf>> {
        self.cd.as_deref().map(usable_dir).transpose()
    }

    /// Loads the config with these flags over it, for a session in `cwd`, with the
    /// prompt-history settings of the same config. `full_auto_approval` is the approval
    /// policy `--full-auto` means for this frontend.
    pub async fn load(
        &self,
        home: &Path,
        cwd: PathBuf,
        full_auto_approval: AskForApproval,
    ) -> Result<LoadedSession> {
        self.check_git_repo(&cwd)?;
        let sandbox_mode = if self.yolo {
            Some(SandboxMode::DangerFullAccess)
        } else if self.full_auto {
            Some(SandboxMode::WorkspaceWrite)
        } else {
            self.sandbox.map(SandboxMode::from)
        };
        let approval_policy = if self.yolo {
            Some(AskForApproval::Never)
        } else if self.full_auto {
            Some(full_auto_approval)
        } else {
            self.ask_for_approval.map(AskForApproval::from)
        };
        let local = self.oss || self.local_provider.is_some();
        let mut raw = self.config.clone();
        raw.extend(crate::features::feature_overrides(
            &self.enable,
            &self.disable,
        )?);
        let mut model = self.model.clone();
        if local {
            let id = self
                .local_provider
                .map_or("oss", LocalProviderArg::provider_id);
            raw.push(format!("model_provider={}", crate::login::toml_string(id)));
            model.get_or_insert_with(|| DEFAULT_OSS_MODEL.to_string());
        }
        let loaded = load_config(
            home,
            &CliOverrides {
                raw,
                model,
                sandbox_mode,
                approval_policy,
                cwd: Some(cwd),
                profile: self.profile.clone(),
                strict_config: self.strict_config,
                ignore_user_config: self.ignore_user_config,
            },
        )?;
        for warning in &loaded.warnings {
            eprintln!("warning: {warning}");
        }
        let settings = loaded.settings;
        let history = loaded.history;
        let trusted = loaded.trusted;
        let trusted_sandbox_default = loaded.trusted_sandbox_default;
        if local {
            crate::models::check_local_server(home, &settings.provider, &settings.model).await?;
        }
        // Checked before the thread starts (the sampler reads the key again at each request).
        troupe_actors::sampler::auth::api_key(
            &settings.provider,
            &home.join(troupe_actors::sampler::auth::AUTH_FILE),
        )?;
        Ok(LoadedSession {
            settings,
            history,
            trusted,
            trusted_sandbox_default,
        })
    }
}

impl SessionFlags {
    /// `[cluster]` and `[history]` of the config these flags select (`-c`, `-p`, …), for a
    /// process that runs no session here (`exec --remote`, `worker`): no provider key is
    /// needed.
    pub fn load_cluster(
        &self,
        home: &Path,
        cwd: PathBuf,
    ) -> Result<(
        troupe_config::cluster::ClusterToml,
        troupe_config::file::HistoryToml,
    )> {
        let loaded = load_config(
            home,
            &CliOverrides {
                raw: self.config.clone(),
                model: None,
                sandbox_mode: None,
                approval_policy: None,
                cwd: Some(cwd),
                profile: self.profile.clone(),
                strict_config: self.strict_config,
                ignore_user_config: self.ignore_user_config,
            },
        )?;
        Ok((loaded.cluster, loaded.history))
    }

    /// The flags that shape the session itself, which `exec --remote` cannot carry (the
    /// thread runs under the worker's configuration): their names, when given.
    pub fn session_shaping(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        let flags: [(&'static str, bool); 9] = [
            ("--model", self.model.is_some()),
            ("--sandbox", self.sandbox.is_some()),
            ("--ask-for-approval", self.ask_for_approval.is_some()),
            ("--full-auto", self.full_auto),
            ("--dangerously-bypass-approvals-and-sandbox", self.yolo),
            ("--oss", self.oss),
            ("--local-provider", self.local_provider.is_some()),
            ("--enable", !self.enable.is_empty()),
            ("--disable", !self.disable.is_empty()),
        ];
        for (name, set) in flags {
            if set {
                given.push(name);
            }
        }
        given
    }
}

/// `--cd DIR`: an existing directory, made absolute.
fn usable_dir(dir: &Path) -> Result<PathBuf> {
    let path = std::fs::canonicalize(dir)
        .with_context(|| format!("--cd {}: not a usable directory", dir.display()))?;
    if !path.is_dir() {
        bail!("--cd {}: not a directory", dir.display());
    }
    Ok(path)
}

/// A `.git` counts unless it is an empty placeholder a running sandbox mounted on (another
/// session's sandbox may hold one in `/tmp` or a parent of this directory for a while).
pub fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| {
        let marker = d.join(".git");
        marker.exists() && !troupe_config::layers::is_sandbox_placeholder(&marker)
    })
}
