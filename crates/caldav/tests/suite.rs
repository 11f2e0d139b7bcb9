//! Integration tests of hearth-caldav, against an in-memory server speaking the wire
//! format.

mod server;
mod sync;
mod writes;
