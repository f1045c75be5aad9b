//! `troupe web`: an app-server on a free loopback port with the supervisor page, and a fresh
//! capability token that only the printed URL carries.

use crate::app_server::{fresh_token, serve, Served, TokenFile};
use anyhow::Result;
use clap::Args;
use troupe_app_server::Listen;

#[derive(Debug, Args)]
pub struct WebArgs {
    /// Port on 127.0.0.1 (0, the default, picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Override a config value for every thread: `-c key=value` (value parsed as TOML).
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// Unload threads idle for longer than SECS (history stays on disk; they reload on use).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    idle_unload_secs: u64,
}

pub async fn run(args: WebArgs) -> Result<std::process::ExitCode> {
    serve(Served {
        listen: Listen::Ws(std::net::SocketAddr::from(([127, 0, 0, 1], args.port))),
        config: args.config,
        ws_token: Some(fresh_token()?),
        token_file: TokenFile::None,
        allowed_origins: Vec::new(),
        idle_unload_secs: args.idle_unload_secs,
        web: true,
    })
    .await
}
