//! Isolated jobs for real: this test binary is also the program that runs them (it
//! dispatches the job subcommand to `job_main` before running the tests), so the
//! children are real processes that really overflow their stacks, really ask for more
//! memory than they may have, really spin and really write too much.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use hearth_process::{ISOLATED_JOB_SUBCOMMAND, Isolator, JobError, JobFn, JobLimits, job_main};

fn echo(arguments: &[String], input: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut output = arguments.join(",").into_bytes();
    output.push(b':');
    output.extend(input);
    Ok(output)
}

fn refuse(_: &[String], _: Vec<u8>) -> Result<Vec<u8>, String> {
    Err("not a valid document".to_owned())
}

fn depth(level: u64) -> u64 {
    // Each frame keeps a buffer on the stack, so the recursion overflows quickly.
    let frame = std::hint::black_box([level; 64]);
    if level == u64::MAX {
        return frame[0];
    }
    depth(level + 1).wrapping_add(frame[1])
}

fn overflow(_: &[String], _: Vec<u8>) -> Result<Vec<u8>, String> {
    Ok(depth(0).to_string().into_bytes())
}

fn hoard(_: &[String], _: Vec<u8>) -> Result<Vec<u8>, String> {
    // 512 GiB, as a sheet whose cells A1 and XFD1048576 make a dense range would.
    let cells: Vec<u8> = vec![1; 512 * 1024 * 1024 * 1024];
    Ok(vec![cells[cells.len() - 1]])
}

fn spin(_: &[String], _: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut counter: u64 = 0;
    loop {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

fn flood(_: &[String], _: Vec<u8>) -> Result<Vec<u8>, String> {
    Ok(vec![b'x'; 4 * 1024 * 1024])
}

fn explode(_: &[String], _: Vec<u8>) -> Result<Vec<u8>, String> {
    panic!("parser bug")
}

const JOBS: &[(&str, JobFn)] = &[
    ("echo", echo),
    ("refuse", refuse),
    ("overflow", overflow),
    ("hoard", hoard),
    ("spin", spin),
    ("flood", flood),
    ("explode", explode),
];

fn limits() -> JobLimits {
    JobLimits {
        memory_bytes: 256 * 1024 * 1024,
        cpu_seconds: 2,
        wall_time: Duration::from_secs(30),
        max_output_bytes: 1024 * 1024,
    }
}

async fn run(job: &str) -> Result<Vec<u8>, JobError> {
    let isolator = Isolator::current_exe().unwrap();
    isolator
        .run(
            job,
            &["a".to_owned(), "b".to_owned()],
            Bytes::from_static(b"input"),
            &limits(),
        )
        .await
}

async fn the_output_of_a_job_comes_back() {
    assert_eq!(run("echo").await.unwrap(), b"a,b:input");
}

async fn a_job_that_fails_says_why() {
    assert_eq!(
        run("refuse").await.unwrap_err(),
        JobError::Failed("not a valid document".to_owned())
    );
}

async fn a_stack_overflow_ends_the_child_not_the_caller() {
    let error = run("overflow").await.unwrap_err();
    assert!(
        matches!(&error, JobError::Crashed { how, .. } if how.contains("overflowed its stack")),
        "{error:?}"
    );
}

async fn an_allocation_past_the_limit_ends_the_child_not_the_caller() {
    let error = run("hoard").await.unwrap_err();
    assert!(
        matches!(&error, JobError::Crashed { how, .. } if how.contains("ran out of memory")),
        "{error:?}"
    );
}

async fn a_child_past_its_cpu_time_is_stopped() {
    let error = run("spin").await.unwrap_err();
    assert!(
        matches!(&error, JobError::Crashed { how, .. } if how.contains("CPU time")),
        "{error:?}"
    );
}

async fn a_child_past_its_wall_time_is_stopped() {
    let isolator = Isolator::current_exe().unwrap();
    let limits = JobLimits {
        cpu_seconds: 600,
        wall_time: Duration::from_millis(300),
        ..limits()
    };
    let error = isolator
        .run("spin", &[], Bytes::new(), &limits)
        .await
        .unwrap_err();
    assert_eq!(error, JobError::TimedOut(Duration::from_millis(300)));
}

async fn too_much_output_is_refused() {
    assert_eq!(
        run("flood").await.unwrap_err(),
        JobError::OutputTooLarge(1024 * 1024)
    );
}

async fn a_panic_is_a_crash_of_the_parser() {
    let error = run("explode").await.unwrap_err();
    assert!(
        matches!(&error, JobError::Crashed { how, stderr } if how.contains("parser failed") && stderr.contains("parser bug")),
        "{error:?}"
    );
}

async fn a_hundred_hostile_jobs_in_a_row_leave_the_caller_standing() {
    for round in 0..100 {
        let job = ["overflow", "hoard", "explode", "echo"][round % 4];
        let outcome = run(job).await;
        assert_eq!(outcome.is_ok(), job == "echo", "{job}: {outcome:?}");
    }
}

/// The checks, each an `async fn` run on a runtime of its own.
macro_rules! trials {
    ($($check:ident),* $(,)?) => {
        vec![$(libtest_mimic::Trial::test(stringify!($check), || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|error| error.to_string())?
                .block_on($check());
            Ok(())
        })),*]
    };
}

fn main() -> ExitCode {
    let mut arguments = std::env::args_os().skip(1);
    if arguments.next().as_deref() == Some(std::ffi::OsStr::new(ISOLATED_JOB_SUBCOMMAND)) {
        return job_main(arguments.collect(), JOBS);
    }
    let trials = trials![
        the_output_of_a_job_comes_back,
        a_job_that_fails_says_why,
        a_stack_overflow_ends_the_child_not_the_caller,
        an_allocation_past_the_limit_ends_the_child_not_the_caller,
        a_child_past_its_cpu_time_is_stopped,
        a_child_past_its_wall_time_is_stopped,
        too_much_output_is_refused,
        a_panic_is_a_crash_of_the_parser,
        a_hundred_hostile_jobs_in_a_row_leave_the_caller_standing,
    ];
    libtest_mimic::run(&libtest_mimic::Arguments::from_args(), trials).exit_code()
}
