//! The dynamic context: the system prompt rebuilt for every turn with the date and time,
//! the user's time zone and clock, the scope's instructions and the tools on offer.

use chrono::{DateTime, Local, Utc};
use hearth_config::ClockFormat;
use hearth_core::ProjectId;

use crate::conversation::Role;
use crate::settings::{AgentSettings, UserTimeZone};

/// A tool as the system prompt lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ListedTool {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Whether it only stages a proposal.
    pub mutates: bool,
}

/// What the system prompt of one turn is made from.
pub(crate) struct DynamicContext<'a> {
    /// Time zone, clock, time source.
    pub settings: &'a AgentSettings,
    /// The project the session is in, if any.
    pub project: Option<&'a ProjectId>,
    /// The scope's instructions (a project's), if any.
    pub instructions: Option<&'a str>,
    /// The tools offered.
    pub tools: &'a [ListedTool],
    /// What kind of conversation it is.
    pub role: Role,
}

const IDENTITY: &str = "You are Hearth's assistant, an AI agent running in Hearth on the user's own computer. \
Answer accurately and concisely. Use the tools when they help, and never claim that something \
was done unless a tool result says so.";

/// The date and time lines for `now` in the user's zone and clock.
pub(crate) fn time_lines(settings: &AgentSettings, now: DateTime<Utc>) -> String {
    let time_format = match settings.clock_format {
        ClockFormat::Hours24 => "%H:%M",
        ClockFormat::Hours12 => "%-I:%M %p",
    };
    let (date, time, offset, zone) = match settings.time_zone {
        UserTimeZone::Named(zone) => {
            let local = now.with_timezone(&zone);
            (
                local.format("%A, %-d %B %Y (%Y-%m-%d)").to_string(),
                local.format(time_format).to_string(),
                local.format("%:z").to_string(),
                zone.name().to_owned(),
            )
        }
        UserTimeZone::SystemLocal => {
            let local = now.with_timezone(&Local);
            (
                local.format("%A, %-d %B %Y (%Y-%m-%d)").to_string(),
                local.format(time_format).to_string(),
                local.format("%:z").to_string(),
                "the system's local time".to_owned(),
            )
        }
    };
    let clock = match settings.clock_format {
        ClockFormat::Hours24 => "a 24-hour clock: write times like 15:30",
        ClockFormat::Hours12 => "a 12-hour clock: write times like 3:30 PM",
    };
    format!(
        "Today is {date}.\n\
         The time is {time} ({zone}, UTC{offset}).\n\
         The user's time zone is {zone}; give times in it unless asked otherwise.\n\
         The user reads {clock}.\n\
         Resolve relative dates (\"tomorrow\", \"next Friday\") from today's date."
    )
}

