//! A deterministic ACP agent for Hearth's tests.

fn main() {}
