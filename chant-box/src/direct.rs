//! The listing read without a process: when the configured supervisor is chant's own stand-in,
//! `services list` is asked of its daemon through the socket ([`crate::supervisor::Client`]),
//! in this process, instead of running `sprite-env services list` on every observation.
//!
//! Whether the binary is the stand-in is asked of the binary itself, once per binary (its path
//! and file identity) and environment: `sprite-env __stand-in` prints its
//! [`Identity`](crate::supervisor::Identity), with the state directory that invocation would
//! serve. A binary that does not answer so (a sprite's own `sprite-env`, an older stand-in), and
//! any `#!` script (a wrapper in front of the stand-in may change what it lists), is run as
//! before, for every listing. The answer the daemon gives is serialised as the
//! command line prints it and read by the same [`super::parse_list`], whole or not at all. Any
//! failure of the direct request (no daemon to be reached, an answer that does not parse) falls
//! back to the command line, whose result (a listing, or the error that makes every service
//! `unknown`) is then the reading: the direct path never turns a failure into a listing.
//! `CHANT_SPRITE_DIRECT=0` turns it off ([`Settings::direct`](super::Settings::direct)).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::supervisor::{Client, Identity, Request, identity::IDENTIFY_WORD};

/// How long `sprite-env __stand-in` may take.
const IDENTIFY_TIMEOUT: Duration = Duration::from_secs(10);

/// The most `sprite-env __stand-in` may print.
const IDENTIFY_OUTPUT: usize = 64 * 1024;

/// What an identification depends on: the binary as a file, and what in this process's
/// environment chooses the state directory its invocation serves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    binary: PathBuf,
    file: (u64, u64, u64, i64, i64),
    env: Vec<Option<std::ffi::OsString>>,
    cwd: Option<PathBuf>,
}

impl Key {
    fn of(binary: &Path) -> Option<Key> {
        let meta = std::fs::metadata(binary).ok()?;
        let file = (meta.dev(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec());
        let env = [crate::supervisor::STATE_DIR_VAR, "XDG_STATE_HOME", "HOME"].iter().map(std::env::var_os).collect();
        Some(Key { binary: binary.to_path_buf(), file, env, cwd: std::env::current_dir().ok() })
    }
}

/// The identifications made by this process.
fn identities() -> &'static Mutex<HashMap<Key, Option<Identity>>> {
    static IDENTITIES: OnceLock<Mutex<HashMap<Key, Option<Identity>>>> = OnceLock::new();
    IDENTITIES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Returns the stand-in's identity if `binary` is chant's stand-in (asking it once per [`Key`]),
/// `None` for any other supervisor or a binary that cannot be asked.
pub(crate) fn identify(binary: &Path) -> Option<Identity> {
    let key = Key::of(binary)?;
    if let Some(known) = identities().lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return known.clone();
    }
    // A `#!` script is run as a command line, whatever it says it is: a wrapper in front of the
    // stand-in (one that sets its state directory, or rewrites what it prints) would otherwise
    // be bypassed. Only an executable that is itself the stand-in is asked through its socket.
    if !is_executable_image(binary) {
        identities().lock().unwrap_or_else(PoisonError::into_inner).insert(key, None);
        return None;
    }
    let mut spec = chant_store::process::Spec::new(binary);
    spec.args = vec![IDENTIFY_WORD.to_owned()];
    spec.timeout = IDENTIFY_TIMEOUT;
    spec.grace = Duration::from_secs(1);
    spec.max_output = Some(IDENTIFY_OUTPUT);
    let found = match chant_store::process::run(&spec) {
        Ok(out) if out.success() => Identity::parse(&out.stdout),
        // Refused, failed or not started: not known to be the stand-in. A binary that could not
        // be started is not remembered, so it is asked again once it can be.
        Ok(_) => None,
        Err(_) => return None,
    };
    identities().lock().unwrap_or_else(PoisonError::into_inner).insert(key, found.clone());
    found
}

/// Whether `binary` is an ELF executable (not a script run through an interpreter).
fn is_executable_image(binary: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(binary).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && magic == *b"\x7fELF"
}

/// The listing text of the stand-in's daemon, as `sprite-env services list` prints it, asked
/// through its socket (waiting at most `timeout` for the answer); `None` when `binary` is not the stand-in or the request failed (the
/// caller then runs the command line).
pub(crate) fn listing(binary: &Path, timeout: Duration) -> Option<String> {
    let identity = identify(binary)?;
    let response = Client::new(identity.state_dir, binary).with_timeout(timeout).send(&Request::List).ok()?;
    // Past the command line's limit, the command line is run (and fails the read the same way).
    serde_json::to_string(&response.services).ok().filter(|text| text.len() <= super::listing::MAX_OUTPUT)
}
