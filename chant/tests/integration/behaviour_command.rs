//! The command transport against real child processes: the request on stdin, the answer on
//! stdout, an environment of exactly `PATH` (read back from `/proc/<pid>/environ`), and a
//! non-zero exit, a timeout, unparseable output and a missing program each `engine-unreachable`.

use std::time::Duration;

use chant::behaviour::wire::render_request;
use chant::behaviour::{
    Ask, EnvVars, Prediction, RefusalCause, Request, RequestEntity, TrafficLevel, TransportOptions, UnpredictedReason,
    predict,
};

use super::behaviour_engine::{TOKEN, assert_no_token, model_answer, path_with, printed, script};

fn ask() -> Ask {
    let request = Request::new("acme", TrafficLevel::rps(40.0).unwrap())
        .entity(RequestEntity::new("app.conf", "file").prop("mode", "0644").prop("bytes", 500))
        .entity(RequestEntity::new("tool.bin", "file").prop("mode", "0755").prop("bytes", 10));
    Ask::new(request)
}

/// A parent environment full of things the child must not see.
fn env(dir: &std::path::Path, engine: &str) -> EnvVars {
    EnvVars::new()
        .with("PATH", path_with(dir))
        .with("CHANT_BEHAVIOUR_ENGINE", engine)
        .with("CHANT_BEHAVIOUR_TOKEN", TOKEN)
        .with("HOME", "/root")
        .with("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
}

fn options() -> TransportOptions {
    TransportOptions { timeout: Duration::from_secs(20), grace: Duration::from_millis(200), ..Default::default() }
}

fn refusal(outcome: &Result<Prediction, chant::behaviour::BehaviourError>) -> &chant::behaviour::Refusal {
    match outcome {
        Ok(Prediction::Refusal(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_engine_gets_the_request_on_stdin_and_an_environment_of_exactly_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ask = ask();
    let body = String::from_utf8(render_request(&ask.request).unwrap()).unwrap();
    std::fs::write(d.join("answer.json"), model_answer(&body)).unwrap();
    script(
        d,
        "acme-engine",
        &format!("cat > '{0}/request.json'\ncat /proc/$$/environ > '{0}/environ'\ncat '{0}/answer.json'", d.display()),
    );
    // The variables of this test process too: the child must inherit none of them.
    let outcome = predict(&ask, &env(d, "acme-engine"), options());
    let Ok(Prediction::Report(report)) = &outcome else { panic!("expected a report, got {outcome:?}") };
    assert_eq!(report.entities().keys().collect::<Vec<_>>(), ["app.conf"]);
    assert_eq!(report.unpredicted()["tool.bin"].reason, UnpredictedReason::UnsupportedKind);

    let environ = std::fs::read(d.join("environ")).unwrap();
    let vars: Vec<String> =
        environ.split(|b| *b == 0).filter(|v| !v.is_empty()).map(|v| String::from_utf8_lossy(v).into_owned()).collect();
    assert_eq!(vars, [format!("PATH={}", path_with(d))]);
    assert_eq!(std::fs::read_to_string(d.join("request.json")).unwrap(), body);
    assert_no_token(&body);
}

#[test]
fn an_engine_given_by_path_runs_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ask = ask();
    let body = String::from_utf8(render_request(&ask.request).unwrap()).unwrap();
    std::fs::write(d.join("answer.json"), model_answer(&body)).unwrap();
    let program = script(d, "engine", &format!("cat > /dev/null\ncat '{}/answer.json'", d.display()));
    let env =
        EnvVars::new().with("PATH", "/usr/bin:/bin").with("CHANT_BEHAVIOUR_ENGINE", program.display().to_string());
    assert!(matches!(predict(&ask, &env, options()), Ok(Prediction::Report(_))));
}

#[test]
fn a_non_zero_exit_is_unreachable_with_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "acme-engine", "cat > /dev/null\necho 'model crashed' >&2\nexit 3");
    let outcome = predict(&ask(), &env(dir.path(), "acme-engine"), options());
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_ENGINE"));
    assert_eq!(r.detail(), Some("the engine ended with exit 3: model crashed"));
}

#[test]
fn an_engine_past_its_timeout_is_killed_and_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    script(d, "acme-engine", &format!("cat > /dev/null\necho $$ > '{}/pid'\nexec sleep 600", d.display()));
    let options =
        TransportOptions { timeout: Duration::from_millis(300), grace: Duration::from_millis(100), ..options() };
    let outcome = predict(&ask(), &env(d, "acme-engine"), options);
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert_eq!(r.detail(), Some("no answer within 300ms"));
    // The engine is gone (or a zombie awaiting its reaper).
    let pid = std::fs::read_to_string(d.join("pid")).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next().unwrap_or("");
    assert!(stat.is_empty() || state == "Z", "the engine still runs: {stat}");
}

#[test]
fn unparseable_output_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "acme-engine", "cat > /dev/null\necho 'all good, trust me'");
    let outcome = predict(&ask(), &env(dir.path(), "acme-engine"), options());
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert!(r.detail().unwrap().starts_with("the answer is not the expected wire version"));
}

#[test]
fn a_program_not_on_path_is_unreachable_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = predict(&ask(), &env(dir.path(), "acme-no-such-engine"), options());
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert_eq!(r.detail(), Some("acme-no-such-engine is not a program on PATH"));
    assert_eq!(r.engine(), Some("acme-no-such-engine"));
    assert_no_token(&printed(&outcome));
}
