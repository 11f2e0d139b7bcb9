//! The user's changes to a session's summary: renaming (the user's title replaces
//! whatever it had, a title taken from the first prompt included), pinning and
//! archiving; for the session list and the session's own subscribers.

use hearth_core::{SessionSummary, SessionUri, now};

use crate::error::{HostError, HostResult};
use crate::host::Host;

/// The longest session title accepted, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// A title as given, trimmed; refused when empty, too long or holding control
/// characters (a line break would break every list that shows it).
fn clean_title(title: &str) -> HostResult<String> {
    let trimmed = title.trim();
    if trimmed.is_empty() {
        return Err(HostError::InvalidInput(
            "a session title cannot be empty or only spaces; give the session a name".into(),
        ));
    }
    let length = trimmed.chars().count();
    if length > MAX_TITLE_CHARS {
        return Err(HostError::InvalidInput(format!(
            "a session title has at most {MAX_TITLE_CHARS} characters; this one has {length}"
        )));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(HostError::InvalidInput(
            "a session title is one line of text: it cannot hold line breaks, tabs or other control characters".into(),
        ));
    }
    Ok(trimmed.to_owned())
}

impl Host {
    /// Renames a session: its title becomes `title` (trimmed), the root's and the
    /// session's subscribers get `SessionUpdated`, and the title is stored when this
    /// returns. Returns the new summary.
    pub async fn rename_session(
        &self,
        session: &SessionUri,
        title: &str,
    ) -> HostResult<SessionSummary> {
        let title = clean_title(title)?;
        self.change_summary(session, |summary| {
            summary.title = Some(title);
            summary.updated_at = now();
        })
        .await
    }

    /// Pins or unpins, archives or unarchives a session (`None` leaves a mark as it is;
    /// its place among the recent ones stays); published and stored as
    /// [`Host::rename_session`] does. Returns the new summary.
    pub async fn mark_session(
        &self,
        session: &SessionUri,
        pinned: Option<bool>,
        archived: Option<bool>,
    ) -> HostResult<SessionSummary> {
        self.change_summary(session, |summary| {
            if let Some(pinned) = pinned {
                summary.pinned = pinned;
            }
            if let Some(archived) = archived {
                summary.archived = archived;
            }
        })
        .await
    }

    /// Takes a session's summary that changed in the store outside the host (its team,
    /// on a team server): the root's and (when loaded) the session's subscribers get
    /// `SessionUpdated`.
    pub fn summary_changed(&self, summary: SessionSummary) -> HostResult<()> {
        self.inner.check_running()?;
        self.inner.lock().publish_summary(summary);
        Ok(())
    }

    /// Applies the user's change to a session's summary: the root's and the session's
    /// subscribers get `SessionUpdated`, and it is stored when this returns.
    async fn change_summary(
        &self,
        session: &SessionUri,
        change: impl FnOnce(&mut SessionSummary),
    ) -> HostResult<SessionSummary> {
        self.inner.check_running()?;
        self.ensure_session(session).await?;
        let summary = {
            let mut state = self.inner.lock();
            let mut summary = state.session(session)?.state.summary.clone();
            change(&mut summary);
            state.publish_summary(summary.clone());
            summary
        };
        // Updates queued before this one (a turn's activity time) land first; later ones
        // copy the summary from memory, which has the new title.
        self.inner.writer.flush().await;
        self.inner.store.update_session(&summary).await?;
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_trimmed_and_bounded() {
        assert_eq!(clean_title("  Garden plans \n").unwrap(), "Garden plans");
        assert!(matches!(
            clean_title("   "),
            Err(HostError::InvalidInput(_))
        ));
        assert!(matches!(clean_title(""), Err(HostError::InvalidInput(_))));
        assert!(matches!(
            clean_title("two\nlines"),
            Err(HostError::InvalidInput(_))
        ));
        let longest = "é".repeat(MAX_TITLE_CHARS);
        assert_eq!(clean_title(&longest).unwrap(), longest);
        let error = clean_title(&"é".repeat(MAX_TITLE_CHARS + 1)).unwrap_err();
        assert!(error.to_string().contains("at most 200"), "{error}");
    }
}
