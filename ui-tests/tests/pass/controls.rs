//! A ConvergeOp with sync windows in a time zone and a restart limit compiles, and its op.json
//! carries both.
use chant::prelude::*;

op! {
    name: "site-restart",
    overview: "Restart the site.",
    phases: [ phase("Restart", [ shell(cmd = "true") ]) ],
}

converge_op! {
    name: "site-converge",
    env: "site",
    dial: apply,
    tz: "Europe/Berlin",
    windows: [deny("0 9 * * 1-5", "8h"), allow("0 22 * * *", "6h")],
    restart_limit: limit(3, within = "10m"),
    rules: [
        when!(eq(status, "drifted") => run("site-restart"), why = "Restart it."),
    ],
}

fn main() {
    let json = chant::registry::find("site-converge").unwrap().json;
    assert!(json.contains(r#""windows""#), "{json}");
    assert!(json.contains(r#""restartLimit""#), "{json}");
    assert!(json.contains(r#""tz": "Europe/Berlin""#), "{json}");
}
