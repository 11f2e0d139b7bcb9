//! How long to pause before trying something again: one policy for every loop in Hearth
//! that retries after a failure (model requests, store writes, aborts, restarts).
//!
//! The pause before retry `n` (counted from 0) is `first × factorⁿ`, capped, optionally
//! drawn at random from a band below that nominal value (jitter, so that clients that
//! failed together do not retry together). A policy may limit how many retries follow
//! the first attempt. Computing a pause is pure; waiting is the caller's.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A retry policy: the first pause, how it grows, its cap, its jitter, and how many
/// retries are allowed.
///
/// ```
/// use std::time::Duration;
/// use hearth_core::Backoff;
///
/// let backoff = Backoff::doubling(Duration::from_millis(250), Duration::from_secs(1))
///     .with_retries(3);
/// let pauses: Vec<Duration> = backoff.pauses().collect();
/// assert_eq!(pauses, [250, 500, 1000].map(Duration::from_millis));
/// assert_eq!(backoff.next(3), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    first: Duration,
    factor: u32,
    cap: Duration,
    jitter_percent: u8,
    retries: Option<u32>,
}

impl Backoff {
    /// Pauses starting at `first` and doubling with each retry, never longer than `cap`;
    /// no jitter and no limit on retries until set.
    pub const fn doubling(first: Duration, cap: Duration) -> Self {
        Self {
            first,
            factor: 2,
            cap,
            jitter_percent: 0,
            retries: None,
        }
    }

    /// Each pause is `factor` times the one before (instead of twice); a factor of 0 or
    /// 1 keeps every pause at the first.
    pub const fn with_factor(self, factor: u32) -> Self {
        Self { factor, ..self }
    }

    /// Each pause is drawn at random between `percent` % below its nominal value and the
    /// nominal value itself (`percent` above 100 counts as 100).
    pub const fn with_jitter(self, percent: u8) -> Self {
        let jitter_percent = if percent > 100 { 100 } else { percent };
        Self {
            jitter_percent,
            ..self
        }
    }

    /// At most `retries` retries follow the first attempt (`retries + 1` attempts).
    pub const fn with_retries(self, retries: u32) -> Self {
        Self {
            retries: Some(retries),
            ..self
        }
    }

    /// How many retries are allowed after the first attempt; `None` without a limit.
    pub const fn retries(&self) -> Option<u32> {
        self.retries
    }

    /// The pause before retry `retry` (0 for the first retry) without jitter:
    /// `first × factor^retry`, at most the cap. Ignores the retry limit.
    pub fn nominal(&self, retry: u32) -> Duration {
        let mut pause = self.first;
        if self.factor > 1 {
            for _ in 0..retry {
                if pause >= self.cap || pause.is_zero() {
                    break;
                }
                pause = pause.saturating_mul(self.factor);
            }
        }
        pause.min(self.cap)
    }

    /// The pause before retry `retry`, with the jitter drawn at random. Ignores the
    /// retry limit.
    pub fn delay(&self, retry: u32) -> Duration {
        self.delay_at(retry, random_unit())
    }

    /// The pause before retry `retry` with the jitter fixed by `unit` in `[0, 1]`: 0
    /// gives the nominal pause, 1 the shortest the jitter allows (values outside are
    /// clamped). Pure, for callers and tests that bring their own randomness.
    pub fn delay_at(&self, retry: u32, unit: f64) -> Duration {
        let nominal = self.nominal(retry);
        if self.jitter_percent == 0 {
            return nominal;
        }
        let unit = if unit.is_nan() {
            0.0
        } else {
            unit.clamp(0.0, 1.0)
        };
        nominal.mul_f64(1.0 - f64::from(self.jitter_percent) / 100.0 * unit)
    }

    /// The pause before the next attempt after `retries_done` retries, with jitter; `None`
    /// when the retry limit is reached.
    pub fn next(&self, retries_done: u32) -> Option<Duration> {
        match self.retries {
            Some(limit) if retries_done >= limit => None,
            _ => Some(self.delay(retries_done)),
        }
    }

