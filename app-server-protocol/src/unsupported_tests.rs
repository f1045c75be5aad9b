//! Every method of Codex's schema (the committed list in `tests/codex-schema/`) is either
//! implemented or refused with a specific reason, and docs/app-server.md's table lists each
//! method, notification and server request once, with what Troupe does.

use crate::method_names::METHODS;
use crate::schema::wire_schemas;
use crate::unsupported::{unsupported, UNSUPPORTED};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn repo_file(path: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Codex's client request methods.
fn codex_requests() -> Vec<String> {
    repo_file("tests/codex-schema/client-requests.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The methods of a committed `oneOf` bundle (notifications, server requests).
fn bundle_methods(file: &str) -> Vec<String> {
    let bundle: Value = serde_json::from_str(&repo_file(file)).expect("JSON");
    bundle["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .filter_map(|entry| entry["properties"]["method"]["enum"][0].as_str())
        .map(str::to_string)
        .collect()
}

/// The rows `| \`name\` | text |` of the docs table whose header's first cell is `header`.
fn doc_table(header: &str) -> Vec<(String, String)> {
    let docs = repo_file("../docs/app-server.md");
    let mut rows = Vec::new();
    let mut inside = false;
    for line in docs.lines() {
        if line.starts_with(&format!("| {header} | Troupe |")) {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.trim_matches('|').splitn(2, " | ").collect();
            let name = cells[0].trim().trim_matches('`');
            if name.starts_with("---") {
                continue;
            }
            rows.push((
                name.to_string(),
                cells.get(1).unwrap_or(&"").trim().to_string(),
            ));
        }
    }
    assert!(
        !rows.is_empty(),
        "no `| {header} | Troupe |` table in docs/app-server.md"
    );
    rows
}

fn by_name(rows: Vec<(String, String)>, problems: &mut Vec<String>) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for (name, text) in rows {
        if map.insert(name.clone(), text).is_some() {
            problems.push(format!("`{name}` has two rows"));
        }
    }
    map
}

#[test]
fn every_codex_method_is_implemented_or_refused_with_a_reason() {
    let codex: BTreeSet<String> = codex_requests().into_iter().collect();
    assert!(codex.len() > 100, "the committed list is incomplete");
    for method in &codex {
        let implemented = METHODS.contains(&method.as_str());
        let refused = unsupported(method);
        assert!(
            implemented != refused.is_some(),
            "`{method}`: implemented {implemented}, refused {refused:?}"
        );
    }
    for method in METHODS {
        assert!(
            method.starts_with("troupe/") || codex.contains(*method),
            "`{method}` is implemented under a name Codex does not have"
        );
    }
    for (name, _) in UNSUPPORTED {
        assert!(
            codex
                .iter()
                .any(|m| m == name || (name.ends_with('/') && m.starts_with(name))),
            "unsupported.rs names `{name}`, which Codex's schema does not have"
        );
    }
    assert_eq!(unsupported("nosuch/method"), None);
}

#[test]
fn docs_table_lists_every_codex_method_as_it_is_answered() {
    let mut problems = Vec::new();
    let rows = by_name(doc_table("method"), &mut problems);
    let codex = codex_requests();
    for method in &codex {
        let Some(text) = rows.get(method) else {
            problems.push(format!("method `{method}` has no row"));
            continue;
        };
        match unsupported(method) {
            None if !(text.starts_with("same") || text.starts_with("different")) => {
                problems.push(format!(
                    "`{method}` is implemented; its row must say `same` or `different…`: {text}"
                ))
            }
            None => {}
            Some(error) => {
                let why = error
                    .split(" is not supported by Troupe: ")
                    .nth(1)
                    .unwrap_or("");
                let expected = format!("not applicable: {why}");
                if *text != expected {
                    problems.push(format!("| `{method}` | {expected} |"));
                }
            }
        }
    }
    for name in rows.keys() {
        if !codex.contains(name) {
            problems.push(format!(
                "the method table names `{name}`, not in Codex's schema"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn docs_tables_list_every_codex_notification_and_server_request() {
    let mut problems = Vec::new();
    let sent: BTreeSet<&str> = wire_schemas()
        .into_iter()
        .filter(|(_, kind, _)| *kind != "response")
        .map(|(method, _, _)| method)
        .collect();
    for (header, file) in [
        ("notification", "tests/codex-schema/ServerNotification.json"),
        ("server request", "tests/codex-schema/ServerRequest.json"),
    ] {
        let rows = by_name(doc_table(header), &mut problems);
        let codex = bundle_methods(file);
        for name in &codex {
            match rows.get(name) {
                None => problems.push(format!("{header} `{name}` has no row")),
                Some(text) if sent.contains(name.as_str()) && text.starts_with("not") => {
                    problems.push(format!("Troupe sends `{name}`, its row says: {text}"))
                }
                Some(text)
                    if !["same", "different", "not sent", "not applicable"]
                        .iter()
                        .any(|start| text.starts_with(start)) =>
                {
                    problems.push(format!("`{name}`: row must say same / different / not sent / not applicable: {text}"))
                }
                Some(_) => {}
            }
        }
        for name in rows.keys() {
            if !codex.contains(name) {
                problems.push(format!(
                    "the {header} table names `{name}`, not in Codex's schema"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
