//! Compile-fail and pass cases for chant's macros; see `tests/`.
