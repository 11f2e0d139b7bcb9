//! A chat's title, generated after its first turn with one short model call. Failures
//! are only logged: the host already titles a chat from its first prompt.

use std::sync::Arc;

use hearth_core::{ChatUri, Signal};
use hearth_llm::{Message, ModelRequest};
use tokio_util::sync::CancellationToken;

use crate::agent::Inner;

/// Longest title kept.
const TITLE_LENGTH: usize = 60;
/// Longest excerpt of the first exchange sent to the model.
const EXCERPT_LENGTH: usize = 2000;

const TITLE_PROMPT: &str = "You name conversations. Reply with a title of at most six words \
for the conversation below: no quotes, no trailing period, nothing else.";

fn excerpt(text: &str) -> String {
    text.chars().take(EXCERPT_LENGTH).collect()
}

/// A title from a model's answer: its first non-empty line, without quotes, labels and a
/// trailing period, at most [`TITLE_LENGTH`] characters; `None` when nothing is left.
pub(crate) fn clean_title(answer: &str) -> Option<String> {
    let line = answer
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    let line = line
        .strip_prefix("Title:")
        .or_else(|| line.strip_prefix("title:"))
        .unwrap_or(line)
        .trim()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '*' | '#' | '`' | '“' | '”'))
        .trim_end_matches('.')
        .trim();
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= TITLE_LENGTH {
        return Some(line.to_owned());
    }
    let mut title: String = line.chars().take(TITLE_LENGTH - 1).collect();
    title.push('…');
    Some(title)
}

/// Generates a chat's title in the background; it shows as `TitleChanged` and is kept in
/// the chat's conversation.
pub(crate) fn spawn_title(
    inner: Arc<Inner>,
    chat: ChatUri,
    model: String,
    prompt: String,
    answer: String,
    cancel: CancellationToken,
) {
    tokio::spawn(async move {
        let request = ModelRequest::new(model)
            .with_system(TITLE_PROMPT)
            .with_message(Message::user(format!(
                "User: {}\n\nAssistant: {}",
                excerpt(&prompt),
                excerpt(&answer)
            )))
            .with_max_tokens(40);
        let title = match inner.client.complete(request, cancel).await {
            Ok(response) => clean_title(&response.text),
            Err(error) => {
                tracing::info!(%chat, %error, "could not generate a title for the chat");
                return;
            }
        };
        let Some(title) = title else {
            tracing::info!(%chat, "the model gave no usable title for the chat");
            return;
        };
        let mut changed = false;
        let updated = inner
            .update_conversation(&chat, |conversation| {
                if conversation.title.is_none() {
                    conversation.title = Some(title.clone());
                    changed = true;
                }
            })
            .await;
        match updated {
            Ok(()) if changed => {
                inner
                    .sink
                    .get()
                    .progress(&chat, Signal::TitleChanged { title })
                    .await
            }
            Ok(()) => {}
            Err(error) => tracing::debug!(%chat, %error, "the chat went away before its title"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn titles_are_cleaned() {
        assert_eq!(
            clean_title("\n\"Planning the garden.\"\n"),
            Some("Planning the garden".into())
        );
        assert_eq!(
            clean_title("Title: Weekly review"),
            Some("Weekly review".into())
        );
        assert_eq!(clean_title("  \n \"\" "), None);
        let long = clean_title(&"word ".repeat(30)).unwrap();
        assert_eq!(long.chars().count(), TITLE_LENGTH);
        assert!(long.ends_with('…'));
    }
}
