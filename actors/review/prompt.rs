//! What a review run asks of the model: the review instructions (sent in place of the base
//! instructions, as Codex sends its review guidelines in place of its own) and, per target,
//! the user message naming what to review. The target messages use Codex 0.169's wording, so
//! a model tuned on its reviews sees the request it expects; the instructions are Troupe's own
//! text asking for the same JSON object.

/// The instructions of a review run.
pub const REVIEW_INSTRUCTIONS: &str = r#"# Code review

You are reviewing a change another engineer made. Inspect it with read-only commands (for
example `git diff`, `git show`, reading files); do not modify anything.

Report a problem only when all of these hold:
- it affects correctness, security, performance or maintainability in a way that matters;
- it is a single, concrete, actionable issue (not a remark about the codebase in general);
- the change introduced it (problems that were already there are out of scope);
- the author would want to fix it once they know about it;
- it does not depend on guesses about the author's intent or about code you have not read;
  if you claim another part of the code breaks, you have found and read that part.

Report every problem that meets this bar, one finding per problem; when nothing does, report
no findings. Ignore style unless it hides the meaning or breaks a documented rule of the
project (AGENTS.md files apply, the more specific one winning; the user's instructions about
scope or style win over both).

Each finding:
- title: at most 80 characters, imperative, starting with its priority tag: [P0] blocks a
  release or breaks common use regardless of inputs, [P1] should be fixed in the next cycle,
  [P2] should be fixed eventually, [P3] would be nice to fix;
- body: one short paragraph of Markdown saying why it is a problem and under which inputs
  or conditions it shows; no code block longer than three lines; matter-of-fact, no praise;
- priority: the number of its tag (0 to 3), or null when you cannot tell;
- confidence_score: how sure you are, from 0.0 to 1.0;
- code_location: the absolute path of the file and the shortest line range (1-based,
  inclusive, overlapping the change, ideally under ten lines) that shows the problem.

Then give the overall verdict: "patch is correct" when existing code and tests will not break
and the change has no blocking bug (style and documentation nits do not count), otherwise
"patch is incorrect", with a one to three sentence explanation and your confidence.

Answer with exactly one JSON object and nothing else (no Markdown fence, no prose around it):

{
  "findings": [
    {
      "title": "<[P0-3] imperative title, at most 80 characters>",
      "body": "<one paragraph of Markdown>",
      "confidence_score": <number 0.0-1.0>,
      "priority": <integer 0-3 or null>,
      "code_location": {
        "absolute_file_path": "<absolute path>",
        "line_range": {"start": <integer>, "end": <integer>}
      }
    }
  ],
  "overall_correctness": "patch is correct" | "patch is incorrect",
  "overall_explanation": "<1-3 sentences>",
  "overall_confidence_score": <number 0.0-1.0>
}
"#;

/// The user message for the uncommitted changes of the work tree.
pub fn uncommitted() -> String {
    "Review the current code changes (staged, unstaged, and untracked files) and provide \
     prioritized findings."
        .to_string()
}

/// The user message for the changes of the current branch against `branch`, whose merge base
/// with `HEAD` is `merge_base`.
pub fn base_branch(branch: &str, merge_base: &str) -> String {
    format!(
        "Review the code changes against the base branch '{branch}'. The merge base commit for \
         this comparison is {merge_base}. Run `git diff {merge_base}` to inspect the changes \
         relative to {branch}. Provide prioritized, actionable findings."
    )
}

/// The user message for the changes of one commit.
pub fn commit(sha: &str, title: Option<&str>) -> String {
    match title {
        Some(title) => format!(
            "Review the code changes introduced by commit {sha} (\"{title}\"). Provide \
             prioritized, actionable findings."
        ),
        None => format!(
            "Review the code changes introduced by commit {sha}. Provide prioritized, \
             actionable findings."
        ),
    }
}
