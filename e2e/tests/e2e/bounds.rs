//! Waits that end, and servers that answer only to their own names, with the real binaries:
//!
//! - a PostgreSQL env whose server accepts TCP on 127.0.0.1 and never answers: `tick`,
//!   `operator --once` and `lifecycle diff --live` end within the login bound, the env `unknown`
//!   with the reason (#34 defect 3; before, each hung for ever);
//! - the live diff page answers at once while its observation waits on that server ("observing
//!   since N s", reloading itself; six tabs share one observation), the other pages answer
//!   meanwhile, and live observations past the limit are refused at once (before, six such
//!   diffs froze every page);
//! - the env page answers at once while its observation waits on that server ("observing since
//!   N s", reloading itself), and then lists every resource `unobserved` with the reason, never
//!   missing;
//! - the dashboard and the metrics endpoint refuse a forged `Host` (a DNS-rebinding page) with
//!   421, and answer loopback names and the names given with `--allow-host` (#34 defect 10).
//!
//! Every peer is on 127.0.0.1. Bounds are asserted generously (a 2 s bound must end well under a
//! minute), never tightly.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::operator::Running;
use crate::support::{PROJECT, Sandbox, config_with_roots};

/// What a command against a server that never answers may take at most.
const AT_MOST: Duration = Duration::from_secs(60);

/// A listener on 127.0.0.1 that accepts every connection and answers nothing. Returns its port.
fn silent() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    port
}

/// The example binary (`prod-db` reads its DSN from a variable), beside this package's binaries.
fn staging_binary() -> PathBuf {
    let bin = Path::new(PROJECT).parent().unwrap().join(format!("staging{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} is missing: run the suite with --workspace (it builds chant-examples)", bin.display());
    bin
}

/// A sandbox binding `prod-db` to `E2E_DSN`.
fn prod_db_sandbox() -> Sandbox {
    Sandbox::new("[project]\nname = \"bounds\"\n\n[env.prod-db]\npostgres_dsn_var = \"E2E_DSN\"\n")
}

/// Runs `bin args` to its end (bounded by the harness), returning its exit code, its lines and
/// how long it took.
fn timed(sandbox: &Sandbox, bin: &str, args: &[&str], vars: &[(&str, &str)]) -> (i32, String, Duration) {
    let started = Instant::now();
    let (code, lines) = Running::start(sandbox, bin, &sandbox.dir, args, vars).finish();
    (code, lines.join("\n"), started.elapsed())
}

#[test]
fn a_postgres_server_that_never_answers_makes_the_env_unknown_within_the_login_bound() {
    let sandbox = prod_db_sandbox();
    let port = silent();
    let dsn = format!("postgres://app@127.0.0.1:{port}/app?connect_timeout=2");
    let vars = [("E2E_DSN", dsn.as_str())];
    let bin = staging_binary();
    let bin = bin.to_str().unwrap();

    let (code, out, took) = timed(&sandbox, bin, &["tick", "prod-db-converge", "--json"], &vars);
    eprintln!("tick prod-db-converge: {took:?}");
    assert_eq!(code, 0, "{out}");
    assert!(took < AT_MOST, "the tick took {took:?}");
    let record: serde_json::Value = serde_json::from_str(out.lines().find(|l| l.starts_with('{')).unwrap()).unwrap();
    assert!(record["summary"]["unobserved"].as_u64().unwrap() > 0, "{record}");
    assert!(out.contains("the server did not answer the login within 2s"), "{out}");

    let (code, out, took) = timed(&sandbox, bin, &["operator", "--once", "--env", "prod-db"], &vars);
    eprintln!("operator --once: {took:?}");
    assert!(took < AT_MOST, "operator --once took {took:?}");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("status=unknown"), "{out}");

    let (code, out, took) = timed(&sandbox, bin, &["lifecycle", "diff", "prod-db", "--live"], &vars);
    eprintln!("lifecycle diff --live: {took:?}");
    assert!(took < AT_MOST, "lifecycle diff --live took {took:?}");
    assert!(code == 0 || code == 1, "{out}");
    assert!(out.contains("unknown"), "{out}");
    assert!(out.contains("did not answer the login within 2s"), "{out}");
}

/// Sends one HTTP/1.1 GET of `path` to `addr` naming `host`, asking for JSON, returning the
/// status and the body.
fn get(addr: &str, path: &str, host: &str) -> (u16, String) {
    get_accepting(addr, path, host, "application/json")
}

