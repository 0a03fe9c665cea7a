//! The clock: every time chant reads (tick start and end, gate expiry, lease expiry, schedules,
//! the commit time of ledger commits) comes from here, so `CHANT_NOW` can fix it in tests, or
//! hand it to a test that moves it.
//!
//! `CHANT_NOW` is for tests only. Set to an RFC 3339 instant, [`now`] returns it, unchanged, on
//! every call. Set to `@` and the path of a clock file (`CHANT_NOW=@/tmp/t/clock`, an absolute
//! path), every read of the clock reads the file again: it holds one RFC 3339 instant, and a test
//! advances the process's clock by writing a later one ([`ClockFile`] writes it by renaming a
//! whole new file over it, so a read never sees half an instant). The file must hold an instant
//! when the clock is made; a read that later fails (the file gone or unparsable) returns the
//! last instant read. A [`Clock`] is the same choice made once and passed around as a value: the
//! ledger and the lease store are handed one when they are opened, so the commits and lease
//! blobs they write carry the time the rest of the process sees.
//!
//! In one process, a test hands a [`ManualClock`] to what it opens ([`Clock::Manual`], through
//! `LedgerConfig::clock`) and moves it with [`ManualClock::advance`] and [`ManualClock::set`];
//! across processes it writes a [`ClockFile`] and passes [`ClockFile::var`] as `CHANT_NOW`. A
//! clock that a test moves ([`Clock::is_manual`]) also runs the operator daemon's timer: its next
//! round starts when the clock has moved on by the interval, not when the interval has passed in
//! real time (the daemon reads the clock again every [`MANUAL_POLL`] while it waits).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// The variable that fixes the clock (tests only).
pub const NOW_VAR: &str = "CHANT_NOW";

/// How often a waiter on a clock that a test moves reads it again (the operator daemon between
/// rounds): the longest a wait on such a clock lags behind the test's move.
pub const MANUAL_POLL: Duration = Duration::from_millis(20);

/// A `CHANT_NOW` that gives no clock.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BadNow {
    /// The value is neither an instant nor `@` and a path.
    #[error("{NOW_VAR}={value:?} is not an RFC 3339 instant such as 2026-08-25T10:00:00Z, nor @ and a clock file")]
    Instant {
        /// The value given.
        value: String,
    },
    /// The clock file cannot be read.
    #[error("{NOW_VAR}=@{}: cannot read the clock file: {source}", path.display())]
    Unreadable {
        /// The clock file.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: Arc<io::Error>,
    },
    /// The clock file does not hold an instant.
    #[error("{NOW_VAR}=@{}: the clock file holds {value:?}, not an RFC 3339 instant", path.display())]
    Content {
        /// The clock file.
        path: PathBuf,
        /// What it holds.
        value: String,
    },
}

/// Where a process reads the time from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Clock {
    /// The system clock.
    #[default]
    System,
    /// A fixed instant, returned unchanged on every read (`CHANT_NOW=<instant>`, tests).
    Fixed(Timestamp),
    /// A clock a test of this process moves (tests).
    Manual(ManualClock),
    /// A clock file a test moves from another process (`CHANT_NOW=@<path>`, tests).
    File(FileClock),
}

impl Clock {
    /// Returns the clock the environment asks for: fixed at `CHANT_NOW` when it is an instant,
    /// read from its clock file when it is `@<path>`, else the system clock.
    ///
    /// # Errors
    ///
    /// Returns [`BadNow`] when `CHANT_NOW` is set but gives no clock.
    pub fn from_env() -> Result<Clock, BadNow> {
        Clock::from_value(std::env::var(NOW_VAR).ok().as_deref())
    }

    /// Returns the clock a value of `CHANT_NOW` asks for (`None` or blank: the system clock).
    ///
    /// # Errors
    ///
    /// Returns [`BadNow`] when the value is neither an instant nor `@` and a clock file that
    /// holds one.
    pub fn from_value(value: Option<&str>) -> Result<Clock, BadNow> {
        match value.map(str::trim) {
            Some(v) if !v.is_empty() => match v.strip_prefix('@') {
                Some(path) => FileClock::open(path).map(Clock::File),
                None => v.parse::<Timestamp>().map(Clock::Fixed).map_err(|_| BadNow::Instant { value: v.to_owned() }),
            },
            _ => Ok(Clock::System),
        }
    }

