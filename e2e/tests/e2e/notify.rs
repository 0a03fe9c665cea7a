//! Notifications from the operator (`[notify]` in `chant.toml`), end to end: a real webhook
//! receiver on 127.0.0.1 and a real command sink. Three ticks of a standing gate send exactly one
//! `gated` event each (to both sinks), approval and a clean tick send `recovered`, every tick's
//! notification is recorded on the ledger beside its ticks, and a receiver that hangs never holds
//! a tick back: the tick is recorded while the webhook still waits, and the send gives up after
//! the sink timeout, reported once and recorded as not delivered.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use chant::ledger::ShardKey;
use serde_json::Value;

use crate::support::{Sandbox, config_with_roots, converge_key};

const APPROVE: &str = "chant approve dash-guarded ship-web --resource web";
const WHY: &str = "A drifted service ships only after a human approves: <script>document.title='pwned'</script>";

/// A webhook receiver: every POST's body arrives on `bodies`; it answers 204, or never answers
/// when `hang` (holding the connection open).
struct Receiver204 {
    url: String,
    bodies: Receiver<Value>,
}

impl Receiver204 {
    fn start(hang: bool) -> Receiver204 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let (tx, bodies) = mpsc::channel();
        std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(body) = read_request(&mut stream) else { continue };
                if tx.send(body).is_err() {
                    return;
                }
                if hang {
                    held.push(stream);
                } else {
                    let _ =
                        stream.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                }
            }
        });
        Receiver204 { url, bodies }
    }

    /// Every body received so far (waiting briefly for stragglers only when `expect` are due).
    fn take(&self, expect: usize) -> Vec<Value> {
        let mut out = Vec::new();
        while out.len() < expect {
            out.push(self.bodies.recv_timeout(Duration::from_secs(60)).expect("an event within 60 s"));
        }
        while let Ok(extra) = self.bodies.try_recv() {
            out.push(extra);
        }
        out
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Value> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0;
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    assert!(first.starts_with("POST /hook HTTP/1.1"), "{first}");
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn config(timeout: &str, command_dir: Option<&str>) -> String {
    let mut s = config_with_roots(&["site"]);
    s.push_str(&format!("\n[notify]\ntimeout = \"{timeout}\"\n\n[[notify.webhook]]\nurl_var = \"E2E_HOOK_URL\"\n"));
    if let Some(dir) = command_dir {
        s.push_str(&format!(
            "\n[[notify.command]]\ncmd = \"env > '{dir}/env.txt'; cat >> '{dir}/events.jsonl'; echo >> '{dir}/events.jsonl'\"\n"
        ));
    }
    s
}

fn at(minute: u32) -> String {
    format!("2026-03-01T10:{minute:02}:00.000Z")
}

fn notify_key() -> ShardKey {
    ShardKey::notify(None, "dash", "dash-converge").unwrap()
}

#[test]
fn a_standing_gate_notifies_once_per_tick_and_recovery_after_approval() {
    let sandbox = Sandbox::new("");
    let receiver = Receiver204::start(false);
    let commands = sandbox.root().join("command-sink");
    std::fs::create_dir_all(&commands).unwrap();
    sandbox.write_config(&config("5s", Some(&commands.display().to_string())));
    let once = |minute: u32| {
        let now = at(minute);
        let vars =
            [("CHANT_NOW", now.as_str()), ("E2E_HOOK_URL", receiver.url.as_str()), ("E2E_SECRET", "s3cr3t-value")];
        let out = sandbox.project(&["operator", "--once", "--env", "dash"], &vars);
        out.code(0);
        assert!(!out.stderr.contains("operator: notify:"), "every sink delivered: {}", out.all());
        out
    };
    for minute in [0, 5, 10] {
        once(minute);
    }
    let ticks = sandbox.values(&converge_key("dash", "dash-converge"));
    assert_eq!(ticks.len(), 3);
    let events = receiver.take(3);
    assert_eq!(events.len(), 3, "exactly one event per gated tick: {events:?}");
    for (event, tick) in events.iter().zip(&ticks) {
        assert_eq!(event["event"], "gated", "{event}");
        assert_eq!(event["tickId"], tick["id"], "in tick order, one each");
        assert_eq!((&event["op"], &event["env"]), (&Value::from("dash-converge"), &Value::from("dash")));
        assert_eq!(event["rule"], "ship-drifted");
        assert_eq!(event["why"], WHY);
        assert_eq!(event["approve"], APPROVE);
        assert_eq!((&event["gate"], &event["resource"]), (&Value::from("ship-web"), &Value::from("web")));
    }

    // Approval out of band, then a clean tick: its dispatch walks through the gate.
    sandbox.project(&["approve", "dash-guarded", "ship-web", "--resource", "web"], &[("CHANT_NOW", &at(12))]).code(0);
    once(15);
    let ticks = sandbox.values(&converge_key("dash", "dash-converge"));
    assert_eq!(ticks[3]["outcomes"][0]["action"], "ran", "{}", ticks[3]);
    let events = receiver.take(1);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["event"], "recovered");
    assert_eq!(events[0]["tickId"], ticks[3]["id"]);

    // The ledger remembers what was sent: one record per notified tick, each delivery ok.
    let records = sandbox.values(&notify_key());
    let ids: Vec<&Value> = records.iter().map(|r| &r["tickId"]).collect();
    let tick_ids: Vec<&Value> = ticks.iter().map(|t| &t["id"]).collect();
    assert_eq!(ids, tick_ids);
    let problems: Vec<bool> = records.iter().map(|r| r["problem"].as_bool().unwrap()).collect();
    assert_eq!(problems, [true, true, true, false]);
    for r in &records {
        let sinks = r["sinks"].as_array().unwrap();
        let names: Vec<&str> = sinks.iter().map(|s| s["sink"].as_str().unwrap()).collect();
        assert_eq!(names, ["webhook $E2E_HOOK_URL", "command #1"], "{r}");
        assert!(sinks.iter().all(|s| s["ok"] == true), "{r}");
    }
    // `operator log` shows each notification right after the tick it answers.
    let log = sandbox.project(&["operator", "log", "--env", "dash", "--json"], &[]);
    log.code(0);
    let entries = log.json()["entries"].as_array().unwrap().clone();
    let timeline: Vec<(&str, &Value)> = entries
        .iter()
        .filter(|e| e["op"] == "dash-converge")
        .map(|e| {
            (e["kind"].as_str().unwrap(), if e["kind"] == "tick" { &e["record"]["id"] } else { &e["record"]["tickId"] })
        })
        .collect();
    let expected: Vec<(&str, &Value)> = tick_ids.iter().flat_map(|id| [("tick", *id), ("notification", *id)]).collect();
    assert_eq!(timeline, expected, "{entries:?}");
    let text = sandbox.project(&["operator", "log", "--env", "dash"], &[]);
    text.code(0);
    assert!(
        text.stdout.contains("notified recovered\n    recovered  webhook $E2E_HOOK_URL  delivered\n"),
        "{}",
        text.stdout
    );

    // The command sink got the same events on stdin, with a minimal environment.
    let lines = std::fs::read_to_string(commands.join("events.jsonl")).unwrap();
    let got: Vec<Value> = lines.lines().filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = got.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["gated", "gated", "gated", "recovered"]);
    let env = std::fs::read_to_string(commands.join("env.txt")).unwrap();
    assert!(env.contains("CHANT_NOTIFY_EVENT=recovered"), "{env}");
    assert!(!env.contains("E2E_SECRET") && !env.contains("E2E_HOOK_URL"), "nothing but a minimal environment: {env}");
}

