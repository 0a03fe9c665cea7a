//! The signal state every child starts with: an empty signal mask, and every signal chant
//! handles or ignores for itself (SIGPIPE included) at its default disposition.
//!
//! A child inherits the signal mask of the thread that forks it, and `std::process::Command`
//! no longer clears it (it inherits the mask since Rust 1.66, rust-lang/rust#101077, so `nohup`
//! -style wrappers work). A process that blocks signals, such as a program that waits for them
//! with `sigwait`, would otherwise hand that mask to every child: a supervisor daemon started
//! that way could not be stopped with SIGTERM. chant cannot use `pre_exec` (its crates forbid
//! `unsafe`), and `posix_spawn` with `POSIX_SPAWN_SETSIGMASK` has no safe wrapper with a
//! working-directory action; so [`with_empty_mask`] clears the mask of the *spawning thread*
//! for the duration of the spawn and restores it right after. The mask is per thread: no other
//! thread's signal handling changes.
//!
//! Dispositions: exec resets every caught signal to its default by itself, and std resets
//! SIGPIPE, which the Rust runtime ignores, in the child. A signal that chant's own parent set
//! to *ignored* (`nohup`'s SIGHUP) stays ignored in the child, as exec defines it.
//!
//! # Caveats
//!
//! While the spawning thread's mask is empty, a signal that it had blocked can be delivered to
//! it and acts with the process's disposition. chant itself blocks no signal (the operator takes
//! SIGINT and SIGTERM through handlers), so this matters only to a program that embeds chant and
//! blocks a signal whose default action ends the process.

use nix::sys::signal::{SigSet, SigmaskHow};

/// Runs `spawn` with this thread's signal mask cleared, restoring the mask afterwards.
///
/// # Errors
///
/// The I/O error of a mask that cannot be cleared; `spawn` does not run then, so no child is
/// started with a mask it should not have.
pub fn with_empty_mask<T>(spawn: impl FnOnce() -> T) -> std::io::Result<T> {
    let previous = SigSet::empty().thread_swap_mask(SigmaskHow::SIG_SETMASK)?;
    let result = spawn();
    // Restoring a mask that was just read cannot fail (only an invalid `how` makes
    // pthread_sigmask fail), and a failure here would leave this thread less blocked, not more.
    let _ = previous.thread_set_mask();
    Ok(result)
}

#[cfg(test)]
mod tests {
    use nix::sys::signal::Signal;

    use super::*;

    #[test]
    fn the_spawning_thread_gets_its_mask_back() {
        std::thread::spawn(|| {
            let mut blocked = SigSet::empty();
            blocked.add(Signal::SIGUSR1);
            blocked.thread_block().unwrap();
            let inside = with_empty_mask(|| SigSet::thread_get_mask().unwrap()).unwrap();
            assert!(!inside.contains(Signal::SIGUSR1));
            assert!(SigSet::thread_get_mask().unwrap().contains(Signal::SIGUSR1));
        })
        .join()
        .unwrap();
    }
}
