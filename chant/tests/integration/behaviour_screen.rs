//! Screening a behaviour request: every credential form is a hard error at the top level of the
//! properties, nested deep, inside arrays, as a key and in a typed field, and the error never
//! repeats it; an image reference is not one; a credential-named key is a refusal and nothing is
//! sent; the typed part of a request has no key that reads as a credential.

use std::time::Duration;

use chant::behaviour::screen::{CredentialForm, Issuer, names_credential};
use chant::behaviour::{
    Ask, BehaviourError, Edge, EnvVars, RefusalCause, Request, RequestEntity, TrafficLevel, TransportOptions, predict,
    screen_request,
};
use serde_json::{Value, json};

use super::behaviour_engine::{HttpEngine, TOKEN};

const FORMS: &[(&str, CredentialForm)] = &[
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
        CredentialForm::PemBlock,
    ),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlXzEyMzQ", CredentialForm::Jwt),
    ("Bearer vF3kQ9zLm2Xp7RtY", CredentialForm::Authorization),
    ("Basic YXBwOmh1bnRlcjI=", CredentialForm::Authorization),
    ("ghp_R8x2Lq9Vt4Mz7Kp1Nw6Yb3Hc5Jd0Fg2Sa8Ue", CredentialForm::Token(Issuer::GitHub)),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", CredentialForm::Token(Issuer::GitHub)),
    ("glpat-Xy7Qm2Lp9Rt4Vz8Kn3Wb", CredentialForm::Token(Issuer::GitLab)),
    ("sk-proj-Qm2Lp9Rt4Vz8Kn3WbXy7T", CredentialForm::Token(Issuer::OpenAi)),
    ("sk_live_51Hq2Lp9Rt4Vz8Kn3W", CredentialForm::Token(Issuer::Stripe)),
    ("xoxb-2048204820-Qm2Lp9Rt4Vz8", CredentialForm::Token(Issuer::Slack)),
    ("AKIA2OGYBAH6Q7LMTR4X", CredentialForm::Token(Issuer::Aws)),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", CredentialForm::Token(Issuer::Google)),
    ("npm_Qm2Lp9Rt4Vz8Kn3WbXy7TQm2Lp9Rt4Vz8Kn3", CredentialForm::Token(Issuer::Npm)),
    ("postgres://app:hunter2@db.internal:5432/prod", CredentialForm::UrlPassword),
    ("app:hunter2@db:5432/prod", CredentialForm::UrlPassword),
    ("app:hunter2@db", CredentialForm::UrlPassword),
];

fn level() -> TrafficLevel {
    TrafficLevel::rps(10.0).unwrap()
}

fn with_props(props: Value) -> Request {
    let mut entity = RequestEntity::new("web", "service");
    entity.props = props.as_object().unwrap().clone();
    Request::new("acme", level()).entity(entity)
}

/// Wraps `inner` in `depth` levels of alternating objects and arrays.
fn nest(inner: Value, depth: usize) -> Value {
    (0..depth).fold(inner, |v, i| if i % 2 == 0 { json!({"layer": v}) } else { json!([1, "x", v]) })
}

fn expect_hard(request: &Request, form: CredentialForm, secret: &str, pointer_prefix: &str, in_key: bool) {
    let err = screen_request(request).expect_err("a credential passed the screen");
    assert_eq!(err.form, form, "{secret}");
    assert_eq!(err.in_key, in_key, "{secret}");
    assert!(err.pointer.starts_with(pointer_prefix), "{secret}: {}", err.pointer);
    let shown = format!("{err}\n{err:?}");
    assert!(!shown.contains(secret), "the error repeats the credential: {shown}");
    assert!(!shown.contains("hunter2"), "the error repeats the password: {shown}");
}

#[test]
fn every_value_form_is_a_hard_error_wherever_it_sits() {
    for (secret, form) in FORMS {
        // At the top level of the properties, under a benign key.
        expect_hard(&with_props(json!({"dsn": secret})), *form, secret, "/entities/0/props/dsn", false);
        // Nested a thousand levels deep: the walk has no depth budget.
        expect_hard(
            &with_props(json!({"deep": nest(json!(secret), 1000)})),
            *form,
            secret,
            "/entities/0/props/deep/",
            false,
        );
        // Inside arrays.
        expect_hard(
            &with_props(json!({"list": [1, [true, null, ["a", secret]]]})),
            *form,
            secret,
            "/entities/0/props/list/1/2/1",
            false,
        );
        // As a key, at the top and deep down.
        let mut keyed = serde_json::Map::new();
        keyed.insert((*secret).to_owned(), json!(true));
        expect_hard(&with_props(Value::Object(keyed.clone())), *form, secret, "/entities/0/props", true);
        expect_hard(
            &with_props(json!({"a": nest(Value::Object(keyed), 40)})),
            *form,
            secret,
            "/entities/0/props/a/",
            true,
        );
        // In a typed field: an entity's name, its kind, an edge.
        let typed = Request::new("acme", level()).entity(RequestEntity::new(*secret, "service"));
        expect_hard(&typed, *form, secret, "/entities/0/name", false);
        let typed = Request::new("acme", level()).entity(RequestEntity::new("web", *secret));
        expect_hard(&typed, *form, secret, "/entities/0/kind", false);
        let typed = Request::new("acme", level())
            .entity(RequestEntity::new("web", "service"))
            .edges(vec![Edge::reference("web", *secret)]);
        expect_hard(&typed, *form, secret, "/edges/0/to", false);
    }
}

