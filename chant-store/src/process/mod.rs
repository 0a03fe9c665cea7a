//! Every child process chant starts: shell steps, dispatched op runs, observers, command
//! engines, `git`, and the box supervisor stand-in with its services.
//!
//! One builder, [`Command`] (made by [`command`]), is the only place a `std::process::Command`
//! is created (clippy's `disallowed-methods` in `chant/clippy.toml` forbids creating one
//! anywhere else in the crate), and its one [`Command::spawn`] starts every child with an empty
//! signal mask ([`signals`] says how and why). On top of it:
//!
//! - [`Group`] is the one group-kill: SIGTERM to the child's whole process group, a grace
//!   period, then SIGKILL.
//! - [`capture`] is the one blocking wait with a deadline: it runs a child in its own process
//!   group with captured output, and the deadline bounds the whole call, including pipes that a
//!   background grandchild keeps open after the child itself exited.
//! - [`Spec`] and [`run`] describe and run the children of steps, dispatches and engines.
//! - [`die_with_parent_if_asked`] is the child's half of dying with the tick that dispatched it.
//! - [`identity`] tells a live process from one that reused its pid (pid and start time).
//! - [`stop_all`] stops every child [`capture`] is waiting on: how a stopping operator ends its
//!   dispatch, and a dispatched run its step, instead of leaving them running; [`terminate_all`]
//!   sends them SIGTERM without waiting, for an operator whose stop grace ran out.
//!
//! git (`git/cmd.rs`) adds its own arguments and environment to a [`Command`] and waits with
//! [`capture`]; the supervisor keeps its own lifecycle for long-lived services (a reaper, not a
//! wait) but spawns through [`Command`] and stops a service with [`Group::stop`].

mod capture;
mod command;
mod group;
pub mod identity;
mod live;
mod parent;
pub mod signals;
mod spec;

pub use capture::{Error, Input, Limits, Output, capture};
pub use command::{Command, command, started};
pub use group::{Group, KILL_WAIT, Stopped};
pub use live::{stop_all, terminate_all};
pub use parent::{DIE_WITH_PARENT_VAR, die_with_parent_if_asked};
pub use spec::{Spec, run};