    /// Returns the current instant of this clock.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::System => Timestamp::now(),
            Clock::Fixed(at) => *at,
            Clock::Manual(clock) => clock.now(),
            Clock::File(clock) => clock.now(),
        }
    }

    /// Returns true for a clock a test moves ([`Clock::Manual`], [`Clock::File`]): time passes
    /// only when the test says so, and a wait for it to pass reads it again now and then instead
    /// of sleeping until a real instant.
    pub fn is_manual(&self) -> bool {
        matches!(self, Clock::Manual(_) | Clock::File(_))
    }
}

/// A clock that stands still until it is moved: a cheap handle, every clone reading and moving
/// the same instant (tests).
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<Timestamp>>);

impl ManualClock {
    /// Returns a clock standing at `start`.
    pub fn new(start: Timestamp) -> ManualClock {
        ManualClock(Arc::new(Mutex::new(start)))
    }

    /// Returns the instant the clock stands at.
    pub fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves the clock to `at` (earlier or later).
    pub fn set(&self, at: Timestamp) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = at;
    }

    /// Moves the clock on by `by` (at most to [`Timestamp::MAX`]) and returns where it stands.
    pub fn advance(&self, by: Duration) -> Timestamp {
        let mut now = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *now = after(*now, by);
        *now
    }
}

/// Two handles are equal when they move the same clock.
impl PartialEq for ManualClock {
    fn eq(&self, other: &ManualClock) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ManualClock {}

/// Returns `at` plus `by`, at most [`Timestamp::MAX`].
pub fn after(at: Timestamp, by: Duration) -> Timestamp {
    SignedDuration::try_from(by).ok().and_then(|by| at.checked_add(by).ok()).unwrap_or(Timestamp::MAX)
}

/// The reading side of a clock file (`CHANT_NOW=@<path>`): every read reads the file again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileClock {
    path: Arc<Path>,
    /// The last instant read, returned when a read fails.
    last: ManualClock,
}

impl FileClock {
    /// Returns the clock of the file at `path` (a relative path is taken from the working
    /// directory now), which must hold an instant now.
    ///
    /// # Errors
    ///
    /// Returns [`BadNow`] when the file cannot be read or holds no instant.
    pub fn open(path: impl AsRef<Path>) -> Result<FileClock, BadNow> {
        let path = path.as_ref();
        let path: Arc<Path> = std::path::absolute(path)
            .map_err(|e| BadNow::Unreadable { path: path.to_owned(), source: Arc::new(e) })?
            .into();
        let at = read_clock_file(&path)?;
        Ok(FileClock { path, last: ManualClock::new(at) })
    }

    /// Returns the clock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the instant the file holds now, or the last instant read when it cannot be read.
    pub fn now(&self) -> Timestamp {
        match read_clock_file(&self.path) {
            Ok(at) => {
                self.last.set(at);
                at
            }
            Err(_) => self.last.now(),
        }
    }
}

/// Reads the instant a clock file holds.
fn read_clock_file(path: &Path) -> Result<Timestamp, BadNow> {
    let text =
        std::fs::read_to_string(path).map_err(|e| BadNow::Unreadable { path: path.to_owned(), source: Arc::new(e) })?;
    text.trim().parse::<Timestamp>().map_err(|_| BadNow::Content { path: path.to_owned(), value: text.clone() })
}

/// The writing side of a clock file: a test moves the clocks of the processes started with
/// `CHANT_NOW` set to [`ClockFile::var`] (tests).
#[derive(Debug)]
pub struct ClockFile {
    path: PathBuf,
    now: ManualClock,
}

impl ClockFile {
    /// Writes a clock file at `path` (made absolute, so that [`ClockFile::var`] names it from
    /// any working directory) standing at `start`. The path is inside a directory the test owns:
    /// each new instant is written beside it, then renamed over it.
    ///
    /// # Errors
    ///
    /// Returns the error of making the path absolute or writing the file.
    pub fn create(path: impl AsRef<Path>, start: Timestamp) -> io::Result<ClockFile> {
        let file = ClockFile { path: std::path::absolute(path)?, now: ManualClock::new(start) };
        file.write(start)?;
        Ok(file)
    }

    /// Returns the clock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the value of `CHANT_NOW` that reads this file: `@` and its path.
    pub fn var(&self) -> String {
        format!("@{}", self.path.display())
    }

