//! The built-in project policy: what every agent working in a project is told, before
//! the project's own instructions.

use crate::project_file::ProjectFile;

/// The policy layered before every project's instructions.
pub const PROJECT_POLICY: &str = "\
You are working in a Hearth project. Its folder is your working directory: keep the \
files you create or change inside it unless the user asks otherwise. The project's \
context sources are converted to Markdown snapshots; when a <project_context> block \
lists them, read the snapshots you need with your file tools and cite the source they \
came from. Changes to calendars and other data outside the project are proposals the \
user approves in Hearth; say what you proposed and that it awaits approval.";

/// The instructions an agent gets in a project: the policy, then the project's name,
/// description and own instructions.
pub fn compose_instructions(file: &ProjectFile) -> String {
    let mut text = String::from(PROJECT_POLICY);
    text.push_str("\n\n# Project: ");
    text.push_str(&file.name);
    text.push('\n');
    if let Some(description) = &file.description {
        text.push('\n');
        text.push_str(description);
        text.push('\n');
    }
    let instructions = file.instructions.trim();
    if !instructions.is_empty() {
        text.push('\n');
        text.push_str(instructions);
        text.push('\n');
    }
    text
}
