//! One retry loop for every place chant tries again: a lost compare-and-swap on the ledger
//! branch, a push the remote rejected because another writer moved it, a lease another holder
//! has, a lock held for a moment on a remote, a sync that did not complete.
//!
//! A [`Backoff`] says how long to wait after each failed attempt (constant, growing linearly, or
//! doubling up to a ceiling, optionally at a random point below that: "full jitter") and when
//! to give up (after a number of attempts, or once a time budget is spent). [`Backoff::retry`]
//! runs an attempt until it is done or the policy gives up, handing back the last failure.
//! Nothing here knows what is retried.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

/// How the wait grows from one failed attempt to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// Every wait is [`Backoff::first`].
    Constant,
    /// The `n`th wait is `n` times [`Backoff::first`].
    Linear,
    /// The `n`th wait is [`Backoff::first`] doubled `n - 1` times.
    Doubling,
}

/// When a [`Backoff`] gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// After this many attempts in all (at least one always runs).
    Attempts(u32),
    /// Once this much time has passed since the first attempt started; the last wait is cut so
    /// that the final attempt starts at the deadline.
    Within(Duration),
}

/// A retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the first failed attempt.
    pub first: Duration,
    /// How the wait grows.
    pub growth: Growth,
    /// The longest single wait.
    pub max: Duration,
    /// Whether each wait is a random point in `[0, wait]` instead of the wait itself, so that two
    /// writers retrying in lockstep stop losing to each other.
    pub jitter: bool,
    /// When to give up.
    pub limit: Limit,
}

/// The last failure of a retry that gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaveUp<E> {
    /// How many attempts ran.
    pub attempts: u32,
    /// What the last one said.
    pub last: E,
}

impl Backoff {
    /// Retries at once, up to `attempts` times: for races where every lost attempt means another
    /// writer made progress.
    pub const fn immediate(attempts: u32) -> Self {
        Backoff {
            first: Duration::ZERO,
            growth: Growth::Constant,
            max: Duration::ZERO,
            jitter: false,
            limit: Limit::Attempts(attempts),
        }
    }

    /// Polls every `every` until `within` has passed.
    pub const fn polling(every: Duration, within: Duration) -> Self {
        Backoff { first: every, growth: Growth::Constant, max: every, jitter: false, limit: Limit::Within(within) }
    }

    /// Returns the wait after failed attempt number `attempt` (1-based), before jitter.
    pub fn wait(&self, attempt: u32) -> Duration {
        let n = attempt.max(1);
        let wait = match self.growth {
            Growth::Constant => self.first,
            Growth::Linear => self.first.saturating_mul(n),
            Growth::Doubling => self.first.saturating_mul(1u32.checked_shl(n - 1).unwrap_or(u32::MAX)),
        };
        wait.min(self.max)
    }

    /// Runs `attempt` (given its 1-based number) until it breaks with a value or the policy gives
    /// up, sleeping between attempts.
    ///
    /// # Errors
    ///
    /// [`GaveUp`] with the last failure, when the policy gives up.
    pub fn retry<T, E>(&self, attempt: impl FnMut(u32) -> ControlFlow<T, E>) -> Result<T, GaveUp<E>> {
        self.retry_with(attempt, std::thread::sleep)
    }

    /// Runs like [`Backoff::retry`] with `sleep` standing for the pause between attempts.
    ///
    /// # Errors
    ///
    /// As [`Backoff::retry`].
    pub fn retry_with<T, E>(
        &self,
        mut attempt: impl FnMut(u32) -> ControlFlow<T, E>,
        mut sleep: impl FnMut(Duration),
    ) -> Result<T, GaveUp<E>> {
        let started = Instant::now();
        let mut number = 0u32;
        loop {
            number = number.saturating_add(1);
            let last = match attempt(number) {
                ControlFlow::Break(value) => return Ok(value),
                ControlFlow::Continue(failure) => failure,
            };
            let mut pause = self.jittered(self.wait(number));
            match self.limit {
                Limit::Attempts(max) if number >= max => return Err(GaveUp { attempts: number, last }),
                Limit::Attempts(_) => {}
                Limit::Within(budget) => {
                    let left = budget.saturating_sub(started.elapsed());
                    if left.is_zero() {
                        return Err(GaveUp { attempts: number, last });
                    }
                    pause = pause.min(left);
                }
            }
            if !pause.is_zero() {
                sleep(pause);
            }
        }
    }

