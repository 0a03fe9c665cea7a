//! `operator --metrics-addr`: the Prometheus exposition scraped over HTTP from a running operator
//! and parsed by a Prometheus text-format parser (`prometheus-parse`), its values held to the
//! ledger after a known sequence of ticks (a first apply, then two edits that wake a round each);
//! `/healthz` and `/readyz`, which turns unready when rounds stop completing (a dispatch that
//! blocks) and ready again when they resume; unobserved entities by reason.

use std::collections::BTreeMap;

use prometheus_parse::{Scrape, Value as Sample};
use serde_json::Value;

use super::operator::Running;
use crate::support::{PROJECT, Sandbox, config_with_roots, converge_key};

/// The generous bound on polling a condition.
const BOUND: std::time::Duration = std::time::Duration::from_secs(120);

/// Starts `operator --env <env> --interval <interval> --metrics-addr 127.0.0.1:0` and returns it
/// with the base URL it printed.
fn start(sandbox: &Sandbox, env: &str, interval: &str, vars: &[(&str, &str)]) -> (Running, String) {
    let args = ["operator", "-v", "--env", env, "--interval", interval, "--metrics-addr", "127.0.0.1:0"];
    let mut daemon = Running::start(sandbox, PROJECT, &sandbox.dir, &args, vars);
    let line = daemon.wait_for("the metrics line", |l| l.starts_with("operator: metrics on http://"));
    assert!(line.ends_with("(loopback only)"), "{line}");
    let rest = line.split_once("http://").unwrap().1;
    (daemon, format!("http://{}", rest.split_once('/').unwrap().0))
}

fn get(base: &str, path: &str) -> (u16, String, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut resp = agent.get(&format!("{base}{path}")).call().unwrap();
    let kind = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (resp.status().as_u16(), kind, resp.body_mut().read_to_string().unwrap())
}

/// A scrape, as `(name, sorted labels) -> value`; a histogram contributes its `_count` and `_sum`
/// (and its buckets under `le`), as the exposition writes them.
type Samples = BTreeMap<(String, Vec<(String, String)>), f64>;

fn scrape(base: &str) -> Samples {
    let (status, kind, text) = get(base, "/metrics");
    assert_eq!(status, 200);
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let parsed = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let mut out = Samples::new();
    for s in parsed.samples {
        let mut labels: Vec<(String, String)> = s.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        labels.sort();
        let value = match s.value {
            Sample::Counter(v) | Sample::Gauge(v) | Sample::Untyped(v) => v,
            Sample::Histogram(buckets) => {
                for b in buckets {
                    let mut l = labels.clone();
                    l.push(("le".into(), b.less_than.to_string()));
                    out.insert((format!("{}_bucket", s.metric), l), b.count);
                }
                continue;
            }
            Sample::Summary(_) => panic!("no summaries are exposed: {}", s.metric),
        };
        out.insert((s.metric, labels), value);
    }
    out
}

fn value(samples: &Samples, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut want: Vec<(String, String)> = labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    want.sort();
    samples.get(&(name.to_owned(), want)).copied()
}

