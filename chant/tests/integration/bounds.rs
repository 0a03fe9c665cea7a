//! Every network wait of the library has a bound, and the bound holds against a peer on
//! 127.0.0.1 that accepts the connection and never answers (a stuck pooler, a firewall that
//! drops after the handshake): PostgreSQL's login and queries (observation and apply), the
//! `http_check` step, the behaviour engine's HTTP transport, and git against a remote over HTTP.
//! Every child process goes through `chant::process`, whose bound holds even when a grandchild
//! that left the group keeps the child's output open (the last case here; `process::spec` and
//! `notify::sink` have the unit tests). The notify webhook's bound is a unit test beside it
//! (`notify::sink`).
//!
//! Each bound here is a few seconds; each assertion allows ten times that, so a loaded machine
//! cannot fail them, while a wait without a bound (for ever) always does.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use chant::lexicon::postgres::{Column, DeleteMode, PostgresDeclaration, PostgresError, PostgresLexicon, Table};
use chant::model::UnobservedReason;
use chant::observe::observe_component;

/// The bound every case configures.
const BOUND: Duration = Duration::from_secs(2);

/// What a case may take at most: the bound, a stop, and a loaded machine.
const AT_MOST: Duration = Duration::from_secs(30);

/// A listener on 127.0.0.1 that accepts every connection and then answers nothing, holding each
/// connection open for the rest of the test binary's life. Returns its port.
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

/// A PostgreSQL stand-in on 127.0.0.1 that completes every login (trust: no password asked)
/// and then never answers a query. Returns its port.
fn mute_after_login() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || login_then_mute(conn));
        }
    });
    port
}

fn login_then_mute(mut conn: TcpStream) {
    loop {
        let mut len = [0u8; 4];
        if conn.read_exact(&mut len).is_err() {
            return;
        }
        let mut body = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
        if conn.read_exact(&mut body).is_err() {
            return;
        }
        // An SSLRequest (code 80877103) is declined; anything else is the startup message.
        if body.len() == 4 && u32::from_be_bytes([body[0], body[1], body[2], body[3]]) == 80_877_103 {
            let _ = conn.write_all(b"N");
            continue;
        }
        break;
    }
    // AuthenticationOk, then ReadyForQuery (idle).
    let _ = conn.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']);
    let mut sink = [0u8; 4096];
    while matches!(conn.read(&mut sink), Ok(n) if n > 0) {}
}

fn declaration() -> PostgresDeclaration {
    PostgresDeclaration::new().table(Table::new("app", "users").column(Column::new("id", "bigint").not_null()))
}

fn lexicon(port: u16) -> PostgresLexicon {
    let dsn = format!("postgres://app@127.0.0.1:{port}/app?connect_timeout={}", BOUND.as_secs());
    PostgresLexicon::new("prod-db", "bounds", declaration()).with_binding(Some("PROD_DB_URL".into()), Some(dsn))
}

/// Observes `lexicon`, asserting it ends within [`AT_MOST`] with every entity `read-failed`
/// carrying `reason`; returns how long it took.
fn observes_unknown(lexicon: &PostgresLexicon, reason: &str) -> Duration {
    let started = Instant::now();
    let observation = observe_component(lexicon, &lexicon.declared());
    let took = started.elapsed();
    assert!(took < AT_MOST, "the observation took {took:?} against a {BOUND:?} bound");
    assert!(observation.resources.is_empty(), "{observation:?}");
    assert_eq!(observation.unobserved.len(), lexicon.declared().len(), "{observation:?}");
    for (entity, unobserved) in &observation.unobserved {
        assert_eq!(unobserved.reason, UnobservedReason::ReadFailed, "{entity}: {unobserved:?}");
        let detail = unobserved.detail.as_deref().unwrap_or("");
        assert!(detail.contains(reason), "{entity}: {detail:?} does not say {reason:?}");
    }
    took
}

