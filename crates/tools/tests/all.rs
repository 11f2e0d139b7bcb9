//! Integration tests of hearth-tools: the registry's call path, the approval gate, the
//! injection cases, and the audit log.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod audit;
    mod audit_tamper;
    mod gate;
    mod injection;
    mod nodes;
    mod outcome;
    mod support;
}
