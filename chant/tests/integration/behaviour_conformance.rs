//! The behaviour conformance suite, run on the files lexicon against real local engines: an HTTP
//! engine on 127.0.0.1 and a command engine program, plus the standard refusal scenarios; and the
//! suite catching a lexicon that loses track of an entity or prints a token.

use std::rc::Rc;
use std::time::Duration;

use chant::behaviour::conformance::{
    BehaviourScenario, BehaviourSuite, CONFORMANCE_TOKEN, PredictIn, standard_refusals,
};
use chant::behaviour::files::files_ask;
use chant::behaviour::wire::render_request;
use chant::behaviour::{
    Ask, BehaviourError, EnvVars, Prediction, RefusalCause, ReportBuilder, TrafficLevel, TransportOptions,
    UnpredictedReason, predict,
};
use chant::lexicon::files::{FilesDeclaration, FilesLexicon};

use super::behaviour_engine::{HttpEngine, Reply, TOKEN, model_answer, path_with, script};

const NAMES: [&str; 3] = ["app.conf", "nested/site.conf", "tool.bin"];

fn declaration() -> FilesDeclaration {
    FilesDeclaration::new()
        .file("app.conf", "x".repeat(1000), 0o644)
        .file("nested/site.conf", "server {}\n", 0o644)
        .file("tool.bin", "\x7fELF", 0o755)
}

fn level() -> TrafficLevel {
    TrafficLevel::rps(120.0).unwrap()
}

fn options() -> TransportOptions {
    TransportOptions { timeout: Duration::from_secs(20), grace: Duration::from_millis(200), ..Default::default() }
}

/// The files lexicon's predict method: its ask, through the contract's `predict`.
fn predict_files(lexicon: FilesLexicon) -> PredictIn {
    Rc::new(move |env: &EnvVars| predict(&files_ask(&lexicon, level()), env, options()))
}

fn http_env(url: String) -> EnvVars {
    EnvVars::new().with("CHANT_BEHAVIOUR_ENGINE_FILES", url).with("CHANT_BEHAVIOUR_TOKEN_FILES", TOKEN)
}

fn scenario(name: &str, predict: &PredictIn, env: EnvVars) -> BehaviourScenario {
    let predict = Rc::clone(predict);
    BehaviourScenario::new(name, NAMES, move || predict(&env))
}

/// The files ask with one property added to its first entity: a lexicon surfacing more than it
/// should.
fn surfacing(lexicon: &FilesLexicon, key: &str, value: &str) -> Ask {
    let mut ask = files_ask(lexicon, level());
    ask.request.entities[0].props.insert(key.to_owned(), value.into());
    ask
}

