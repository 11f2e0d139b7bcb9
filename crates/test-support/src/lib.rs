//! Test support shared by Hearth's crates. Real code, used only from tests and
//! benchmarks: every mock speaks the real wire format, so production code paths are the
//! ones exercised.
