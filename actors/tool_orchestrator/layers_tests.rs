//! The orchestrator reads bottom-up: no module of `tool_orchestrator/` (nor of `agents/` or
//! `hooks/`, which it touches) is in an import circle. Read from the crate's own sources: each
//! file is a module, and an edge is a `crate::`/`super::`/`self::` path (or a `use child::`)
//! naming another file's module. Test files are left out.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every non-test `.rs` file under `root`, as (module path, source).
fn modules(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("read crate dir") {
        let path = entry.expect("dir entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "benches" | "examples" | "target") {
                modules(root, &path, out);
            }
            continue;
        }
        if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "test_support.rs" {
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .expect("under root")
            .with_extension("");
        let mut segments: Vec<String> = relative
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
            segments.pop();
        }
        let source = std::fs::read_to_string(&path).expect("read source");
        out.insert(segments.join("::"), source);
    }
}

fn graph(root: &Path) -> Graph {
    let mut sources = BTreeMap::new();
    modules(root, root, &mut sources);
    let path_re = Regex::new(r"\b((?:crate|super|self)(?:::\w+)+)").expect("regex");
    let child_re = Regex::new(r"\buse\s+(\w+)::").expect("regex");
    let inline_tests = Regex::new(r"#\[cfg\(test\)\]\s*mod \w+\s*\{").expect("regex");
    let comment = Regex::new(r"//.*").expect("regex");
    let resolve = |segments: &[String]| {
        (1..=segments.len())
            .rev()
            .map(|n| segments[..n].join("::"))
            .find(|m| sources.contains_key(m))
    };
    let mut edges = Graph::new();
    for (module, source) in &sources {
        let source = match inline_tests.find(source) {
            Some(found) => &source[..found.start()],
            None => source.as_str(),
        };
        let source = comment.replace_all(source, "");
        let here: Vec<String> = module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let mut paths: Vec<String> = path_re
            .captures_iter(&source)
            .map(|c| c[1].to_string())
            .collect();
        paths.extend(
            child_re
                .captures_iter(&source)
                .filter(|c| !matches!(&c[1], "crate" | "super" | "self" | "std" | "core"))
                .map(|c| format!("self::{}", &c[1])),
        );
        let targets = edges.entry(module.clone()).or_default();
        for path in paths {
            let mut segments = path.split("::").map(String::from).peekable();
            let mut base = match segments.peek().map(String::as_str) {
                Some("crate") => {
                    segments.next();
                    Vec::new()
                }
                Some("self") => {
                    segments.next();
                    here.clone()
                }
                _ => here.clone(),
            };
            while segments.peek().map(String::as_str) == Some("super") {
                segments.next();
                base.pop();
            }
            base.extend(segments);
            if let Some(target) = resolve(&base) {
                if !target.is_empty() && &target != module {
                    targets.insert(target);
                }
            }
        }
    }
    edges
}

/// The modules `from` reaches.
fn reach(edges: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(module) = stack.pop() {
        for next in edges.get(&module).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn no_module_of_the_orchestrator_agents_or_hooks_is_in_an_import_circle() {
    let edges = graph(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(
        edges.contains_key("tool_orchestrator::contract"),
        "sources read"
    );
    let watched = ["tool_orchestrator", "agents", "hooks"];
    let circles: Vec<String> = edges
        .keys()
        .filter(|m| watched.iter().any(|w| m.split("::").next() == Some(*w)))
        .filter_map(|m| {
            let reached = reach(&edges, m);
            reached.contains(m).then(|| {
                let back: Vec<&String> = edges[m]
                    .iter()
                    .filter(|next| reach(&edges, next).contains(m))
                    .collect();
                format!("{m} -> {back:?} -> … -> {m}")
            })
        })
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}