#[test]
fn a_postgres_server_that_never_answers_the_login_is_unknown_within_the_login_bound() {
    let port = silent();
    let bound = lexicon(port);
    let took = observes_unknown(&bound, "the server did not answer the login within 2s");
    eprintln!("observation against a silent server: {took:?}");
    // The binding's later readings (a tick's estate and deep reads, a diff's) fail at once with
    // the same reason instead of waiting out the bound again: no network is asked.
    let started = Instant::now();
    let err = bound.read_deep().unwrap_err();
    let again = started.elapsed();
    assert!(err.to_string().contains("did not answer the login within 2s"), "{err}");
    assert!(again < BOUND, "a second reading of an unanswered binding waited {again:?}");
    // An apply fails as quickly, naming the address and the bound.
    let started = Instant::now();
    let err = lexicon(port).apply(DeleteMode::Never).unwrap_err();
    assert!(started.elapsed() < AT_MOST, "the apply took {:?}", started.elapsed());
    assert!(matches!(err, PostgresError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains("did not answer the login within 2s"), "{err}");
}

#[test]
fn a_postgres_server_that_logs_in_and_never_answers_a_query_is_unknown_within_the_query_bound() {
    let port = mute_after_login();
    let lexicon = lexicon(port).with_query_timeout(BOUND);
    let took = observes_unknown(&lexicon, "within 2s");
    eprintln!("observation against a server mute after its login: {took:?}");
    let started = Instant::now();
    let err = lexicon.apply(DeleteMode::Never).unwrap_err();
    assert!(started.elapsed() < AT_MOST, "the apply took {:?}", started.elapsed());
    assert!(err.to_string().contains("did not answer BEGIN within 2s"), "{err}");
    let started = Instant::now();
    let err = lexicon.read_deep().unwrap_err();
    assert!(started.elapsed() < AT_MOST, "the deep read took {:?}", started.elapsed());
    assert!(err.to_string().contains("within 2s"), "{err}");
}

#[test]
fn an_http_check_against_a_server_that_never_answers_fails_within_its_timeout() {
    let port = silent();
    let started = Instant::now();
    let err = chant::http::check(&format!("http://127.0.0.1:{port}/health"), BOUND).unwrap_err();
    assert!(started.elapsed() < AT_MOST, "the check took {:?}", started.elapsed());
    assert!(matches!(err, chant::http::CheckError::Transport { .. }), "{err}");
}

#[test]
fn a_behaviour_engine_that_never_answers_is_refused_within_the_transport_timeout() {
    use chant::behaviour::{Ask, EnvVars, Prediction, Request, RequestEntity, TrafficLevel, TransportOptions, predict};
    let port = silent();
    let ask = Ask::new(
        Request::new("acme", TrafficLevel::rps(10.0).unwrap())
            .entity(RequestEntity::new("app.conf", "file").prop("mode", "0644").prop("bytes", 10)),
    );
    let env = EnvVars::new()
        .with("CHANT_BEHAVIOUR_ENGINE_ACME", format!("http://127.0.0.1:{port}/"))
        .with("CHANT_BEHAVIOUR_TOKEN", "t0k3n-for-the-bounds-test");
    let started = Instant::now();
    let outcome = predict(&ask, &env, TransportOptions { timeout: BOUND, ..TransportOptions::default() });
    assert!(started.elapsed() < AT_MOST, "the prediction took {:?}", started.elapsed());
    assert!(matches!(outcome, Ok(Prediction::Refusal(_))), "{outcome:?}");
}

#[test]
fn a_git_remote_over_http_that_never_answers_is_cut_at_the_git_timeout() {
    use chant::ledger::{Ledger, LedgerConfig};
    let port = silent();
    let repo = tempfile::tempdir().unwrap();
    gix::init(repo.path()).unwrap();
    let config = LedgerConfig {
        remote: Some(format!("http://127.0.0.1:{port}/estate.git")),
        git_timeout: BOUND,
        git_env: super::ledger::support::hermetic_env(),
        ..LedgerConfig::default()
    };
    let ledger = Ledger::open(repo.path(), config).unwrap();
    let started = Instant::now();
    let synced = ledger.sync();
    let took = started.elapsed();
    assert!(took < AT_MOST, "the sync took {took:?} against a {BOUND:?} git timeout");
    // The sync reports the remote as not reached, the records staying local.
    let Ok(chant::ledger::SyncReport { push: chant::ledger::PushStatus::NotPushed { reason, .. }, .. }) = &synced
    else {
        panic!("a remote that never answered cannot have been synchronised: {synced:?}");
    };
    assert!(reason.contains("did not finish within 2s"), "{reason}");
}

#[test]
fn a_child_whose_detached_grandchild_holds_its_output_ends_within_its_timeout_and_is_no_success() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("daemon.pid");
    let mut spec =
        chant::process::Spec::shell(&format!("echo started; setsid sleep 60 & echo $! > {}", pidfile.display()));
    spec.timeout = BOUND;
    spec.grace = Duration::from_millis(500);
    let started = Instant::now();
    let out = chant::process::run(&spec).unwrap();
    let took = started.elapsed();
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        // It left the group, so the call could not stop it; the test does.
        let _ = std::process::Command::new("kill").args(["-9", pid.trim()]).status();
    }
    assert!(took < AT_MOST, "the call took {took:?} against a {BOUND:?} timeout");
    assert!(out.timed_out && !out.success(), "{out:?}");
    assert_eq!(out.stdout, "started\n");
}