/// The system prompt of a turn.
pub(crate) fn system_prompt(context: &DynamicContext<'_>) -> String {
    let mut prompt = String::from(IDENTITY);
    prompt.push_str("\n\n# Now\n");
    prompt.push_str(&time_lines(context.settings, context.settings.clock.now()));
    prompt.push_str("\n\n# Tools\n");
    if context.tools.is_empty() {
        prompt.push_str("No tools are available in this conversation.");
    } else {
        for tool in context.tools {
            let description = tool.description.lines().next().unwrap_or_default();
            prompt.push_str(&format!("- {}: {description}", tool.name));
            if tool.mutates {
                prompt.push_str(" (stages a proposal)");
            }
            prompt.push('\n');
        }
        if context.tools.iter().any(|tool| tool.mutates) {
            prompt.push_str(
                "Tools marked \"stages a proposal\" never change anything themselves: they stage \
                 a proposal that the user approves or rejects in Hearth. Tell the user what awaits \
                 their approval, and do not say it is done.",
            );
        } else {
            prompt.truncate(prompt.trim_end().len());
        }
    }
    let instructions = context
        .instructions
        .map(str::trim)
        .filter(|text| !text.is_empty());
    match (context.project, instructions) {
        (Some(project), instructions) => {
            prompt.push_str(&format!(
                "\n\n# Project\nThis conversation belongs to the project `{project}`."
            ));
            if let Some(instructions) = instructions {
                prompt.push_str(" Its instructions:\n\n");
                prompt.push_str(instructions);
            }
        }
        (None, Some(instructions)) => {
            prompt.push_str("\n\n# Instructions\n");
            prompt.push_str(instructions);
        }
        (None, None) => {}
    }
    match context.role {
        Role::Main => {}
        Role::Side => prompt.push_str(
            "\n\n# This conversation\nThis is a side conversation. The messages before the \
             user's first message here come from the conversation it branched from: use them as \
             context, answer the user's questions here, and do not continue that conversation's \
             task unless asked.",
        ),
        Role::Subagent { .. } => prompt.push_str(
            "\n\n# This conversation\nYou are a subagent: another agent gave you one task. Do it \
             with the tools you have, then answer with the result. Your final answer is returned \
             to that agent as it is, so make it complete and self-contained.",
        ),
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Clock;
    use chrono::TimeZone;
    use chrono_tz::Tz;
    use pretty_assertions::assert_eq;

    fn settings(clock: ClockFormat) -> AgentSettings {
        AgentSettings::default()
            .with_time_zone(UserTimeZone::Named(Tz::America__New_York))
            .with_clock_format(clock)
            .with_clock(Clock::Fixed(
                Utc.with_ymd_and_hms(2026, 3, 3, 20, 30, 0).unwrap(),
            ))
    }

    #[test]
    fn the_prompt_carries_time_zone_clock_instructions_and_tools() {
        let settings = settings(ClockFormat::Hours12);
        let tools = [
            ListedTool {
                name: "lookup".into(),
                description: "Looks things up.\nMore detail.".into(),
                mutates: false,
            },
            ListedTool {
                name: "create_event".into(),
                description: "Creates an event.".into(),
                mutates: true,
            },
        ];
        let project = ProjectId::parse("garden").unwrap();
        let prompt = system_prompt(&DynamicContext {
            settings: &settings,
            project: Some(&project),
            instructions: Some("Plan the garden.\n"),
            tools: &tools,
            role: Role::Main,
        });
        assert_eq!(
            prompt,
            format!(
                "{IDENTITY}\n\n# Now\n\
                 Today is Tuesday, 3 March 2026 (2026-03-03).\n\
                 The time is 3:30 PM (America/New_York, UTC-05:00).\n\
                 The user's time zone is America/New_York; give times in it unless asked otherwise.\n\
                 The user reads a 12-hour clock: write times like 3:30 PM.\n\
                 Resolve relative dates (\"tomorrow\", \"next Friday\") from today's date.\n\n\
                 # Tools\n\
                 - lookup: Looks things up.\n\
                 - create_event: Creates an event. (stages a proposal)\n\
                 Tools marked \"stages a proposal\" never change anything themselves: they stage a \
                 proposal that the user approves or rejects in Hearth. Tell the user what awaits \
                 their approval, and do not say it is done.\n\n\
                 # Project\n\
                 This conversation belongs to the project `garden`. Its instructions:\n\n\
                 Plan the garden."
            )
        );
    }

    #[test]
    fn a_24_hour_clock_and_no_tools() {
        let settings = settings(ClockFormat::Hours24);
        let prompt = system_prompt(&DynamicContext {
            settings: &settings,
            project: None,
            instructions: None,
            tools: &[],
            role: Role::Subagent { depth: 1 },
        });
        assert!(
            prompt.contains("The time is 15:30 (America/New_York"),
            "{prompt}"
        );
        assert!(prompt.contains("write times like 15:30"), "{prompt}");
        assert!(prompt.contains("No tools are available"), "{prompt}");
        assert!(prompt.contains("You are a subagent"), "{prompt}");
        assert!(!prompt.contains("# Project"), "{prompt}");
    }
}
