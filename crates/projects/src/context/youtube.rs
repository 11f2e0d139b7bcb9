//! Converting a YouTube source: the watch page's player data (title, channel,
//! description, caption tracks) and one caption track, all through the guarded
//! fetcher. A video without captions still gets its title and description.

use std::fmt::Write as _;

use hearth_fetch::{ContentTypes, FetchRequest, Fetcher};
use serde_json::Value;

use super::error::{ContextError, Result};
use super::remote::{MAX_REMOTE_BYTES, Snapshot};
use super::source::is_youtube_host;

/// Where watch pages are fetched from by default.
pub const DEFAULT_YOUTUBE_BASE: &str = "https://www.youtube.com";

/// The marker of the player data in a watch page.
const PLAYER_RESPONSE: &str = "ytInitialPlayerResponse";

/// Fetches the video's watch page (from `base`) and its captions.
pub(crate) async fn convert_youtube(fetcher: &Fetcher, base: &str, url: &str) -> Result<Snapshot> {
    let id = video_id(url).ok_or_else(|| ContextError::NotAVideo {
        url: url.to_owned(),
    })?;
    let watch = format!("{}/watch?v={id}&hl=en", base.trim_end_matches('/'));
    let page = fetcher
        .fetch(&FetchRequest::new(&watch, ContentTypes::any()).with_max_bytes(MAX_REMOTE_BYTES))
        .await?;
    let player = player_response(&page.text()).ok_or_else(|| ContextError::NoVideoDetails {
        url: url.to_owned(),
        reason: "the page carries no player data".to_owned(),
    })?;
    let details = &player["videoDetails"];
    let Some(title) = details["title"].as_str() else {
        let reason = player["playabilityStatus"]["reason"]
            .as_str()
            .unwrap_or("the player data has no video details")
            .to_owned();
        return Err(ContextError::NoVideoDetails {
            url: url.to_owned(),
            reason,
        });
    };
    let transcript = match caption_url(&player) {
        Some(track) => {
            let track = page
                .final_url
                .join(&track)
                .map(|track| track.to_string())
                .unwrap_or(track);
            let request =
                FetchRequest::new(track, ContentTypes::any()).with_max_bytes(MAX_REMOTE_BYTES);
            match fetcher.fetch(&request).await {
                Ok(response) => Transcript::Lines(parse_captions(&response.text())),
                Err(error) => Transcript::Unavailable(error.to_string()),
            }
        }
        None => Transcript::None,
    };
    Ok(Snapshot {
        title: Some(title.to_owned()),
        markdown: render(
            url,
            title,
            details["author"].as_str(),
            details["shortDescription"].as_str().unwrap_or_default(),
            &transcript,
        ),
        truncated: false,
    })
}

/// What became of the captions.
enum Transcript {
    Lines(Vec<Caption>),
    None,
    Unavailable(String),
}

/// One caption: its start in seconds and its text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Caption {
    pub(crate) start: f64,
    pub(crate) text: String,
}

fn render(
    url: &str,
    title: &str,
    author: Option<&str>,
    description: &str,
    transcript: &Transcript,
) -> String {
    let mut text = format!("# {title}\n\nVideo: {url}\n");
    if let Some(author) = author {
        text.push_str(&format!("Channel: {author}\n"));
    }
    text.push_str("\n## Description\n\n");
    if description.trim().is_empty() {
        text.push_str("_No description._\n");
    } else {
        text.push_str(description.trim());
        text.push('\n');
    }
    text.push_str("\n## Transcript\n\n");
    match transcript {
        Transcript::Lines(lines) if !lines.is_empty() => {
            for caption in lines {
                // Writing to a String cannot fail.
                if writeln!(text, "[{}] {}", timestamp(caption.start), caption.text).is_err() {
                    break;
                }
            }
        }
        Transcript::Lines(_) | Transcript::None => {
            text.push_str(
                "_This video has no captions: only its title and description are available._\n",
            );
        }
        Transcript::Unavailable(reason) => {
            text.push_str(&format!(
                "_The captions could not be fetched ({reason}): only the title and description are available._\n"
            ));
        }
    }
    text
}

