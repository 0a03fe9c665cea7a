//! chant's integration tests: one test binary, one module per area.

mod guard;
mod opcheck;