/// [`get`], asking for HTML as a browser does.
fn get_html(addr: &str, path: &str, host: &str) -> (u16, String) {
    get_accepting(addr, path, host, "text/html")
}

fn get_accepting(addr: &str, path: &str, host: &str, accept: &str) -> (u16, String) {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(200))).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    let status = answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// Starts `serve` of `bin` on a port of 127.0.0.1 with `extra` arguments; returns it and the
/// address it printed.
fn serve(sandbox: &Sandbox, bin: &str, extra: &[&str], vars: &[(&str, &str)]) -> (Running, String) {
    let mut args = vec!["serve", "--addr", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut running = Running::start(sandbox, bin, &sandbox.dir, &args, vars);
    let banner = running.wait_for("the listening line", |l| l.contains("read-only dashboard on http://"));
    let rest = banner.split_once("http://").unwrap().1;
    (running, rest.split_once('/').unwrap().0.to_owned())
}

#[test]
fn the_live_diff_page_shows_progress_and_every_page_answers_while_it_waits_on_a_server_that_never_answers() {
    let sandbox = prod_db_sandbox();
    let port = silent();
    // A long login bound, so the observation is surely in flight while the other pages are asked.
    let dsn = format!("postgres://app@127.0.0.1:{port}/app?connect_timeout=20");
    let bin = staging_binary();
    let (served, addr) = serve(&sandbox, bin.to_str().unwrap(), &[], &[("E2E_DSN", dsn.as_str())]);
    let host = addr.clone();

    // Six browser tabs ask for the live diff at once: they share the env's one observation, and
    // each answers within its short wait with a page that says so and reloads itself.
    let (tx, pages) = mpsc::channel();
    for _ in 0..6 {
        let (tx, addr, host) = (tx.clone(), addr.clone(), host.clone());
        std::thread::spawn(move || {
            let asked = Instant::now();
            let answer = get_html(&addr, "/envs/prod-db/diff", &host);
            let _ = tx.send((answer, asked.elapsed()));
        });
    }
    for _ in 0..6 {
        let ((status, body), took) = pages.recv_timeout(AT_MOST).expect("a diff tab got no page while observing");
        eprintln!("a diff tab answered {status} in {took:?} while observing");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("Observing env prod-db live since"), "{body}");
        assert!(body.contains(r#"<meta http-equiv="refresh" content="2">"#), "{body}");
    }
    // The observation holds one of the two live slots; of two live graphs asked at once, one
    // takes the other slot and one is refused at once, without waiting on the database.
    let (tx, graphs) = mpsc::channel();
    for _ in 0..2 {
        let (tx, addr, host) = (tx.clone(), addr.clone(), host.clone());
        std::thread::spawn(move || {
            let _ = tx.send(get(&addr, "/envs/prod-db/graph?live=1", &host));
        });
    }
    let (status, body) = graphs.recv_timeout(AT_MOST).expect("the graph past the limit was not refused");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("live diffs are running already"), "{body}");
    // While the observation and the graph wait on the database, the estate page answers.
    let asked = Instant::now();
    let (status, body) = get(&addr, "/", &host);
    let estate_took = asked.elapsed();
    eprintln!("the estate page answered in {estate_took:?} with two live observations in flight");
    assert_eq!(status, 200, "{body}");
    assert!(graphs.try_recv().is_err(), "the admitted graph was still waiting on the login bound");
    assert!(estate_took < Duration::from_secs(15), "the estate page took {estate_took:?}");
    // JSON waits for the observation (bounded); it ends within the login bound, the env unknown
    // with the reason; the page then shows it.
    let (status, body) = get(&addr, "/envs/prod-db/diff", &host);
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["status"], "unknown", "{doc}");
    assert!(body.contains("did not answer the login within 20s"), "{body}");
    let (status, page) = get_html(&addr, "/envs/prod-db/diff", &host);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("did not answer the login within 20s"), "{page}");
    assert!(!page.contains("Observing env prod-db live since"), "{page}");
    let (status, body) = graphs.recv_timeout(Duration::from_secs(200)).expect("the live graph never ended");
    eprintln!("the live graph answered {status}");
    assert_eq!(status, 200, "{body}");
    served.kill9();
}

