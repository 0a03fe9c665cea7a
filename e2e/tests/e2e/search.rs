//! `search`: the envs' live estates by kind or by name glob, through the project binary on real
//! files roots and on a real PostgreSQL database (the test harness's throw-away cluster). What
//! could not be read is listed as not observed, never as no match (exit 4 when nothing else
//! matched); `--ambient` adds what nothing declares, and without it the lexicon that
//! reports such resources possible is named.

use serde_json::Value;

use super::serve_graph::{pgbench_database_with, pgbench_sandbox};
use super::support::{Sandbox, config_with_roots};

fn names(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .filter_map(|m| m["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn search_finds_by_kind_and_glob_says_what_it_could_not_read_and_adds_ambient_on_request() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    std::fs::write(sandbox.path("estates/site/stray.txt"), "nobody declared me\n").unwrap();

    // By kind, in one env: every declared file, managed and owned; the stray file is not in it,
    // and the answer says that --ambient would add such files.
    let out = sandbox.project(&["search", "file", "--env", "site", "--json"], &[]);
    let doc = out.code(0).json();
    assert_eq!(doc["matchedAs"], "kind", "{doc}");
    let found = names(&doc, "matches");
    for f in ["app.conf", "motd.txt", "bin/start.sh", "old.conf"] {
        assert!(found.contains(&f.to_owned()), "{f} in {found:?}");
    }
    assert!(!found.contains(&"stray.txt".to_owned()), "{found:?}");
    assert!(doc["matches"].as_array().unwrap().iter().all(|m| m["origin"] == "managed" && m["env"] == "site"));
    assert_eq!(doc["ambientHints"][0]["lexicon"], "files", "{doc}");
    let text = sandbox.project(&["search", "file", "--env", "site"], &[]);
    assert!(
        text.code(0).stdout.contains("note: files in site reports ambient file possible; --ambient adds"),
        "{}",
        text.all()
    );

    // --ambient: the stray file, marked ambient.
    let doc = sandbox.project(&["search", "file", "--env", "site", "--ambient", "--json"], &[]).code(0).json();
    let stray: Vec<&Value> = doc["matches"].as_array().unwrap().iter().filter(|m| m["name"] == "stray.txt").collect();
    assert_eq!(stray.len(), 1, "{doc}");
    assert_eq!((stray[0]["origin"].as_str(), stray[0]["kind"].as_str()), (Some("ambient"), Some("file")));

    // By name glob (`*` crosses `/`).
    let doc = sandbox.project(&["search", "*.conf", "--env", "site", "--json"], &[]).code(0).json();
    assert_eq!(doc["matchedAs"], "name");
    let mut found = names(&doc, "matches");
    found.sort();
    assert_eq!(found, ["app.conf", "old.conf"]);
    let doc = sandbox.project(&["search", "bin/*", "--env", "site", "--json"], &[]).code(0).json();
    assert_eq!(names(&doc, "matches"), ["bin/start.sh"]);

    // Nothing matches and everything was read: exit 1.
    let out = sandbox.project(&["search", "nothing-like-this*", "--env", "site"], &[]);
    assert!(out.code(1).stdout.contains("nothing found"), "{}", out.all());

    // An env whose root is not bound: its files are not observed, so "a.conf" is no answer (4),
    // and the cause is said once for the env's lexicon.
    let out = sandbox.project(&["search", "a.conf", "--env", "blind"], &[]);
    out.code(4);
    assert!(out.stdout.contains("not observed: blind files a.conf (file)"), "{}", out.all());
    assert!(out.stdout.contains("binds no files root"), "{}", out.all());
    assert!(!out.stdout.contains("  nothing found\n"), "{}", out.all());

    // Across every env: found in site (exit 0), the unbound envs listed as not observed, one line
    // each however many files they declare.
    let out = sandbox.project(&["search", "file"], &[]);
    out.code(0);
    let bulk: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not observed: bulk files")).collect();
    assert_eq!(bulk.len(), 1, "{}", out.all());
    assert!(bulk[0].contains("and 99") || bulk[0].contains("more"), "{}", bulk[0]);
    let doc = sandbox.project(&["search", "file", "--json"], &[]).code(0).json();
    let not_observed = doc["notObserved"].as_array().unwrap();
    assert!(not_observed.iter().filter(|n| n["env"] == "bulk").count() >= 1000, "every unread file is in the JSON");
}

#[test]
fn search_refuses_a_bad_glob_an_undeclared_env_and_the_stock_binary_outside_a_project() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["search", "app.[", "--env", "site"], &[]);
    assert!(out.code(2).stderr.contains("\"app.[\" is not a name glob"), "{}", out.all());
    let out = sandbox.project(&["search", "file", "--env", "sitee"], &[]);
    assert!(out.code(2).stderr.contains("did you mean `site`?"), "{}", out.all());
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sandbox.run_in(super::support::STOCK, elsewhere.path(), &["search", "file"], &[]);
    assert!(out.code(2).stderr.contains("the stock chant binary carries no env declarations"), "{}", out.all());
}

