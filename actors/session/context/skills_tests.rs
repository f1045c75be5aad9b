use super::skills::{
    discover_skills, mentioned, read_front_matter, skill_body_message, skills_list,
};
use std::path::Path;

fn skill(root: &Path, dir: &str, text: &str) {
    std::fs::create_dir_all(root.join(dir)).unwrap();
    std::fs::write(root.join(dir).join("SKILL.md"), text).unwrap();
}

#[test]
fn discovery_reads_front_matter_and_warns_about_bad_files() {
    let user = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    skill(
        user.path(),
        "deploy",
        "---\nname: deploy\ndescription: \"Ship it\"\n---\nBODY",
    );
    skill(user.path(), "broken", "no front matter here");
    skill(
        project.path(),
        "deploy2",
        "---\nname: deploy\ndescription: shadow\n---\n",
    );
    skill(
        project.path(),
        "lint",
        "---\nname: lint\ndescription: Run linters\n---\nsteps",
    );
    skill(project.path(), "open", "---\nname: open\n");
    let set = discover_skills(&[
        user.path().to_path_buf(),
        project.path().to_path_buf(),
        "/nonexistent".into(),
    ]);
    let names: Vec<&str> = set.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["deploy", "lint"]);
    assert_eq!(set.skills[0].description, "Ship it");
    let warnings = set.warnings.join("\n");
    assert!(
        warnings.contains("broken/SKILL.md: no front matter"),
        "{warnings}"
    );
    assert!(
        warnings.contains("a skill named `deploy` already exists"),
        "{warnings}"
    );
    assert!(
        warnings.contains("open/SKILL.md: front matter is not closed"),
        "{warnings}"
    );
}

#[test]
fn list_respects_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..50 {
        skill(
            dir.path(),
            &format!("s{i:02}"),
            &format!(
                "---\nname: s{i:02}\ndescription: {}\n---\n",
                "d".repeat(100)
            ),
        );
    }
    let set = discover_skills(&[dir.path().to_path_buf()]);
    let text = skills_list(&set.skills, 2048).unwrap();
    assert!(text.len() <= 2048 + 100);
    assert!(text.contains("more skills not listed"));
    assert!(text.starts_with("<skills>") && text.ends_with("</skills>"));
    assert!(skills_list(&[], 100).is_none());
}

#[test]
fn named_skills_are_found_and_their_body_attached() {
    let dir = tempfile::tempdir().unwrap();
    skill(
        dir.path(),
        "deploy",
        "---\nname: deploy\ndescription: d\n---\nRun ./ship.sh",
    );
    let set = discover_skills(&[dir.path().to_path_buf()]);
    let found = mentioned(
        &set.skills,
        "please use $deploy, then $deploy again and $unknown",
    );
    assert_eq!(found.len(), 1);
    let (body, warning) = skill_body_message(found[0]).unwrap();
    assert_eq!(warning, None);
    assert!(body.contains("Run ./ship.sh") && body.starts_with("<skill name=\"deploy\""));
    assert!(read_front_matter(&dir.path().join("nope/SKILL.md")).is_err());
}

#[test]
fn a_huge_skill_is_attached_only_up_to_its_budget() {
    use super::skills::BODY_MAX_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("---\nname: big\ndescription: d\n---\n");
    text.push_str(&"y".repeat(3 * BODY_MAX_BYTES));
    skill(dir.path(), "big", &text);
    let set = discover_skills(&[dir.path().to_path_buf()]);
    assert_eq!(set.skills.len(), 1, "{:?}", set.warnings);
    let (body, warning) = skill_body_message(&set.skills[0]).unwrap();
    assert!(body.len() < BODY_MAX_BYTES + 1024, "{}", body.len());
    assert!(body.contains("[skill truncated: 32768 of"), "{body:.100}");
    assert!(warning
        .unwrap()
        .contains("only its first 32768 bytes were attached"));
}