#[test]
fn a_hanging_receiver_never_holds_a_tick_back() {
    let sandbox = Sandbox::new(&config("1s", None));
    let receiver = Receiver204::start(true);
    let vars = [("E2E_HOOK_URL", receiver.url.as_str())];
    let mut child =
        sandbox.command(crate::support::PROJECT, &sandbox.dir, &["operator", "--once", "--env", "dash"], &vars);
    let child = child.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // While the receiver holds the request unanswered, the tick it reports is already recorded.
    let event = receiver.take(1).remove(0);
    let ticks = sandbox.values(&converge_key("dash", "dash-converge"));
    assert_eq!(ticks.len(), 1);
    assert_eq!(event["tickId"], ticks[0]["id"], "the tick was recorded before its notification went out");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let want =
        "operator: notify: webhook $E2E_HOOK_URL failed 1 time(s): the URL in $E2E_HOOK_URL did not answer within 1s";
    assert!(stderr.lines().any(|l| l == want), "reported once: {stderr}");
    assert!(!stderr.contains(receiver.url.as_str()), "the URL is never printed: {stderr}");
    let records = sandbox.values(&notify_key());
    assert_eq!(records.len(), 1);
    let delivery = &records[0]["sinks"][0];
    assert_eq!((&delivery["ok"], &delivery["event"]), (&Value::Bool(false), &Value::from("gated")));
    assert!(delivery["error"].as_str().unwrap().contains("did not answer within 1s"), "{delivery}");
}

#[test]
fn an_env_already_unknown_past_the_threshold_is_notified_once_by_the_operator() {
    // No `[env.blind]`: every declared file is `no-binding`, so each tick is unknown.
    let sandbox = Sandbox::new("");
    let receiver = Receiver204::start(false);
    let mut config = config_with_roots(&[]);
    config.push_str(
        "\n[notify]\ntimeout = \"5s\"\nunknown_ticks = 3\n\n[[notify.webhook]]\nurl_var = \"E2E_HOOK_URL\"\n",
    );
    sandbox.write_config(&config);
    // Five unknown ticks by hand, which the operator never notifies: the run is past 3 when the
    // operator first sees it (with `==` on the streak it never notified).
    for minute in 0..5 {
        sandbox.tick("blind-converge", &[("CHANT_NOW", &at(minute))]);
    }
    let once = |minute: u32| {
        let now = at(minute);
        let vars = [("CHANT_NOW", now.as_str()), ("E2E_HOOK_URL", receiver.url.as_str())];
        sandbox.project(&["operator", "--once", "--env", "blind"], &vars).code(0);
    };
    once(10);
    let events = receiver.take(1);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((&events[0]["event"], &events[0]["op"]), (&Value::from("unknown"), &Value::from("blind-converge")));
    // The run goes on: not sent again.
    once(20);
    let key = ShardKey::notify(None, "blind", "blind-converge").unwrap();
    assert_eq!(sandbox.values(&key).len(), 1, "the second unknown operator tick sends nothing");
    assert!(receiver.take(0).is_empty());
}
