//! Who may reach the supervisor: only its own user, whatever the umask.
//!
//! A connection to the socket can create a service, which is running a command as the
//! supervisor's user, and `services.json` holds every service's command and its arguments (as
//! given, `${VAR}` unexpanded, but a caller may still pass a literal secret). So the state directory and `logs/` are `0700`, the socket and every file `0600` (set
//! explicitly, never left to the umask, and tightened when an older version left them wider), and
//! the daemon answers a connection only when the peer's uid (`SO_PEERCRED`) is its own.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};

/// The mode of the state directory and its `logs/`.
pub(crate) const DIR_MODE: u32 = 0o700;
/// The mode of the socket and of every file in the state directory.
pub(crate) const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) with mode `0700`, and tightens an existing `dir` to it.
///
/// # Errors
///
/// The I/O error when it cannot be created or tightened; `PermissionDenied` naming both uids
/// when it belongs to another user.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)?;
    let meta = std::fs::metadata(dir)?;
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        let why = format!("it belongs to uid {}, not to this user (uid {me})", meta.uid());
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    }
    if meta.mode() & 0o777 != DIR_MODE {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE))?;
    }
    Ok(())
}

/// Opens `path` for appending, creating it with mode `0600` and tightening an existing file.
///
/// # Errors
///
/// The I/O error.
pub(crate) fn append(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new().create(true).append(true).mode(FILE_MODE).open(path)?;
    tighten(&file)?;
    Ok(file)
}

/// Writes `bytes` to `path` (created `0600`, or truncated and tightened).
///
/// # Errors
///
/// The I/O error.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new().create(true).write(true).truncate(true).mode(FILE_MODE).open(path)?;
    tighten(&file)?;
    file.write_all(bytes)
}

/// Sets `path` (the socket, once bound) to `0600`.
///
/// # Errors
///
/// The I/O error.
pub(crate) fn private_socket(path: &Path) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(FILE_MODE))
}

fn tighten(file: &File) -> std::io::Result<()> {
    if file.metadata()?.mode() & 0o777 != FILE_MODE {
        file.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}

/// Why a connection is refused: its peer is not the supervisor's user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PeerError {
    /// The peer runs as another uid.
    #[error("refused: the caller runs as uid {caller}, the supervisor as uid {supervisor}")]
    OtherUser {
        /// The peer's uid.
        caller: u32,
        /// This process's uid.
        supervisor: u32,
    },
    /// The peer's credentials could not be read.
    #[error("refused: the caller cannot be identified")]
    Unknown(#[source] nix::errno::Errno),
}

/// Checks that the process at the other end of `conn` runs as this process's user.
///
/// # Errors
///
/// [`PeerError`] naming both uids, or saying the peer could not be identified.
pub(crate) fn check_peer(conn: &UnixStream) -> Result<(), PeerError> {
    let me = nix::unistd::geteuid().as_raw();
    match getsockopt(conn, PeerCredentials) {
        Ok(cred) if cred.uid() == me => Ok(()),
        Ok(cred) => Err(PeerError::OtherUser { caller: cred.uid(), supervisor: me }),
        Err(e) => Err(PeerError::Unknown(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_directories_are_private_whatever_existed_before() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, DIR_MODE);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, DIR_MODE);

        let table = dir.join("services.json");
        std::fs::write(&table, "old").unwrap();
        std::fs::set_permissions(&table, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&table, b"[]").unwrap();
        assert_eq!(std::fs::metadata(&table).unwrap().mode() & 0o777, FILE_MODE);
        assert_eq!(std::fs::read_to_string(&table).unwrap(), "[]");
        let log = dir.join("x.log");
        append(&log).unwrap();
        assert_eq!(std::fs::metadata(&log).unwrap().mode() & 0o777, FILE_MODE);
    }

    #[test]
    fn a_peer_of_the_same_user_is_let_in() {
        let (a, _b) = UnixStream::pair().unwrap();
        assert_eq!(check_peer(&a), Ok(()));
    }
}
