//! Building the project binaries when they are missing or older than their sources.
//!
//! A binary is fresh when it exists and is newer than every build input of the workspace:
//! the workspace's `Cargo.toml`, `Cargo.lock`, `.cargo/config.toml` and `chant.workspace.json`
//! (the macros read it), and each member package's
//! `Cargo.toml`, `build.rs` and everything under its `src/`. A stale or missing one is built with
//! `cargo build -p <package> --bin <bin>` (`--release` when asked), quietly: cargo's output is held
//! back, and shown (and then streamed) only when the build takes longer than a second, or fails.
//!
//! The binary that is checked and run is this checkout's own: cargo's `<target>/<profile>/<bin>`
//! is shared by every checkout that shares the target directory (`CARGO_TARGET_DIR`), so another
//! checkout's build, newer than this one's sources, would pass for fresh and run here. Right after
//! cargo builds it in this checkout, the binary is linked (or copied) to
//! `<target>/<profile>/chant-checkout/<digest of the workspace root>/<bin>` (`bind`); only that
//! path is checked for freshness and run, so another checkout's build never is. Cargo itself gives
//! both checkouts' crates the same unit hashes, and would call this checkout's sources older than
//! the other's build, so the build sets [`CHECKOUT_VAR`] to this checkout's root: every expansion
//! of the chant macros reads it (`option_env!`), so rustc records it and cargo rebuilds each crate
//! that declares ops (and the binary) when it names another checkout. Caveat: a member crate that
//! uses no chant macro is not tracked this way, and cargo may reuse another checkout's build of it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use super::Error;
use super::locate::{BinTarget, Metadata};

/// The variable a build is given the checkout's root in; the chant macros read it with
/// `option_env!`, so cargo rebuilds their crates when it changes.
pub const CHECKOUT_VAR: &str = "CHANT_CHECKOUT";

/// How long a build may run before its output is shown.
pub const QUIET_FOR: Duration = Duration::from_secs(1);

/// Returns the newest modification time among the workspace's build inputs.
pub(crate) fn newest_source(metadata: &Metadata) -> Option<SystemTime> {
    let root = &metadata.workspace_root;
    let mut newest: Option<SystemTime> = None;
    let mut consider = |path: &Path| {
        if let Ok(t) = std::fs::metadata(path).and_then(|m| m.modified()) {
            newest = Some(newest.map_or(t, |n| n.max(t)));
        }
    };
    // chant.workspace.json is read by the macros (an op's member), which track it.
    for f in ["Cargo.toml", "Cargo.lock", ".cargo/config.toml", crate::config::WORKSPACE_FILE] {
        consider(&root.join(f));
    }
    for p in &metadata.packages {
        let dir = p.dir();
        consider(&dir.join("Cargo.toml"));
        consider(&dir.join("build.rs"));
        walk(&dir.join("src"), &mut consider);
    }
    newest
}

fn walk(dir: &Path, consider: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, consider),
            Ok(t) if t.is_file() => consider(&path),
            _ => {}
        }
    }
}

/// Returns where cargo puts `bin` for the profile.
pub(crate) fn binary_path(metadata: &Metadata, bin: &str, release: bool) -> PathBuf {
    let profile = if release { "release" } else { "debug" };
    metadata.target_directory.join(profile).join(format!("{bin}{}", std::env::consts::EXE_SUFFIX))
}

/// Returns where this checkout's own copy of `bin` lives: under the profile's directory, in a
/// directory named by a digest of the workspace root, so two checkouts sharing one target
/// directory never share it.
pub(crate) fn checkout_binary_path(metadata: &Metadata, bin: &str, release: bool) -> PathBuf {
    let root = metadata.workspace_root.to_string_lossy();
    let digest = crate::model::contract::fnv1a64(root.as_bytes());
    let shared = binary_path(metadata, bin, release);
    let profile = shared.parent().map_or_else(|| metadata.target_directory.clone(), Path::to_path_buf);
    profile.join("chant-checkout").join(format!("{digest:016x}")).join(shared.file_name().unwrap_or_default())
}

