//! `sprite-env`: chant's supervisor stand-in, answering the command line of a sprite's
//! `sprite-env services ...`. See [`chant::supervisor`].

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(chant::supervisor::main(&args));
}
