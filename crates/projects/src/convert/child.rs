//! Conversion in a child process ([`Isolation::Child`](super::Isolation)): the parent's
//! side ([`convert`]) and the child's ([`document_job`]).
//!
//! The child gets the named format, the output cap and the file's name as arguments,
//! the document on stdin; it recognises the format, converts, caps the Markdown, and
//! writes one JSON line (format, title, image, truncated) followed by the Markdown. A
//! conversion error is one JSON object (format, message). However the child ends
//! otherwise, the parent reports it as [`ConvertError::Crashed`].

use std::time::Duration;

use bytes::Bytes;
use hearth_process::{Isolator, JobError, JobLimits};
use serde_json::{Value, json};

use super::error::{ConvertError, Result};
use super::format::SourceFormat;
use super::image::ImageInfo;
use super::{ConvertLimits, Converted, convert_blocking, markdown, sniff};

/// The job's name.
pub const DOCUMENT_JOB: &str = "document";

/// Room for the JSON line before the Markdown, beyond the output cap.
const HEADER_ROOM: usize = 64 * 1024;

/// Wall time the child gets beyond the conversion's time limit (to start and answer).
const START_ROOM: Duration = Duration::from_secs(5);

/// The image media types the child may name (the parent keeps them as `'static`).
const MEDIA_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/bmp",
];

/// Converts in a child of `isolator`.
pub(super) async fn convert(
    bytes: Bytes,
    named: SourceFormat,
    name: Option<String>,
    limits: &ConvertLimits,
    isolator: &Isolator,
    memory_bytes: u64,
) -> Result<Converted> {
    let mut arguments = vec![
        named.token().to_owned(),
        limits.max_output_bytes.to_string(),
    ];
    arguments.extend(name);
    let job = JobLimits {
        memory_bytes,
        cpu_seconds: limits.time_limit.as_secs().max(1),
        wall_time: limits.time_limit + START_ROOM,
        max_output_bytes: limits.max_output_bytes.saturating_add(HEADER_ROOM),
    };
    match isolator.run(DOCUMENT_JOB, &arguments, bytes, &job).await {
        Ok(output) => read_output(&output, named),
        Err(JobError::Failed(message)) => Err(read_failure(&message, named)),
        Err(JobError::TimedOut(_)) => Err(ConvertError::TimedOut {
            format: named,
            limit: limits.time_limit,
        }),
        Err(error @ (JobError::Crashed { .. } | JobError::OutputTooLarge(_))) => {
            Err(ConvertError::Crashed {
                format: named,
                how: match error {
                    JobError::Crashed { how, .. } => how,
                    other => other.to_string(),
                },
            })
        }
        Err(JobError::Start(message)) => Err(ConvertError::Crashed {
            format: named,
            how: format!("could not start ({message})"),
        }),
    }
}

fn read_output(output: &[u8], named: SourceFormat) -> Result<Converted> {
    let garbled = || ConvertError::Crashed {
        format: named,
        how: "answered with something that is not a conversion".to_owned(),
    };
    let split = output
        .iter()
        .position(|byte| *byte == b'\n')
        .ok_or_else(garbled)?;
    let header: Value = serde_json::from_slice(&output[..split]).map_err(|_| garbled())?;
    let markdown = String::from_utf8(output[split + 1..].to_vec()).map_err(|_| garbled())?;
    let format = header["format"]
        .as_str()
        .and_then(SourceFormat::from_token)
        .ok_or_else(garbled)?;
    let image = match &header["image"] {
        Value::Null => None,
        image => Some(ImageInfo {
            width: image["width"]
                .as_u64()
                .and_then(|width| u32::try_from(width).ok())
                .ok_or_else(garbled)?,
            height: image["height"]
                .as_u64()
                .and_then(|height| u32::try_from(height).ok())
                .ok_or_else(garbled)?,
            media_type: image["mediaType"]
                .as_str()
                .and_then(|media| MEDIA_TYPES.iter().find(|known| **known == media))
                .copied()
                .ok_or_else(garbled)?,
        }),
    };
    Ok(Converted {
        format,
        title: header["title"].as_str().map(str::to_owned),
        markdown,
        image,
        truncated: header["truncated"].as_bool().unwrap_or(false),
    })
}

fn read_failure(message: &str, named: SourceFormat) -> ConvertError {
    let parsed: Option<Value> = serde_json::from_str(message).ok();
    let format = parsed
        .as_ref()
        .and_then(|value| value["format"].as_str())
        .and_then(SourceFormat::from_token)
        .unwrap_or(named);
    let message = parsed
        .as_ref()
        .and_then(|value| value["message"].as_str())
        .map_or_else(|| message.to_owned(), str::to_owned);
    ConvertError::Malformed { format, message }
}

/// The child's side: `arguments` are the named format's token, the output cap and,
/// optionally, the file's name; `input` is the document.
pub fn document_job(arguments: &[String], input: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
    let named = arguments
        .first()
        .and_then(|token| SourceFormat::from_token(token))
        .ok_or_else(|| "no format named".to_owned())?;
    let max_output = arguments
        .get(1)
        .and_then(|cap| cap.parse::<usize>().ok())
        .ok_or_else(|| "no output cap given".to_owned())?;
    let name = arguments.get(2).map(String::as_str);
    let format = sniff::actual_format(&input, named);
    let draft = convert_blocking(&input, format, name).map_err(|error| {
        let message = match error {
            ConvertError::Malformed { message, .. } => message,
            other => other.to_string(),
        };
        json!({"format": format.token(), "message": message}).to_string()
    })?;
    let (markdown, truncated) = markdown::cap(draft.markdown, max_output);
    let header = json!({
        "format": format.token(),
        "title": draft.title.filter(|title| !title.trim().is_empty()),
        "image": draft.image.map(|image| json!({
            "width": image.width,
            "height": image.height,
            "mediaType": image.media_type,
        })),
        "truncated": truncated,
    });
    let mut output = header.to_string().into_bytes();
    output.push(b'\n');
    output.extend_from_slice(markdown.as_bytes());
    Ok(output)
}