#[test]
fn the_files_lexicon_keeps_the_behaviour_contract_against_real_engines() {
    let root = tempfile::tempdir().unwrap();
    let lexicon = FilesLexicon::new("staging", Some(root.path().to_owned()), declaration());
    let unbound = FilesLexicon::new("staging", None, declaration());
    let bound = predict_files(lexicon.clone());

    // A real HTTP engine, and engines that answer and still refuse (echoing the token).
    let up = HttpEngine::model();
    let broke = HttpEngine::start(|r| Reply::Status(402, format!("no balance for {:?}", r.authorization)));
    let limited = HttpEngine::start(|r| Reply::Status(429, format!("slow down {:?}", r.authorization)));
    let rejecting = HttpEngine::start(|r| Reply::Status(401, format!("bad token {:?}", r.authorization)));

    // A real command engine: a program on PATH answering the files lexicon's request.
    let bin = tempfile::tempdir().unwrap();
    let body = String::from_utf8(render_request(&files_ask(&lexicon, level()).request).unwrap()).unwrap();
    std::fs::write(bin.path().join("answer.json"), model_answer(&body)).unwrap();
    script(bin.path(), "files-engine", &format!("cat > /dev/null\ncat '{}/answer.json'", bin.path().display()));
    let command_env = EnvVars::new().with("CHANT_BEHAVIOUR_ENGINE", "files-engine").with("PATH", path_with(bin.path()));

    let credential_named = {
        let (lexicon, url) = (lexicon.clone(), up.url());
        move || predict(&surfacing(&lexicon, "password", "q7Xv2mPa9LkR"), &http_env(url.clone()), options())
    };
    let connection_string = {
        let (lexicon, url) = (lexicon.clone(), up.url());
        move || predict(&surfacing(&lexicon, "dsn", "app:hunter2@db:5432/prod"), &http_env(url.clone()), options())
    };

    let suite = BehaviourSuite::new("files")
        .never_print(TOKEN)
        .never_print(CONFORMANCE_TOKEN)
        .scenario(
            scenario("the HTTP engine is up", &bound, http_env(up.url()))
                .expect_predicted(["app.conf", "nested/site.conf"])
                .expect_unpredicted_because("tool.bin", UnpredictedReason::UnsupportedKind),
        )
        .scenario(
            scenario("the command engine is up", &bound, command_env)
                .expect_predicted(["app.conf", "nested/site.conf"])
                .expect_unpredicted_because("tool.bin", UnpredictedReason::UnsupportedKind),
        )
        .scenario(
            scenario("the env binds no root", &predict_files(unbound), http_env(up.url()))
                .expect_unpredicted_because("app.conf", UnpredictedReason::NoBinding)
                .expect_unpredicted_because("nested/site.conf", UnpredictedReason::NoBinding)
                .expect_unpredicted_because("tool.bin", UnpredictedReason::NoBinding),
        )
        .scenario(
            scenario("the engine is out of credit", &bound, http_env(broke.url()))
                .expect_refusal_naming(RefusalCause::EngineOutOfCredit, "CHANT_BEHAVIOUR_ENGINE_FILES"),
        )
        .scenario(
            scenario("the engine is over quota", &bound, http_env(limited.url()))
                .expect_refusal_naming(RefusalCause::EngineOverQuota, "CHANT_BEHAVIOUR_ENGINE_FILES"),
        )
        .scenario(
            scenario("the engine rejects the token and echoes it", &bound, http_env(rejecting.url()))
                .expect_refusal_naming(RefusalCause::NoEngine, "CHANT_BEHAVIOUR_TOKEN_FILES"),
        )
        .scenario(
            BehaviourScenario::new("a credential-named property", NAMES, credential_named)
                .expect_refusal(RefusalCause::CredentialInRequest),
        )
        .scenario(
            BehaviourScenario::new("a connection string in a property", NAMES, connection_string)
                .expect_credential_error(),
        )
        .scenarios(standard_refusals("files", NAMES, Rc::clone(&bound)));
    assert_eq!(suite.scenarios.len(), 12);
    if let Err(e) = suite.run() {
        panic!("{e}");
    }
    // The refusal scenarios never reached the engine that is up with a screened request.
    let screened =
        up.requests().iter().filter(|r| r.body.contains("q7Xv2mPa9LkR") || r.body.contains("hunter2")).count();
    assert_eq!(screened, 0);
    assert_eq!(broke.requests().len(), 1);
}

#[test]
fn the_suite_catches_a_lexicon_that_loses_an_entity_or_prints_a_token() {
    let root = tempfile::tempdir().unwrap();
    let lexicon = FilesLexicon::new("staging", Some(root.path().to_owned()), declaration());
    let lost = {
        let lexicon = lexicon.clone();
        move || -> Result<Prediction, BehaviourError> {
            // Builds its report for an ask that forgot a file: the file lands in neither map.
            let mut ask = files_ask(&lexicon, level());
            ask.request.entities.retain(|e| e.name != "tool.bin");
            let mut builder = ReportBuilder::new(&ask);
            for name in ["app.conf", "nested/site.conf"] {
                builder.unpredicted(name, chant::behaviour::Unpredicted::new(UnpredictedReason::ReadFailed))?;
            }
            Ok(Prediction::Report(builder.finish()?))
        }
    };
    let leaky = {
        let lexicon = lexicon.clone();
        move || -> Result<Prediction, BehaviourError> {
            let ask = files_ask(&lexicon, level());
            let mut builder = ReportBuilder::new(&ask);
            for name in NAMES {
                let verdict = chant::behaviour::Unpredicted::new(UnpredictedReason::ReadFailed)
                    .detail(format!("engine said: bad token {TOKEN}"));
                builder.unpredicted(name, verdict)?;
            }
            Ok(Prediction::Report(builder.finish()?))
        }
    };
    let err = BehaviourSuite::new("files")
        .never_print(TOKEN)
        .scenario(BehaviourScenario::new("loses one", NAMES, lost))
        .scenario(BehaviourScenario::new("prints the token", NAMES, leaky))
        .scenario(
            BehaviourScenario::new("expects over-quota, gets no-engine", NAMES, {
                let lexicon = lexicon.clone();
                move || predict(&files_ask(&lexicon, level()), &EnvVars::new(), options())
            })
            .expect_refusal(RefusalCause::EngineOverQuota),
        )
        .run()
        .unwrap_err();
    let rules: Vec<(&str, &str)> = err.violations.iter().map(|v| (v.scenario.as_str(), v.rule)).collect();
    assert_eq!(
        rules,
        [
            ("loses one", "accounted"),
            ("prints the token", "never-print"),
            ("expects over-quota, gets no-engine", "expect-refusal")
        ]
    );
    assert!(err.to_string().contains("tool.bin is in neither entities nor unpredicted"));
    assert!(!err.to_string().contains(TOKEN));
}
