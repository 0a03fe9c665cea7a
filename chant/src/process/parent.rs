//! The child's half of dying with its parent: a dispatched run reads its stdin, which the
//! dispatching tick holds open ([`super::Input::hold_open`]), and exits with its process group
//! when the pipe reaches EOF, that is when the tick is gone. No `unsafe` is needed, which
//! `prctl(PR_SET_PDEATHSIG)` would take.

use std::io::Read;

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::Group;

/// The variable that tells a dispatched chant child to exit when its parent goes away.
pub const DIE_WITH_PARENT_VAR: &str = "CHANT_DIE_WITH_PARENT";

/// Starts a thread that exits this process (and its process group) when stdin reaches EOF, if
/// [`DIE_WITH_PARENT_VAR`] is set: how a dispatched `run` dies with the tick that started it.
pub fn die_with_parent_if_asked() {
    if std::env::var_os(DIE_WITH_PARENT_VAR).is_none() {
        return;
    }
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        // A dispatched run leads its own group (the tick started it with `own_group`).
        Group::with_id(Pid::this().as_raw()).signal(Signal::SIGTERM);
        std::process::exit(143);
    });
}
