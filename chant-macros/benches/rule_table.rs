//! Measures what a 100-rule `converge_op!` adds to a build, against a 1-rule one: the acceptance
//! bar is under a second.
//!
//! Builds a scratch crate (`chant_testkit::scratch`) whose source alternates between the two
//! tables, recompiling only that crate each time, non-incrementally, and prints the median wall
//! time of each and the difference. Run with `cargo bench -p chant-macros --bench rule_table`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chant_testkit::scratch;

use std::time::{Duration, Instant};

const ROUNDS: usize = 11;

/// A crate with an Op of each class and a ConvergeOp of `rules` rules that mixes every predicate
/// form and both actions (so each `run()` gets its resolution and class check).
fn table(rules: usize, nonce: usize) -> String {
    let mut s = String::from(
        "use chant::prelude::*;\n\
         op! { name: \"bench-apply\", overview: \"Apply.\", phases: [ phase(\"Apply\", [ apply(env = \"bench\") ]) ] }\n\
         op! { name: \"bench-smoke\", overview: \"Probe.\", phases: [ phase(\"Probe\", [ http_check(url = \"http://x\") ]) ] }\n\
         converge_op! {\n    name: \"bench-converge\",\n    env: \"bench\",\n    dial: apply,\n    schedule: \"*/10 * * * *\",\n    rules: [\n",
    );
    for i in 0..rules {
        let rule = match i % 4 {
            0 => format!("when!(gt(create_count, {i}) => run(\"bench-apply\"), id = \"r{i}\", why = \"rule {i}\")"),
            1 => format!(
                "when!(all_of(eq(status, \"drifted\"), lt(update_count, {i})) => run(\"bench-smoke\"), why = \"rule {i}\")"
            ),
            2 => format!(
                "when!(any_of(truthy(unobserved_reasons), gte(adopt_count, {i})) => report(\"r{i}\"), why = \"rule {i}\")"
            ),
            _ => format!(
                "when!(neq(env, \"e{i}\") => run(\"bench-apply\"), id = \"r{i}\", why = \"rule {i}\", flap_threshold = 2)"
            ),
        };
        s.push_str(&format!("        {rule},\n"));
    }
    s.push_str(&format!("    ],\n}}\n// build {nonce}\n"));
    s
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, so keep it quick then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds = if quick { 1 } else { ROUNDS };
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let s = scratch::Scratch::new(tmp, "rule-table-bench", &table(1, 0));
    s.build_ok(&[]);
    s.set_source(&table(100, 0));
    s.build_ok(&[]);
    let (mut one, mut hundred) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for (rules, times) in [(1, &mut one), (100, &mut hundred)] {
            s.set_source(&table(rules, round + 1));
            let start = Instant::now();
            let out = s.build_with(&[], &[("CARGO_INCREMENTAL", "0")]);
            times.push(start.elapsed());
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let (min_a, min_b) = (one.iter().min().copied().unwrap(), hundred.iter().min().copied().unwrap());
    let (a, b) = (median(one), median(hundred));
    println!("rule_table: cargo build of the crate, {rounds} round(s) each, non-incremental");
    println!("  1 rule:    median {:>7.3} s, min {:>7.3} s", a.as_secs_f64(), min_a.as_secs_f64());
    println!("  100 rules: median {:>7.3} s, min {:>7.3} s", b.as_secs_f64(), min_b.as_secs_f64());
    println!("  a 100-rule table adds {:.3} s (bar: under 1 s)", b.as_secs_f64() - a.as_secs_f64());
    let json = std::fs::read_to_string(s.export("bench-converge")).unwrap();
    assert_eq!(json.matches("\"why\"").count(), 100, "the export holds the 100-rule table");
}
