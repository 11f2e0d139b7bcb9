//! Runs a converter on a blocking thread, under `catch_unwind`, within a time limit:
//! parsers of hostile documents may panic or take long, and neither may reach the
//! caller as anything but a [`ConvertError`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use super::error::{ConvertError, Result};
use super::format::SourceFormat;

/// Runs `work` in isolation. A panic becomes [`ConvertError::Malformed`]; running past
/// `time_limit` becomes [`ConvertError::TimedOut`] at once, while the thread, which
/// cannot be stopped, finishes in the background (bounded by the input size cap).
pub(super) async fn run<T, F>(format: SourceFormat, time_limit: Duration, work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let task = tokio::task::spawn_blocking(move || catch_unwind(AssertUnwindSafe(work)));
    let joined =
        tokio::time::timeout(time_limit, task)
            .await
            .map_err(|_| ConvertError::TimedOut {
                format,
                limit: time_limit,
            })?;
    let caught = joined.map_err(|error| ConvertError::Malformed {
        format,
        message: format!("the conversion task failed ({error})"),
    })?;
    caught.map_err(|_| ConvertError::Malformed {
        format,
        message: "the file is damaged (the parser crashed on it)".to_owned(),
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_an_error_naming_the_format() {
        let error = run::<(), _>(SourceFormat::Docx, Duration::from_secs(60), || {
            panic!("parser bug")
        })
        .await
        .unwrap_err();
        assert!(
            matches!(&error, ConvertError::Malformed { format: SourceFormat::Docx, message }
                if message.contains("crashed")),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn work_past_the_limit_times_out() {
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let error = run(SourceFormat::Epub, Duration::from_millis(10), move || {
            // Blocks until the test, having seen the time-out, lets it go.
            wait.recv().ok();
            Ok(())
        })
        .await
        .unwrap_err();
        release.send(()).unwrap();
        assert!(
            matches!(
                error,
                ConvertError::TimedOut {
                    format: SourceFormat::Epub,
                    ..
                }
            ),
            "{error:?}"
        );
    }
}
