use chant::prelude::*;

fn rule() {
    when!(eq(status, "drifted") => report("drifted"), why = "outside a table");
}

fn main() {}
