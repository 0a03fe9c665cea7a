//! Predictions of a real PostgreSQL estate, the path `lifecycle predict` takes: the live graph of
//! pgbench's schema (with its foreign keys) becomes the request, edges included, and is sent to a
//! real HTTP engine on 127.0.0.1 (200 with figures, 402, 429, 401, a hang past the timeout) and a
//! real command engine; a DSN planted in a column default is refused by the screen and nothing
//! reaches the engine.

use std::time::Duration;

use chant::behaviour::{
    Ask, BehaviourError, EnvVars, Prediction, RefusalCause, TrafficLevel, TransportOptions, UnpredictedReason,
    asks_from_graph, pointed_entity, predict, render_prediction,
};
use chant::graph::{self, Graph};
use chant::lexicon::BoundLexicon;
use chant::lexicon::postgres::{Column, PostgresDeclaration, PostgresLexicon, Table};
use serde_json::{Value, json};

use super::behaviour_engine::{HttpEngine, Reply, TOKEN, assert_no_token, path_with, script};
use super::postgres_cluster::cluster;

fn bound(db: &str, declaration: PostgresDeclaration) -> Vec<BoundLexicon> {
    let lexicon = PostgresLexicon::new("predict-db", "predict-test", declaration)
        .with_binding(Some("PREDICT_DATABASE_URL".into()), Some(cluster().dsn(db)));
    vec![BoundLexicon::new("postgres", lexicon)]
}

fn pgbench_graph() -> Graph {
    let db = cluster().database("predict_pgbench");
    cluster().pgbench_init_with(&db, &["--foreign-keys"]);
    graph::live("predict-db", &bound(&db, PostgresDeclaration::new().schema("public"))).unwrap()
}

fn traffic() -> TrafficLevel {
    TrafficLevel::rps(200.0).unwrap()
}

fn ask(graph: &Graph) -> Ask {
    let mut asks = asks_from_graph(graph, traffic(), Some("one zone lost"));
    assert_eq!(asks.len(), 1);
    asks.remove(0)
}

/// A model of tables: 0.01 USD per hour per rps for each table, nothing for other kinds.
fn table_model(request: &str) -> String {
    let request: Value = serde_json::from_str(request).unwrap();
    let at = request["traffic"].clone();
    let failure = request["failure"].as_str().unwrap_or("none").to_owned();
    let mut entities = serde_json::Map::new();
    let mut unpredicted = serde_json::Map::new();
    for entity in request["entities"].as_array().unwrap() {
        let name = entity["name"].as_str().unwrap().to_owned();
        if entity["kind"] != "table" {
            unpredicted.insert(name, json!({"reason": "unsupported-kind"}));
            continue;
        }
        entities.insert(
            name,
            json!({
                "at": at,
                "provenance": {"engine": {"name": "pg-model", "version": "3"}, "basis": "modeled"},
                "cost": {"rate": "per-hour", "perHour": at["rps"].as_f64().unwrap() * 0.01, "currency": "USD"},
                "headroom": {"cpu": 0.4, "latency": 0.2},
                "errorRate": 0.0,
                "resilience": {"failure": failure, "verdict": "degrades"}
            }),
        );
    }
    json!({"version": "chant-behaviour/1", "entities": entities, "unpredicted": unpredicted}).to_string()
}

fn http_env(url: &str) -> EnvVars {
    EnvVars::new().with("CHANT_BEHAVIOUR_ENGINE_POSTGRES", url).with("CHANT_BEHAVIOUR_TOKEN", TOKEN)
}

fn options(timeout: Duration) -> TransportOptions {
    TransportOptions { timeout, grace: Duration::from_millis(200), ..TransportOptions::default() }
}