    /// Every pause the policy allows, in order, with jitter (endless without a retry
    /// limit).
    pub fn pauses(&self) -> impl Iterator<Item = Duration> + '_ {
        (0..self.retries.unwrap_or(u32::MAX)).map(|retry| self.delay(retry))
    }
}

/// A random number in `[0, 1)` from the standard library's per-process random hash keys
/// (no clock, no system call after the first in a thread).
fn random_unit() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    // The top 53 bits fill a double's mantissa exactly.
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn millis(values: &[u64]) -> Vec<Duration> {
        values.iter().copied().map(Duration::from_millis).collect()
    }

    #[test]
    fn pauses_double_from_the_first_up_to_the_cap() {
        let backoff = Backoff::doubling(Duration::from_millis(500), Duration::from_secs(8));
        let pauses: Vec<Duration> = (0..7).map(|retry| backoff.nominal(retry)).collect();
        assert_eq!(pauses, millis(&[500, 1000, 2000, 4000, 8000, 8000, 8000]));
        // Without jitter the pause is the nominal one.
        assert_eq!(backoff.delay(3), Duration::from_secs(4));
    }

    #[test]
    fn a_factor_other_than_two_grows_by_that_factor() {
        let backoff =
            Backoff::doubling(Duration::from_millis(250), Duration::from_secs(30)).with_factor(4);
        let pauses: Vec<Duration> = (0..5).map(|retry| backoff.nominal(retry)).collect();
        assert_eq!(pauses, millis(&[250, 1000, 4000, 16000, 30000]));
        let flat = backoff.with_factor(1);
        assert_eq!(flat.nominal(9), Duration::from_millis(250));
    }

    #[test]
    fn huge_retry_numbers_stay_at_the_cap_without_overflow() {
        let backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(30));
        assert_eq!(backoff.nominal(u32::MAX), Duration::from_secs(30));
        let uncapped = Backoff::doubling(Duration::from_secs(1), Duration::MAX);
        assert_eq!(uncapped.nominal(u32::MAX), Duration::MAX);
        let zero = Backoff::doubling(Duration::ZERO, Duration::from_secs(1));
        assert_eq!(zero.nominal(u32::MAX), Duration::ZERO);
    }

    #[test]
    fn jitter_stays_in_its_band_below_the_nominal_pause() {
        let backoff =
            Backoff::doubling(Duration::from_millis(400), Duration::from_secs(10)).with_jitter(25);
        assert_eq!(backoff.delay_at(1, 0.0), Duration::from_millis(800));
        assert_eq!(backoff.delay_at(1, 1.0), Duration::from_millis(600));
        assert_eq!(backoff.delay_at(1, 0.5), Duration::from_millis(700));
        assert_eq!(backoff.delay_at(1, 7.0), Duration::from_millis(600));
        assert_eq!(backoff.delay_at(1, f64::NAN), Duration::from_millis(800));
        for retry in 0..6 {
            let nominal = backoff.nominal(retry);
            let delay = backoff.delay(retry);
            assert!(
                delay <= nominal && delay >= nominal.mul_f64(0.75),
                "retry {retry}: {delay:?} outside {nominal:?} less 25 %"
            );
        }
        assert_eq!(backoff.with_jitter(250), backoff.with_jitter(100));
    }

    #[test]
    fn the_retry_limit_ends_the_pauses() {
        let backoff = Backoff::doubling(Duration::from_millis(50), Duration::from_millis(250))
            .with_factor(5)
            .with_retries(2);
        assert_eq!(backoff.retries(), Some(2));
        assert_eq!(backoff.pauses().collect::<Vec<_>>(), millis(&[50, 250]));
        assert_eq!(backoff.next(0), Some(Duration::from_millis(50)));
        assert_eq!(backoff.next(1), Some(Duration::from_millis(250)));
        assert_eq!(backoff.next(2), None);
        // Control: without a limit there is always a next pause.
        let endless = Backoff::doubling(Duration::from_millis(50), Duration::from_millis(250));
        assert_eq!(endless.retries(), None);
        assert_eq!(endless.next(1000), Some(Duration::from_millis(250)));
        assert_eq!(endless.pauses().take(4).count(), 4);
    }
}