#[test]
fn look_alikes_are_not_refused() {
    for value in [
        "nginx:1.25@sha256:0f1d3e5c7b9a2f4e6d8c0b1a3f5e7d9c2b4a6f8e0d1c3b5a7f9e2d4c6b8a0f1e",
        "registry.internal:5000/team/app:v1@sha256:0f1d3e5c7b9a2f4e6d8c0b1a3f5e7d9c2b4a6f8e0d1c3b5a7f9e2d4c6b8a0f1e",
        "postgres://app@db.internal:5432/prod",
        "arn:aws:iam::123456789012:role/app",
        "sha256:0f1d3e5c7b9a2f4e6d8c0b1a3f5e7d9c",
        "token rotation every week",
        "bearer of bad news",
        "mail ops@example.invalid",
        "sk-ip",
    ] {
        let request = with_props(json!({"image": value, "notes": [value], "nested": {"v": value}}));
        assert_eq!(screen_request(&request).unwrap(), None, "{value} was refused");
    }
}

#[test]
fn a_credential_named_key_is_a_refusal_and_nothing_is_sent() {
    let request = with_props(json!({"db": {"rolpassword": "q7Xv2mPa9LkR"}}));
    let refusal = screen_request(&request).unwrap().expect("a refusal");
    assert_eq!(refusal.cause(), RefusalCause::CredentialInRequest);
    assert_eq!(
        refusal.detail(),
        Some("the property at /entities/0/props/db/rolpassword is named like a credential and holds a value")
    );
    assert!(!format!("{refusal:?}").contains("q7Xv2mPa9LkR"));

    let engine = HttpEngine::model();
    let env = EnvVars::new().with("CHANT_BEHAVIOUR_ENGINE", engine.url()).with("CHANT_BEHAVIOUR_TOKEN", TOKEN);
    let options = TransportOptions { timeout: Duration::from_secs(10), ..TransportOptions::default() };
    let outcome = predict(&Ask::new(request), &env, options).unwrap();
    assert_eq!(outcome.refusal().map(|r| r.cause()), Some(RefusalCause::CredentialInRequest));
    // A hard error sends nothing either.
    let hard = with_props(json!({"dsn": "app:hunter2@db:5432/prod"}));
    assert!(matches!(predict(&Ask::new(hard), &env, options), Err(BehaviourError::Credential(_))));
    assert!(engine.requests().is_empty(), "a screened request reached the engine");
}

#[test]
fn the_name_layer_is_gated_by_value_and_by_the_reference_family() {
    let refused = |props: Value| screen_request(&with_props(props)).unwrap().is_some();
    assert!(refused(json!({"password": "q7Xv2mPa9LkR"})));
    assert!(refused(json!({"awsSecretAccessKey": "q7Xv2mPa9LkRq7Xv2mPa9LkR"})));
    assert!(refused(json!({"items": [{"apiKey": "q7Xv2mPa9LkR"}]})));
    // Too short, not a string, or an evident reference.
    assert!(!refused(json!({"password": "short"})));
    assert!(!refused(json!({"password": 12345678901_i64})));
    assert!(!refused(json!({"password": {"from": "vault"}})));
    assert!(!refused(json!({"password": "${DB_PASSWORD}"})));
    assert!(!refused(json!({"token": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:t"})));
    // The reference family and benign names.
    for key in ["secretName", "imagePullSecrets", "secretKeyRef", "ClientToken", "passwordPolicy", "tags"] {
        assert!(!refused(json!({key: "q7Xv2mPa9LkR"})), "{key} was refused");
    }
    assert!(!refused(json!({"tags": {"author": "Ada Lovelace"}})));
}

#[test]
fn a_hard_error_wins_over_a_name_refusal() {
    let request = with_props(json!({"password": "q7Xv2mPa9LkR", "z": {"dsn": "postgres://a:hunter2@db/x"}}));
    assert_eq!(screen_request(&request).unwrap_err().form, CredentialForm::UrlPassword);
}

#[test]
fn the_typed_part_of_a_request_has_no_credential_key() {
    let request = Request::new("acme", level())
        .entity(RequestEntity::new("web", "service"))
        .entity(RequestEntity::new("db", "table"))
        .edges(vec![Edge::reference("web", "db")]);
    let json = serde_json::to_value(&request).unwrap();
    let mut keys = Vec::new();
    let mut stack = vec![&json];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    keys.push(k.clone());
                    if k != "props" {
                        stack.push(child);
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys,
        ["edges", "entities", "from", "kind", "lexicon", "name", "props", "relation", "rps", "to", "traffic"]
    );
    assert!(keys.iter().all(|k| !names_credential(k)));
}