/// `h:mm:ss` or `m:ss`.
fn timestamp(seconds: f64) -> String {
    let total = if seconds.is_finite() && seconds > 0.0 {
        seconds as u64
    } else {
        0
    };
    let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// The video id of a YouTube URL: `watch?v=`, `youtu.be/`, `/shorts/`, `/embed/`,
/// `/live/` or `/v/`.
pub(crate) fn video_id(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?.to_ascii_lowercase();
    if !is_youtube_host(&host) {
        return None;
    }
    let mut segments = parsed
        .path_segments()?
        .filter(|segment| !segment.is_empty());
    let id = if host.trim_end_matches('.') == "youtu.be" {
        segments.next().map(str::to_owned)
    } else {
        match segments.next() {
            Some("watch") => parsed
                .query_pairs()
                .find(|(key, _)| key == "v")
                .map(|(_, value)| value.into_owned()),
            Some("shorts" | "embed" | "live" | "v") => segments.next().map(str::to_owned),
            _ => None,
        }
    }?;
    let valid = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || matches!(character, '-' | '_'));
    valid.then_some(id)
}

/// The `ytInitialPlayerResponse` object of a watch page.
pub(crate) fn player_response(page: &str) -> Option<Value> {
    let mut rest = page;
    while let Some(found) = rest.find(PLAYER_RESPONSE) {
        rest = &rest[found + PLAYER_RESPONSE.len()..];
        let brace = rest.find('{')?;
        // The assignment: `ytInitialPlayerResponse = {` (possibly `"] = {`).
        let between = &rest[..brace];
        if !between.contains('=') || between.len() > 8 {
            continue;
        }
        let mut values = serde_json::Deserializer::from_str(&rest[brace..]).into_iter::<Value>();
        if let Some(Ok(value @ Value::Object(_))) = values.next() {
            return Some(value);
        }
    }
    None
}

/// The caption track to read: a manual English track, then any English track, then
/// the first.
fn caption_url(player: &Value) -> Option<String> {
    let tracks =
        player["captions"]["playerCaptionsTracklistRenderer"]["captionTracks"].as_array()?;
    let english = |track: &&Value| {
        track["languageCode"]
            .as_str()
            .is_some_and(|code| code == "en" || code.starts_with("en-"))
    };
    let automatic = |track: &&Value| track["kind"].as_str() == Some("asr");
    let chosen = tracks
        .iter()
        .find(|track| english(track) && !automatic(track))
        .or_else(|| tracks.iter().find(english))
        .or_else(|| tracks.first())?;
    chosen["baseUrl"].as_str().map(str::to_owned)
}

/// Captions from a timed-text document: XML `<text start dur>` (seconds), XML format 3
/// `<p t d>` (milliseconds), or json3 (`events[].tStartMs`, `segs[].utf8`).
pub(crate) fn parse_captions(document: &str) -> Vec<Caption> {
    let trimmed = document.trim_start();
    if trimmed.starts_with('{') {
        return parse_json3(trimmed);
    }
    let mut captions = Vec::new();
    let mut rest = document;
    while let Some(open) = next_cue(rest) {
        let (tag, scale) = open.1;
        rest = &rest[open.0..];
        let Some(end_of_tag) = rest.find('>') else {
            break;
        };
        let attributes = &rest[..end_of_tag];
        rest = &rest[end_of_tag + 1..];
        if attributes.ends_with('/') {
            continue;
        }
        let closing = format!("</{tag}>");
        let Some(close) = rest.find(&closing) else {
            break;
        };
        let inner = &rest[..close];
        rest = &rest[close + closing.len()..];
        let time_attribute = if tag == "text" { "start" } else { "t" };
        let start = attribute(attributes, time_attribute)
            .and_then(|value| value.parse::<f64>().ok())
            .map_or(0.0, |value| value / scale);
        let text = clean_text(inner);
        if !text.is_empty() {
            captions.push(Caption { start, text });
        }
    }
    captions
}

