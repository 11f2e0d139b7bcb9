//! Reading a prompt's content blocks.
//!
//! Text blocks are concatenated into the prompt text. Other blocks are kept as
//! attachments, in order, and echoed by the plain-text reply.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// A non-text content block of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attachment {
    /// An image block.
    Image { mime_type: String },
    /// An audio block.
    Audio { mime_type: String },
    /// An embedded resource; `text` is `None` for a blob.
    Resource { uri: String, text: Option<String> },
    /// A resource link.
    Link { name: String, uri: String },
    /// A block kind this agent does not know.
    Unknown,
}

impl Attachment {
    /// How the echo reply shows the attachment (one chunk).
    pub(crate) fn echo(&self) -> String {
        match self {
            Self::Image { mime_type } => format!("\n[image {mime_type}]"),
            Self::Audio { mime_type } => format!("\n[audio {mime_type}]"),
            Self::Resource {
                uri,
                text: Some(text),
            } => format!("\n[resource {uri}]\n{text}"),
            Self::Resource { uri, text: None } => format!("\n[resource {uri} (blob)]"),
            Self::Link { name, uri } => format!("\n[link {name} {uri}]"),
            Self::Unknown => "\n[unknown content]".to_owned(),
        }
    }
}

/// The prompt's content, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PromptInput {
    /// Text blocks, concatenated.
    pub(crate) text: String,
    /// Other blocks, in order.
    pub(crate) attachments: Vec<Attachment>,
}

impl PromptInput {
    /// Reads the content blocks of a `session/prompt`.
    pub(crate) fn from_blocks(blocks: &[ContentBlock]) -> Self {
        let mut text = String::new();
        let mut attachments = Vec::new();
        for block in blocks {
            match block {
                ContentBlock::Text(content) => text.push_str(&content.text),
                ContentBlock::Image(image) => attachments.push(Attachment::Image {
                    mime_type: image.mime_type.clone(),
                }),
                ContentBlock::Audio(audio) => attachments.push(Attachment::Audio {
                    mime_type: audio.mime_type.clone(),
                }),
                ContentBlock::Resource(resource) => {
                    attachments.push(match &resource.resource {
                        EmbeddedResourceResource::TextResourceContents(contents) => {
                            Attachment::Resource {
                                uri: contents.uri.clone(),
                                text: Some(contents.text.clone()),
                            }
                        }
                        EmbeddedResourceResource::BlobResourceContents(contents) => {
                            Attachment::Resource {
                                uri: contents.uri.clone(),
                                text: None,
                            }
                        }
                        _ => Attachment::Unknown,
                    });
                }
                ContentBlock::ResourceLink(link) => attachments.push(Attachment::Link {
                    name: link.name.clone(),
                    uri: link.uri.clone(),
                }),
                _ => attachments.push(Attachment::Unknown),
            }
        }
        Self { text, attachments }
    }

    /// The count line of the echo reply, when the prompt had attachments.
    pub(crate) fn attachment_summary(&self) -> Option<String> {
        if self.attachments.is_empty() {
            return None;
        }
        let count = |wanted: fn(&Attachment) -> bool| {
            self.attachments
                .iter()
                .filter(|attachment| wanted(attachment))
                .count()
        };
        Some(format!(
            "\n[attachments: {} resources, {} links, {} images, {} other]",
            count(|a| matches!(a, Attachment::Resource { .. })),
            count(|a| matches!(a, Attachment::Link { .. })),
            count(|a| matches!(a, Attachment::Image { .. })),
            count(|a| matches!(a, Attachment::Audio { .. } | Attachment::Unknown)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };
    use pretty_assertions::assert_eq;

    #[test]
    fn content_blocks_are_read_in_order() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look ")),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
            ContentBlock::Text(TextContent::new("here")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///src/main.rs",
                )),
            )),
            ContentBlock::ResourceLink(ResourceLink::new("notes", "file:///notes.md")),
        ];
        let input = PromptInput::from_blocks(&blocks);
        assert_eq!(input.text, "look here");
        let echoed: Vec<String> = input.attachments.iter().map(Attachment::echo).collect();
        assert_eq!(
            echoed,
            vec![
                "\n[image image/png]".to_owned(),
                "\n[resource file:///src/main.rs]\nfn main() {}".to_owned(),
                "\n[link notes file:///notes.md]".to_owned(),
            ]
        );
        assert_eq!(
            input.attachment_summary().as_deref(),
            Some("\n[attachments: 1 resources, 1 links, 1 images, 0 other]")
        );
    }
}
