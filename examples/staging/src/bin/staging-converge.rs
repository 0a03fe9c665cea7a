//! `cargo run --bin staging-converge`: one tick of the staging ConvergeOp (any subcommand of the
//! project binary works too).

// Links the library, whose ops and declarations register themselves; without a use of the crate
// the linker would leave it out.
use chant_examples as _;

chant::main!(default = tick("staging-converge"));
