//! `chant serve`'s graph page and the op page's history charts, end to end: the project binary
//! serves `/envs/pgbench/graph` over pgbench's own schema on the throw-away PostgreSQL cluster
//! (`pgbench -i --foreign-keys`), declared and live (`?live=1`); its JSON is exactly
//! `graph pgbench [--live] --json`'s line, its HTML holds an `<svg>` with one arrow per foreign
//! key, laid out by Graphviz's `dot` when it is on `PATH` and by the built-in layout when it is
//! not, and lists the dangling reference; the op page charts each tick shown, its figures the
//! ledger's; a real headless browser loads both (screenshots kept under the target directory),
//! and a foreign `Host` is refused on both.

use std::collections::BTreeSet;
use std::time::Duration;

use chant_testkit::postgres::cluster;
use serde_json::Value;

use super::serve::{Served, TICK_AT, assert_no_inline_script, chromium, estate_sandbox, get_as, screenshot_dir};
use super::support::{PROJECT, STOCK, Sandbox, converge_key};

/// The foreign keys `pgbench -i --foreign-keys` adds, as graph edges.
const PGBENCH_EDGES: [(&str, &str); 5] = [
    ("postgres:public.pgbench_accounts", "postgres:public.pgbench_branches"),
    ("postgres:public.pgbench_history", "postgres:public.pgbench_accounts"),
    ("postgres:public.pgbench_history", "postgres:public.pgbench_branches"),
    ("postgres:public.pgbench_history", "postgres:public.pgbench_tellers"),
    ("postgres:public.pgbench_tellers", "postgres:public.pgbench_branches"),
];

/// A database `name` holding pgbench's tables with their foreign keys, and `public.orders` whose
/// key points into `secret`, a schema the app role may not read, then `more` run as the
/// superuser; returns its DSN.
pub(crate) fn pgbench_database_with(name: &str, more: &str) -> String {
    let pg = cluster();
    let db = pg.database(name);
    pg.pgbench_init_with(&db, &["--foreign-keys"]);
    pg.as_superuser(
        &db,
        &format!(
            "CREATE SCHEMA secret; \
             CREATE TABLE secret.customers (id bigint PRIMARY KEY); \
             CREATE TABLE public.orders (customer_id bigint REFERENCES secret.customers (id)); \
             ALTER TABLE public.orders OWNER TO chant_app; {more}"
        ),
    );
    pg.dsn(&db)
}

fn pgbench_database() -> String {
    pgbench_database_with("serve_graph", "")
}

/// A project whose env `pgbench` reads the database `E2E_PGBENCH_DSN` names.
pub(crate) fn pgbench_sandbox() -> Sandbox {
    Sandbox::new("[project]\nname = \"e2e\"\n\n[env.pgbench]\npostgres_dsn_var = \"E2E_PGBENCH_DSN\"\n")
}

