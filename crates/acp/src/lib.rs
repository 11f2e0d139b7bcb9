//! Hearth's harness for external agents that speak the Agent Client Protocol.
