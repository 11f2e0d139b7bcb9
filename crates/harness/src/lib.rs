//! What every Hearth harness shares.
