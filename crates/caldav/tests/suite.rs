//! Integration tests of hearth-caldav.
