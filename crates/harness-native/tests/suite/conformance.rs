//! The harness conformance suite, run against `NativeHarness` through the real host, with
//! the mock model server speaking OpenAI SSE: a quick answer as the fallback, a slow
//! stream queued for the abort case.

use std::sync::{Arc, mpsc};
use std::time::Duration;

use hearth_core::{Harness, HarnessId, UserMessage};
use hearth_harness_native::{NativeHarness, NoTools};
use hearth_llm::{ClientOptions, OpenAiClient};
use hearth_test_support::conformance::ConformanceSubject;
use hearth_test_support::{MockModelServer, OpenAiStream};

use super::support::{MODEL, settings};

/// A mock model server on a thread and runtime of its own, so it outlives every harness
/// instance (and the host restarts) of one test. Stops when dropped.
pub struct Native {
    url: String,
    server: Arc<MockModelServer>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Native {
    pub fn start() -> Self {
        let (ready, started) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let server = Arc::new(MockModelServer::start().await.unwrap());
                server.set_fallback(OpenAiStream::text_answer(
                    MODEL,
                    &["A quick ", "answer, ", "streamed."],
                    12,
                    4,
                ));
                ready.send(Arc::clone(&server)).unwrap();
                // Serve until the test is over.
                stopped.await.ok();
            });
        });
        let server = started.recv().unwrap();
        Self {
            url: server.url_with("/v1"),
            server,
            stop: Some(stop),
        }
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
    }
}

impl ConformanceSubject for Native {
    fn agent(&self) -> Arc<dyn Harness> {
        let client = OpenAiClient::new(ClientOptions::new("mock", &self.url).unwrap()).unwrap();
        Arc::new(NativeHarness::new(
            HarnessId::parse("mock").unwrap(),
            Arc::new(client),
            Some(MODEL.into()),
            Arc::new(NoTools),
            settings(),
        ))
    }

    fn provider(&self) -> String {
        "mock".into()
    }

    fn quick_prompt(&self) -> UserMessage {
        UserMessage::text("a quick question")
    }

    fn slow_prompt(&self) -> UserMessage {
        let words: Vec<String> = (1..=40).map(|n| format!("w{n} ")).collect();
        let stream = words
            .iter()
            .fold(OpenAiStream::new(MODEL).role(), |stream, word| {
                stream.text(word).pause(Duration::from_millis(100))
            });
        self.server.enqueue(stream.finish("stop").done());
        UserMessage::text("answer slowly please")
    }
}

hearth_test_support::conformance_suite!(Native::start());