    /// Returns the instant the file stands at.
    pub fn now(&self) -> Timestamp {
        self.now.now()
    }

    /// Moves the file to `at` (earlier or later).
    ///
    /// # Errors
    ///
    /// Returns the error of writing the file; the file then stands where it stood.
    pub fn set(&self, at: Timestamp) -> io::Result<()> {
        self.write(at)?;
        self.now.set(at);
        Ok(())
    }

    /// Moves the file on by `by` (at most to [`Timestamp::MAX`]) and returns where it stands.
    ///
    /// # Errors
    ///
    /// Returns the error of writing the file; the file then stands where it stood.
    pub fn advance(&self, by: Duration) -> io::Result<Timestamp> {
        let at = after(self.now(), by);
        self.set(at)?;
        Ok(at)
    }

    /// Writes `at` to a new file beside the clock file and renames it over the clock file, so a
    /// reader sees the old instant or the new one, whole.
    fn write(&self, at: Timestamp) -> io::Result<()> {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.new", std::process::id()));
        let next = self.path.with_file_name(name);
        // Every digit of the instant (records keep milliseconds; a clock keeps what it was given).
        std::fs::write(&next, format!("{at}\n"))?;
        std::fs::rename(&next, &self.path)
    }
}

/// Returns the current instant, or `CHANT_NOW`'s when set.
///
/// # Errors
///
/// Returns [`BadNow`] when `CHANT_NOW` is set but gives no clock.
pub fn now() -> Result<Timestamp, BadNow> {
    Clock::from_env().map(|clock| clock.now())
}

