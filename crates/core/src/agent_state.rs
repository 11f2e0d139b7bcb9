//! What an agent tells about a chat outside its turns: the commands it offers, its
//! modes and its models. Replaced as a whole whenever the agent reports a change.

use serde::{Deserialize, Serialize};

/// A command the agent offers in a chat (typed as `/name` by the user).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AvailableCommand {
    /// The command's name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// A hint for its input, when it takes any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_hint: Option<String>,
}

/// One value of a choice (a mode, a model).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The value's id, sent back to choose it.
    pub id: String,
    /// Display name.
    pub name: String,
    /// One line about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A setting with its current value and the values it can take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChoiceState {
    /// The current value's id.
    pub current: String,
    /// The values.
    pub choices: Vec<Choice>,
}

/// What an agent reports about a chat besides its turns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentChatState {
    /// Commands the agent offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<AvailableCommand>,
    /// The agent's modes (e.g. ask, code, plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ChoiceState>,
    /// The models the chat can use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<ChoiceState>,
}
