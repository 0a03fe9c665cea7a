//! The JSON documents lexicon, bound the way the core binds it (`Declaration::bind` with an env's
//! binding), held to chant's observation conformance suite against real directories: absent,
//! present (owned and foreign, with their markers), unreadable, unbound, and a root that cannot
//! be listed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;

use chant::lexicon::{Binding, Declaration, EnvLexicon};
use chant::model::UnobservedReason;
use chant::observe::conformance::{Scenario, Suite};
use chant::observe::{Lexicon, Marker};
use chant_example_jsondocs::{DocsDeclaration, DocsLexicon, ROOT_KEY};

const PROJECT: &str = "docs-demo";
const ENV: &str = "docs";

fn declaration() -> DocsDeclaration {
    DocsDeclaration::new()
        .document("service", &serde_json::json!({"port": 8080}))
        .document("flags", &serde_json::json!({"on": true}))
}

/// Binds the declaration to `dir/estate` (or to nothing), as the project layer does.
fn bind(dir: &Path, bound: bool) -> DocsLexicon {
    let values = if bound { BTreeMap::from([(ROOT_KEY.to_owned(), "estate".to_owned())]) } else { BTreeMap::new() };
    declaration().bind(&Binding::new(ENV, PROJECT, dir, &values), None).unwrap()
}

/// A scenario over a fresh directory prepared by `setup`, which the closure keeps alive.
fn scenario(name: &str, bound: bool, setup: impl FnOnce(&Path)) -> Scenario {
    let dir = tempfile::tempdir().unwrap();
    setup(&dir.path().join("estate"));
    let lexicon = bind(dir.path(), bound);
    let declared = lexicon.declared_entities().unwrap();
    Scenario::new(name, declared, move |d| {
        let _keep = &dir;
        lexicon.describe_resources(d)
    })
}

fn write(estate: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(estate).unwrap();
    std::fs::write(estate.join(format!("{name}.json")), text).unwrap();
}

#[test]
fn the_jsondocs_lexicon_keeps_the_observation_contract() {
    let probe = tempfile::tempdir().unwrap();
    let suite = Suite::for_lexicon(&bind(probe.path(), true)).unwrap();
    let suite = suite
        .scenario(
            scenario("the root does not exist: every document is absent", true, |_| {})
                .expect_absent(["flags", "service"]),
        )
        .scenario(
            scenario("owned and foreign documents, with their markers", true, |estate| {
                write(estate, "service", r#"{"port": 8080, "_chant": {"stack": "docs-demo", "env": "docs"}}"#);
                write(estate, "flags", r#"{"on": false, "_chant": {"stack": "another", "env": "docs"}}"#);
                write(estate, "notes", r#"{"by": "hand"}"#);
            })
            .owned()
            .expect_present(["service", "flags", "notes"])
            .expect_marker("service", Marker::new(PROJECT, ENV))
            .expect_marker("flags", Marker::new("another", ENV))
            .expect_no_marker(["notes"]),
        )
        .scenario(
            scenario("what cannot be read as a document is read-failed", true, |estate| {
                write(estate, "service", "{ not json");
                std::fs::create_dir_all(estate.join("flags.json")).unwrap();
            })
            .expect_unobserved_because("service", UnobservedReason::ReadFailed)
            .expect_unobserved_because("flags", UnobservedReason::ReadFailed),
        )
        .scenario(
            scenario("an unbound env", false, |_| {})
                .expect_unobserved_because("service", UnobservedReason::NoBinding)
                .expect_unobserved_because("flags", UnobservedReason::NoBinding),
        )
        .scenario(
            scenario("a root that is a file cannot be listed", true, |estate| {
                std::fs::write(estate, "not a directory").unwrap();
            })
            .expect_unobserved_because("service", UnobservedReason::ReadFailed)
            .expect_unobserved(["flags"]),
        );
    suite.run().unwrap();
}

#[test]
fn ownership_follows_the_marker_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let estate = dir.path().join("estate");
    write(&estate, "service", r#"{"port": 1, "_chant": {"stack": "docs-demo", "env": "docs"}}"#);
    write(&estate, "flags", r#"{"on": true, "_chant": {"stack": "docs-demo", "env": "prod"}}"#);
    let observation = bind(dir.path(), true).describe_resources(&[]).unwrap();
    use chant::observe::Ownership;
    assert_eq!(observation.resources["service"].ownership, Ownership::Owned);
    assert_eq!(observation.resources["flags"].ownership, Ownership::Foreign, "another env's marker is not ours");
}
