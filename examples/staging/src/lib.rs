//! The staging example.
