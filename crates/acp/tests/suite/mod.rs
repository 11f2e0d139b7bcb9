mod conformance;
mod faults;
mod files;
mod permissions;
mod sessions;
pub(crate) mod support;
mod turns;
