//! The dashboard's cost: `chant serve`'s estate page over a ledger of 100 ConvergeOps x 1,000
//! ticks each, against `operator status --json` of the same ledger, in the same run.
//!
//! Run with `cargo bench -p chant-e2e --bench serve` (release build). `CHANT_BENCH_REPS` sets the
//! number of repetitions (default 21). The ledgers (100 x 1,000 and 100 x 10 tick records, copies
//! of a real gated tick record of the fixture's `dash-converge`) are written with one
//! `git fast-import` in chant's shard layout and read back through `Ledger::read`.
//!
//! Each repetition, in alternating order: one `operator status --json` of the stock binary as a
//! child process (spawn to exit: what a person or a script pays for the same data), one
//! `GET /` with `Accept: application/json` and one `GET /` for HTML from a running stock
//! `chant serve` over a kept-alive loopback connection (request to last byte). It prints the
//! medians, the in-run ratios, and the resident memory (`VmRSS`, `VmHWM` from `/proc`) of the
//! server after the warm-up and after every request, over the big ledger and over a ledger
//! with a hundredth of its history, so growth with history shows.
//!
//! Then the env page, `/envs/estate`, of `e2e-bench-serve`: an env of 2,000 PostgreSQL tables
//! (on the test harness's throw-away cluster, created by a real `run estate-apply`) and 1,000
//! files, against `lifecycle diff estate --live --json` of the same binary as a child process, in
//! the same run. The page keeps an observation 15 s, so each timed request waits that out first
//! and observes afresh (what a person pays when opening the page); the answer within those 15 s
//! (the kept observation) is timed too. Served over a ledger of 10,000 ticks of the env's
//! ConvergeOp and over one of 100, whose servers' resident memory is read after every request.
//! `CHANT_BENCH_ENV_REPS` sets its repetitions (default 5). Then the graph page of the same env:
//! `/envs/estate/graph?live=1` (observed afresh at each request, laid out and drawn as SVG;
//! 3,000 boxes is past what `dot` is given, so the built-in layout) against `graph estate --live
//! --json` as a child process and against `lifecycle diff`, and the declared graph page.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;
use support::{fill_ledger, git, hermetic};

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-project");
const STOCK: &str = env!("CARGO_BIN_EXE_e2e-stock-chant");
const SERVE_BENCH: &str = env!("CARGO_BIN_EXE_e2e-bench-serve");

/// The env page's bench: its env's size (as `src/serve_bench.rs` declares it) and ledgers.
const TABLES: usize = 2_000;
const FILES: usize = 1_000;
const ENV_TICKS: usize = 10_000;
const ENV_SMALL_TICKS: usize = 100;
/// How long the env page keeps an observation (`chant::serve::env::FRESH_FOR`), and a margin.
const FRESH_FOR: Duration = Duration::from_millis(15_500);

const OPS: usize = 100;
const TICKS: usize = 1_000;
const SMALL_TICKS: usize = 10;

