//! The box project binary: the full chant command line over the box's ops
//! (`cargo run -p chant-example-box --bin box -- run services`, `... -- operator`).

// Links the library, whose ops register themselves; without a use of the crate the linker would
// leave it out.
use chant_example_box as _;

chant::main!();
