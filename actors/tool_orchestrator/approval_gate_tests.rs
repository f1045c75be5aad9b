use super::patch_requirement;
use crate::approvals::requirement::ApprovalRequirement::{Forbidden, NeedsApproval, Skip};
use std::path::PathBuf;
use troupe_messages::policy::{
    AskForApproval, FileSystemPolicy, FileSystemSandboxKind, GranularApprovalConfig, NetworkPolicy,
    PermissionProfile, WritableRoot,
};

fn workspace() -> PermissionProfile {
    PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Restricted,
            writable_roots: vec![WritableRoot {
                root: PathBuf::from("/w"),
                read_only_subpaths: vec![PathBuf::from("/w/.git")],
            }],
            deny_read: vec![],
            stored_keys: vec![],
            allow_unix_sockets: vec![],
        },
        network: NetworkPolicy::Restricted,
    }
}

fn files(paths: &[&str]) -> Vec<PathBuf> {
    paths.iter().map(PathBuf::from).collect()
}

#[test]
fn patches_inside_the_roots_run_unless_untrusted() {
    let inside = files(&["/w/a.ts", "/w/src/b.ts"]);
    let skip = Skip {
        bypass_sandbox: false,
    };
    assert_eq!(
        patch_requirement(AskForApproval::OnRequest, &workspace(), &inside),
        skip
    );
    assert_eq!(
        patch_requirement(AskForApproval::Never, &workspace(), &inside),
        skip
    );
    assert!(matches!(
        patch_requirement(AskForApproval::UnlessTrusted, &workspace(), &inside),
        NeedsApproval { .. }
    ));
}

#[test]
fn patches_outside_the_roots_follow_the_table_with_the_patch_switch() {
    let outside = files(&["/w/a.ts", "/etc/hosts"]);
    let git = files(&["/w/.git/config"]);
    assert!(matches!(
        patch_requirement(AskForApproval::OnRequest, &workspace(), &outside),
        NeedsApproval { .. }
    ));
    assert!(matches!(
        patch_requirement(AskForApproval::OnRequest, &workspace(), &git),
        NeedsApproval { .. }
    ));
    let no_patch_prompts = AskForApproval::Granular(GranularApprovalConfig {
        patch_approval: false,
        ..GranularApprovalConfig::default()
    });
    assert_eq!(
        patch_requirement(no_patch_prompts, &workspace(), &outside),
        Forbidden {
            reason: "approval policy disallowed patch approval prompt".into()
        }
    );
    // `never` cannot ask, and an in-process write is not confined: refused.
    assert!(matches!(
        patch_requirement(AskForApproval::Never, &workspace(), &outside),
        Forbidden { .. }
    ));
    // Unrestricted: the granular patch switch is moot, as in the table's bottom-right cell.
    assert_eq!(
        patch_requirement(no_patch_prompts, &PermissionProfile::Disabled, &outside),
        Skip {
            bypass_sandbox: false
        }
    );
}
