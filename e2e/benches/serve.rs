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

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;
use support::{fill_ledger, git, hermetic};

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-project");
const STOCK: &str = env!("CARGO_BIN_EXE_e2e-stock-chant");

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
}

/// A running `chant serve` and a kept-alive client.
struct Server {
    child: Child,
    base: String,
    agent: ureq::Agent,
}

impl Server {
    fn start(home: &Path, dir: &Path) -> Server {
        let mut child = hermetic(STOCK, home, dir)
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
        self.agent
            .get(&format!("{}/", self.base))
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
