//! `troupe list --tree`: sub-agents nested under the thread that spawned them.

use troupe_messages::ids::ThreadId;
use troupe_messages::threads::ThreadSummary;

/// The threads in display order, each with its depth in the tree. A sub-agent (a summary
/// with a task path) goes under its parent when the parent is listed; everything else is a
/// top-level entry, in the order given.
pub fn tree_order(threads: &[ThreadSummary]) -> Vec<(usize, &ThreadSummary)> {
    let listed = |id: &ThreadId| threads.iter().any(|t| t.id == *id);
    let is_nested = |t: &ThreadSummary| {
        t.task_path.is_some() && t.parent.is_some_and(|p| p != t.id && listed(&p))
    };
    let mut out = Vec::with_capacity(threads.len());
    for top in threads.iter().filter(|t| !is_nested(t)) {
        push_subtree(threads, top, 0, &mut out);
    }
    out
}

fn push_subtree<'a>(
    threads: &'a [ThreadSummary],
    node: &'a ThreadSummary,
    depth: usize,
    out: &mut Vec<(usize, &'a ThreadSummary)>,
) {
    // A cycle in damaged index data must not recurse forever.
    if out.iter().any(|(_, t)| t.id == node.id) {
        return;
    }
    out.push((depth, node));
    let mut children: Vec<&ThreadSummary> = threads
        .iter()
        .filter(|t| t.task_path.is_some() && t.parent == Some(node.id))
        .collect();
    children.sort_by(|a, b| a.task_path.cmp(&b.task_path));
    for child in children {
        push_subtree(threads, child, depth + 1, out);
    }
}

/// One line of the tree: indented, with the agent's task path and nickname.
pub fn tree_line(depth: usize, t: &ThreadSummary, base: String) -> String {
    match (&t.task_path, &t.nickname) {
        (Some(path), nickname) if depth > 0 => format!(
            "{}└ {path} ({})  {base}",
            "  ".repeat(depth - 1),
            nickname.as_deref().unwrap_or("-")
        ),
        _ => base,
    }
}

#[cfg(test)]
#[path = "threads_tree_tests.rs"]
mod tests;
