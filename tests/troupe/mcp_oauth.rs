//! `troupe mcp login|logout` and OAuth-protected streamable-HTTP servers, through the real
//! binary against a loopback OAuth + MCP server (tests/support `oauth_server`): the test
//! reads the URL `mcp login` prints and plays the browser.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::lit;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, ChildStdout, Output, Stdio};
use troupe_mock_model::MockResponse;
use troupe_test_support::oauth_server::{OAuthMcpServer, TOOL, TOOL_ANSWER};
use troupe_test_support::{stderr, stdout, tool_outputs, Harness};

const SERVER: &str = "remote";

/// A harness whose model calls the server's tool once, with `[mcp_servers.remote]` pointing
/// at `server`.
fn harness_for(server: &OAuthMcpServer) -> Harness {
    let harness = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![("c1", &format!("mcp__{SERVER}__{TOOL}"), "{}")]),
            MockResponse::text("done"),
        ],
        "",
    );
    add_server(&harness, &format!("url = {}", lit(&server.mcp_url())));
    harness
}

fn add_server(harness: &Harness, body: &str) {
    let path = harness.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.{SERVER}]\n{body}\ndefault_tools_approval_mode = \"approve\"\n"
    ));
    std::fs::write(&path, config).unwrap();
}

fn mcp(harness: &Harness, args: &[&str]) -> Output {
    harness.command().arg("mcp").args(args).output().unwrap()
}

/// `troupe mcp login` started, with the authorization URL it printed.
struct PendingLogin {
    child: Child,
    stdout: BufReader<ChildStdout>,
    printed: String,
    url: String,
}

fn start_login(harness: &Harness) -> PendingLogin {
    let mut child = harness
        .command()
        .args(["mcp", "login", SERVER])
        // A "browser" that opens nothing: the test is the browser.
        .env("BROWSER", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let url = read_url(&mut stdout, &mut printed);
    PendingLogin {
        child,
        stdout,
        printed,
        url,
    }
}

/// Reads lines (kept in `printed`) up to the authorization URL.
fn read_url(stdout: &mut BufReader<ChildStdout>, printed: &mut String) -> String {
    loop {
        let mut line = String::new();
        assert_ne!(
            stdout.read_line(&mut line).unwrap(),
            0,
            "no URL in {printed:?}"
        );
        printed.push_str(&line);
        if line.starts_with("http://") {
            return line.trim().to_string();
        }
    }
}

impl PendingLogin {
    /// Waits for the command; its whole stdout and stderr.
    fn finish(mut self) -> (bool, String, String) {
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = self.child.wait().unwrap();
        (status.success(), format!("{}{rest}", self.printed), err)
    }
}

fn login(harness: &Harness, server: &OAuthMcpServer) {
    let pending = start_login(harness);
    let (status, body) = server.play_browser(&pending.url, None);
    assert_eq!(status, 200, "{body}");
    let (ok, out, err) = pending.finish();
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains(&format!("Successfully logged in to MCP server '{SERVER}'.")),
        "{out}"
    );
    for token in server.issued_tokens() {
        assert!(
            !out.contains(&token) && !err.contains(&token),
            "token printed"
        );
    }
}

