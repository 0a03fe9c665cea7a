//! Behaviour prediction: what an engine predicts for an env's declared estate under a traffic
//! level (`chant predict`), from the runtime's engine, transport and reports, plus the files
//! lexicon's request.

pub use chant_runtime::behaviour::*;

pub mod files;