fn refusal(outcome: Result<Prediction, BehaviourError>) -> chant::behaviour::Refusal {
    match outcome {
        Ok(Prediction::Refusal(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_live_pgbench_graph_is_priced_with_its_edges_and_every_wire_condition_refuses_by_name() {
    let graph = pgbench_graph();
    let ask = ask(&graph);

    // 200 with figures: every table priced, the schema unsupported (a partial answer), and the
    // foreign keys reached the engine as edges.
    let engine = HttpEngine::start(|r| Reply::Status(200, table_model(&r.body)));
    let outcome = predict(&ask, &http_env(&engine.url()), options(Duration::from_secs(20))).unwrap();
    let Prediction::Report(report) = &outcome else { panic!("expected a report, got {outcome:?}") };
    assert_eq!(
        report.entities().keys().map(String::as_str).collect::<Vec<_>>(),
        ["public.pgbench_accounts", "public.pgbench_branches", "public.pgbench_history", "public.pgbench_tellers"]
    );
    assert_eq!(report.unpredicted()["public"].reason, UnpredictedReason::UnsupportedKind);
    assert!(report.is_partial());
    let figures = &report.entities()["public.pgbench_history"];
    assert_eq!(figures.resilience.as_ref().unwrap().failure, "one zone lost");
    let sent: Value = serde_json::from_str(&engine.requests()[0].body).unwrap();
    let references: Vec<(&str, &str)> = sent["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["relation"] == "reference")
        .map(|e| (e["from"].as_str().unwrap(), e["to"].as_str().unwrap()))
        .collect();
    assert_eq!(references.len(), 5, "{sent}");
    assert!(references.contains(&("public.pgbench_history", "public.pgbench_tellers")), "{sent}");
    assert_eq!(sent["failure"], "one zone lost");
    assert_no_token(&engine.requests()[0].body);
    let text = render_prediction(&outcome, true);
    assert!(text.starts_with("\x1b[33mbehaviour of postgres at 200 rps: 4 of 5 predicted (partial answer)"), "{text}");
    assert!(text.contains("degrades under one zone lost"), "{text}");

    // 402, 429, 401: the engine answered and refused; each cause names what to do.
    for (status, cause) in
        [(402, RefusalCause::EngineOutOfCredit), (429, RefusalCause::EngineOverQuota), (401, RefusalCause::NoEngine)]
    {
        let engine = HttpEngine::start(move |_| Reply::Status(status, format!("{{\"echo\": \"{TOKEN}\"}}")));
        let r = refusal(predict(&ask, &http_env(&engine.url()), options(Duration::from_secs(20))));
        assert_eq!(r.cause(), cause, "{status}: {r:?}");
        assert_eq!(engine.requests().len(), 1, "{status}: the request was sent once");
        let text = render_prediction(&Prediction::Refusal(r.clone()), true);
        assert!(text.starts_with("\x1b[31mbehaviour refused for postgres"), "{text}");
        assert_no_token(&text);
        if status == 401 {
            assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_TOKEN"), "{r:?}");
        } else {
            assert!(
                text.contains(&format!("engine: {} (engine from CHANT_BEHAVIOUR_ENGINE_POSTGRES)", engine.url())),
                "{text}"
            );
        }
    }

    // A hang past the timeout is an engine that did not answer.
    let engine = HttpEngine::start(|_| Reply::Hang);
    let r = refusal(predict(&ask, &http_env(&engine.url()), options(Duration::from_secs(1))));
    assert_eq!(r.cause(), RefusalCause::EngineUnreachable, "{r:?}");

    // No engine named at all: a refusal naming the most specific variable, and nothing priced.
    let r = refusal(predict(&ask, &EnvVars::new(), options(Duration::from_secs(1))));
    assert_eq!(r.cause(), RefusalCause::NoEngine);
    assert!(r.remedy().contains("CHANT_BEHAVIOUR_ENGINE_POSTGRES"), "{}", r.remedy());
}

#[test]
fn a_command_engine_prices_the_live_graph_through_its_stdin() {
    let graph = pgbench_graph();
    let ask = ask(&graph);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The engine keeps the request it read and answers for one table only.
    let answer = json!({
        "version": "chant-behaviour/1",
        "entities": {"public.pgbench_branches": {
            "at": {"rps": 200.0},
            "provenance": {"engine": {"name": "cmd-model", "version": "1"}, "basis": "validated"},
            "cost": {"rate": "per-hour", "perHour": 0.5, "currency": "EUR"},
            "headroom": {"cpu": 0.9, "latency": 0.8},
            "errorRate": 0.0
        }}
    });
    std::fs::write(d.join("answer.json"), answer.to_string()).unwrap();
    script(d, "pg-engine", &format!("cat > '{0}/request.json'\ncat '{0}/answer.json'", d.display()));
    let env = EnvVars::new().with("PATH", path_with(d)).with("CHANT_BEHAVIOUR_ENGINE", "pg-engine");
    let outcome = predict(&ask, &env, options(Duration::from_secs(20))).unwrap();
    let Prediction::Report(report) = &outcome else { panic!("expected a report, got {outcome:?}") };
    assert_eq!(report.entities().keys().collect::<Vec<_>>(), ["public.pgbench_branches"]);
    // Entities the answer does not mention are accounted for, never dropped.
    assert_eq!(report.unpredicted()["public.pgbench_history"].reason, UnpredictedReason::ReadFailed);
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(d.join("request.json")).unwrap()).unwrap();
    assert_eq!(sent["version"], "chant-behaviour/1");
    assert_eq!(sent["entities"].as_array().unwrap().len(), 5, "{sent}");
    assert!(sent["edges"].as_array().unwrap().iter().any(|e| e["relation"] == "containment"), "{sent}");
}

#[test]
fn a_dsn_planted_in_a_column_default_is_refused_by_the_screen_and_nothing_reaches_the_engine() {
    const DSN: &str = "postgres://app:hunter22secret@db.internal:5432/prod";
    let db = cluster().database("predict_planted");
    cluster().as_app(
        &db,
        &format!("CREATE SCHEMA app; CREATE TABLE app.settings (id bigint NOT NULL, upstream text DEFAULT '{DSN}')"),
    );
    // The declaration names the table and its id only: the planted default is what the live read
    // finds, not something anybody declared.
    let declaration =
        PostgresDeclaration::new().table(Table::new("app", "settings").column(Column::new("id", "bigint").not_null()));
    let lexicons = bound(&db, declaration);
    let live = graph::live("predict-db", &lexicons).unwrap();
    let ask = ask(&live);
    let engine = HttpEngine::start(|r| Reply::Status(200, table_model(&r.body)));
    let err = predict(&ask, &http_env(&engine.url()), options(Duration::from_secs(5))).unwrap_err();
    let BehaviourError::Credential(credential) = &err else { panic!("expected the screen to refuse: {err:?}") };
    assert_eq!(pointed_entity(&ask.request, &credential.pointer), Some(("app.settings.upstream", Some("default"))));
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("hunter22secret"), "{shown}");
    assert!(engine.requests().is_empty(), "nothing may reach the engine");

    // The declared graph of the same env sends nothing of the sort, and is priced.
    let declared = graph::declared("predict-db", &lexicons).unwrap();
    let outcome = predict(&ask_of(&declared), &http_env(&engine.url()), options(Duration::from_secs(20))).unwrap();
    assert!(outcome.report().is_some(), "{outcome:?}");
    assert_eq!(engine.requests().len(), 1);
    assert!(!engine.requests()[0].body.contains("hunter22secret"));
}

fn ask_of(graph: &Graph) -> Ask {
    asks_from_graph(graph, traffic(), None).remove(0)
}
