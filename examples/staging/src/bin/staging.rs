//! The staging project binary: the full chant command line over the project's ops
//! (`cargo run --bin staging -- ops`).

// Links the library, whose ops and declarations register themselves.
use chant_examples as _;

chant::main!();
