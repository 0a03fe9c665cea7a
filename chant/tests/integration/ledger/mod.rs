//! The ledger on git: real repositories in temporary directories, a real bare remote, real
//! threads and processes.

mod hostile;
mod legacy;
mod local;
mod primitives;
mod procs;
mod remote;
pub(crate) mod support;
