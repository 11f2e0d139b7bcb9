//! Turns an exchange into an [`EventStream`]: attempts and retries, then the body read
//! chunk by chunk under the idle timeout and the caller's cancellation.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use reqwest::Response;
use tokio_util::sync::CancellationToken;

use crate::diagnostics::error_chain;
use crate::error::{LlmError, Result, TimeoutPhase};
use crate::event::{EventStream, StreamEvent};
use crate::sse::{FeedError, SseParser};
use crate::transport::{Exchange, Opening, Transport};

/// How long Hearth keeps reading after the end of the answer, so the connection can be
/// reused.
const DRAIN_LIMIT: Duration = Duration::from_millis(50);

/// Facts a decoder needs to word its errors.
#[derive(Clone, Debug, Default)]
pub(crate) struct DecodeContext {
    /// The provider id.
    pub provider: String,
    /// The request id from the response headers.
    pub request_id: Option<String>,
}

/// Reads a response body into events.
pub(crate) trait Decoder: Send {
    /// Takes the next body bytes.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<()>;

    /// The body ended.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<()>;

    /// Whether the answer is complete (no further bytes are needed).
    fn is_done(&self) -> bool;
}

/// What a streamed answer's events build, each protocol its own; read by [`SseDecoder`].
pub(crate) trait SseAssembly: Send {
    /// Takes one event: its name (empty when the stream names none) and its data.
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<StreamEvent>) -> Result<()>;
    /// Whether the answer ended.
    fn is_done(&self) -> bool;
    /// Whether the answer said why it finished, so that a stream ending without its
    /// closing event still holds a whole answer.
    fn has_finished(&self) -> bool;
    /// Ends the answer: completes what is open and says why it finished.
    fn finalize(&mut self, out: &mut Vec<StreamEvent>);
    /// Where the answer comes from, for errors.
    fn context(&self) -> &DecodeContext;
}

/// Reads a `text/event-stream` answer into its assembly.
pub(crate) struct SseDecoder<A> {
    sse: SseParser,
    assembly: A,
}

impl<A: SseAssembly + 'static> SseDecoder<A> {
    /// A decoder building `assembly`.
    pub(crate) fn boxed(assembly: A) -> Box<dyn Decoder> {
        Box::new(Self {
            sse: SseParser::new(),
            assembly,
        })
    }
}

impl<A: SseAssembly> Decoder for SseDecoder<A> {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<()> {
        let assembly = &mut self.assembly;
        let result = self.sse.feed(bytes, &mut |event| {
            assembly.event(event.event, event.data, out)
        });
        sse_result(result, self.assembly.context())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<()> {
        let assembly = &mut self.assembly;
        let result = self
            .sse
            .finish(&mut |event| assembly.event(event.event, event.data, out));
        sse_result(result, self.assembly.context())?;
        if self.assembly.is_done() {
            return Ok(());
        }
        if self.assembly.has_finished() {
            self.assembly.finalize(out);
            return Ok(());
        }
        Err(LlmError::Incomplete {
            provider: self.assembly.context().provider.clone(),
        })
    }

    fn is_done(&self) -> bool {
        self.assembly.is_done()
    }
}

/// A streaming exchange: a request plus the decoder for its answer.
pub(crate) trait StreamExchange: Exchange + 'static {
    /// The decoder for a successful response with this content type.
    fn decoder(&self, content_type: &str, context: DecodeContext) -> Box<dyn Decoder>;
}

enum Phase {
    Attempt,
    Backoff(Duration),
    Streaming {
        response: Response,
        decoder: Box<dyn Decoder>,
    },
    Draining(Response),
    Done,
}

struct Driver {
    transport: Arc<Transport>,
    exchange: Box<dyn StreamExchange>,
    cancel: CancellationToken,
    phase: Phase,
    retries_done: u32,
    pending: VecDeque<Result<StreamEvent>>,
    scratch: Vec<StreamEvent>,
}

/// The event stream of one call. Nothing is sent before the first poll.
pub(crate) fn event_stream(
    transport: Arc<Transport>,
    exchange: Box<dyn StreamExchange>,
    cancel: CancellationToken,
) -> EventStream {
    let driver = Driver {
        transport,
        exchange,
        cancel,
        phase: Phase::Attempt,
        retries_done: 0,
        pending: VecDeque::new(),
        scratch: Vec::new(),
    };
    Box::pin(futures::stream::unfold(driver, |mut driver| async move {
        driver.next().await.map(|item| (item, driver))
    }))
}

/// Decodes a body that is already in memory (a recorded stream) through the same
/// decoder as a live response, without the network.
pub fn decode_recorded<S>(protocol: crate::Protocol, chunks: S) -> EventStream
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    use futures::StreamExt;
    let context = DecodeContext {
        provider: protocol.to_string(),
        request_id: None,
    };
    let decoder: Box<dyn Decoder> = match protocol {
        crate::Protocol::OpenAiChat => crate::openai::stream_decoder(context),
        crate::Protocol::AnthropicMessages => crate::anthropic::stream_decoder(context),
    };
    let state = (
        Box::pin(chunks),
        decoder,
        VecDeque::<Result<StreamEvent>>::new(),
        Vec::new(),
        false,
    );
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        let (chunks, decoder, pending, scratch, ended) = &mut state;
        loop {
            if let Some(item) = pending.pop_front() {
                return Some((item, state));
            }
            if *ended {
                return None;
            }
            let result = match chunks.next().await {
                Some(bytes) => decoder.feed(&bytes, scratch),
                None => {
                    *ended = true;
                    decoder.finish(scratch)
                }
            };
            pending.extend(scratch.drain(..).map(Ok));
            if let Err(error) = result {
                pending.push_back(Err(error));
                *ended = true;
            }
            if decoder.is_done() {
                *ended = true;
            }
        }
    }))
}

