//! The user's message as ACP prompt content: the text first (after any earlier
//! conversation a fork hands over), then attached files — embedded when the agent
//! accepts embedded context, linked otherwise — images only when the agent says it
//! takes them, and the context the user pointed at as links.

use std::path::Path;

use agent_client_protocol::v1::schema as acp;
use base64::Engine;
use hearth_core::{Attachment, UserMessage};

/// Largest file embedded in a prompt; bigger ones are linked.
const EMBED_LIMIT: u64 = 1024 * 1024;
/// Largest image sent inline.
const IMAGE_LIMIT: u64 = 8 * 1024 * 1024;

/// What the agent accepts in prompts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Accepts {
    /// Images.
    pub image: bool,
    /// File contents embedded in the prompt.
    pub embedded: bool,
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn link(attachment: &Attachment) -> acp::ContentBlock {
    let path = Path::new(&attachment.uri);
    let uri = if path.is_absolute() {
        file_uri(path)
    } else {
        attachment.uri.clone()
    };
    acp::ContentBlock::ResourceLink(
        acp::ResourceLink::new(attachment.name.clone(), uri)
            .mime_type(Some(attachment.media_type.clone())),
    )
}

fn size_of(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|metadata| metadata.len())
}

fn attachment(attachment: &Attachment, accepts: Accepts) -> acp::ContentBlock {
    let path = Path::new(&attachment.uri);
    let size = path.is_absolute().then(|| size_of(path)).flatten();
    if attachment.media_type.starts_with("image/") {
        if accepts.image
            && size.is_some_and(|size| size <= IMAGE_LIMIT)
            && let Ok(bytes) = std::fs::read(path)
        {
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            return acp::ContentBlock::Image(
                acp::ImageContent::new(data, attachment.media_type.clone())
                    .uri(Some(file_uri(path))),
            );
        }
        return link(attachment);
    }
    if accepts.embedded
        && size.is_some_and(|size| size <= EMBED_LIMIT)
        && let Ok(text) = std::fs::read_to_string(path)
    {
        return acp::ContentBlock::Resource(acp::EmbeddedResource::new(
            acp::EmbeddedResourceResource::TextResourceContents(
                acp::TextResourceContents::new(text, file_uri(path))
                    .mime_type(Some(attachment.media_type.clone())),
            ),
        ));
    }
    link(attachment)
}

/// The prompt for a message, with earlier conversation to hand over first.
pub(crate) fn prompt(
    message: &UserMessage,
    preface: Option<&str>,
    accepts: Accepts,
) -> Vec<acp::ContentBlock> {
    let mut blocks = Vec::new();
    let text = match preface {
        Some(preface) => format!("{preface}\n{}", message.text),
        None => message.text.clone(),
    };
    blocks.push(acp::ContentBlock::Text(acp::TextContent::new(text)));
    blocks.extend(
        message
            .attachments
            .iter()
            .map(|item| attachment(item, accepts)),
    );
    blocks.extend(message.context.iter().map(|reference| {
        acp::ContentBlock::ResourceLink(acp::ResourceLink::new(
            reference.label.clone(),
            reference.uri.clone(),
        ))
    }));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::ContextReference;

    #[test]
    fn files_are_embedded_or_linked_as_the_agent_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.md");
        std::fs::write(&notes, "# Notes").unwrap();
        let image = dir.path().join("a.png");
        std::fs::write(&image, [0x89, b'P', b'N', b'G']).unwrap();
        let message = UserMessage {
            text: "look".into(),
            attachments: vec![
                Attachment {
                    name: "notes.md".into(),
                    media_type: "text/markdown".into(),
                    uri: notes.display().to_string(),
                },
                Attachment {
                    name: "a.png".into(),
                    media_type: "image/png".into(),
                    uri: image.display().to_string(),
                },
            ],
            context: vec![ContextReference {
                label: "spec".into(),
                uri: "https://example.org/spec".into(),
            }],
        };
        let full = prompt(
            &message,
            Some("<conversation_so_far>…</conversation_so_far>"),
            Accepts {
                image: true,
                embedded: true,
            },
        );
        assert_eq!(full.len(), 4);
        let acp::ContentBlock::Text(text) = &full[0] else {
            panic!("{full:?}")
        };
        assert!(text.text.starts_with("<conversation_so_far>"));
        assert!(text.text.ends_with("look"));
        assert!(
            matches!(&full[1], acp::ContentBlock::Resource(_)),
            "{full:?}"
        );
        assert!(matches!(&full[2], acp::ContentBlock::Image(_)), "{full:?}");
        assert!(matches!(&full[3], acp::ContentBlock::ResourceLink(_)));
        let plain = prompt(&message, None, Accepts::default());
        assert!(matches!(&plain[1], acp::ContentBlock::ResourceLink(_)));
        assert!(matches!(&plain[2], acp::ContentBlock::ResourceLink(_)));
    }
}