/// The offset of the next `<text` or `<p` cue, with its tag and time scale.
fn next_cue(text: &str) -> Option<(usize, (&'static str, f64))> {
    let candidates = [
        ("<text ", ("text", 1.0)),
        ("<text>", ("text", 1.0)),
        ("<p ", ("p", 1000.0)),
        ("<p>", ("p", 1000.0)),
    ];
    candidates
        .iter()
        .filter_map(|(needle, cue)| text.find(needle).map(|offset| (offset, *cue)))
        .min_by_key(|(offset, _)| *offset)
}

fn attribute<'a>(attributes: &'a str, name: &str) -> Option<&'a str> {
    for quote in ['"', '\''] {
        let needle = format!(" {name}={quote}");
        if let Some(start) = attributes.find(&needle) {
            let value = &attributes[start + needle.len()..];
            return value.find(quote).map(|end| &value[..end]);
        }
    }
    None
}

/// Inner tags removed, entities decoded (twice: YouTube escapes them twice), spaces
/// collapsed.
fn clean_text(inner: &str) -> String {
    let mut stripped = String::with_capacity(inner.len());
    let mut in_tag = false;
    for character in inner.chars() {
        match character {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => stripped.push(character),
            _ => {}
        }
    }
    let once = unescape(&stripped);
    let twice = unescape(&once);
    twice.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unescape(text: &str) -> String {
    match quick_xml::escape::unescape(text) {
        Ok(unescaped) => unescaped.into_owned(),
        Err(_) => text.to_owned(),
    }
}

fn parse_json3(document: &str) -> Vec<Caption> {
    let Ok(value) = serde_json::from_str::<Value>(document) else {
        return Vec::new();
    };
    let Some(events) = value["events"].as_array() else {
        return Vec::new();
    };
    events
        .iter()
        .filter_map(|event| {
            let segments = event["segs"].as_array()?;
            let text: String = segments
                .iter()
                .filter_map(|segment| segment["utf8"].as_str())
                .collect();
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if text.is_empty() {
                return None;
            }
            let start = event["tStartMs"].as_f64().unwrap_or_default() / 1000.0;
            Some(Caption { start, text })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_video_ids() {
        let cases = [
            (
                "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
                Some("dQw4w9WgXcQ"),
            ),
            (
                "https://youtube.com/watch?feature=x&v=abc_-1",
                Some("abc_-1"),
            ),
            ("https://youtu.be/dQw4w9WgXcQ?t=10", Some("dQw4w9WgXcQ")),
            ("https://m.youtube.com/shorts/xyz", Some("xyz")),
            ("https://www.youtube.com/embed/xyz", Some("xyz")),
            ("https://www.youtube.com/channel/UC123", None),
            ("https://example.com/watch?v=abc", None),
            ("https://www.youtube.com/watch?v=a%20b", None),
        ];
        for (url, id) in cases {
            assert_eq!(video_id(url).as_deref(), id, "{url}");
        }
    }

    #[test]
    fn extracts_player_response() {
        let page = r#"<script>window["ytInitialPlayerResponse"] = null;</script>
<script>var ytInitialPlayerResponse = {"videoDetails":{"title":"T {braces}"}};var meta = {};</script>"#;
        let player = player_response(page).unwrap();
        assert_eq!(player["videoDetails"]["title"], "T {braces}");
        assert_eq!(player_response("<html>nothing</html>"), None);
    }

    #[test]
    fn parses_caption_formats() {
        let xml = r#"<?xml version="1.0"?><transcript><text start="0.5" dur="1.2">Hello &amp;#39;world&amp;#39;</text><text start="61" dur="2">second
line</text><text start="62" dur="1"></text></transcript>"#;
        assert_eq!(
            parse_captions(xml),
            vec![
                Caption {
                    start: 0.5,
                    text: "Hello 'world'".to_owned()
                },
                Caption {
                    start: 61.0,
                    text: "second line".to_owned()
                },
            ]
        );
        let format3 = r#"<timedtext format="3"><body><p t="1500" d="900"><s>one</s><s> two</s></p></body></timedtext>"#;
        assert_eq!(
            parse_captions(format3),
            vec![Caption {
                start: 1.5,
                text: "one two".to_owned()
            }]
        );
        let json3 = r#"{"events":[{"tStartMs":3000,"segs":[{"utf8":"hi"},{"utf8":" there"}]},{"tStartMs":4000}]}"#;
        assert_eq!(
            parse_captions(json3),
            vec![Caption {
                start: 3.0,
                text: "hi there".to_owned()
            }]
        );
        assert_eq!(timestamp(3725.0), "1:02:05");
        assert_eq!(timestamp(65.4), "1:05");
    }
}
