//! Tools whose arguments are a Rust type ([`TypedTool`]): the tool declares its
//! `Arguments` (`Deserialize + JsonSchema`) and gets, through a blanket
//! [`ToolHandler`] implementation, the JSON Schema the model sees (generated from the
//! type, so schema and parsing cannot drift apart) and the arguments parsed, with an
//! [`ToolError::InvalidArguments`] naming the tool and the field when they do not fit.
//!
//! It lives beside [`ToolHandler`] because every tool crate already depends on this one
//! for the seam; the registry and approval gate (hearth-tools) need not know how a tool
//! reads its arguments.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::{ApplyOutput, ToolCallContext, ToolHandler, ToolOutput, ToolReach};

/// A tool whose arguments are the type [`TypedTool::Arguments`]. Implementing it
/// implements [`ToolHandler`]: `parameters` is the type's JSON Schema
/// ([`arguments_schema`]) and `execute` parses the arguments ([`parse_arguments`])
/// before calling [`TypedTool::run`].
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments, as the model sends them. Mark the type
    /// `#[serde(deny_unknown_fields)]` so a misspelled argument is refused, not dropped.
    type Arguments: DeserializeOwned + JsonSchema + Send;

    /// Unique name (`snake_case`), as the model sees it.
    const NAME: &'static str;

    /// What the tool does, for the model.
    const DESCRIPTION: &'static str;

    /// Whether calling the tool changes anything outside Hearth. Mutating tools only
    /// stage proposals.
    const MUTATES: bool;

    /// Where its calls reach (see [`ToolReach`]).
    const REACH: ToolReach = ToolReach::Local;

    /// Runs a read tool, or stages a mutating tool's change (returning
    /// [`ToolOutput::Staged`]), with the arguments parsed. Must not write anything for a
    /// mutating tool.
    fn run<'a>(
        &'a self,
        call: &'a ToolCallContext,
        arguments: Self::Arguments,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// Applies an approved payload (see [`ToolHandler::apply`]). Called only by the
    /// approval gate; a tool that stages nothing keeps this default, which refuses.
    fn apply_approved<'a>(
        &'a self,
        _payload: &'a Value,
    ) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        Box::pin(async move {
            Err(ToolError::Unsupported(format!(
                "`{}` does not apply changes",
                Self::NAME
            )))
        })
    }
}

impl<T: TypedTool> ToolHandler for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn description(&self) -> &str {
        T::DESCRIPTION
    }

    fn parameters(&self) -> Value {
        arguments_schema::<T::Arguments>()
    }

    fn mutates(&self) -> bool {
        T::MUTATES
    }

    fn reach(&self) -> ToolReach {
        T::REACH
    }

    fn execute<'a>(
        &'a self,
        call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match parse_arguments::<T::Arguments>(T::NAME, arguments) {
            Ok(arguments) => self.run(call, arguments),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }

    fn apply<'a>(&'a self, payload: &'a Value) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        self.apply_approved(payload)
    }
}

/// The JSON Schema of a tool's arguments object, draft 2020-12, with subschemas
/// inlined (some models do not follow `$ref`) and without `$schema` and `title`.
pub fn arguments_schema<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

/// Reads the arguments of the tool `tool`; a missing (`null`) arguments object counts
/// as `{}`. A mismatch is [`ToolError::InvalidArguments`] saying which tool and what
/// did not fit (`event_get: missing field `id``).
pub fn parse_arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    let arguments = if arguments.is_null() {
        Value::Object(Default::default())
    } else {
        arguments
    };
    serde_json::from_value(arguments)
        .map_err(|error| ToolError::InvalidArguments(format!("{tool}: {error}")))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::chat::Scope;
    use crate::ids::{ChatUri, SessionUri, TurnId};

    /// `echo` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct EchoArgs {
        /// What to say.
        text: String,
        /// How often (default once).
        #[serde(default)]
        times: Option<u32>,
    }

    struct Echo;

    impl TypedTool for Echo {
        type Arguments = EchoArgs;
        const NAME: &'static str = "echo";
        const DESCRIPTION: &'static str = "Say it again.";
        const MUTATES: bool = false;
        const REACH: ToolReach = ToolReach::Private;

        fn run<'a>(
            &'a self,
            _call: &'a ToolCallContext,
            arguments: EchoArgs,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            let said = arguments.text.repeat(arguments.times.unwrap_or(1) as usize);
            Box::pin(async move { Ok(ToolOutput::text(said)) })
        }
    }

    fn context() -> ToolCallContext {
        ToolCallContext {
            session: "hearth-session:native/s1".parse::<SessionUri>().unwrap(),
            chat: "hearth-chat:native/s1/c1".parse::<ChatUri>().unwrap(),
            turn_id: TurnId::generate(),
            call_id: "call-1".into(),
            scope: Scope::Global,
            working_directories: Vec::new(),
        }
    }

    fn call(arguments: Value) -> Result<ToolOutput, ToolError> {
        let handler: &dyn ToolHandler = &Echo;
        futures::executor::block_on(handler.execute(&context(), arguments))
    }

    #[test]
    fn the_handler_is_the_tool_and_its_schema_the_arguments_type() {
        let handler: &dyn ToolHandler = &Echo;
        assert_eq!(
            (
                handler.name(),
                handler.description(),
                handler.mutates(),
                handler.reach()
            ),
            ("echo", "Say it again.", false, ToolReach::Private)
        );
        assert_eq!(
            handler.parameters(),
            json!({
                "description": "`echo` arguments.",
                "type": "object",
                "properties": {
                    "text": { "description": "What to say.", "type": "string" },
                    "times": {
                        "description": "How often (default once).",
                        "type": ["integer", "null"],
                        "format": "uint32",
                        "minimum": 0,
                        "default": null
                    }
                },
                "required": ["text"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn arguments_are_parsed_and_a_mismatch_names_the_tool_and_the_field() {
        assert_eq!(
            call(json!({ "text": "hi", "times": 2 })),
            Ok(ToolOutput::text("hihi"))
        );
        assert_eq!(
            call(json!({ "text": "hi", "loud": true })),
            Err(ToolError::InvalidArguments(
                "echo: unknown field `loud`, expected `text` or `times`".to_owned()
            ))
        );
        assert_eq!(
            call(Value::Null),
            Err(ToolError::InvalidArguments(
                "echo: missing field `text`".to_owned()
            ))
        );
        assert_eq!(
            call(json!({ "text": 3 })),
            Err(ToolError::InvalidArguments(
                "echo: invalid type: integer `3`, expected a string".to_owned()
            ))
        );
    }

    #[test]
    fn a_tool_that_stages_nothing_applies_nothing() {
        let handler: &dyn ToolHandler = &Echo;
        let applied = futures::executor::block_on(handler.apply(&json!({})));
        assert_eq!(
            applied,
            Err(ToolError::Unsupported(
                "`echo` does not apply changes".to_owned()
            ))
        );
    }
}
