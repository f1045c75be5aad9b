use super::*;
use pretty_assertions::assert_eq;

fn raw(server: &str, tool: &str) -> RawToolName {
    RawToolName {
        server: server.into(),
        tool: tool.into(),
    }
}

fn names(tools: &[(&str, &str)]) -> Vec<String> {
    let (named, _) = name_tools(tools.iter().map(|(s, t)| raw(s, t)).collect());
    named.into_iter().map(|t| t.model_name).collect()
}

#[test]
fn sanitize_keeps_only_ascii_alphanumerics_and_underscore() {
    assert_eq!(sanitize("repo-tools"), "repo_tools");
    assert_eq!(sanitize("仓库管理"), "____");
    assert_eq!(sanitize(""), "_");
    assert_eq!(sanitize("a.b c\u{7}"), "a_b_c_");
}

#[test]
fn plain_names_are_prefixed_and_joined() {
    assert_eq!(
        names(&[("github", "list_issues")]),
        vec!["mcp__github__list_issues"]
    );
    assert_eq!(
        names(&[("repo-tools", "get-file")]),
        vec!["mcp__repo_tools__get_file"]
    );
}

#[test]
fn the_two_chinese_servers_collide_and_get_content_hashed_namespaces() {
    let got = names(&[("仓库管理", "查询"), ("部署运维", "查询")]);
    assert_eq!(got.len(), 2);
    assert_ne!(got[0], got[1]);
    for name in &got {
        assert!(name.starts_with("mcp______"), "{name}");
        assert!(name.ends_with("____"), "{name}");
        assert!(name.len() <= MAX_NAME_BYTES);
        assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    }
    // The suffix is the SHA-1 of the server's identity: independent of the order.
    let reversed = names(&[("部署运维", "查询"), ("仓库管理", "查询")]);
    assert_eq!(got, reversed);
    let ns = hash_suffix(&namespace_identity("仓库管理"));
    assert!(
        got.contains(&format!("mcp______{ns}__{}", "__")),
        "{got:?} {ns}"
    );
}

#[test]
fn colliding_tool_names_of_one_server_get_hashed_names() {
    let got = names(&[("s", "a-b"), ("s", "a_b")]);
    assert_eq!(got.len(), 2);
    assert_ne!(got[0], got[1]);
    assert!(got.iter().all(|n| n.starts_with("mcp__s__a_b_")), "{got:?}");
}

#[test]
fn long_names_are_cut_to_64_bytes_with_a_stable_hash() {
    let long = "x".repeat(500);
    let got = names(&[("server", &long)]);
    assert_eq!(got[0].len(), MAX_NAME_BYTES);
    assert!(got[0].starts_with("mcp__server__xxx"));
    assert_eq!(got, names(&[("server", &long)]));
    let long_server = "s".repeat(200);
    let got = names(&[(&long_server, "t")]);
    assert!(got[0].len() <= MAX_NAME_BYTES, "{}", got[0]);
}

#[test]
fn duplicates_are_dropped_and_reported() {
    let (named, duplicates) = name_tools(vec![raw("s", "t"), raw("s", "t"), raw("s", "u")]);
    assert_eq!(named.len(), 2);
    assert_eq!(duplicates, vec![raw("s", "t")]);
}

#[test]
fn order_is_by_raw_identity_not_by_arrival() {
    let a = names(&[("b", "z"), ("a", "y"), ("b", "x")]);
    let b = names(&[("b", "x"), ("a", "y"), ("b", "z")]);
    assert_eq!(a, b);
    assert_eq!(a, vec!["mcp__a__y", "mcp__b__x", "mcp__b__z"]);
}

#[test]
fn control_characters_never_reach_the_name() {
    let got = names(&[("s", "evil\n\u{1b}[31mname\0")]);
    assert!(
        got[0]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "{got:?}"
    );
}
