//! The fixture's project binary: the full chant command line over the ops of `chant_e2e`.

// Links the library, whose ops and declarations register themselves; without a use of the crate
// the linker would leave it out.
use chant_e2e as _;

chant::main!();
