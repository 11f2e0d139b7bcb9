//! How large a message may be: its text and each attached file. Checked before anything
//! of it is stored, the same for every client (the CLI checks first so that it does not
//! even create a session for a message that would be refused).

use std::path::Path;

use hearth_core::{UserMessage, readable_size as size};

use crate::error::{HostError, HostResult};

/// Default largest prompt text: 1 MiB.
pub const DEFAULT_PROMPT_BYTES: usize = 1024 * 1024;
/// Default largest attached file: 32 MiB.
pub const DEFAULT_ATTACHMENT_BYTES: u64 = 32 * 1024 * 1024;

/// The largest message the host accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageLimits {
    /// Largest prompt text, in bytes.
    pub prompt_bytes: usize,
    /// Largest attached file, in bytes.
    pub attachment_bytes: u64,
}

impl Default for MessageLimits {
    fn default() -> Self {
        Self {
            prompt_bytes: DEFAULT_PROMPT_BYTES,
            attachment_bytes: DEFAULT_ATTACHMENT_BYTES,
        }
    }
}

impl MessageLimits {
    /// Refuses a message over the limits, saying by how much and where to change them.
    pub fn check(&self, message: &UserMessage) -> HostResult<()> {
        let text = message.text.len();
        if text > self.prompt_bytes {
            return Err(HostError::InvalidInput(format!(
                "the prompt is {}; Hearth accepts prompts up to {} (raise `prompt_bytes` under [limits] in config.toml, or attach the text as a file)",
                size(text as u64),
                size(self.prompt_bytes as u64)
            )));
        }
        for attachment in &message.attachments {
            let path = Path::new(&attachment.uri);
            if !path.is_absolute() {
                continue;
            }
            let bytes = match std::fs::metadata(path) {
                Ok(metadata) => metadata.len(),
                Err(error) => {
                    return Err(HostError::InvalidInput(format!(
                        "cannot attach {}: {error}",
                        path.display()
                    )));
                }
            };
            if bytes > self.attachment_bytes {
                return Err(HostError::InvalidInput(format!(
                    "{} is {}; Hearth attaches files up to {} (raise `attachment_bytes` under [limits] in config.toml)",
                    attachment.name,
                    size(bytes),
                    size(self.attachment_bytes)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::Attachment;

    #[test]
    fn messages_over_the_limits_are_refused_with_the_sizes() {
        let limits = MessageLimits {
            prompt_bytes: 10,
            attachment_bytes: 4,
        };
        assert!(limits.check(&UserMessage::text("short")).is_ok());
        let error = limits
            .check(&UserMessage::text("x".repeat(2048)))
            .unwrap_err();
        assert!(error.to_string().contains("the prompt is 2 KB"), "{error}");
        assert!(error.to_string().contains("up to 10 bytes"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big.bin");
        std::fs::write(&file, b"12345").unwrap();
        let mut message = UserMessage::text("see file");
        message.attachments.push(Attachment {
            name: "big.bin".into(),
            media_type: "application/octet-stream".into(),
            uri: file.display().to_string(),
        });
        let error = limits.check(&message).unwrap_err();
        assert!(
            error.to_string().starts_with("big.bin is 5 bytes"),
            "{error}"
        );
    }
}