/// The reference edges of a graph document.
fn references(doc: &Value) -> BTreeSet<(String, String)> {
    doc["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["relation"] == "reference")
        .map(|e| (e["from"].as_str().unwrap().to_owned(), e["to"].as_str().unwrap().to_owned()))
        .collect()
}

fn pgbench_edges() -> BTreeSet<(String, String)> {
    PGBENCH_EDGES.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

/// The arrows an SVG draws, as (from, to).
fn arrows(page: &str) -> BTreeSet<(String, String)> {
    page.split(r#"<g class="edge" data-relation="reference" data-from=""#)
        .skip(1)
        .map(|rest| {
            let (from, rest) = rest.split_once('"').unwrap();
            let to = rest.split_once(r#"data-to=""#).unwrap().1.split_once('"').unwrap().0;
            (from.to_owned(), to.to_owned())
        })
        .collect()
}

fn dot_on_path() -> bool {
    std::process::Command::new("dot")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_graph_page_draws_pgbench_foreign_keys_declared_and_live_as_the_cli_prints_them() {
    let dsn = pgbench_database();
    let sandbox = pgbench_sandbox();
    let vars = [("E2E_PGBENCH_DSN", dsn.as_str())];
    let served = Served::start_with(&sandbox, PROJECT, &vars);

    // JSON: exactly the command's document, declared and live.
    let declared = served.json("/envs/pgbench/graph");
    let cli = sandbox.project(&["graph", "pgbench", "--json"], &vars).code(0).json();
    assert_eq!(declared, cli, "the declared graph is `graph pgbench --json`'s document");
    assert_eq!(declared["source"], "declared");
    let live = served.json("/envs/pgbench/graph?live=1");
    let cli_live = sandbox.project(&["graph", "pgbench", "--live", "--json"], &vars).code(0).json();
    assert_eq!(live, cli_live, "the live graph is `graph pgbench --live --json`'s document");
    assert_eq!(live["source"], "live");
    assert_eq!(served.json("/envs/pgbench/graph?live=0"), declared);
    for doc in [&declared, &live] {
        assert_eq!(references(doc), pgbench_edges(), "{doc}");
        let dangling: Vec<(&str, &str)> = doc["dangling"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["from"].as_str().unwrap(), d["target"].as_str().unwrap()))
            .collect();
        assert_eq!(dangling, [("postgres:public.orders", "secret.customers")], "{doc}");
    }

    // HTML: an inline SVG with one arrow per foreign key, the dangling reference as text.
    let layout = if dot_on_path() { "graphviz" } else { "built-in" };
    for (path, source) in [("/envs/pgbench/graph", "declared"), ("/envs/pgbench/graph?live=1", "live")] {
        let page = served.html(path);
        assert!(page.contains("<svg class=\"graph\""), "{path}: {page}");
        assert_eq!(arrows(&page), pgbench_edges(), "{path}: {page}");
        assert!(page.contains(&format!("Graph of env pgbench: <code>{source}</code>")), "{page}");
        assert!(page.contains(&format!(r#"data-layout="{layout}""#)), "{path}: {page}");
        let dangling = page.split("<table class=\"dangling\">").nth(1).unwrap_or_default();
        assert!(dangling.contains("<code>secret.customers</code>"), "{path}: {page}");
        assert!(dangling.contains(r#"<tr data-reason="not-observed">"#), "{path}: {page}");
        assert_no_inline_script(path, &page);
    }

    // Bad input: an unknown ?live= value is refused by name; an undeclared env is a 404.
    let bad = served.get("/envs/pgbench/graph?live=yes", "application/json");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("?live=1"), "{}", bad.body);
    assert_eq!(served.get("/envs/no-such-env/graph", "application/json").status, 404);

    // A foreign Host is refused on the graph page, declared and live.
    let port = served.base.rsplit_once(':').unwrap().1;
    for path in ["/envs/pgbench/graph", "/envs/pgbench/graph?live=1"] {
        let (status, body) = get_as(&served.base, path, &format!("evil.example:{port}"));
        assert_eq!(status, 421, "{path}: {body}");
        let (status, _) = get_as(&served.base, path, &format!("localhost:{port}"));
        assert_eq!(status, 200, "{path}");
    }

    // A real browser: the SVG is in the DOM it built, with every arrow; screenshots kept.
    let shots = screenshot_dir();
    for (name, path) in [("graph", "/envs/pgbench/graph"), ("graph-live", "/envs/pgbench/graph?live=1")] {
        let url = format!("{}{path}", served.base);
        let dom = chromium(&sandbox, &["--dump-dom"], &url);
        assert!(dom.contains("<svg class=\"graph\""), "{name}: {dom}");
        assert_eq!(arrows(&dom), pgbench_edges(), "{name}: {dom}");
        assert_no_inline_script(name, &dom);
        let shot = shots.join(format!("{name}.png"));
        let _ = std::fs::remove_file(&shot);
        let arg = format!("--screenshot={}", shot.display());
        chromium(&sandbox, &[&arg, "--window-size=1280,540", "--hide-scrollbars"], &url);
        let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", shot.display()));
        assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000, "{name}: a real picture at {}", shot.display());
        eprintln!("screenshot of {path}: {}", shot.display());
    }
    drop(served);

    // Without `dot` on PATH the built-in layout draws the same arrows.
    let served = Served::start_with(&sandbox, PROJECT, &[("E2E_PGBENCH_DSN", dsn.as_str()), ("PATH", "/nonexistent")]);
    let page = served.html("/envs/pgbench/graph");
    assert!(page.contains(r#"data-layout="built-in""#), "{page}");
    assert!(page.contains("built-in layered layout (dot is not on PATH)"), "{page}");
    assert_eq!(arrows(&page), pgbench_edges(), "{page}");
}

#[test]
fn the_op_page_charts_each_tick_shown_with_the_ledgers_figures() {
    let sandbox = estate_sandbox();
    let served = Served::start_with(&sandbox, PROJECT, &[]);
    let records = sandbox.values(&converge_key("dash", "dash-converge"));
    assert_eq!(records.len(), TICK_AT.len());

    // JSON: one point per tick shown, oldest first, its figures the tick record's.
    let op = served.json("/ops/dash/dash-converge");
    let history = op["history"].as_array().unwrap();
    assert_eq!(history.len(), records.len(), "{op}");
    for (point, record) in history.iter().zip(&records) {
        assert_eq!(point["id"], record["id"]);
        assert_eq!(point["drifted"], record["summary"]["drifted"]);
        assert_eq!(point["remediated"], record["summary"]["remediated"]);
        let at = |k: &str| chant::clock::parse(record[k].as_str().unwrap()).unwrap().as_millisecond();
        assert_eq!(point["durationMs"], at("timestamp") - at("startedAt"), "{point}");
        assert_eq!(point["health"], "gated", "each of these ticks stopped at the gate");
    }
    assert_eq!(served.json("/ops/dash/dash-converge?limit=2")["history"].as_array().unwrap().len(), 2);

    // HTML, as a real browser builds it: one mark per tick in each chart, the figures as text.
    let url = format!("{}/ops/dash/dash-converge", served.base);
    let dom = chromium(&sandbox, &["--dump-dom"], &url);
    let chart = |kind: &str| {
        let start = dom.find(&format!(r#"data-chart="{kind}""#)).unwrap_or_else(|| panic!("no {kind} chart: {dom}"));
        let rest = &dom[start..];
        rest[..rest.find("</svg>").unwrap()].to_owned()
    };
    for kind in ["health", "duration", "drifted", "remediated"] {
        assert_eq!(chart(kind).matches(r#"class="mark""#).count(), records.len(), "{kind}: {dom}");
    }
    let drifted = records[0]["summary"]["drifted"].as_u64().unwrap();
    assert!(drifted > 0, "the fixture's web service is drifted");
    let figure = format!(r##"fill="#1d2330">{drifted}</text>"##);
    assert_eq!(chart("drifted").matches(&figure).count(), records.len(), "{dom}");
    assert!(chart("health").contains(r#"data-health="gated""#), "{dom}");
    assert!(chart("health").contains("aria-label=\"Health over 3 tick(s), oldest first: 3 gated\""), "{dom}");
    assert!(chart("duration").contains(&format!("<title>tick {} at ", records[0]["id"].as_str().unwrap())));
    assert!(dom.contains("<summary>The same figures as a table</summary>"), "{dom}");
    let shot = screenshot_dir().join("op-history.png");
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    chromium(&sandbox, &[&arg, "--window-size=1280,470", "--hide-scrollbars"], &url);
    assert!(std::fs::read(&shot).is_ok_and(|png| png.starts_with(b"\x89PNG")), "{}", shot.display());
    eprintln!("screenshot of the op page's history: {}", shot.display());

    // A foreign Host is refused on the op page.
    let port = served.base.rsplit_once(':').unwrap().1;
    assert_eq!(get_as(&served.base, "/ops/dash/dash-converge", &format!("evil.example:{port}")).0, 421);
    drop(served);

    // The stock binary charts the ledger's ticks as well, and says why it draws no graph.
    let stock = Served::start_with(&sandbox, STOCK, &[]);
    let op = stock.json("/ops/dash/dash-converge");
    assert_eq!(op["history"].as_array().unwrap().len(), records.len(), "{op}");
    let refused = stock.get("/envs/site/graph", "application/json");
    assert_eq!(refused.status, 404, "{}", refused.body);
    assert!(refused.body.contains("cannot diff an env live or draw its graph"), "{}", refused.body);
}

/// A listener on 127.0.0.1 that accepts every connection and answers nothing. Returns its port.
fn silent() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    port
}

#[test]
fn live_graphs_share_the_live_diffs_bound_and_never_hold_the_other_pages() {
    let sandbox = pgbench_sandbox();
    // A database that accepts TCP and never answers the login, with a long login bound, so the
    // live graphs are surely in flight while the other pages are asked for.
    let dsn = format!("postgres://app@127.0.0.1:{}/app?connect_timeout=20", silent());
    let served = Served::start_with(&sandbox, PROJECT, &[("E2E_PGBENCH_DSN", dsn.as_str())]);
    let host = served.base.trim_start_matches("http://").to_owned();
    // Four live graphs at once, as four browser tabs would ask: two are admitted, two refused
    // at once, without waiting on the database.
    let (tx, answers) = std::sync::mpsc::channel();
    for _ in 0..4 {
        let (tx, base, host) = (tx.clone(), served.base.clone(), host.clone());
        std::thread::spawn(move || {
            let _ = tx.send(get_as(&base, "/envs/pgbench/graph?live=1", &host));
        });
    }
    for _ in 0..2 {
        let (status, body) =
            answers.recv_timeout(Duration::from_secs(15)).expect("the graphs past the limit were not refused");
        assert_eq!(status, 503, "{body}");
        assert!(body.contains("live diffs are running already (a live graph counts as one)"), "{body}");
    }
    assert_eq!(get_as(&served.base, "/envs/pgbench/diff", &host).0, 503, "a live diff shares the bound");
    // Meanwhile the other pages answer, the declared graph too (it observes nothing).
    assert_eq!(get_as(&served.base, "/", &host).0, 200);
    let (status, body) = get_as(&served.base, "/envs/pgbench/graph", &host);
    assert_eq!(status, 200, "{body}");
    assert!(answers.try_recv().is_err(), "the admitted live graphs were still waiting on the login bound");
    // The admitted ones end within the login bound: nothing observed, and the page says why.
    for _ in 0..2 {
        let (status, body) = answers.recv_timeout(Duration::from_secs(200)).expect("a live graph never ended");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("<h2>Not observed</h2>"), "{body}");
        assert!(body.contains("did not answer the login within 20s"), "{body}");
    }
}
