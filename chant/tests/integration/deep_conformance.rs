//! The deep-read conformance checks on both shipped lexicons with a deep read, on real
//! substrates: files (no field owners) and PostgreSQL (the table owner for every path), each
//! converged (nothing drifts, no declared path pruned) and then with a hand edit.

use chant::lexicon::files::{DocumentFormat, FilesDeclaration, FilesLexicon};
use chant::lexicon::postgres::{Column, DeleteMode, Index, PostgresDeclaration, PostgresLexicon, Table};
use chant::observe::deep::conformance::{Expect, check};
use chant::observe::{LastApply, Lexicon};

use super::postgres_cluster::cluster;

#[test]
fn files_keep_the_deep_contract_converged_and_edited() {
    let root = tempfile::tempdir().unwrap();
    let declaration = FilesDeclaration::new()
        .file("a.conf", "a = 1\n", 0o644)
        .document("b.json", DocumentFormat::Json, "{\"k\": [1, 2], \"o\": {\"x\": \"y\"}}\n", 0o600)
        .document("c.toml", DocumentFormat::Toml, "[server]\nport = 80\n", 0o644);
    let lexicon = FilesLexicon::new("e", Some(root.path().to_path_buf()), declaration);
    lexicon.apply().unwrap();
    let declared = lexicon.declared().unwrap();
    check(&lexicon, &declared, Expect { field_owners: false, converged: true }).unwrap();
    std::fs::write(root.path().join("c.toml"), "[server]\nport = 81\nextra = true\n").unwrap();
    check(&lexicon, &declared, Expect { field_owners: false, converged: false }).unwrap();
    // The same checks catch a converged claim that does not hold.
    let errors = check(&lexicon, &declared, Expect { field_owners: false, converged: true }).unwrap_err();
    assert_eq!(errors, ["c.toml: drifts in a converged scenario: document.server.port"]);
    let errors = check(&lexicon, &declared, Expect { field_owners: true, converged: false }).unwrap_err();
    assert!(errors.iter().any(|e| e.contains("no field owners from a lexicon that declares them")), "{errors:?}");
    assert!(lexicon.substrate_written_paths().contains(&"uid"));
}

#[test]
fn postgres_keeps_the_deep_contract_converged_and_edited() {
    let c = cluster();
    let db = c.database("deep_conformance");
    let declaration = PostgresDeclaration::new().table(
        Table::new("app", "t")
            .column(Column::new("id", "bigint").not_null())
            .column(Column::new("v", "text").comment("value"))
            .index(Index::new("t_v_idx", ["v"]).unique()),
    );
    let lexicon = PostgresLexicon::new("e", "p", declaration)
        .with_binding(Some("DSN".into()), Some(c.dsn(&db)))
        .with_last_apply(LastApply::recorded(["app.t"]));
    lexicon.apply(DeleteMode::Never).unwrap();
    let declared = lexicon.declared();
    check(&lexicon, &declared, Expect { field_owners: true, converged: true }).unwrap();
    c.as_app(&db, "ALTER TABLE app.t ADD COLUMN w integer; COMMENT ON COLUMN app.t.v IS 'changed'");
    check(&lexicon, &declared, Expect { field_owners: true, converged: false }).unwrap();
    let errors = check(&lexicon, &declared, Expect { field_owners: false, converged: false }).unwrap_err();
    assert!(errors.iter().any(|e| e.contains("field owners returned by a lexicon that declares none")), "{errors:?}");
    assert!(lexicon.substrate_written_paths().is_empty());
}
