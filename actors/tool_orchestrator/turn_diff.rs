//! The net diff of a turn: every file's contents before the turn first touched it, against
//! its contents now, as one `git apply`-able unified diff.
//!
//! Fed by each successful `apply_patch` (commands that write files are not tracked: there
//! is no cheap, reliable way to know what a process touched).

use similar::TextDiff;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use troupe_apply_patch::{FinalState, Plan};

/// Baselines and current states of the files a turn changed.
#[derive(Debug, Default)]
pub struct TurnDiffTracker {
    /// Absolute path → contents before the turn touched it (None: did not exist).
    baseline: BTreeMap<PathBuf, Option<String>>,
    /// Absolute path → contents now.
    current: BTreeMap<PathBuf, Option<String>>,
}

impl TurnDiffTracker {
    /// Records an applied plan.
    pub fn record(&mut self, plan: &Plan) {
        for (path, before) in &plan.before {
            self.baseline
                .entry(path.clone())
                .or_insert_with(|| before.clone());
        }
        for (path, state) in &plan.files {
            let now = match state {
                FinalState::Present(text) => Some(text.clone()),
                FinalState::Absent => None,
            };
            self.current.insert(path.clone(), now);
        }
    }

    /// The diff of everything recorded, paths relative to `root`; `None` when it is empty.
    pub fn unified_diff(&self, root: &Path) -> Option<String> {
        let mut out = String::new();
        for (path, now) in &self.current {
            let before = self.baseline.get(path).cloned().flatten();
            if before == *now {
                continue;
            }
            let shown = path
                .strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string();
            out.push_str(&file_diff(&shown, before.as_deref(), now.as_deref()));
        }
        (!out.is_empty()).then_some(out)
    }
}

/// One file's section in git's format.
pub fn file_diff(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    let mut out = format!("diff --git a/{path} b/{path}\n");
    let (old_name, new_name) = match (before, after) {
        (None, _) => {
            out.push_str("new file mode 100644\n");
            ("/dev/null".to_string(), format!("b/{path}"))
        }
        (_, None) => {
            out.push_str("deleted file mode 100644\n");
            (format!("a/{path}"), "/dev/null".to_string())
        }
        _ => (format!("a/{path}"), format!("b/{path}")),
    };
    let old = before.unwrap_or_default();
    let new = after.unwrap_or_default();
    let diff = TextDiff::from_lines(old, new);
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string();
    out.push_str(&body);
    out
}

#[cfg(test)]
#[path = "turn_diff_tests.rs"]
mod tests;
