mod conformance;
mod faults;
mod files;
mod permissions;
mod real_agents;
mod sessions;
pub(crate) mod support;
mod terminals;
mod turns;
