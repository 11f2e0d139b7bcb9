//! Integration tests of hearth-mcp-client.

mod servers;
