//! Codex's `skills/list`: the skills a thread started in each `cwd` would list to its model
//! (`$TROUPE_HOME/skills/`, scope `user`, then the project's `.agents/skills/`, scope
//! `repo`), found the way the session finds them, with the files that could not be used as
//! errors. There is no cache: every call reads the disk (so `forceReload` changes nothing).

use crate::hub::{Hub, SettingsRequest};
use std::path::PathBuf;
use troupe_actors::session::context::skills::discover_skills;
use troupe_app_server_protocol::protocol::{
    SkillErrorInfo, SkillMetadata, SkillScope, SkillsListEntry, SkillsListParams,
    SkillsListResponse,
};

pub async fn skills_list(
    hub: &Hub,
    params: SkillsListParams,
) -> Result<SkillsListResponse, String> {
    let cwds: Vec<Option<PathBuf>> = if params.cwds.is_empty() {
        vec![None]
    } else {
        params
            .cwds
            .iter()
            .map(|cwd| Some(PathBuf::from(cwd)))
            .collect()
    };
    let mut data = Vec::new();
    for cwd in cwds {
        let ask = SettingsRequest {
            cwd,
            ..SettingsRequest::default()
        };
        let settings = hub.settings(&ask).map_err(|err| err.to_string())?;
        let user_root = settings.troupe_home.join("skills");
        let root = troupe_config::layers::project_root(
            &settings.cwd,
            &settings.context.project_root_markers,
        );
        let roots = [user_root.clone(), root.join(".agents").join("skills")];
        let found = tokio::task::spawn_blocking(move || discover_skills(&roots))
            .await
            .map_err(|err| format!("listing skills failed: {err}"))?;
        let skills = found
            .skills
            .into_iter()
            .map(|skill| SkillMetadata {
                scope: if skill.path.starts_with(&user_root) {
                    SkillScope::User
                } else {
                    SkillScope::Repo
                },
                name: skill.name,
                description: skill.description,
                path: skill.path.display().to_string(),
                enabled: true,
            })
            .collect();
        let errors = found
            .warnings
            .iter()
            .map(|warning| error(warning))
            .collect();
        data.push(SkillsListEntry {
            cwd: settings.cwd.display().to_string(),
            skills,
            errors,
        });
    }
    Ok(SkillsListResponse { data })
}

/// A discovery warning (`<dir>/SKILL.md: why`) as Codex's error entry.
fn error(warning: &str) -> SkillErrorInfo {
    const FILE: &str = "SKILL.md: ";
    match warning.find(FILE) {
        Some(at) => SkillErrorInfo {
            path: warning[..at + FILE.len() - 2].to_string(),
            message: warning[at + FILE.len()..].to_string(),
        },
        None => SkillErrorInfo {
            path: String::new(),
            message: warning.to_string(),
        },
    }
}