/// Binds cargo's `bin`, just built in this checkout, to this checkout's path
/// ([`checkout_binary_path`]): a hard link (a copy where the file system refuses one) written
/// beside it and renamed over it, so a concurrent reader sees the old binary or the new one.
///
/// # Errors
///
/// [`Error::Bind`] when the binary cannot be linked or copied.
pub(crate) fn bind(metadata: &Metadata, bin: &str, release: bool) -> Result<PathBuf, Error> {
    let built = binary_path(metadata, bin, release);
    let own = checkout_binary_path(metadata, bin, release);
    let fail = |source: std::io::Error| Error::Bind { from: built.clone(), to: own.clone(), source };
    let dir = own.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(fail)?;
    let staged = dir.join(format!(".{bin}.{}", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    if std::fs::hard_link(&built, &staged).is_err() {
        std::fs::copy(&built, &staged).map_err(fail)?;
    }
    std::fs::rename(&staged, &own).map_err(|e| {
        let _ = std::fs::remove_file(&staged);
        fail(e)
    })?;
    Ok(own)
}

/// Returns true when `path` exists and is newer than `newest`.
pub(crate) fn is_fresh(path: &Path, newest: Option<SystemTime>) -> bool {
    match std::fs::metadata(path).and_then(|m| m.modified()) {
        Ok(built) => newest.is_none_or(|n| built >= n),
        Err(_) => false,
    }
}

/// Builds the stale targets among `targets` with one cargo invocation, quiet for
/// [`QUIET_FOR`].
///
/// # Errors
///
/// [`Error::Cargo`] when cargo cannot start, [`Error::BuildFailed`] when the build fails (its
/// output has then been shown).
pub(crate) fn build(root: &Path, targets: &[&BinTarget], release: bool) -> Result<(), Error> {
    if targets.is_empty() {
        return Ok(());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut args: Vec<String> = vec!["build".into()];
    for t in targets {
        args.extend(["-p".into(), t.package.clone(), "--bin".into(), t.name.clone()]);
    }
    if release {
        args.push("--release".into());
    }
    let mut cmd = crate::process::command(&cargo);
    // The chant macros track this variable: a crate of this checkout last built by another one
    // that shares the target directory (same unit hashes, older sources) is rebuilt, not reused.
    cmd.env(CHECKOUT_VAR, root);
    cmd.args(&args).current_dir(root).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|source| Error::Cargo { source })?;
    let held = Arc::new(Mutex::new(Held { buffer: Vec::new(), loud: false }));
    let reader = child.stderr.take().map(|mut stderr| {
        let held = Arc::clone(&held);
        super::reader(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let mut h = held.lock().unwrap_or_else(PoisonError::into_inner);
                if h.loud {
                    let _ = std::io::stderr().write_all(&chunk[..n]);
                } else {
                    h.buffer.extend_from_slice(&chunk[..n]);
                }
            }
        })
    });
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(());
        status
    });
    if rx.recv_timeout(QUIET_FOR).is_err() {
        held.lock().unwrap_or_else(PoisonError::into_inner).show();
    }
    let status = waiter.join().map_err(|_| Error::BuildFailed { command: command_line(&args) })?;
    super::drain(reader);
    let status = status.map_err(|source| Error::Cargo { source })?;
    if !status.success() {
        held.lock().unwrap_or_else(PoisonError::into_inner).show();
        return Err(Error::BuildFailed { command: command_line(&args) });
    }
    Ok(())
}

fn command_line(args: &[String]) -> String {
    format!("cargo {}", args.join(" "))
}

/// Cargo's output, held back until the build is slow or fails.
struct Held {
    buffer: Vec<u8>,
    loud: bool,
}

impl Held {
    fn show(&mut self) {
        if !self.loud {
            self.loud = true;
            let _ = std::io::stderr().write_all(&std::mem::take(&mut self.buffer));
        }
    }
}
