//! The box example.
