//! The child processes Hearth starts — external agents and their terminals, stdio MCP
//! servers, and the converters of untrusted documents — started one way.
//!
//! Owns:
//! - [`ChildEnv`]: the environment a child gets. Never Hearth's whole environment: only
//!   what a program needs to run (`PATH`, `HOME`, the locale, the terminal, the
//!   temporary and XDG directories, proxy and CA settings), the variables a
//!   configuration passes by name (`pass_env`), and those it sets. Provider keys,
//!   calendar passwords and Hearth's own settings reach a child only when named.
//! - [`Launch`] and [`Process`]: a child started in a process group of its own, its
//!   stderr drained continuously into a bounded tail ([`StderrTail`]) that errors and
//!   `doctor` quote, its exit watched ([`ExitReport`]), the whole group stopped on
//!   request (asked, then killed after a grace) and killed when the handle is dropped.
//! - [`run_to_end`]: a short-lived child (a converter, a password command) run to its
//!   end within a time and an output limit, killed with its group past either.
//! - [`group`]: reading and signalling a process group through `/proc`.
//! - [`lines`]: lines read with a cap on their size ([`LineReader`]), for a child's
//!   stderr and for the line protocols spoken with children and peers.
//! - [`Isolator`] and [`job_main`]: work on untrusted input (a document, a web page) run
//!   as a child of Hearth's own binary under limits on address space, CPU time, wall time
//!   and output, so a stack overflow or a failed allocation ends that child — reported
//!   as the job's failure with the reason — and never the process that asked.
//!
//! It does not know what the children are (agents, servers, converters): callers say.

mod env;
pub mod group;
mod isolate;
pub mod lines;
mod run;
mod spawn;

pub use env::{BASE_VARIABLES, ChildEnv};
pub use isolate::{
    DEFAULT_JOB_MEMORY_BYTES, ISOLATED_JOB_SUBCOMMAND, Isolator, JobError, JobFn, JobLimits,
    job_main,
};
pub use lines::{Line, LineReader};
pub use run::{Finished, RunError, RunLimits, run_to_end};
pub use spawn::{
    ExitReport, Launch, Leftovers, Pipes, Process, STOP_GRACE, STOP_POLL, Stderr, StderrTail,
    Stdin, cut, spawn_failure,
};
