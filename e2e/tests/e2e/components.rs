//! `run <op> --components` and a component's own gate, through the real binaries and the real git
//! ledger: `site-parts` has shared phases (`Prepare`, `Verify`) around the phases of components
//! `site-api` (behind the gate `rollout`) and `site-web`. A component's gate stops that component
//! pending `chant approve <component> <gate>` (exit 3) while the other components go on; an
//! unknown component is a usage error with a "did you mean"; so is a misspelt gate in `approve`.

use serde_json::Value;

use super::support::{Out, Sandbox, config_with_roots, gate_key, run_key};

const OP: &str = "site-parts";

fn at(minutes: i64) -> String {
    let total = 10 * 60 + minutes;
    format!("2026-03-01T{:02}:{:02}:00.000Z", total / 60, total % 60)
}

fn run(sandbox: &Sandbox, minutes: i64, extra: &[&str]) -> Out {
    let mut args = vec!["run", OP, "--json"];
    args.extend_from_slice(extra);
    sandbox.project(&args, &[("CHANT_NOW", &at(minutes))])
}

/// Each step's detail (its stdout) and status, in order.
fn steps(record: &Value) -> Vec<(String, String)> {
    record["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let what = o["detail"].as_str().map_or_else(|| o["step"].as_str().unwrap().to_owned(), str::to_owned);
            let what = if o["step"] == "gate" { format!("gate:{}", o["name"].as_str().unwrap()) } else { what };
            (what, o["status"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn a_components_gate_stops_that_component_and_is_approved_by_its_name() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));

    // An unknown component: exit 2, the closest declared one and the list; nothing ran.
    let typo = run(&sandbox, 0, &["--components", "site-apx"]);
    typo.code(2);
    assert!(typo.stderr.contains("has no component `site-apx`; did you mean `site-api`?"), "{}", typo.all());
    assert!(typo.stderr.contains("its components are site-api, site-web"), "{}", typo.all());
    assert!(sandbox.values(&run_key("site", OP)).is_empty(), "nothing recorded");
    // A ConvergeOp has no phases to select.
    let converge = sandbox.project(&["run", "site-converge", "--components", "x"], &[]);
    converge.code(2);
    assert!(converge.stderr.contains("is a ConvergeOp"), "{}", converge.all());

    // Only site-api (and the shared phases): its gate stops it, after the steps before the gate.
    let first = run(&sandbox, 0, &["--components", "site-api"]);
    first.code(3);
    let record = first.json();
    assert_eq!(record["components"], serde_json::json!(["site-api"]));
    assert_eq!(
        steps(&record),
        [
            pair("prepared", "ok"),
            pair("api-built", "ok"),
            pair("gate:rollout", "gated"),
            pair("shell", "skipped"),
            pair("shell", "skipped"),
            pair("shell", "skipped"),
        ],
        "{record}"
    );
    assert_eq!(record["gate"]["component"], "site-api");
    assert_eq!(record["approve"], "chant approve site-api rollout");
    // The gate's facts are the component's.
    let pending = sandbox.values(&gate_key("site-api"));
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(
        (pending[0]["op"].clone(), pending[0]["kind"].clone()),
        (Value::from("site-api"), Value::from("pending"))
    );
    assert!(sandbox.values(&gate_key(OP)).is_empty());

    // The human form says whose gate it is and how to approve it.
    let human = sandbox.project(&["run", OP, "--components", "site-api"], &[("CHANT_NOW", &at(1))]);
    human.code(3);
    assert!(
        human.stderr.contains("Component \"site-api\" of op \"site-parts\" is gated on \"rollout\""),
        "{}",
        human.all()
    );
    assert!(human.stderr.contains("approve : chant approve site-api rollout"), "{}", human.all());

    // A whole run: the api waits at its gate, the web component goes on, the shared check waits.
    let whole = run(&sandbox, 2, &[]);
    whole.code(3);
    let record = whole.json();
    assert!(record.get("components").is_none(), "{record}");
    assert!(steps(&record).contains(&pair("web-shipped", "ok")), "{record}");
    assert_eq!(steps(&record).last(), Some(&pair("shell", "skipped")), "Verify waits for the api: {record}");

    // A misspelt gate: exit 2 with the closest gate, from the project binary (declared) and from
    // the stock binary (the ledger's facts); nothing recorded.
    for out in [
        sandbox.project(&["approve", "site-api", "rolout", "--actor", "bob"], &[]),
        sandbox.stock(&["approve", "site-api", "rolout", "--actor", "bob"], &[]),
        sandbox.project(&["approve", "site-release", "relaese"], &[]),
    ] {
        out.code(2);
        assert!(out.stderr.contains("did you mean \"r"), "{}", out.all());
    }
    assert_eq!(sandbox.values(&gate_key("site-api")).len(), 1);

    // Approved by the component's name (the project binary knows the component: no warning).
    let approved = sandbox.project(&["approve", "site-api", "rollout", "--actor", "bob"], &[("CHANT_NOW", &at(3))]);
    approved.code(0);
    assert!(!approved.stderr.contains("warning"), "{}", approved.all());
    let through = run(&sandbox, 4, &["--components", "site-api"]);
    through.code(0);
    let record = through.json();
    assert_eq!(
        steps(&record),
        [
            pair("prepared", "ok"),
            pair("api-built", "ok"),
            pair("gate:rollout", "ok"),
            pair("api-shipped", "ok"),
            pair("shell", "skipped"),
            pair("verified", "ok"),
        ],
        "{record}"
    );
    assert_eq!(record["outcomes"][2]["approvedBy"], "bob");

    // Only the web component: the api's phase is skipped, its gate never reached.
    let web = run(&sandbox, 5, &["--components", "site-web"]);
    web.code(0);
    let kinds: Vec<String> =
        sandbox.values(&gate_key("site-api")).iter().map(|f| f["kind"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kinds, ["pending", "resolution", "passed"], "the web run touched no gate");
    assert!(steps(&web.json()).contains(&pair("web-shipped", "ok")));
}
