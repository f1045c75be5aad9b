//! Benchmark: initial context assembly for a repository with 50 nested AGENTS.md files and
//! 200 skills (issue: context and configuration). Run with
//! `cargo bench -p troupe-actors --bench context_assembly`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

#[path = "support.rs"]
mod support;

use std::time::Instant;
use troupe_actors::session::context::initial_context;

fn main() -> std::io::Result<()> {
    let home = tempfile::tempdir()?;
    let repo = tempfile::tempdir()?;
    std::fs::create_dir_all(repo.path().join(".git"))?;
    let mut dir = repo.path().to_path_buf();
    for depth in 0..50 {
        std::fs::write(
            dir.join("AGENTS.md"),
            format!("rules of level {depth}\n").repeat(10),
        )?;
        dir = dir.join(format!("d{depth}"));
        std::fs::create_dir_all(&dir)?;
    }
    for i in 0..200 {
        let skill = repo.path().join(format!(".agents/skills/skill{i:03}"));
        std::fs::create_dir_all(&skill)?;
        std::fs::write(
            skill.join("SKILL.md"),
            format!("---\nname: skill{i:03}\ndescription: does thing {i}\n---\nbody {i}\n"),
        )?;
    }
    let mut settings = support::settings("http://127.0.0.1:1".into(), home.path());
    settings.cwd = dir;
    settings.context.project_doc_max_bytes = 32 * 1024;
    settings.context.project_root_markers = vec![".git".into()];
    let mut samples = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        let context = initial_context(&settings);
        samples.push(started.elapsed());
        assert_eq!(context.skills.len(), 200);
    }
    samples.sort();
    println!(
        "initial context, 50 nested AGENTS.md + 200 skills: median {:?}, min {:?}, max {:?} (50 runs)",
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1]
    );
    Ok(())
}
