//! `web_search`: the provider's own search tool, offered as Codex 0.169 sends it
//! (`{"type":"web_search","external_web_access":…,"search_content_types":["text","image"]}`)
//! when `web_search = "live"|"cached"`. The provider runs the searches and streams them back
//! as `web_search_call` items; Troupe runs nothing. `cached` asks for cached results only,
//! except under danger-full-access, where Codex sends live access as well. Only the
//! Responses wire has this tool: config refuses it for a chat or anthropic provider.

use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use troupe_messages::policy::SandboxMode;
use troupe_messages::settings::{SessionSettings, WebSearchMode};
use troupe_messages::tools::ToolSpec;

/// Handler of `web_search` (its spec only: calls are the provider's).
pub struct WebSearchHandler;

impl ToolHandler for WebSearchHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::WebSearch {
            external_web_access: true,
            search_content_types: vec!["text".into(), "image".into()],
        }
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        let external_web_access = match settings.tools.web_search {
            WebSearchMode::Disabled => return None,
            WebSearchMode::Live => true,
            WebSearchMode::Cached => settings.sandbox_mode == SandboxMode::DangerFullAccess,
        };
        Some(ToolSpec::WebSearch {
            external_web_access,
            search_content_types: vec!["text".into(), "image".into()],
        })
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, _ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            ToolOutcome::error(
                "web_search is run by the provider, not called as a function: search through \
                 the web_search tool itself",
            )
        })
    }
}
