//! Skills: folders with a `SKILL.md` (front matter `name`, `description`) under
//! `$TROUPE_HOME/skills/` and the project's `.agents/skills/`. The initial context lists each
//! skill's name, description and path within a budget; the body is read only when used — the
//! model opens the file, or the user names the skill as `$name` and its body is attached.

use super::bounded_read::read_bounded;
use std::path::{Path, PathBuf};

/// Bytes the skills list may take in the initial context.
pub const LIST_BUDGET_BYTES: usize = 8 * 1024;
/// Bytes read from the head of a SKILL.md for its front matter.
pub const FRONT_MATTER_MAX_BYTES: usize = 16 * 1024;
/// Bytes of a skill's body attached when the user names it.
pub const BODY_MAX_BYTES: usize = 32 * 1024;

/// One discovered skill (body not loaded).
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub path: PathBuf,
}

/// Skills found and problems met (each naming the file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSet {
    pub skills: Vec<Skill>,
    pub warnings: Vec<String>,
}

/// Finds skills in `roots`, in order; a later skill with a taken name is skipped with a
/// warning (user skills come first, so a project cannot shadow them silently).
pub fn discover_skills(roots: &[PathBuf]) -> SkillSet {
    let mut set = SkillSet::default();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(root) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs {
            let file = dir.join("SKILL.md");
            if !file.is_file() {
                continue;
            }
            match read_front_matter(&file) {
                Ok(skill) if set.skills.iter().any(|s| s.name == skill.name) => {
                    set.warnings.push(format!(
                        "{}: a skill named `{}` already exists; skipped",
                        file.display(),
                        skill.name
                    ))
                }
                Ok(skill) => set.skills.push(skill),
                Err(why) => set
                    .warnings
                    .push(format!("{}: {why}; skipped", file.display())),
            }
        }
    }
    set
}

/// Reads only the front matter of a SKILL.md (from its first [`FRONT_MATTER_MAX_BYTES`]).
pub fn read_front_matter(path: &Path) -> Result<Skill, String> {
    let text = read_bounded(path, FRONT_MATTER_MAX_BYTES)
        .map_err(|err| format!("cannot read: {err}"))?
        .text;
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return Err("no front matter (the file must start with a `---` line)".into());
    }
    let mut name = None;
    let mut description = None;
    let mut closed = false;
    for line in lines {
        if line.trim() == "---" {
            closed = true;
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value
                .trim()
                .trim_matches('"')
                .trim_matches('\'')
                .to_string();
            match key.trim() {
                "name" => name = Some(value),
                "description" => description = Some(value),
                _ => {}
            }
        }
    }
    if !closed {
        return Err("front matter is not closed by a `---` line".into());
    }
    let name = name
        .filter(|n| !n.is_empty())
        .ok_or("front matter has no `name`")?;
    let description = description
        .filter(|d| !d.is_empty())
        .ok_or("front matter has no `description`")?;
    Ok(Skill {
        name,
        description,
        path: path.to_path_buf(),
    })
}

/// The developer message listing skills, within `budget` bytes.
pub fn skills_list(skills: &[Skill], budget: usize) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = String::from(
        "<skills>\nSkills are folders of instructions for specific tasks. When a task matches \
         a skill, read its SKILL.md (at the path given) before starting, and follow it.\n",
    );
    let mut listed = 0;
    for skill in skills {
        let line = format!(
            "- {}: {} ({})\n",
            skill.name,
            skill.description,
            skill.path.display()
        );
        if text.len() + line.len() > budget {
            break;
        }
        text.push_str(&line);
        listed += 1;
    }
    if listed < skills.len() {
        text.push_str(&format!(
            "({} more skills not listed for lack of space)\n",
            skills.len() - listed
        ));
    }
    text.push_str("</skills>");
    Some(text)
}

/// Skills the user named as `$name` in `text`, in order of first mention.
pub fn mentioned<'a>(skills: &'a [Skill], text: &str) -> Vec<&'a Skill> {
    let mut found: Vec<&Skill> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || ",.;:!?()".contains(c)) {
        let Some(name) = word.strip_prefix('$') else {
            continue;
        };
        if let Some(skill) = skills.iter().find(|s| s.name == name) {
            if !found.iter().any(|f| f.name == skill.name) {
                found.push(skill);
            }
        }
    }
    found
}

/// The message that attaches a named skill's body (at most [`BODY_MAX_BYTES`] of it), and a
/// warning when the body was cut.
pub fn skill_body_message(skill: &Skill) -> Result<(String, Option<String>), String> {
    let read = read_bounded(&skill.path, BODY_MAX_BYTES)
        .map_err(|err| format!("{}: cannot read: {err}", skill.path.display()))?;
    let warning = read.truncated.then(|| {
        format!(
            "{}: skill `{}` is {} bytes; only its first {BODY_MAX_BYTES} bytes were attached",
            skill.path.display(),
            skill.name,
            read.file_bytes
        )
    });
    let cut_note = if read.truncated {
        format!(
            "\n[skill truncated: {BODY_MAX_BYTES} of {} bytes shown; read the file for the rest]",
            read.file_bytes
        )
    } else {
        String::new()
    };
    let message = format!(
        "<skill name=\"{}\" path=\"{}\">\n{}{cut_note}\n</skill>",
        skill.name,
        skill.path.display(),
        read.text.trim_end()
    );
    Ok((message, warning))
}