impl Driver {
    async fn next(&mut self) -> Option<Result<StreamEvent>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(item);
            }
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Done => return None,
                Phase::Attempt => {
                    if let Some(item) = self.attempt().await {
                        return Some(item);
                    }
                }
                Phase::Backoff(delay) => {
                    tokio::select! {
                        biased;
                        () = self.cancel.cancelled() => return Some(Err(LlmError::Cancelled)),
                        () = tokio::time::sleep(delay) => self.phase = Phase::Attempt,
                    }
                }
                Phase::Streaming {
                    mut response,
                    mut decoder,
                } => {
                    let idle = self.transport.options.idle_timeout;
                    let chunk = tokio::select! {
                        biased;
                        () = self.cancel.cancelled() => return Some(Err(LlmError::Cancelled)),
                        chunk = tokio::time::timeout(idle, response.chunk()) => chunk,
                    };
                    match chunk {
                        Err(_) => {
                            return Some(Err(self.transport.timeout(TimeoutPhase::Idle, idle)));
                        }
                        Ok(Err(error)) => {
                            return Some(Err(LlmError::Disconnected {
                                provider: self.transport.provider().to_owned(),
                                message: error_chain(&error),
                            }));
                        }
                        Ok(Ok(Some(bytes))) => {
                            let result = decoder.feed(&bytes, &mut self.scratch);
                            self.settle(result, response, decoder);
                        }
                        Ok(Ok(None)) => {
                            let result = decoder.finish(&mut self.scratch);
                            self.settle(result, response, decoder);
                            self.phase = Phase::Done;
                        }
                    }
                }
                Phase::Draining(mut response) => {
                    let drained = tokio::time::timeout(DRAIN_LIMIT, async {
                        let mut read = 0usize;
                        while let Ok(Some(bytes)) = response.chunk().await {
                            read += bytes.len();
                            if read > 64 * 1024 {
                                break;
                            }
                        }
                    });
                    tokio::select! {
                        biased;
                        () = self.cancel.cancelled() => {}
                        _ = drained => {}
                    }
                    return None;
                }
            }
        }
    }

    /// One round of attempts; returns an item to yield, or `None` to go on.
    async fn attempt(&mut self) -> Option<Result<StreamEvent>> {
        let opening = self
            .transport
            .open(self.exchange.as_mut(), self.retries_done, &self.cancel)
            .await;
        match opening {
            Opening::Opened { response, first } => {
                let headers = response.headers();
                let content_type = headers
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let request_id = ["x-request-id", "request-id"]
                    .iter()
                    .find_map(|name| headers.get(*name)?.to_str().ok())
                    .map(str::to_owned);
                let context = DecodeContext {
                    provider: self.transport.provider().to_owned(),
                    request_id,
                };
                let mut decoder = self.exchange.decoder(&content_type, context);
                let result = match first {
                    Some(bytes) => decoder.feed(&bytes, &mut self.scratch),
                    None => decoder.finish(&mut self.scratch),
                };
                self.settle(result, response, decoder);
                None
            }
            Opening::Retry { delay, error } => {
                self.retries_done += 1;
                // The caller hears of it as `StreamEvent::Retrying` (the CLI prints it once).
                tracing::debug!(
                    provider = %self.transport.provider(),
                    attempt = self.retries_done,
                    ?delay,
                    "retrying the model request: {error}"
                );
                self.phase = Phase::Backoff(delay);
                Some(Ok(StreamEvent::Retrying {
                    attempt: self.retries_done,
                    delay,
                    reason: error.to_string(),
                }))
            }
            Opening::Failed(error) => Some(Err(error)),
        }
    }

    /// Queues decoded events (then the error, if any) and picks the next phase.
    fn settle(&mut self, result: Result<()>, response: Response, decoder: Box<dyn Decoder>) {
        self.pending.extend(self.scratch.drain(..).map(Ok));
        match result {
            Err(error) => {
                // A provider may echo the request (and its key) in an error event.
                let error = error.cleaned(|message| self.transport.clean(message));
                self.pending.push_back(Err(error));
                self.phase = Phase::Done;
            }
            Ok(()) if decoder.is_done() => self.phase = Phase::Draining(response),
            Ok(()) => self.phase = Phase::Streaming { response, decoder },
        }
    }
}

/// Maps an SSE feeding failure to the crate's error.
pub(crate) fn sse_result(
    result: Result<(), FeedError<LlmError>>,
    context: &DecodeContext,
) -> Result<()> {
    match result {
        Ok(()) => Ok(()),
        Err(FeedError::Callback(error)) => Err(error),
        Err(FeedError::Overflow(_)) => Err(LlmError::Decode {
            provider: context.provider.clone(),
            message: "a stream event exceeded 16 MiB".to_owned(),
        }),
    }
}