/// Polls until `want` holds of a scrape, and returns that scrape.
fn scrape_until(base: &str, what: &str, want: impl Fn(&Samples) -> bool) -> Samples {
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        let s = scrape(base);
        if want(&s) {
            return s;
        }
        assert!(std::time::Instant::now() < deadline, "{what} within {BOUND:?}: {s:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn is_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The exposition follows Prometheus's naming conventions and carries no free text in labels.
fn assert_conventions(samples: &Samples) {
    for (name, labels) in samples.keys() {
        assert!(name.starts_with("chant_"), "{name}: one namespace");
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}: snake_case");
        for (k, v) in labels {
            assert!(
                ["op", "env", "outcome", "reason", "rule", "action", "sink", "le"].contains(&k.as_str()),
                "{name}: {k}"
            );
            if k != "le" {
                assert!(is_name(v), "{name}{{{k}={v:?}}}: label values are names or fixed words");
            }
        }
    }
}

#[test]
fn a_scrape_of_a_running_operator_matches_the_ledger() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let (mut daemon, base) = start(&sandbox, "site", "300s", &[]);
    daemon.seen_or_wait_for("the first tick", |l| l.starts_with("operator: site-converge@site ticked=1"));
    // The subscription's note is on stderr, the tick's line on stdout: two pipes read by two
    // threads, so the note may have been read while waiting for the tick.
    daemon.seen_or_wait_for("the subscription", |l| {
        l == "operator: files(site) change signal subscribed (the timer still runs)"
    });
    assert_eq!(get(&base, "/healthz"), (200, "text/plain; charset=utf-8".into(), "ok\n".into()));
    scrape_until(&base, "the first round", |s| value(s, "chant_rounds_total", &[]) == Some(1.0));
    assert_eq!(get(&base, "/readyz").0, 200);
    for n in 0..2 {
        std::fs::write(sandbox.path("estates/site/app.conf"), format!("port = {n}\n")).unwrap();
        daemon.wait_for("the wake", |l| l.starts_with("operator: woken by a change signal"));
        daemon.wait_for("the woken tick", |l| l.starts_with("operator: site-converge@site ticked=1"));
    }
    let s = scrape_until(&base, "the third round", |s| value(s, "chant_rounds_total", &[]) == Some(3.0));
    assert_conventions(&s);

    let ticks: Vec<Value> = sandbox.values(&converge_key("site", "site-converge"));
    assert_eq!(ticks.len(), 3);
    let op = [("op", "site-converge")];
    let op_env = [("op", "site-converge"), ("env", "site")];
    let ok = [("op", "site-converge"), ("env", "site"), ("outcome", "ok")];
    assert_eq!(value(&s, "chant_ticks_total", &ok), Some(ticks.len() as f64));
    let mut outcomes: BTreeMap<(String, String), f64> = BTreeMap::new();
    for t in &ticks {
        for o in t["outcomes"].as_array().unwrap() {
            let key = (o["ruleId"].as_str().unwrap().to_owned(), o["action"].as_str().unwrap().to_owned());
            *outcomes.entry(key).or_default() += 1.0;
        }
    }
    assert_eq!(outcomes.get(&("first-apply".into(), "ran".into())), Some(&1.0), "{outcomes:?}");
    assert_eq!(outcomes.get(&("drift-apply".into(), "ran".into())), Some(&2.0), "{outcomes:?}");
    let exposed: BTreeMap<(String, String), f64> = s
        .iter()
        .filter(|((name, _), _)| name == "chant_dispatches_total")
        .map(|((_, labels), v)| {
            let get = |k: &str| labels.iter().find(|(l, _)| l == k).unwrap().1.clone();
            assert_eq!(get("op"), "site-converge");
            ((get("rule"), get("action")), *v)
        })
        .collect();
    assert_eq!(exposed, outcomes, "every (rule, action) on the ledger, counted the same");
    let newest = ticks.last().unwrap()["timestamp"].as_str().unwrap();
    let at = chant::clock::parse(newest).unwrap().as_millisecond() as f64 / 1000.0;
    assert_eq!(value(&s, "chant_last_tick_timestamp_seconds", &op_env), Some(at));
    assert_eq!(value(&s, "chant_lease_held", &op), Some(1.0), "held between rounds");
    assert_eq!(value(&s, "chant_tick_duration_seconds_count", &op), Some(3.0));
    assert_eq!(value(&s, "chant_ledger_append_duration_seconds_count", &[]), Some(3.0));
    assert_eq!(value(&s, "chant_rounds_woken_total", &[]), Some(2.0));
    assert!(value(&s, "chant_change_signals_total", &[]).is_some_and(|n| n >= 2.0), "{s:?}");
    assert_eq!(value(&s, "chant_ledger_push_failures_total", &[]), Some(0.0));

    daemon.signal(&sandbox, "TERM");
    let (code, _) = daemon.finish();
    assert_eq!(code, 0);
}

#[test]
fn unobserved_entities_are_counted_by_reason() {
    // No `[env.blind]`: both declared files are unobserved with `no-binding`.
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let (mut daemon, base) = start(&sandbox, "blind", "300s", &[]);
    daemon.seen_or_wait_for("the tick", |l| l.starts_with("operator: blind-converge@blind ticked=1"));
    let s = scrape_until(&base, "the round", |s| value(s, "chant_rounds_total", &[]) == Some(1.0));
    assert_conventions(&s);
    let labels = [("op", "blind-converge"), ("env", "blind"), ("reason", "no-binding")];
    assert_eq!(value(&s, "chant_unobserved_entities", &labels), Some(2.0));
    let tick = &sandbox.values(&converge_key("blind", "blind-converge"))[0];
    assert_eq!(tick["summary"]["unobserved"], 2, "the ledger says the same");
    daemon.kill9();
}

#[test]
fn readyz_turns_unready_when_rounds_stop_and_ready_when_they_resume() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let marks = sandbox.root().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let release = marks.join("release");
    std::fs::write(&release, "").unwrap();
    let marks_var = marks.display().to_string();
    let (mut daemon, base) = start(&sandbox, "hold", "1s", &[("E2E_MARKS", &marks_var)]);
    daemon.seen_or_wait_for("the first tick", |l| l.starts_with("operator: hold-converge@hold ticked=1"));
    poll(&base, 200, "ready after a round");
    // The next round (a second later) dispatches again, and its dispatch blocks until the
    // release file exists again, so no round completes.
    std::fs::remove_file(&release).unwrap();
    let (_, _, why) = poll(&base, 503, "unready while the round hangs");
    assert!(why.starts_with("not ready: the last round completed "), "{why}");
    assert_eq!(get(&base, "/healthz").0, 200, "alive all along");
    std::fs::write(&release, "").unwrap();
    poll(&base, 200, "ready once rounds complete again");
    daemon.kill9();
}

/// Polls `/readyz` until it answers `status`.
fn poll(base: &str, status: u16, what: &str) -> (u16, String, String) {
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        let answer = get(base, "/readyz");
        if answer.0 == status {
            return answer;
        }
        assert!(std::time::Instant::now() < deadline, "{what} within {BOUND:?}: {answer:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
