//! A toolbox with no tools, for agents used before or without Hearth's tool registry.

use futures::future::BoxFuture;
use hearth_core::{ToolCallContext, ToolCallOutcome, ToolDescription, Toolbox};
use serde_json::Value;

/// A [`Toolbox`] that offers nothing: every call is answered with an error the model can
/// act on. The agent's own `task` tool is still offered alongside it.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTools;

impl Toolbox for NoTools {
    fn tools(&self) -> Vec<ToolDescription> {
        Vec::new()
    }

    fn call<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        name: &'a str,
        _arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        let content = format!("There is no tool named `{name}`: no tools are available here.");
        Box::pin(async move {
            ToolCallOutcome {
                content,
                is_error: true,
                proposal: None,
            }
        })
    }
}