/// A database holding pgbench's tables with their foreign keys, `public.orders` (declared) and
/// `public.stray_audit`, which nothing declares; returns its DSN.
fn pgbench_with_a_stray_table() -> String {
    pgbench_database_with(
        "search_pg",
        "CREATE TABLE public.stray_audit (id integer); ALTER TABLE public.stray_audit OWNER TO chant_app;",
    )
}

#[test]
fn search_reads_a_real_postgres_estate_by_kind_and_glob_and_says_when_it_could_not() {
    let dsn = pgbench_with_a_stray_table();
    let sandbox = pgbench_sandbox();
    let vars = [("E2E_PGBENCH_DSN", dsn.as_str())];
    let origin = |doc: &Value, name: &str| -> String {
        let hit = doc["matches"].as_array().unwrap().iter().find(|m| m["name"] == name);
        hit.unwrap_or_else(|| panic!("{name} not found: {doc}"))["origin"].as_str().unwrap().to_owned()
    };

    // By kind: the declared tables are managed; the table beside them, which nothing declares,
    // is found by the same read and said to be undeclared, never managed.
    let doc = sandbox.project(&["search", "table", "--env", "pgbench", "--json"], &vars).code(0).json();
    assert_eq!(doc["matchedAs"], "kind", "{doc}");
    let mut found = names(&doc, "matches");
    found.sort();
    let tables = ["public.orders", "public.pgbench_accounts", "public.pgbench_branches", "public.pgbench_history"];
    let mut want: Vec<String> = tables.iter().map(|t| (*t).to_owned()).collect();
    want.extend(["public.pgbench_tellers".to_owned(), "public.stray_audit".to_owned()]);
    assert_eq!(found, want, "{doc}");
    for t in tables {
        assert_eq!(origin(&doc, t), "managed", "{doc}");
    }
    assert_eq!(origin(&doc, "public.stray_audit"), "undeclared", "{doc}");
    assert!(doc["matches"].as_array().unwrap().iter().all(|m| m["kind"] == "table" && m["lexicon"] == "postgres"));
    assert_eq!(doc["ambientHints"][0]["lexicon"], "postgres", "{doc}");
    let out = sandbox.project(&["search", "table", "--env", "pgbench"], &vars);
    let text = &out.code(0).stdout;
    assert!(text.contains("pgbench postgres public.stray_audit (table) [undeclared, "), "{text}");
    assert!(text.contains("pgbench postgres public.pgbench_accounts (table) [managed, "), "{text}");

    // By name glob: the table, its declared key column and the columns the declaration leaves
    // out, each with its kind.
    let doc = sandbox.project(&["search", "*accounts*", "--env", "pgbench", "--json"], &vars).code(0).json();
    assert_eq!(doc["matchedAs"], "name", "{doc}");
    assert_eq!(origin(&doc, "public.pgbench_accounts"), "managed", "{doc}");
    assert_eq!(origin(&doc, "public.pgbench_accounts.abalance"), "undeclared", "{doc}");
    assert!(names(&doc, "matches").iter().all(|n| n.contains("accounts")), "{doc}");

    // A server that refuses the login: nothing is an answer (exit 4), each declared table is
    // listed as not observed with the cause.
    let refused = [("E2E_PGBENCH_DSN", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")];
    let out = sandbox.project(&["search", "table", "--env", "pgbench"], &refused);
    out.code(4);
    assert!(out.stdout.contains("0 found, 5 not observed"), "{}", out.all());
    assert!(out.stdout.contains("not observed: pgbench postgres public.orders (table)"), "{}", out.all());
    assert!(out.stdout.contains("this is not an answer"), "{}", out.all());
}
