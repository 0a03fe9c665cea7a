//! Procedural macros of chant. Private to the `chant` crate, which re-exports them.