fn main() {
    let reps: usize = std::env::var("CHANT_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(21);
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // A real tick record to copy: the fixture's gated resource-mode tick.
    let seed = tmp.path().join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    git(&home, &seed, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(seed.join("chant.toml"), "[project]\nname = \"e2e\"\n").unwrap();
    git(&home, &seed, &["add", "chant.toml"]);
    git(&home, &seed, &["commit", "-q", "-m", "initial"]);
    let out = hermetic(PROJECT, &home, &seed).args(["tick", "dash-converge", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let template: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let ops: Vec<String> = (0..OPS).map(|o| format!("dash-{o:03}")).collect();
    let big = tmp.path().join("big");
    fill_ledger(&home, &big, &template, "dash", &ops, TICKS);
    let small = tmp.path().join("small");
    fill_ledger(&home, &small, &template, "dash", &ops, SMALL_TICKS);
    let setup = started.elapsed();

    let mut big_server = Server::start(&home, &big);
    let mut small_server = Server::start(&home, &small);
    // Warm-up: both answer, with every op.
    for server in [&big_server, &small_server] {
        let doc: serde_json::Value = serde_json::from_str(&server.get("application/json")).unwrap();
        let rows: usize = doc["members"][0]["envs"][0]["ops"].as_array().map_or(0, Vec::len);
        assert_eq!(rows, OPS, "{doc}");
    }
    let status = hermetic(STOCK, &home, &big).args(["operator", "status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["ops"].as_array().map_or(0, Vec::len), OPS);
    let rss_warm = (big_server.memory(), small_server.memory());

    let (mut cli, mut json, mut html, mut small_json) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        let time_cli = || {
            let t = Instant::now();
            let out = hermetic(STOCK, &home, &big).args(["operator", "status", "--json"]).output().unwrap();
            assert!(out.status.success() && !out.stdout.is_empty());
            t.elapsed()
        };
        let time_get = |server: &Server, accept: &str| {
            let t = Instant::now();
            let body = server.get(accept);
            assert!(!body.is_empty());
            t.elapsed()
        };
        if rep % 2 == 0 {
            cli.push(time_cli());
            json.push(time_get(&big_server, "application/json"));
            html.push(time_get(&big_server, "text/html"));
        } else {
            html.push(time_get(&big_server, "text/html"));
            json.push(time_get(&big_server, "application/json"));
            cli.push(time_cli());
        }
        small_json.push(time_get(&small_server, "application/json"));
    }
    let rss_end = (big_server.memory(), small_server.memory());
    big_server.stop();
    small_server.stop();

    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!(
        "serve benchmark, {build} build, {reps} interleaved repetitions (set-up {:.1} s, total {:.1} s)",
        setup.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "ledger: {OPS} ConvergeOps x {TICKS} ticks ({} tick records), and x {SMALL_TICKS} for the memory comparison",
        OPS * TICKS
    );
    println!();
    row("operator status --json (process, spawn to exit)", &cli);
    row("chant serve GET / (JSON), per request", &json);
    row("chant serve GET / (HTML), per request", &html);
    row("chant serve GET / (JSON), x10-tick ledger", &small_json);
    println!();
    println!("  {:<52} {:>8.2}x", "serve JSON / status --json (medians)", ms(median(&json)) / ms(median(&cli)));
    println!("  {:<52} {:>8.2}x", "serve HTML / status --json (medians)", ms(median(&html)) / ms(median(&cli)));
    println!(
        "  {:<52} {:>8.2}x",
        "serve JSON, 1,000 / 10 ticks per op (medians)",
        ms(median(&json)) / ms(median(&small_json))
    );
    println!();
    let mb = |kb: u64| kb as f64 / 1024.0;
    for (name, (warm, end)) in [("1,000 ticks/op", (rss_warm.0, rss_end.0)), ("10 ticks/op", (rss_warm.1, rss_end.1))] {
        println!(
            "  chant serve RSS, {name:<15} after warm-up {:>6.1} MiB, after {} requests {:>6.1} MiB (peak {:.1} MiB)",
            mb(warm.0),
            reps * 2 + 1,
            mb(end.0),
            mb(end.1)
        );
    }
    println!(
        "  {:<52} {:>8.2}x",
        "RSS after the run, 1,000 / 10 ticks per op",
        rss_end.0.0 as f64 / rss_end.1.0.max(1) as f64
    );
    println!();
    env_page(&home, tmp.path());
}

/// The env page of 2,000 tables and 1,000 files against `lifecycle diff --live --json`.
fn env_page(home: &Path, tmp: &Path) {
    let reps: usize = std::env::var("CHANT_BENCH_ENV_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let started = Instant::now();
    let pg = chant_testkit::postgres::cluster();
    let db = pg.database("servebench");
    let dsn = pg.dsn(&db);
    let vars = [("BENCH_DSN", dsn.as_str())];
    let root = tmp.join("estate-root");
    let toml = format!(
        "[project]\nname = \"servebench\"\n\n[env.estate]\nfiles_root = \"{}\"\npostgres_dsn_var = \"BENCH_DSN\"\n",
        root.display()
    );
    // The estate, created by a real apply; then a real tick of it to copy into the ledgers.
    let seed = support::project(home, &tmp.join("estate-seed"), &toml);
    let run = |dir: &Path, args: &[&str]| {
        let out = hermetic(SERVE_BENCH, home, dir).envs(vars).args(args).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{args:?}: {stdout}{stderr}");
        out.stdout
    };
    run(&seed, &["run", "estate-apply"]);
    let tick = run(&seed, &["tick", "estate-converge", "--json"]);
    let template: serde_json::Value = serde_json::from_slice(&tick).unwrap();
    let ops = vec!["estate-converge".to_owned()];
    let big = tmp.join("estate-big");
    fill_ledger(home, &big, &template, "estate", &ops, ENV_TICKS);
    let small = tmp.join("estate-small");
    fill_ledger(home, &small, &template, "estate", &ops, ENV_SMALL_TICKS);
    for dir in [&big, &small] {
        std::fs::write(dir.join("chant.toml"), &toml).unwrap();
    }
    let setup = started.elapsed();

    let servers =
        [Server::start_with(SERVE_BENCH, home, &big, &vars), Server::start_with(SERVE_BENCH, home, &small, &vars)];
    let page = |server: &Server, accept: &str| {
        let t = Instant::now();
        let body = server.get_path("/envs/estate", accept);
        (t.elapsed(), body)
    };
    // Warm-up: each observes once; every resource is listed, in sync after the apply.
    for server in &servers {
        let doc: serde_json::Value = serde_json::from_str(&page(server, "application/json").1).unwrap();
        let rows = doc["resources"].as_array().map_or(0, Vec::len);
        assert!(rows >= TABLES + FILES, "{rows} resources: {}", doc["counts"]);
        // Applied by `estate-apply` (whose record is on the seed's ledger, not these): nothing
        // drifts, nothing is missing or unread.
        for verdict in ["drifted", "missing", "unobserved", "orphaned", "unowned"] {
            assert!(doc["counts"].get(verdict).is_none(), "{verdict}: {}", doc["counts"]);
        }
    }
    let cli = || {
        let t = Instant::now();
        let out = run(&big, &["lifecycle", "diff", "estate", "--live", "--json"]);
        assert!(out.len() > 100_000, "the whole document");
        t.elapsed()
    };
    cli();
    let rss_warm = (servers[0].memory(), servers[1].memory());
    let (mut diffs, mut pages, mut small_pages, mut kept, mut html) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut observed = Instant::now();
    for rep in 0..reps {
        // The observation kept by the last request has expired: this request observes afresh.
        std::thread::sleep(FRESH_FOR.saturating_sub(observed.elapsed()));
        if rep % 2 == 0 {
            diffs.push(cli());
            pages.push(page(&servers[0], "application/json").0);
        } else {
            pages.push(page(&servers[0], "application/json").0);
            diffs.push(cli());
        }
        small_pages.push(page(&servers[1], "application/json").0);
        observed = Instant::now();
        // Both servers answer the same requests, so their memory differs by the ledger alone.
        kept.push(page(&servers[0], "application/json").0);
        page(&servers[1], "application/json");
        html.push(page(&servers[0], "text/html").0);
        page(&servers[1], "text/html");
    }
    let rss_end = (servers[0].memory(), servers[1].memory());

    // The graph page, on the big ledger's server (it reads no tick): live (observed each time
    // it is asked for, never kept) against `graph --live --json` of the same binary, in turns;
    // declared (no observation).
    let cli_graph = || {
        let t = Instant::now();
        let out = run(&big, &["graph", "estate", "--live", "--json"]);
        assert!(out.len() > 100_000, "the whole graph");
        t.elapsed()
    };
    let graph_page = |path: &str| {
        let t = Instant::now();
        let body = servers[0].get_path(path, "text/html");
        assert!(body.contains("<svg"), "{path}: the graph is drawn");
        t.elapsed()
    };
    cli_graph();
    graph_page("/envs/estate/graph?live=1");
    let (mut graphs_cli, mut graphs_live, mut graphs_declared) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        if rep % 2 == 0 {
            graphs_cli.push(cli_graph());
            graphs_live.push(graph_page("/envs/estate/graph?live=1"));
        } else {
            graphs_live.push(graph_page("/envs/estate/graph?live=1"));
            graphs_cli.push(cli_graph());
        }
        graphs_declared.push(graph_page("/envs/estate/graph"));
    }
    let rss_graph = servers[0].memory();
    for mut server in servers {
        server.stop();
    }

    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!(
        "env page benchmark, {build} build, {reps} repetitions, each after the kept observation expired (set-up {:.1} s, total {:.1} s)",
        setup.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "env: {TABLES} PostgreSQL tables + {FILES} files; ledgers of {ENV_TICKS} and {ENV_SMALL_TICKS} ticks of its ConvergeOp"
    );
    println!();
    row("lifecycle diff --live --json (process, spawn to exit)", &diffs);
    row("GET /envs/estate (JSON), observing afresh", &pages);
    row("GET /envs/estate (JSON), 100-tick ledger, afresh", &small_pages);
    row("GET /envs/estate (JSON), kept observation", &kept);
    row("GET /envs/estate (HTML), kept observation", &html);
    row("graph estate --live --json (process, spawn to exit)", &graphs_cli);
    row("GET /envs/estate/graph?live=1 (HTML, SVG)", &graphs_live);
    row("GET /envs/estate/graph (HTML, SVG), declared", &graphs_declared);
    println!();
    let ratio = |name: &str, a: &[Duration], b: &[Duration]| {
        println!("  {name:<52} {:>8.2}x", ms(median(a)) / ms(median(b)));
    };
    ratio("env page / lifecycle diff --json (medians)", &pages, &diffs);
    ratio("env page, 10,000 / 100 ticks (medians)", &pages, &small_pages);
    ratio("live graph page / lifecycle diff --json (medians)", &graphs_live, &diffs);
    ratio("live graph page / graph --live --json (medians)", &graphs_live, &graphs_cli);
    println!();
    let mb = |kb: u64| kb as f64 / 1024.0;
    // Requests each server answered before its memory was read: the env page three times a
    // repetition, and its warm-up.
    let requests = reps * 3 + 1;
    for (name, (warm, end)) in [("10,000 ticks", (rss_warm.0, rss_end.0)), ("100 ticks", (rss_warm.1, rss_end.1))] {
        println!(
            "  env page server RSS, {name:<13} after warm-up {:>6.1} MiB, after {requests} requests {:>6.1} MiB (peak {:.1} MiB)",
            mb(warm.0),
            mb(end.0),
            mb(end.1)
        );
    }
    println!(
        "  {:<52} {:>8.2}x",
        "RSS after the env pages, 10,000 / 100 ticks",
        rss_end.0.0 as f64 / rss_end.1.0.max(1) as f64
    );
    println!(
        "  graph page server RSS, 10,000 ticks, after {} graph pages {:>6.1} MiB (peak {:.1} MiB)",
        reps * 2 + 1,
        mb(rss_graph.0),
        mb(rss_graph.1)
    );
}

/// A running `chant serve` and a kept-alive client.
struct Server {
    child: Child,
    base: String,
    agent: ureq::Agent,
}

impl Server {
    fn start(home: &Path, dir: &Path) -> Server {
        Server::start_with(STOCK, home, dir, &[])
    }

    /// `program serve` in `dir` with `vars` set.
    fn start_with(program: &str, home: &Path, dir: &Path, vars: &[(&str, &str)]) -> Server {
        let mut child = hermetic(program, home, dir)
            .envs(vars.iter().copied())
            .args(["serve", "--addr", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Outside a project the stock binary first notes that it serves the ledger itself.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        let line = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "no listening line: {seen}");
            if line.contains("http://") {
                break line;
            }
            seen.push_str(&line);
        };
        let rest = line.split_once("http://").unwrap().1;
        let base = format!("http://{}", rest.split_once('/').unwrap().0);
        let agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(120))).build().into();
        Server { child, base, agent }
    }

    fn get(&self, accept: &str) -> String {
        self.get_path("/", accept)
    }

    fn get_path(&self, path: &str, accept: &str) -> String {
        self.agent
            .get(&format!("{}{path}", self.base))
            .header("Accept", accept)
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap()
    }

    /// `(VmRSS, VmHWM)` in KiB.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap()
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(samples: &[Duration]) -> Duration {
    let mut s = samples.to_vec();
    s.sort();
    s[s.len() / 2]
}

fn row(name: &str, samples: &[Duration]) {
    let min = samples.iter().min().copied().unwrap_or_default();
    println!("  {name:<52} median {:>8.2} ms   min {:>8.2} ms", ms(median(samples)), ms(min));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
