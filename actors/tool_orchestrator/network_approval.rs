//! Network approvals of one `shell` command whose sandbox has the network off, when
//! `[network_proxy]` is enabled: the command gets a proxy of its own (`troupe_sandbox::
//! netproxy`, bridged into its network namespace by the sandbox helper) and each new host it
//! asks the proxy for is approved like a command — the session cache (`for session`), then
//! PermissionRequest hooks (`tool_name: Bash`, `tool_input.command` the command,
//! `description: network-access <host>`), then the user (`ExecApprovalRequest` whose
//! command is `network-access <host>`). A host refused gets `403` from the proxy.

use super::contract::ToolContext;
use crate::approvals::cache::ApprovalKey;
use crate::hooks::tool_input::hook_tool;
use crate::locking::lock;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::permissions::ProxyBridge;
use troupe_messages::policy::{
    AskForApproval, NetworkPolicy, NetworkProxySettings, PermissionProfile,
};
use troupe_sandbox::helper::HelperBackend;
use troupe_sandbox::netproxy::destination::Destinations;
use troupe_sandbox::netproxy::{Gate, NetworkProxy};

/// The proxy of one command, and how the sandbox reaches it. Dropping it stops the proxy.
pub struct CommandProxy {
    _proxy: NetworkProxy,
    pub bridge: ProxyBridge,
}

impl CommandProxy {
    /// The variables that send the command's HTTP clients through the proxy.
    pub fn env(&self) -> Vec<(String, String)> {
        let url = format!("http://127.0.0.1:{}", self.bridge.port);
        let mut env: Vec<(String, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ]
        .iter()
        .map(|name| (name.to_string(), url.clone()))
        .collect();
        env.push(("NO_PROXY".into(), String::new()));
        env.push(("no_proxy".into(), String::new()));
        env
    }
}

/// Starts the proxy for a command about to run under `profile`, when one applies: the
/// proxy is enabled and the profile is sandboxed with the network off. `Err` means the proxy
/// could not start, or cannot serve this backend (`landlock` has no network namespace to
/// bridge into): the command then runs without it, network off, and the caller says so.
pub fn start_for(
    ctx: &ToolContext,
    profile: &PermissionProfile,
    command: &[String],
) -> Result<Option<CommandProxy>, String> {
    let settings = &ctx.settings.sandbox.network_proxy;
    let network_off = matches!(
        profile,
        PermissionProfile::Managed {
            network: NetworkPolicy::Restricted,
            ..
        }
    );
    if !settings.enabled || !network_off {
        return Ok(None);
    }
    if troupe_sandbox::probe::choose(ctx.settings.sandbox.backend)? != HelperBackend::Linux {
        return Err(
            "the network proxy needs the `linux` sandbox backend (a network namespace \
                    to bridge into); this sandbox uses `landlock`"
                .into(),
        );
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = ctx.settings.troupe_home.join("tmp").join("netproxy");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("network proxy: cannot create {}: {e}", dir.display()))?;
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    let socket: PathBuf = dir.join(format!(
        "{}-{}.sock",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    // sockaddr_un holds 108 bytes with the final NUL.
    if socket.as_os_str().len() >= 108 {
        return Err(format!(
            "network proxy: the socket path {} is too long for a Unix socket; use a shorter \
             TROUPE_HOME",
            socket.display()
        ));
    }
    let gate = CommandGate(Arc::new(GateState {
        ctx: ctx.clone(),
        script: hook_tool(&ctx.call)
            .and_then(|(_, input)| input.get("command").cloned())
            .unwrap_or_else(|| json!(command.join(" "))),
        decided: tokio::sync::Mutex::new(HashMap::new()),
    }));
    let proxy = NetworkProxy::start(&socket, destinations(settings)?, Arc::new(gate))
        .map_err(|e| format!("network proxy: cannot listen on {}: {e}", socket.display()))?;
    Ok(Some(CommandProxy {
        _proxy: proxy,
        bridge: ProxyBridge {
            socket,
            port: settings.port,
        },
    }))
}

struct GateState {
    ctx: ToolContext,
    /// The command as hooks see it (`tool_input.command`).
    script: Value,
    /// This command's answers by host; the lock also keeps two questions from being open
    /// at once (one approval id per host, asked in turn).
    decided: tokio::sync::Mutex<HashMap<String, bool>>,
}

struct CommandGate(Arc<GateState>);

impl Gate for CommandGate {
    fn allow(&self, host: String) -> Pin<Box<dyn Future<Output = bool> + Send>> {
        let state = self.0.clone();
        Box::pin(async move {
            let mut decided = state.decided.lock().await;
            if let Some(answer) = decided.get(&host) {
                return *answer;
            }
            let answer = decide(&state, &host).await;
            decided.insert(host, answer);
            answer
        })
    }
}

/// The synthetic command of a network approval, as Codex names it.
pub fn approval_command(host: &str) -> Vec<String> {
    vec!["network-access".into(), host.to_string()]
}

async fn decide(state: &GateState, host: &str) -> bool {
    let ctx = &state.ctx;
    let key = [ApprovalKey::NetworkHost(host.to_string())];
    if lock(&ctx.approvals.cache).all_approved(&key) {
        return true;
    }
    let may_ask = match ctx.settings.approval_policy {
        AskForApproval::Never => false,
        AskForApproval::Granular(cfg) => cfg.sandbox_approval,
        AskForApproval::UnlessTrusted | AskForApproval::OnRequest | AskForApproval::OnFailure => {
            true
        }
    };
    if !may_ask {
        return false;
    }
    let description = format!("network-access {host}");
    let input = json!({ "command": state.script, "description": description });
    match ctx
        .services
        .hooks
        .permission_request_as("Bash", input, &ctx.call)
        .await
    {
        Some(Ok(())) => return true,
        Some(Err(_)) => return false,
        None => {}
    }
    let call_id = format!("{}:network-access:{host}", ctx.call.call_id);
    let decision = ctx.pending.register(&call_id);
    ctx.services.tell(EventMsg::ExecApprovalRequest {
        call_id,
        command: approval_command(host),
        cwd: ctx.settings.cwd.clone(),
        reason: Some(format!(
            "the command `{}` wants to reach {host}",
            state.script.as_str().unwrap_or_default()
        )),
        sandbox_retry: None,
    });
    match decision.await.unwrap_or(ReviewDecision::Abort) {
        ReviewDecision::Approved | ReviewDecision::ApprovedWithoutSandbox => true,
        ReviewDecision::ApprovedForSession => {
            lock(&ctx.approvals.cache).approve(&key);
            true
        }
        ReviewDecision::Denied
        | ReviewDecision::DeniedWithMessage { .. }
        | ReviewDecision::Abort => false,
    }
}

/// The proxy's exceptions to its public-only rule, from the settings.
fn destinations(settings: &NetworkProxySettings) -> Result<Destinations, String> {
    let hosts = settings
        .hosts
        .iter()
        .map(|(host, ip)| {
            ip.parse()
                .map(|ip| (host.clone(), ip))
                .map_err(|_| format!("network_proxy.hosts: `{ip}` ({host}) is not an IP address"))
        })
        .collect::<Result<_, String>>()?;
    Ok(Destinations {
        hosts,
        allow_local_names: settings.allow_local_names.iter().cloned().collect(),
    })
}
