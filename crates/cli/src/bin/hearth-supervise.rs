//! `hearth-supervise <hearth pid> -- <agent> [args…]`: the supervisor each external agent
//! runs under when Hearth starts it (never run by a user). It leads the agent's process
//! group, and stops the whole group when Hearth dies, `kill -9` included, so no agent
//! outlives Hearth. A binary of its own so that it costs about a megabyte rather than
//! the whole `hearth` binary's ten; `hearth __supervise-agent` does the same when this
//! binary is not next to `hearth`.

fn main() -> std::process::ExitCode {
    hearth_harness_acp::supervise::supervise_by_polling(std::env::args_os().skip(1).collect())
}
