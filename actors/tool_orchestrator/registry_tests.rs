use super::ToolRegistry;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use std::sync::Arc;
use troupe_messages::tools::ToolSpec;

/// A handler known only by its name.
struct Named(&'static str);

impl ToolHandler for Named {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: self.0.into(),
            description: String::new(),
            strict: false,
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, _ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async { ToolOutcome::ok("") })
    }
}

fn name_of(registry: &ToolRegistry, call: &str) -> Option<String> {
    registry.get(call).map(|h| h.spec().name().to_string())
}

#[test]
fn a_registered_name_wins_over_a_prefix_and_other_names_find_nothing() {
    let mut registry = ToolRegistry::default();
    registry.register(Arc::new(Named("ext__exact")));
    registry.register_prefix("ext__", Arc::new(Named("ext__route")));
    assert_eq!(
        name_of(&registry, "ext__exact").as_deref(),
        Some("ext__exact")
    );
    assert_eq!(
        name_of(&registry, "ext__other").as_deref(),
        Some("ext__route")
    );
    assert_eq!(name_of(&registry, "shell"), None);
}

#[test]
fn the_builtin_registry_routes_every_mcp_name_to_one_handler() {
    let registry = crate::tool_orchestrator::tools::builtin();
    let prefix = troupe_mcp::names::PREFIX;
    assert_eq!(
        name_of(&registry, &format!("{prefix}server__tool")).as_deref(),
        Some(prefix)
    );
    assert_eq!(name_of(&registry, "shell").as_deref(), Some("shell"));
    assert_eq!(name_of(&registry, "no_such_tool"), None);
}