#[test]
fn the_env_page_shows_progress_while_it_observes_and_never_calls_the_unread_missing() {
    let sandbox = prod_db_sandbox();
    let port = silent();
    let dsn = format!("postgres://app@127.0.0.1:{port}/app?connect_timeout=8");
    let bin = staging_binary();
    let (served, addr) = serve(&sandbox, bin.to_str().unwrap(), &[], &[("E2E_DSN", dsn.as_str())]);
    let host = addr.clone();
    let html = |path: &str| {
        let (status, page) = get_html(&addr, path, &host);
        assert_eq!(status, 200, "{path}: {page}");
        page
    };
    // The first request starts the observation and answers within its short wait, with a page
    // that says so and reloads itself.
    let asked = Instant::now();
    let page = html("/envs/prod-db");
    let took = asked.elapsed();
    eprintln!("the env page answered in {took:?} while observing");
    assert!(page.contains("Observing env prod-db live since"), "{page}");
    assert!(page.contains(r#"<meta http-equiv="refresh" content="2">"#), "{page}");
    assert!(took < Duration::from_secs(7), "the progress page took {took:?}");
    // Asked again, it joins the same observation (no second one starts), and the other pages answer.
    assert!(html("/envs/prod-db").contains("Observing env prod-db live since"));
    let (status, _) = get(&addr, "/", &host);
    assert_eq!(status, 200);
    // JSON waits for the observation (bounded), which ends within the login bound.
    let (status, body) = get(&addr, "/envs/prod-db", &host);
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = doc["resources"].as_array().unwrap();
    assert!(!rows.is_empty(), "{doc}");
    for row in rows {
        assert_eq!(row["verdict"], "unobserved", "what was not read is never missing: {row}");
        assert!(row["reason"].as_str().is_some_and(|r| r.contains("did not answer the login within 8s")), "{row}");
    }
    assert_eq!(doc["status"], "unknown", "{doc}");
    // The HTML now has the rows, kept for a few seconds.
    let page = html("/envs/prod-db");
    assert!(page.contains(r#"data-verdict="unobserved""#) && !page.contains(r#"data-verdict="missing""#), "{page}");
    served.kill9();
}

#[test]
fn the_dashboard_and_the_metrics_endpoint_refuse_a_forged_host() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let (served, addr) = serve(&sandbox, PROJECT, &["--allow-host", "dash.internal"], &[]);
    let port = addr.rsplit_once(':').unwrap().1.to_owned();
    // A DNS-rebinding page: the browser connects to 127.0.0.1, naming the attacker's host.
    for forged in [format!("evil.example:{port}"), "evil.example".to_owned(), format!("a.localhost:{port}")] {
        for path in ["/", "/gates", "/envs/site/diff"] {
            let (status, body) = get(&addr, path, &forged);
            assert_eq!(status, 421, "{forged} {path}: {body}");
            assert!(body.starts_with("refused: this server does not answer to the name"), "{body}");
            assert!(body.contains("--allow-host"), "{body}");
        }
    }
    for own in [addr.clone(), format!("localhost:{port}"), format!("LocalHost:{port}"), format!("[::1]:{port}")] {
        assert_eq!(get(&addr, "/", &own).0, 200, "{own}");
    }
    for allowed in [format!("dash.internal:{port}"), "dash.internal".to_owned()] {
        assert_eq!(get(&addr, "/gates", &allowed).0, 200, "{allowed}");
    }
    served.kill9();

    let bad = sandbox.project(&["serve", "--addr", "127.0.0.1:0", "--allow-host", "http://x/"], &[]);
    bad.code(2);

    let args = [
        "operator",
        "--env",
        "site",
        "--interval",
        "1h",
        "--metrics-addr",
        "127.0.0.1:0",
        "--metrics-allow-host",
        "scrape.internal",
    ];
    let mut daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &[]);
    let line = daemon.wait_for("the metrics line", |l| l.starts_with("operator: metrics on http://"));
    let addr = line.split_once("http://").unwrap().1.split_once('/').unwrap().0.to_owned();
    let port = addr.rsplit_once(':').unwrap().1.to_owned();
    for path in ["/metrics", "/healthz", "/readyz"] {
        let (status, body) = get(&addr, path, &format!("evil.example:{port}"));
        assert_eq!(status, 421, "{path}: {body}");
    }
    assert_eq!(get(&addr, "/healthz", &format!("localhost:{port}")).0, 200);
    assert_eq!(get(&addr, "/healthz", &format!("scrape.internal:{port}")).0, 200);
    daemon.kill9();
}
