//! The HTTP transport against a real engine on 127.0.0.1: each status mapping, a redirect that is
//! not followed, a refused connection, the timeout, a missing token that refuses before sending,
//! and a token echoed back by the engine that is never printed.

use std::time::Duration;

use chant::behaviour::{
    Ask, EnvVars, Prediction, RefusalCause, Request, RequestEntity, TrafficLevel, TransportOptions, UnpredictedReason,
    predict,
};

use super::behaviour_engine::{HttpEngine, Reply, TOKEN, assert_no_token, closed_port, model_answer, printed};

fn ask() -> Ask {
    let request = Request::new("acme", TrafficLevel::rps(250.0).unwrap())
        .entity(RequestEntity::new("app.conf", "file").prop("mode", "0644").prop("bytes", 1000))
        .entity(RequestEntity::new("tool.bin", "file").prop("mode", "0755").prop("bytes", 10));
    Ask::new(request)
}

fn env(url: &str) -> EnvVars {
    EnvVars::new().with("CHANT_BEHAVIOUR_ENGINE_ACME", url).with("CHANT_BEHAVIOUR_TOKEN", TOKEN)
}

fn options() -> TransportOptions {
    TransportOptions { timeout: Duration::from_secs(10), ..TransportOptions::default() }
}

fn refusal(outcome: &Result<Prediction, chant::behaviour::BehaviourError>) -> &chant::behaviour::Refusal {
    match outcome {
        Ok(Prediction::Refusal(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn an_answer_becomes_a_report_and_the_token_travels_only_in_the_header() {
    let engine = HttpEngine::model();
    let outcome = predict(&ask(), &env(&engine.url()), options());
    let Ok(Prediction::Report(report)) = &outcome else { panic!("expected a report, got {outcome:?}") };
    assert_eq!(report.entities().keys().collect::<Vec<_>>(), ["app.conf"]);
    assert_eq!(report.unpredicted()["tool.bin"].reason, UnpredictedReason::UnsupportedKind);
    let figures = &report.entities()["app.conf"];
    assert_eq!(figures.at, TrafficLevel::rps(250.0).unwrap());
    assert_eq!(figures.cost.value_per_hour(), 1.0);
    let requests = engine.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].authorization.as_deref(), Some(format!("Bearer {TOKEN}").as_str()));
    assert_no_token(&requests[0].body);
    let body: serde_json::Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(body["version"], "chant-behaviour/1");
    assert_eq!(body["traffic"]["rps"], 250.0);
    assert_no_token(&printed(&outcome));
}

#[test]
fn each_status_maps_to_its_refusal_and_an_echoed_token_is_never_printed() {
    let cases: &[(u16, RefusalCause, &str)] = &[
        (401, RefusalCause::NoEngine, "CHANT_BEHAVIOUR_TOKEN"),
        (403, RefusalCause::NoEngine, "CHANT_BEHAVIOUR_TOKEN"),
        (402, RefusalCause::EngineOutOfCredit, "CHANT_BEHAVIOUR_ENGINE_ACME"),
        (429, RefusalCause::EngineOverQuota, "CHANT_BEHAVIOUR_ENGINE_ACME"),
        (400, RefusalCause::EngineUnreachable, "CHANT_BEHAVIOUR_ENGINE_ACME"),
        (404, RefusalCause::EngineUnreachable, "CHANT_BEHAVIOUR_ENGINE_ACME"),
        (500, RefusalCause::EngineUnreachable, "CHANT_BEHAVIOUR_ENGINE_ACME"),
        (503, RefusalCause::EngineUnreachable, "CHANT_BEHAVIOUR_ENGINE_ACME"),
        (304, RefusalCause::EngineUnreachable, "CHANT_BEHAVIOUR_ENGINE_ACME"),
    ];
    for &(code, cause, variable) in cases {
        // The engine echoes the token it was sent into its error body.
        let engine = HttpEngine::start(move |r| {
            let echoed = r.authorization.clone().unwrap_or_default();
            Reply::Status(code, format!("{{\"error\": \"rejected {echoed}\", \"token\": \"{TOKEN}\"}}"))
        });
        let outcome = predict(&ask(), &env(&engine.url()), options());
        let r = refusal(&outcome);
        assert_eq!(r.cause(), cause, "status {code}");
        assert_eq!(r.variable(), Some(variable), "status {code}");
        assert_eq!(engine.requests().len(), 1);
        assert_no_token(&printed(&outcome));
        if code != 304 {
            assert!(r.detail().unwrap().contains(&format!("answered {code}")), "{:?}", r.detail());
            assert!(r.detail().unwrap().contains("[redacted]"), "{:?}", r.detail());
        }
    }
}

#[test]
fn a_redirect_is_not_followed_and_is_unreachable() {
    let elsewhere = HttpEngine::model();
    let target = elsewhere.url();
    for code in [301, 302, 307, 308] {
        let target = target.clone();
        let engine = HttpEngine::start(move |_| Reply::Redirect(code, target.clone()));
        let outcome = predict(&ask(), &env(&engine.url()), options());
        let r = refusal(&outcome);
        assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
        assert!(r.detail().unwrap().contains(&format!("answered {code} redirecting to {}", elsewhere.url())));
        assert_eq!(engine.requests().len(), 1);
    }
    assert!(elsewhere.requests().is_empty(), "a redirect was followed, taking the token along");
}

#[test]
fn a_refused_connection_is_unreachable_and_names_the_engine_variable() {
    let url = format!("http://127.0.0.1:{}/predict", closed_port());
    let outcome = predict(&ask(), &env(&url), options());
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_ENGINE_ACME"));
    assert_eq!(r.engine(), Some(url.as_str()));
    assert!(r.remedy().contains("CHANT_BEHAVIOUR_ENGINE_ACME"));
}

#[test]
fn an_engine_that_never_answers_is_unreachable_after_the_timeout() {
    let engine = HttpEngine::start(|_| Reply::Hang);
    let options = TransportOptions { timeout: Duration::from_millis(300), ..TransportOptions::default() };
    let outcome = predict(&ask(), &env(&engine.url()), options);
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert_eq!(r.detail(), Some("no answer within 300ms"));
}

#[test]
fn a_url_without_a_token_refuses_before_sending_and_names_the_token_variable() {
    let engine = HttpEngine::model();
    let env = EnvVars::new().with("BEHAVIOUR_ENGINE", engine.url());
    let outcome = predict(&ask(), &env, options());
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::NoEngine);
    assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_TOKEN_ACME"));
    assert!(r.remedy().contains("CHANT_BEHAVIOUR_TOKEN_ACME (or CHANT_BEHAVIOUR_TOKEN, BEHAVIOUR_TOKEN)"));
    assert!(engine.requests().is_empty(), "something was sent without a token");
}

#[test]
fn the_most_specific_engine_and_token_are_the_ones_used() {
    let specific = HttpEngine::model();
    let general = HttpEngine::model();
    let env = EnvVars::new()
        .with("CHANT_BEHAVIOUR_ENGINE_ACME", specific.url())
        .with("BEHAVIOUR_ENGINE", general.url())
        .with("CHANT_BEHAVIOUR_TOKEN_ACME", TOKEN)
        .with("BEHAVIOUR_TOKEN", "the-general-token-123");
    let outcome = predict(&ask(), &env, options());
    assert!(matches!(outcome, Ok(Prediction::Report(_))), "{outcome:?}");
    assert!(general.requests().is_empty());
    assert_eq!(specific.requests()[0].authorization.as_deref(), Some(format!("Bearer {TOKEN}").as_str()));
}

#[test]
fn a_token_echoed_into_a_good_answer_is_scrubbed() {
    let engine = HttpEngine::start(|r| {
        let mut answer: serde_json::Value = serde_json::from_str(&model_answer(&r.body)).unwrap();
        answer["unpredicted"]["tool.bin"]["detail"] = format!("no model; you sent {TOKEN}").into();
        answer["entities"]["app.conf"]["rightSize"] = format!("halve it, {TOKEN}").into();
        Reply::Status(200, answer.to_string())
    });
    let outcome = predict(&ask(), &env(&engine.url()), options());
    let Ok(Prediction::Report(report)) = &outcome else { panic!("expected a report, got {outcome:?}") };
    assert_eq!(report.unpredicted()["tool.bin"].detail.as_deref(), Some("no model; you sent [redacted]"));
    assert_no_token(&printed(&outcome));
}

#[test]
fn an_unusable_answer_is_unreachable_and_never_echoes_the_token() {
    for body in [
        format!("not json {TOKEN}"),
        format!("{{\"version\": \"chant-behaviour/1\", \"entities\": {{\"app.conf\": \"{TOKEN}\"}}}}"),
        r#"{"version": "chant-behaviour/1", "unpredicted": {"app.conf": {"reason": "no-credentials"}}}"#.to_owned(),
        r#"{"version": "chant-behaviour/9"}"#.to_owned(),
    ] {
        let engine = HttpEngine::start(move |_| Reply::Status(200, body.clone()));
        let outcome = predict(&ask(), &env(&engine.url()), options());
        let r = refusal(&outcome);
        assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
        assert!(r.detail().unwrap().starts_with("the answer is not the expected wire version"), "{:?}", r.detail());
        assert_no_token(&printed(&outcome));
    }
}

#[test]
fn a_block_at_another_level_is_read_failed_for_that_entity_alone() {
    let engine = HttpEngine::start(|r| {
        let mut answer: serde_json::Value = serde_json::from_str(&model_answer(&r.body)).unwrap();
        answer["entities"]["app.conf"]["at"] = serde_json::json!({"rps": 1000});
        Reply::Status(200, answer.to_string())
    });
    let outcome = predict(&ask(), &env(&engine.url()), options());
    let Ok(Prediction::Report(report)) = &outcome else { panic!("expected a report, got {outcome:?}") };
    assert!(report.entities().is_empty());
    let verdict = &report.unpredicted()["app.conf"];
    assert_eq!(verdict.reason, UnpredictedReason::ReadFailed);
    assert_eq!(
        verdict.detail.as_deref(),
        Some("the figures for app.conf were predicted at 1000 rps, the request asked at 250 rps")
    );
    assert_eq!(report.unpredicted()["tool.bin"].reason, UnpredictedReason::UnsupportedKind);
}

#[test]
fn an_https_engine_that_does_not_speak_tls_is_unreachable_and_nothing_goes_out_in_clear() {
    // The engine is plain HTTP: the TLS handshake fails, the request is never downgraded.
    let engine = HttpEngine::model();
    let url = engine.url().replacen("http://", "https://", 1);
    let outcome = predict(&ask(), &env(&url), options());
    let r = refusal(&outcome);
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable);
    assert!(engine.requests().iter().all(|req| req.authorization.is_none()), "the token went out in clear");
    assert_no_token(&printed(&outcome));
}