fn stored(harness: &Harness) -> serde_json::Value {
    let text = std::fs::read_to_string(harness.home.path().join(".credentials.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn stored_entry(harness: &Harness, server: &OAuthMcpServer) -> serde_json::Value {
    stored(harness)[format!("{SERVER}|{}", server.mcp_url())].clone()
}

/// Runs one turn whose model calls the tool; the tool's output.
fn turn_output(harness: &Harness) -> String {
    let out = harness.exec(&["--json", "who am i"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = harness.mock.requests();
    tool_outputs(&requests.last().unwrap().body)
        .first()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn login_stores_tokens_privately_and_a_turn_calls_the_tool_with_them() {
    let server = OAuthMcpServer::start(3600);
    let harness = harness_for(&server);
    let listed = stdout(&mcp(&harness, &["list"]));
    assert!(listed.contains("Not logged in"), "{listed}");

    let pending = start_login(&harness);
    assert!(
        pending.printed.contains(&format!(
            "Authorize `{SERVER}` by opening this URL in your browser:"
        )),
        "{}",
        pending.printed
    );
    let url = url::Url::parse(&pending.url).unwrap();
    let query: std::collections::BTreeMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(
        query["redirect_uri"].starts_with("http://127.0.0.1:"),
        "{query:?}"
    );
    assert_eq!(
        query["scope"], "tools.read",
        "the advertised scopes by default"
    );
    let (status, body) = server.play_browser(&pending.url, None);
    assert_eq!(status, 200, "{body}");
    let (ok, out, err) = pending.finish();
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(out.ends_with(&format!(
        "Successfully logged in to MCP server '{SERVER}'.\n"
    )));

    let path = harness.home.path().join(".credentials.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "credentials readable by the owner only");
    let entry = stored_entry(&harness, &server);
    let issued = server.issued_tokens();
    assert_eq!(entry["access_token"], issued[0]);
    assert_eq!(entry["server_name"], SERVER);
    assert!(entry["refresh_token"]
        .as_str()
        .unwrap()
        .starts_with("refresh-"));
    assert!(entry["expires_at"].as_u64().is_some());
    assert_eq!(entry["scopes"], serde_json::json!(["tools.read"]));
    for token in &issued {
        assert!(
            !out.contains(token) && !err.contains(token),
            "token printed"
        );
    }

    let listed = stdout(&mcp(&harness, &["list"]));
    let row = listed.lines().find(|l| l.starts_with(SERVER)).unwrap();
    assert!(row.trim_end().ends_with("OAuth"), "{listed}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&mcp(&harness, &["list", "--json"]))).unwrap();
    assert_eq!(json[0]["auth_status"], "o_auth");

    let output = turn_output(&harness);
    assert!(output.contains(TOOL_ANSWER), "{output}");
    let used = server.mcp_tokens();
    assert!(
        !used.is_empty() && used.iter().all(|t| *t == issued[0]),
        "{used:?}"
    );
    // Nothing the turn recorded holds the token.
    for rollout in harness.rollouts() {
        let text = std::fs::read_to_string(rollout).unwrap();
        assert!(!text.contains(&issued[0]), "token in a rollout");
    }
}

#[test]
fn an_expired_token_is_refreshed_and_the_new_one_saved() {
    // The login's token expires at once.
    let server = OAuthMcpServer::start(0);
    let harness = harness_for(&server);
    login(&harness, &server);
    let before = stored_entry(&harness, &server);

    let output = turn_output(&harness);
    assert!(output.contains(TOOL_ANSWER), "{output}");
    assert_eq!(server.refreshes(), 1, "one refresh serves the whole turn");
    let issued = server.issued_tokens();
    let fresh = issued.last().unwrap();
    assert!(server.mcp_tokens().iter().all(|t| t == fresh));
    let after = stored_entry(&harness, &server);
    assert_eq!(after["access_token"], *fresh);
    assert_eq!(
        after["refresh_token"], before["refresh_token"],
        "the refresh answer had none: the old one is kept"
    );
}

#[test]
fn a_token_the_server_refuses_is_refreshed_once() {
    let server = OAuthMcpServer::start(3600);
    let harness = harness_for(&server);
    login(&harness, &server);
    server.revoke_access_tokens();

    let output = turn_output(&harness);
    assert!(output.contains(TOOL_ANSWER), "{output}");
    assert_eq!(server.refreshes(), 1);
    assert_eq!(
        stored_entry(&harness, &server)["access_token"],
        *server.issued_tokens().last().unwrap()
    );
}

#[test]
fn logout_removes_the_tokens_and_the_next_connection_asks_for_login() {
    let server = OAuthMcpServer::start(3600);
    let harness = harness_for(&server);
    login(&harness, &server);

    let out = mcp(&harness, &["logout", SERVER]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("Removed OAuth credentials for '{SERVER}'.\n")
    );
    assert_eq!(stored(&harness), serde_json::json!({}));
    let again = mcp(&harness, &["logout", SERVER]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains(&format!("No OAuth credentials stored for '{SERVER}'.")),
        "{}",
        stderr(&again)
    );

    let out = harness.exec(&["who am i"]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "MCP server `{SERVER}` is not available this turn: the server requires OAuth and \
             no token is stored: run `troupe mcp login {SERVER}`"
        )),
        "{err}"
    );
    assert!(server.mcp_tokens().is_empty(), "no MCP request got through");
    let listed = stdout(&mcp(&harness, &["list"]));
    assert!(listed.contains("Not logged in"), "{listed}");
}

#[test]
fn login_refuses_unknown_names_stdio_servers_and_a_keyring_store() {
    let harness = Harness::new(vec![]);
    let out = mcp(&harness, &["login", "nowhere"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("No MCP server named 'nowhere' found."),
        "{}",
        stderr(&out)
    );

    add_server(&harness, "command = \"some-mcp-server\"");
    for verb in ["login", "logout"] {
        let out = mcp(&harness, &[verb, SERVER]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("only supported for streamable"),
            "{verb}: {}",
            stderr(&out)
        );
    }

    let path = harness.home.path().join("config.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("mcp_oauth_credentials_store = \"keyring\"\n{config}"),
    )
    .unwrap();
    let out = mcp(&harness, &["list"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("`keyring` is not supported by troupe"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_callback_with_a_wrong_state_is_refused_and_the_login_goes_on() {
    let server = OAuthMcpServer::start(3600);
    let harness = harness_for(&server);
    let pending = start_login(&harness);

    let (status, body) = server.play_browser(&pending.url, Some("forged-state"));
    assert_eq!(status, 400);
    assert!(body.contains("state does not match"), "{body}");
    assert!(server.issued_tokens().is_empty(), "no code was exchanged");
    assert!(!harness.home.path().join(".credentials.json").exists());

    let (status, body) = server.play_browser(&pending.url, None);
    assert_eq!(status, 200, "{body}");
    let (ok, out, err) = pending.finish();
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert_eq!(server.issued_tokens().len(), 1);
}
