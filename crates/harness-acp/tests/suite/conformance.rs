//! The harness conformance suite, run against the ACP harness driving the test agent.

use std::sync::Arc;

use hearth_core::{Harness, UserMessage};
use hearth_test_support::conformance::ConformanceSubject;
use hearth_test_support::conformance_suite;

use super::support::{AGENT, Setup};

/// The test agent, whose sessions persist in one state directory across harness
/// instances (so a restart can reopen them).
struct AcpSubject {
    setup: Setup,
}

impl ConformanceSubject for AcpSubject {
    fn agent(&self) -> Arc<dyn Harness> {
        Arc::new(self.setup.harness())
    }

    fn provider(&self) -> String {
        AGENT.into()
    }

    fn quick_prompt(&self) -> UserMessage {
        UserMessage::text("hello there")
    }

    fn slow_prompt(&self) -> UserMessage {
        UserMessage::text("/slow 200")
    }
}

fn subject() -> AcpSubject {
    AcpSubject {
        setup: Setup::new(),
    }
}

conformance_suite!(subject());
