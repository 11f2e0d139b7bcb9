//! When and how long to wait before sending a failed request again, as the official
//! OpenAI and Anthropic SDKs decide it.

use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use hearth_core::Backoff;
use reqwest::header::HeaderMap;

use crate::error::retryable_status;

/// Retry settings of a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 2).
    pub max_retries: u32,
    /// First backoff delay (default 0.5 s); doubles with each retry.
    pub initial_delay: Duration,
    /// Largest backoff delay (default 8 s).
    pub max_delay: Duration,
    /// Longest server-requested wait Hearth honours (default 60 s); a longer
    /// `retry-after` fails the request at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// What to do about a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetryDecision {
    /// Send again after this delay.
    Retry(Duration),
    /// Do not send again.
    GiveUp,
    /// The server asks to wait longer than the cap: fail now.
    WaitTooLong(Duration),
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Decision for an error answer, after `retries_done` retries.
    pub(crate) fn for_response(
        &self,
        status: u16,
        headers: &HeaderMap,
        retries_done: u32,
    ) -> RetryDecision {
        if !should_retry(status, headers) {
            return RetryDecision::GiveUp;
        }
        let requested = retry_after(headers, SystemTime::now());
        if let Some(wait) = requested
            && wait > self.max_retry_after
        {
            return RetryDecision::WaitTooLong(wait);
        }
        let Some(backoff) = self.backoff().next(retries_done) else {
            return RetryDecision::GiveUp;
        };
        match requested {
            Some(wait) if !wait.is_zero() => RetryDecision::Retry(wait),
            _ => RetryDecision::Retry(backoff),
        }
    }

    /// Decision for a connection failure or timeout, after `retries_done` retries.
    pub(crate) fn for_connection_error(&self, retries_done: u32) -> RetryDecision {
        self.backoff()
            .next(retries_done)
            .map_or(RetryDecision::GiveUp, RetryDecision::Retry)
    }

    /// Exponential backoff with up to 25 % jitter below the nominal delay, limited to
    /// the policy's retries.
    pub(crate) fn backoff(&self) -> Backoff {
        Backoff::doubling(self.initial_delay, self.max_delay)
            .with_jitter(25)
            .with_retries(self.max_retries)
    }
}

/// The status rule, overridden by `x-should-retry`.
pub(crate) fn should_retry(status: u16, headers: &HeaderMap) -> bool {
    match header_str(headers, "x-should-retry") {
        Some(value) if value.eq_ignore_ascii_case("true") => true,
        Some(value) if value.eq_ignore_ascii_case("false") => false,
        _ => retryable_status(status),
    }
}

/// The wait a server asks for: `retry-after-ms`, else `retry-after` in seconds or as an
/// HTTP date. A date in the past is a zero wait.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(millis) = header_str(headers, "retry-after-ms").and_then(parse_non_negative) {
        return Some(Duration::from_secs_f64(millis / 1000.0));
    }
    let value = header_str(headers, "retry-after")?;
    if let Some(seconds) = parse_non_negative(value) {
        return Some(Duration::from_secs_f64(seconds));
    }
    let date = DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let now = DateTime::<Utc>::from(now);
    Some(
        (date.with_timezone(&Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}

fn parse_non_negative(value: &str) -> Option<f64> {
    let number: f64 = value.trim().parse().ok()?;
    // Bounded so Duration conversions cannot overflow: a century is "too long" anyway.
    (number.is_finite() && number >= 0.0).then_some(number.min(3.2e9))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "1500")]), now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after-ms", "20"), ("retry-after", "9")]),
                now
            ),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2.5")]), now),
            Some(Duration::from_millis(2500))
        );
        // 2015-10-21T07:28:00Z is 10 s after `now`.
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
                now
            ),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")]),
                now
            ),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-3")]), now), None);
    }

    #[test]
    fn status_rule_and_override() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(should_retry(status, &HeaderMap::new()), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!should_retry(status, &HeaderMap::new()), "{status}");
        }
        assert!(should_retry(400, &headers(&[("x-should-retry", "true")])));
        assert!(!should_retry(503, &headers(&[("x-should-retry", "false")])));
    }

    #[test]
    fn decisions_honour_cap_and_budget() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.for_response(429, &headers(&[("retry-after", "999")]), 0),
            RetryDecision::WaitTooLong(Duration::from_secs(999))
        );
        assert_eq!(
            policy.for_response(429, &headers(&[("retry-after-ms", "20")]), 1),
            RetryDecision::Retry(Duration::from_millis(20))
        );
        assert_eq!(
            policy.for_response(429, &headers(&[("retry-after-ms", "20")]), 2),
            RetryDecision::GiveUp
        );
        assert_eq!(
            policy.for_response(401, &HeaderMap::new(), 0),
            RetryDecision::GiveUp
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy::default();
        for retries in 0..6 {
            let nominal = Duration::from_millis(500 * 2u64.pow(retries)).min(policy.max_delay);
            let delay = policy.backoff().delay(retries);
            assert!(
                delay <= nominal && delay >= nominal.mul_f64(0.75),
                "{delay:?}"
            );
        }
    }
}
