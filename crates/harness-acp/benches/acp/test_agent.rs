//! The runs with the test agent, in the benchmark's own process.

use std::path::PathBuf;
use std::process::Command;

use crate::drive::{Driven, Program};
use crate::fan_out::{bare_floor, long_answer};
use crate::latency::{timed_floor, timed_through_host};
use crate::measure::{own_memory, spread};
use crate::report::{Point, Report};
use crate::{FAN_OUT_CHUNKS, LATENCY_CHUNKS, WARM_UP_CHUNKS};

/// The release build of the test agent, built (or brought up to date) first.
pub(crate) fn release_build() -> PathBuf {
    const NAME: &str = "hearth-acp-test-agent";
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--release", "-p", NAME])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|error| panic!("building {NAME}: {error}"));
    assert!(status.success(), "building {NAME} failed");
    // This benchmark is `<target>/release/deps/acp-<hash>`.
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(NAME);
    assert!(
        path.is_file(),
        "{} is missing after building it",
        path.display()
    );
    path
}

/// Latency, memory and fan-out with the test agent, then the latency floor.
pub(crate) async fn runs(agent: PathBuf, report: &mut Report) {
    let state = tempfile::tempdir().unwrap();
    let driven = Driven::start("tester", "test agent", |_| Program {
        command: agent.clone(),
        args: Vec::new(),
        env: vec![(
            "HEARTH_TEST_AGENT_STATE".into(),
            state.path().display().to_string(),
        )],
    })
    .await;
    report.take(driven.memory(Point::Idle, driven.idle, None).await);

    // The agent starts with the session; a short timed turn warms every path up.
    let chat = driven.new_chat().await;
    timed_through_host(driven.host(), &chat, WARM_UP_CHUNKS).await;
    report.take(driven.memory(Point::Ready, own_memory().now, None).await);

    let delays = timed_through_host(driven.host(), &chat, LATENCY_CHUNKS).await;
    report.latency.push((
        "through Hearth (harness + host), test agent".into(),
        spread(delays),
    ));

    for row in long_answer(&driven, &chat, &format!("/chunks {FAN_OUT_CHUNKS}")).await {
        report.take(row);
    }
    driven.stop().await;

    let floor = timed_floor(&agent, LATENCY_CHUNKS).await;
    report.latency.push((
        "floor: bare line reader (no SDK, no Hearth)".into(),
        spread(floor),
    ));
    report.fan_out.push(bare_floor(&agent).await);
}
