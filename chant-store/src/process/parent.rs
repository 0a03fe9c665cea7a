//! The child's half of dying with its parent: a dispatched run reads its stdin, which the
//! dispatching tick holds open ([`super::Input::hold_open`]), and exits with its process group
//! when the pipe reaches EOF, that is when the tick is gone. No `unsafe` is needed, which
//! `prctl(PR_SET_PDEATHSIG)` would take. A SIGTERM or SIGINT (a stopping operator stops its
//! dispatch's group) ends it the same way. Either way it first stops the children it is waiting
//! on ([`super::stop_all`]), and starts none after, whose groups are their own: a shell step would otherwise outlive it.

use std::io::Read;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::Group;

/// How long a step gets to end after SIGTERM when its run is told to die.
const STEP_GRACE: Duration = Duration::from_secs(2);

/// The variable that tells a dispatched chant child to exit when its parent goes away.
pub const DIE_WITH_PARENT_VAR: &str = "CHANT_DIE_WITH_PARENT";

/// Starts a thread that exits this process (and its process group) when stdin reaches EOF, if
/// [`DIE_WITH_PARENT_VAR`] is set: how a dispatched `run` dies with the tick that started it.
pub fn die_with_parent_if_asked() {
    if std::env::var_os(DIE_WITH_PARENT_VAR).is_none() {
        return;
    }
    if let Ok(mut signals) = Signals::new([SIGTERM, SIGINT]) {
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                super::live::end_all(STEP_GRACE);
                std::process::exit(143);
            }
        });
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
        super::live::end_all(STEP_GRACE);
        // A dispatched run leads its own group (the tick started it with `own_group`).
        Group::with_id(Pid::this().as_raw()).signal(Signal::SIGTERM);
        std::process::exit(143);
    });
}
