//! `troupe mcp add|list|get|remove` through the real binary: the user config is edited in
//! place (comments kept), a bad entry is refused and nothing is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support::{stderr, stdout, Harness};

fn mcp(h: &Harness, args: &[&str]) -> std::process::Output {
    h.command().arg("mcp").args(args).output().unwrap()
}

#[test]
fn add_list_get_remove_edit_the_user_config() {
    let h = Harness::new(vec![]);
    let config = h.home.path().join("config.toml");
    let original = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("# my comment\n{original}")).unwrap();

    let out = mcp(&h, &["list"]);
    assert!(
        stdout(&out).contains("No MCP servers configured yet"),
        "{}",
        stdout(&out)
    );

    let out = mcp(
        &h,
        &[
            "add",
            "docs",
            "--env",
            "TOKEN=secret",
            "--",
            "docs-server",
            "--port",
            "4000",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Added global MCP server 'docs'.\n");
    let out = mcp(
        &h,
        &[
            "add",
            "remote",
            "--url",
            "https://example.invalid/mcp",
            "--bearer-token-env-var",
            "TOK",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# my comment\n"), "{text}");
    assert!(text.contains("[mcp_servers.docs]"), "{text}");

    let out = mcp(&h, &["list"]);
    let listing = stdout(&out);
    assert!(
        listing.lines().next().unwrap().starts_with("Name"),
        "{listing}"
    );
    assert!(
        listing.contains("docs  docs-server  --port 4000  TOKEN=*****"),
        "{listing}"
    );
    assert!(
        !listing.contains("secret"),
        "env values are masked: {listing}"
    );
    assert!(
        listing.contains("https://example.invalid/mcp  TOK"),
        "{listing}"
    );
    let auth_of = |name: &str| {
        let row = listing.lines().find(|l| l.starts_with(name)).unwrap();
        row.trim_end().to_string()
    };
    assert!(
        auth_of("docs").ends_with("enabled  Unsupported"),
        "{listing}"
    );
    assert!(
        auth_of("remote").ends_with("enabled  Bearer token"),
        "{listing}"
    );

    let out = mcp(&h, &["list", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json[0]["name"], "docs");
    assert_eq!(json[0]["transport"]["type"], "stdio");
    assert_eq!(
        json[0]["transport"]["args"],
        serde_json::json!(["--port", "4000"])
    );
    assert_eq!(json[1]["transport"]["type"], "streamable_http");
    assert_eq!(json[0]["auth_status"], "unsupported");
    assert_eq!(json[1]["auth_status"], "bearer_token");

    let out = mcp(&h, &["get", "docs"]);
    assert!(
        stdout(&out).starts_with("docs\n  enabled: true\n  transport: stdio\n"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("  remove: troupe mcp remove docs"));
    let out = mcp(&h, &["get", "nope"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("No MCP server named 'nope' found."),
        "{}",
        stderr(&out)
    );

    let out = mcp(&h, &["remove", "docs"]);
    assert_eq!(stdout(&out), "Removed global MCP server 'docs'.\n");
    let out = mcp(&h, &["remove", "docs"]);
    assert_eq!(stdout(&out), "No MCP server named 'docs' found.\n");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        !text.contains("mcp_servers.docs") && text.contains("mcp_servers.remote"),
        "{text}"
    );
}

#[test]
fn bad_names_and_entries_are_refused_and_nothing_is_written() {
    let h = Harness::new(vec![]);
    let config = h.home.path().join("config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    let out = mcp(&h, &["add", "bad name", "--", "x"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("invalid server name"),
        "{}",
        stderr(&out)
    );
    let out = mcp(&h, &["add", "web", "--url", "ftp://host/mcp"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("http://"), "{}", stderr(&out));
    let out = mcp(&h, &["add", "none"]);
    assert!(!out.status.success());
    let out = mcp(&h, &["login", "docs"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("No MCP server named 'docs' found."),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}
