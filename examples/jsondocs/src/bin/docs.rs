//! The demo project binary: the full chant command line over the `docs` ops; a bare invocation
//! runs one tick of `docs-converge`.

// Links the library, whose lexicon, env declaration and ops register themselves; without a use of
// the crate the linker would leave it out.
use chant_example_jsondocs as _;

chant::main!(default = tick("docs-converge"));
