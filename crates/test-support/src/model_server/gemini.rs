//! Builders of genuine Gemini API answers: the SSE stream of
//! `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (one
//! `GenerateContentResponse` per `data:` event, separated by CRLF as Google sends them),
//! the whole body of `:generateContent`, and `:countTokens`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockResponse, Step};

/// A `streamGenerateContent` SSE stream, chunk by chunk. Each chunk is sent at once.
#[derive(Clone, Debug)]
pub struct GeminiStream {
    model: String,
    steps: Vec<Step>,
}

impl GeminiStream {
    /// An empty stream for `model`.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            steps: Vec::new(),
        }
    }

    /// A text answer as Gemini sends it: one chunk per piece, the last one carrying
    /// `finishReason: STOP` and the usage.
    pub fn text_answer(
        model: &str,
        pieces: &[&str],
        prompt_tokens: u64,
        candidates_tokens: u64,
    ) -> Self {
        let (last, rest) = pieces.split_last().unwrap_or((&"", &[]));
        rest.iter()
            .fold(Self::new(model), |stream, piece| stream.text(piece))
            .last_parts(
                &[json!({"text": last})],
                "STOP",
                prompt_tokens,
                candidates_tokens,
            )
    }

    /// A whole chunk object as one `data:` event.
    pub fn chunk(mut self, chunk: &Value) -> Self {
        self.steps
            .push(Step::Send(format!("data: {chunk}\r\n\r\n").into_bytes()));
        self
    }

    fn candidate_chunk(&self, parts: &[Value], finish: Option<&str>, usage: Value) -> Value {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        json!({
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": self.model,
            "responseId": "mock-response",
        })
    }

    /// A chunk with these content parts and no finish reason.
    pub fn parts(self, parts: &[Value]) -> Self {
        let chunk = self.candidate_chunk(parts, None, json!({}));
        self.chunk(&chunk)
    }

    /// A chunk with one text part.
    pub fn text(self, text: &str) -> Self {
        self.parts(&[json!({"text": text})])
    }

    /// A chunk with one `functionCall` part.
    pub fn function_call(self, name: &str, args: &Value) -> Self {
        self.parts(&[json!({"functionCall": {"name": name, "args": args}})])
    }

    /// The last chunk: these parts, the finish reason (`STOP`, `MAX_TOKENS`, `SAFETY`,
    /// ...) and the usage.
    pub fn last_parts(
        self,
        parts: &[Value],
        reason: &str,
        prompt_tokens: u64,
        candidates_tokens: u64,
    ) -> Self {
        let chunk = self.candidate_chunk(
            parts,
            Some(reason),
            gemini_usage(prompt_tokens, candidates_tokens),
        );
        self.chunk(&chunk)
    }

    /// A last chunk with an empty text part, the finish reason and the usage.
    pub fn finish(self, reason: &str, prompt_tokens: u64, candidates_tokens: u64) -> Self {
        self.last_parts(
            &[json!({"text": ""})],
            reason,
            prompt_tokens,
            candidates_tokens,
        )
    }

    /// Any bytes, sent as one chunk.
    pub fn raw(mut self, text: &str) -> Self {
        self.steps.push(Step::Send(text.as_bytes().to_vec()));
        self
    }

    /// A pause before the next step.
    pub fn pause(mut self, duration: Duration) -> Self {
        self.steps.push(Step::Pause(duration));
        self
    }

    /// A connection reset at this point.
    pub fn reset(mut self) -> Self {
        self.steps.push(Step::Reset);
        self
    }

    /// The steps.
    pub fn steps(self) -> Vec<Step> {
        self.steps
    }

    /// The body as one byte string (pauses, holds and resets left out).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Send(bytes) => Some(bytes.as_slice()),
                Step::Pause(_) | Step::Hold(_) | Step::Reset => None,
            })
            .collect::<Vec<_>>()
            .concat()
    }
}

impl From<GeminiStream> for MockResponse {
    fn from(stream: GeminiStream) -> Self {
        MockResponse::sse(stream.steps)
    }
}

fn gemini_usage(prompt_tokens: u64, candidates_tokens: u64) -> Value {
    json!({
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": candidates_tokens,
        "totalTokenCount": prompt_tokens + candidates_tokens,
    })
}

/// A whole `generateContent` body: these parts, `finishReason: STOP`, usage.
pub fn gemini_response(model: &str, parts: &[Value]) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": gemini_usage(5, 2),
        "modelVersion": model,
        "responseId": "mock-response",
    })
}

/// A `:countTokens` answer.
pub fn gemini_count_tokens(total_tokens: u64) -> Value {
    json!({"totalTokens": total_tokens})
}

/// A Google API error body: `{"error": {"code", "message", "status"}}`.
pub fn gemini_error_body(code: u16, message: &str, status: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(stream: &GeminiStream) -> Vec<Value> {
        String::from_utf8(stream.to_bytes())
            .unwrap()
            .split_terminator("\r\n\r\n")
            .map(|event| serde_json::from_str(event.strip_prefix("data: ").unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn the_last_piece_carries_the_finish_reason_and_usage() {
        let chunks = chunks(&GeminiStream::text_answer("gemini-x", &["po", "ng"], 5, 1));
        assert_eq!(chunks.len(), 2);
        assert_eq!(
            chunks[0]["candidates"][0]["content"]["parts"],
            json!([{"text": "po"}])
        );
        assert!(chunks[0]["candidates"][0]["finishReason"].is_null());
        assert_eq!(chunks[1]["candidates"][0]["finishReason"], json!("STOP"));
        assert_eq!(chunks[1]["usageMetadata"]["totalTokenCount"], json!(6));
        assert_eq!(chunks[1]["modelVersion"], json!("gemini-x"));
    }

    #[test]
    fn a_function_call_is_a_part() {
        let stream = GeminiStream::new("m").last_parts(
            &[json!({"functionCall": {"name": "write_file", "args": {"file_path": "/a"}}})],
            "STOP",
            1,
            1,
        );
        let chunks = chunks(&stream);
        assert_eq!(
            chunks[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"],
            json!({"file_path": "/a"})
        );
    }
}