/// Formats an instant as records write it: RFC 3339 UTC with milliseconds and `Z`.
pub fn format(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Parses a recorded instant.
pub fn parse(s: &str) -> Option<Timestamp> {
    s.parse::<Timestamp>().ok()
}

/// Parses a `--since` value: an RFC 3339 instant, or a time before `now` written as a
/// duration in jiff's friendly format (`1h`, `30m`, `2d`, `1h30m`; a day is 24 hours).
pub fn parse_since(s: &str, now: Timestamp) -> Option<Timestamp> {
    if let Some(t) = parse(s) {
        return Some(t);
    }
    let span: jiff::Span = s.trim().parse().ok()?;
    let ago = span.to_duration(jiff::SpanRelativeTo::days_are_24_hours()).ok()?;
    if ago.is_negative() {
        return None;
    }
    now.checked_sub(ago).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_an_instant_or_a_time_ago() {
        let now: Timestamp = "2026-03-02T12:00:00Z".parse().unwrap();
        let at = |s: &str| parse_since(s, now).map(|t| t.to_string());
        assert_eq!(at("2026-01-01T00:00:00Z").as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(at("1h").as_deref(), Some("2026-03-02T11:00:00Z"));
        assert_eq!(at("30m").as_deref(), Some("2026-03-02T11:30:00Z"));
        assert_eq!(at("2d").as_deref(), Some("2026-02-28T12:00:00Z"));
        assert_eq!(at("1h30m").as_deref(), Some("2026-03-02T10:30:00Z"));
        for bad in ["", "yesterday", "-1h", "1x"] {
            assert_eq!(at(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn formats_with_milliseconds_and_z() {
        let t: Timestamp = "2026-08-25T10:04:00.5+02:00".parse().unwrap();
        assert_eq!(format(t), "2026-08-25T08:04:00.500Z");
        assert_eq!(parse("2026-08-25T08:04:00.500Z"), Some(t));
        assert_eq!(parse("yesterday"), None);
    }

    #[test]
    fn a_fixed_clock_never_moves() {
        let at: Timestamp = "2026-08-25T10:00:00Z".parse().unwrap();
        assert_eq!(Clock::Fixed(at).now(), at);
        assert_eq!(Clock::Fixed(at).now(), Clock::Fixed(at).now());
        assert!(Clock::System.now() > at.checked_sub(jiff::SignedDuration::from_hours(24 * 365 * 100)).unwrap());
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn a_manual_clock_stands_still_until_moved_and_every_clone_moves_with_it() {
        let clock = ManualClock::new(at("2026-08-25T10:00:00Z"));
        let other = clock.clone();
        assert_eq!(clock.now(), at("2026-08-25T10:00:00Z"));
        assert_eq!(clock.now(), clock.now(), "no time passes by itself");
        assert_eq!(other.advance(Duration::from_secs(90)), at("2026-08-25T10:01:30Z"));
        assert_eq!(clock.now(), at("2026-08-25T10:01:30Z"), "a clone moves the same clock");
        clock.set(at("2026-08-25T09:00:00Z"));
        assert_eq!(other.now(), at("2026-08-25T09:00:00Z"), "set may go back");
        assert_eq!(Clock::Manual(clock.clone()).now(), at("2026-08-25T09:00:00Z"));
        assert_eq!(Clock::Manual(clock.clone()), Clock::Manual(other));
        assert_ne!(Clock::Manual(clock.clone()), Clock::Manual(ManualClock::new(clock.now())), "another clock");
        assert!(Clock::Manual(clock.clone()).is_manual());
        assert!(!Clock::Fixed(clock.now()).is_manual() && !Clock::System.is_manual());
        assert_eq!(clock.advance(Duration::MAX), Timestamp::MAX, "advance stops at the end of time");
    }

    #[test]
    fn a_manual_clock_moved_on_another_thread_is_seen_at_once() {
        let clock = ManualClock::new(at("2026-08-25T10:00:00Z"));
        let mover = clock.clone();
        std::thread::spawn(move || mover.advance(Duration::from_secs(3600))).join().unwrap();
        assert_eq!(clock.now(), at("2026-08-25T11:00:00Z"));
    }

    #[test]
    fn a_clock_file_is_read_again_on_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = ClockFile::create(dir.path().join("clock"), at("2026-08-25T10:00:00.123456789Z")).unwrap();
        assert_eq!(file.var(), format!("@{}", dir.path().join("clock").display()));
        let clock = Clock::from_value(Some(&file.var())).unwrap();
        assert!(clock.is_manual());
        assert_eq!(clock.now(), at("2026-08-25T10:00:00.123456789Z"), "every digit kept");
        assert_eq!(file.advance(Duration::from_secs(60)).unwrap(), at("2026-08-25T10:01:00.123456789Z"));
        assert_eq!(clock.now(), at("2026-08-25T10:01:00.123456789Z"), "the reader sees the move");
        file.set(at("2026-08-26T03:00:00Z")).unwrap();
        assert_eq!(clock.now(), at("2026-08-26T03:00:00Z"));
        assert_eq!(file.now(), at("2026-08-26T03:00:00Z"));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["clock"], "no new file is left beside it");

        // A read that fails later keeps the last instant read.
        std::fs::write(file.path(), "soon\n").unwrap();
        assert_eq!(clock.now(), at("2026-08-26T03:00:00Z"));
        std::fs::remove_file(file.path()).unwrap();
        assert_eq!(clock.now(), at("2026-08-26T03:00:00Z"));
        file.set(at("2026-08-27T00:00:00Z")).unwrap();
        assert_eq!(clock.now(), at("2026-08-27T00:00:00Z"));
    }

    #[test]
    fn chant_now_is_an_instant_a_clock_file_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Clock::from_value(None).unwrap(), Clock::System);
        assert_eq!(Clock::from_value(Some("  ")).unwrap(), Clock::System);
        assert_eq!(
            Clock::from_value(Some(" 2026-08-25T10:00:00Z ")).unwrap(),
            Clock::Fixed(at("2026-08-25T10:00:00Z"))
        );
        assert!(matches!(Clock::from_value(Some("yesterday")), Err(BadNow::Instant { .. })));
        assert!(matches!(Clock::from_value(Some("@")), Err(BadNow::Unreadable { .. })), "no path");
        let missing = format!("@{}", dir.path().join("missing").display());
        let e = Clock::from_value(Some(&missing)).unwrap_err();
        assert!(matches!(e, BadNow::Unreadable { .. }), "{e}");
        assert!(e.to_string().starts_with(&format!("CHANT_NOW={missing}: cannot read the clock file: ")), "{e}");
        std::fs::write(dir.path().join("bad"), "tomorrow\n").unwrap();
        let e = Clock::from_value(Some(&format!("@{}", dir.path().join("bad").display()))).unwrap_err();
        assert!(matches!(e, BadNow::Content { ref value, .. } if value == "tomorrow\n"), "{e}");
    }
}