    fn jittered(&self, wait: Duration) -> Duration {
        if !self.jitter || wait.is_zero() {
            return wait;
        }
        let nanos = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
        // Jitter only spreads retries out: when the generator fails, the full wait does too.
        match crate::id::random_u64() {
            Ok(random) => Duration::from_nanos(random % nanos.saturating_add(1)),
            Err(_) => wait,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn waits_grow_as_declared_and_stop_at_the_ceiling() {
        let linear =
            Backoff { first: ms(25), growth: Growth::Linear, max: ms(60), jitter: false, limit: Limit::Attempts(9) };
        assert_eq!([1, 2, 3, 4].map(|n| linear.wait(n)), [ms(25), ms(50), ms(60), ms(60)]);
        let doubling = Backoff { growth: Growth::Doubling, max: ms(800), ..linear };
        assert_eq!([1, 2, 3, 6, 40].map(|n| doubling.wait(n)), [ms(25), ms(50), ms(100), ms(800), ms(800)]);
        assert_eq!(Backoff::polling(ms(100), ms(2000)).wait(7), ms(100));
    }

    #[test]
    fn retries_until_done_and_sleeps_between_attempts_only() {
        let policy =
            Backoff { first: ms(10), growth: Growth::Linear, max: ms(100), jitter: false, limit: Limit::Attempts(5) };
        let mut slept = Vec::new();
        let got = policy.retry_with(
            |n| if n == 3 { ControlFlow::Break(n * 10) } else { ControlFlow::Continue(n) },
            |d| slept.push(d),
        );
        assert_eq!(got, Ok(30));
        assert_eq!(slept, [ms(10), ms(20)]);
    }

    #[test]
    fn gives_up_after_the_attempts_with_the_last_failure() {
        let mut slept = 0;
        let got: Result<(), _> =
            Backoff::immediate(4).retry_with(|n| ControlFlow::Continue(format!("lost {n}")), |_| slept += 1);
        assert_eq!(got, Err(GaveUp { attempts: 4, last: "lost 4".to_owned() }));
        assert_eq!(slept, 0, "an immediate policy never sleeps");
        let once: Result<(), _> = Backoff::immediate(0).retry_with(ControlFlow::Continue, |_| {});
        assert_eq!(once, Err(GaveUp { attempts: 1, last: 1 }), "at least one attempt runs");
    }

    #[test]
    fn a_time_budget_cuts_the_last_wait_and_gives_up_once_spent() {
        let policy = Backoff::polling(ms(100), Duration::ZERO);
        let got: Result<(), _> = policy.retry_with(ControlFlow::Continue, |_| panic!("no time left to wait"));
        assert_eq!(got, Err(GaveUp { attempts: 1, last: 1 }));
        let mut slept = Vec::new();
        let policy = Backoff::polling(ms(100), Duration::from_secs(3600));
        let got = policy
            .retry_with(|n| if n < 3 { ControlFlow::Continue(()) } else { ControlFlow::Break(n) }, |d| slept.push(d));
        assert_eq!(got, Ok(3));
        assert_eq!(slept, [ms(100), ms(100)]);
    }

    #[test]
    fn jitter_stays_within_the_wait() {
        let policy =
            Backoff { first: ms(40), growth: Growth::Doubling, max: ms(1000), jitter: true, limit: Limit::Attempts(3) };
        for n in 1..=3 {
            let wait = policy.wait(n);
            for _ in 0..50 {
                assert!(policy.jittered(wait) <= wait);
            }
        }
        assert_eq!(policy.jittered(Duration::ZERO), Duration::ZERO);
    }
}
