//! `chant serve` end to end: the project binary and the stock binary serve the dashboard over a
//! ledger written by real ticks, on a port of 127.0.0.1 the system chose; every route is asked
//! over real HTTP for JSON and for HTML, and the pages are loaded in a real headless browser
//! (Debian's `chromium`), whose DOM is read back and whose screenshots are written under the
//! target directory for people to look at.
//!
//! The JSON is held to the commands it mirrors: each estate row is `operator status --json`'s
//! row plus `health` and `ageSeconds`, and a live diff is `lifecycle diff --live --json`'s whole
//! line.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::operator::Running;
use crate::support::{PROJECT, STOCK, Sandbox, config_with_roots};

/// Every clock read of the ticks and of the server: fixed, so ages and lease liveness agree.
pub(crate) const TICK_AT: [&str; 3] =
    ["2026-03-01T10:00:00.000Z", "2026-03-01T10:05:00.000Z", "2026-03-01T10:10:00.000Z"];
const SERVE_AT: &str = "2026-03-01T10:12:30.000Z";

/// The approve command of the gate the `dash` ticks stop at.
const APPROVE: &str = "chant approve dash-guarded ship-web --resource web";

/// A running `serve` and the base URL it printed.
pub(crate) struct Served {
    running: Option<Running>,
    pub(crate) base: String,
    banner: String,
}

impl Served {
    pub(super) fn start(sandbox: &Sandbox, program: &str) -> Served {
        Served::start_with(sandbox, program, &[])
    }

    /// [`Served::start`] with `vars` set for the server as well.
    pub(crate) fn start_with(sandbox: &Sandbox, program: &str, vars: &[(&str, &str)]) -> Served {
        let args = ["serve", "--addr", "127.0.0.1:0"];
        let mut all = vec![("CHANT_NOW", SERVE_AT)];
        all.extend_from_slice(vars);
        let mut running = Running::start(sandbox, program, &sandbox.dir, &args, &all);
        let banner = running.wait_for("the listening line", |l| l.contains("read-only dashboard on http://"));
        let rest = banner.split_once("http://").unwrap().1;
        let base = format!("http://{}", rest.split_once('/').unwrap().0);
        Served { running: Some(running), base, banner }
    }

    /// GETs `path` with `accept`, returning the status, the headers asked for, and the body.
    pub(crate) fn get(&self, path: &str, accept: &str) -> Answer {
        self.request("GET", path, accept)
    }

    pub(super) fn request(&self, method: &str, path: &str, accept: &str) -> Answer {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let url = format!("{}{path}", self.base);
        let mut resp = match method {
            "GET" => agent.get(&url).header("Accept", accept).call(),
            _ => agent.post(&url).header("Accept", accept).send_empty(),
        }
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let (content_type, csp) = (header("content-type"), header("content-security-policy"));
        let status = resp.status().as_u16();
        let body = resp.body_mut().read_to_string().unwrap();
        Answer { status, content_type, csp, body }
    }

    pub(crate) fn json(&self, path: &str) -> Value {
        let a = self.get(path, "application/json");
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        assert_eq!(a.content_type, "application/json", "{path}");
        serde_json::from_str(&a.body).unwrap()
    }

    pub(crate) fn html(&self, path: &str) -> String {
        let a = self.get(path, "text/html,application/xhtml+xml,*/*;q=0.8");
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        assert_eq!(a.content_type, "text/html; charset=utf-8", "{path}");
        // Scripts: the dashboard's own files only (`/assets/copy.js`), never an inline one.
        let scripts: Vec<&str> = a.csp.split(';').map(str::trim).filter(|d| d.starts_with("script-src")).collect();
        assert_eq!(scripts, ["script-src 'self'"], "{path}: {:?}", a.csp);
        a.body
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            r.kill9();
        }
    }
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) csp: String,
    pub(crate) body: String,
}

/// A project with `site` applied and in sync, `dash` gated three ticks running, and `blind`
/// unobservable (no root bound).
pub(crate) fn estate_sandbox() -> Sandbox {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    for at in TICK_AT {
        let now = [("CHANT_NOW", at)];
        sandbox.tick("site-converge", &now);
        let tick = sandbox.tick("dash-converge", &now);
        assert_eq!(tick["summary"]["gated"], 1, "{tick}");
    }
    sandbox.tick("blind-converge", &[("CHANT_NOW", TICK_AT[2])]);
    sandbox
}

/// The estate's rows by op, from a `/` JSON document.
/// A command as the pages show it: code whose words are each one unbreakable span, so it wraps
/// only at its spaces.
pub(crate) fn shown_command(command: &str) -> String {
    let words: Vec<String> = command.split(' ').map(|w| format!(r#"<span class="w">{w}</span>"#)).collect();
    format!("<code>{}</code>", words.join(" "))
}

fn rows(estate: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for m in estate["members"].as_array().unwrap() {
        for e in m["envs"].as_array().unwrap() {
            out.extend(e["ops"].as_array().unwrap().iter().cloned());
        }
    }
    out
}

fn row<'a>(rows: &'a [Value], op: &str) -> &'a Value {
    rows.iter().find(|r| r["op"] == op).unwrap_or_else(|| panic!("no row {op}: {rows:?}"))
}

#[test]
fn every_route_answers_json_that_matches_the_cli_and_escaped_html() {
    let sandbox = estate_sandbox();
    let served = Served::start(&sandbox, PROJECT);
    assert!(served.banner.contains("loopback only"), "{}", served.banner);
    assert!(served.base.starts_with("http://127.0.0.1:"), "{}", served.base);

    // The estate: each row is the status row plus its health and age.
    let estate = served.json("/");
    assert_eq!(estate["version"], 1);
    assert_eq!(estate["generatedAt"], SERVE_AT);
    assert_eq!(estate["health"], "gated", "the worst op rolls up");
    let rows = rows(&estate);
    assert_eq!(row(&rows, "site-converge")["health"], "in-sync");
    assert_eq!(row(&rows, "dash-converge")["health"], "gated");
    assert_eq!(row(&rows, "blind-converge")["health"], "unknown");
    assert_eq!(row(&rows, "busy-converge")["health"], "never-ticked", "carried, never ticked");
    assert_eq!(row(&rows, "site-converge")["ageSeconds"], 150);
    let status = sandbox.project(&["operator", "status", "--json"], &[("CHANT_NOW", SERVE_AT)]).code(0).json();
    let status_rows = status["ops"].as_array().unwrap();
    assert_eq!(rows.len(), status_rows.len());
    for want in status_rows {
        let mut got = row(&rows, want["op"].as_str().unwrap()).clone();
        // One vocabulary: the dashboard's word is the status row's roll-up, `gated` at least
        // while one of the op's pending gates waits.
        let word = got["health"].clone();
        let pending = !want["pendingGates"].as_array().unwrap().is_empty();
        if !pending {
            assert_eq!(word, want["health"]["state"], "{}: the dashboard and operator status agree", want["op"]);
        }
        let fields = got.as_object_mut().unwrap();
        fields.remove("health");
        fields.remove("ageSeconds");
        let mut want = want.clone();
        want.as_object_mut().unwrap().remove("health");
        assert_eq!(got, want, "the estate row is operator status's row");
    }
    let page = served.html("/");
    assert!(page.contains(r#"data-op="site-converge" data-health="in-sync""#), "{page}");
    assert!(page.contains(r#"data-op="dash-converge" data-health="gated""#), "{page}");
    assert!(page.contains(r#"href="/envs/site/diff""#), "the project binary links each env's live diff");
    assert!(page.contains(r#"<meta http-equiv="refresh" content="30">"#));
    assert_no_inline_script("estate", &page);
    // Each row leads with the health word and its age; the tick's counters are on hover.
    let site_row = page.split(r#"data-op="site-converge""#).nth(1).unwrap_or_default();
    assert!(
        site_row.contains(r#"<span class="badge h-in-sync">in-sync</span><br><span class="muted">observed "#),
        "{page}"
    );
    assert!(site_row.contains("title=\"converge(site): drifted=0"), "the counters on hover: {page}");
    // A gate of the env that a run by hand stopped at (no tick reached it) is on the env's rows.
    sandbox.project(&["run", "site-release"], &[("CHANT_NOW", TICK_AT[2])]).code(3);
    let page = served.html("/");
    let site_row = page.split(r#"data-op="site-converge""#).nth(1).unwrap_or_default();
    let site_row = site_row.split("</tr>").next().unwrap_or_default();
    assert!(site_row.contains("<code>site-release</code> waits at <code>release</code>"), "{page}");
    // The command wraps only at its spaces: each word is one unbreakable span.
    let words = r#"<code><span class="w">chant</span> <span class="w">approve</span> <span class="w">site-release</span> <span class="w">release</span></code>"#;
    assert_eq!(shown_command("chant approve site-release release"), words);
    assert!(site_row.contains(words), "{page}");
    assert!(site_row.contains(r#"data-copy="chant approve site-release release""#), "{page}");

    // One op: ticks newest first, the gated outcome with its why, approve command and run.
    let op = served.json("/ops/dash/dash-converge");
    assert_eq!(op["totalTicks"], 3);
    let ticks = op["ticks"].as_array().unwrap();
    assert_eq!(ticks[0]["timestamp"].as_str().unwrap()[..16], TICK_AT[2][..16]);
    let gated = &ticks[0]["outcomes"][0];
    assert_eq!(gated["action"], "gated");
    assert_eq!(gated["resource"], "web");
    assert_eq!(gated["approve"], APPROVE);
    assert_eq!(
        gated["why"],
        "A drifted service ships only after a human approves: <script>document.title='pwned'</script>"
    );
    assert_eq!(gated["source"]["file"], "e2e/src/dashboard.rs", "relative to the repository root");
    assert_eq!(gated["run"]["status"], "gated", "the run the outcome dispatched");
    assert_eq!(served.json("/ops/dash/dash-converge?limit=1")["ticks"].as_array().unwrap().len(), 1);
    let page = served.html("/ops/dash/dash-converge");
    assert!(page.contains(&shown_command(APPROVE)), "{page}");
    assert!(page.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "{page}");
    assert_no_inline_script("op", &page);
    assert!(page.contains("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code> in-sync"), "{page}");

    // Pending gates: the same approve command as operator status prints.
    let gates = served.json("/gates");
    let listed = gates["gates"].as_array().unwrap();
    // The dash gate a tick reached, and site-release's that the run by hand above stopped at.
    assert_eq!(listed.len(), 2, "{gates}");
    assert_eq!(listed[1]["approve"], "chant approve site-release release", "{gates}");
    assert_eq!(listed[0]["approve"], APPROVE);
    assert_eq!(listed[0]["convergeOp"], "dash-converge");
    assert_eq!(&listed[0]["approve"], &row(status_rows, "dash-converge")["pendingGates"][0]["approve"]);
    let page = served.html("/gates");
    assert!(page.contains("Shipping &lt;b&gt;web&lt;/b&gt; needs a human."), "{page}");

    // The live diff, on request: exactly lifecycle diff's document.
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    let diff = served.json("/envs/site/diff");
    let cli = sandbox.project(&["lifecycle", "diff", "site", "--live", "--json"], &[]).code(0).json();
    // The whole document, every key: both are built by `chant::diff`.
    assert_eq!(diff, cli);
    assert_eq!(diff["status"], "drifted");
    assert_eq!(diff["health"], "drifted");
    for key in ["resources", "textChanges", "dependencies", "ambient", "ambientKinds", "artifacts"] {
        assert!(diff.get(key).is_some(), "the served diff carries `{key}`: {diff}");
    }
    assert!(diff["textChanges"][0]["diff"].as_str().unwrap().contains("-port = 1"), "{diff}");
    let page = served.html("/envs/site/diff");
    assert!(page.contains(r#"<tr data-kind="update">"#) && page.contains("app.conf"), "{page}");
    // The edited line as text, as the CLI prints it, not the content digests.
    assert!(page.contains(r#"<span class="del">-port = 1</span>"#), "the edited line is shown: {page}");
    assert!(!page.contains("content: sha1:"), "no digests where the text diff says more: {page}");

    // Unknown addresses, ops and envs are 404s in either form; nothing but GET is served.
    for path in ["/ops/dash/no-such-converge", "/ops/Bad_Env/x", "/envs/no-such-env/diff", "/nothing/here"] {
        let a = served.get(path, "application/json");
        assert_eq!(a.status, 404, "{path}: {}", a.body);
        let doc: Value = serde_json::from_str(&a.body).unwrap();
        assert!(doc["error"].as_str().is_some_and(|e| !e.is_empty()), "{path}: {doc}");
        assert_eq!(served.get(path, "text/html").status, 404, "{path}");
    }
    // A query that cannot be read is a 400 in either form, JSON `{error}` naming the parameter.
    for path in ["/ops/dash/dash-converge?limit=abc", "/envs/site?verdict=%ZZ", "/envs/site/graph?live=x&live=y"] {
        let a = served.get(path, "application/json");
        assert_eq!(a.status, 400, "{path}: {}", a.body);
        assert_eq!(a.content_type, "application/json", "{path}: {}", a.body);
        let doc: Value = serde_json::from_str(&a.body).unwrap();
        assert!(doc["error"].as_str().is_some_and(|e| !e.is_empty()), "{path}: {doc}");
        assert_eq!(served.get(path, "text/html").status, 400, "{path}");
    }
    let limit: Value =
        serde_json::from_str(&served.get("/ops/dash/dash-converge?limit=abc", "application/json").body).unwrap();
    assert!(limit["error"].as_str().unwrap().contains("limit"), "{limit}");
    assert_eq!(served.request("POST", "/", "application/json").status, 405, "read-only");
    assert_eq!(served.request("POST", "/gates", "text/html").status, 405, "read-only");
}

#[test]
fn the_stock_binary_serves_the_ledger_alone() {
    // The sandbox has no Cargo workspace, so there is no project binary to hand `serve` to.
    let sandbox = estate_sandbox();
    let served = Served::start(&sandbox, STOCK);
    let estate = served.json("/");
    let rows = rows(&estate);
    let names: Vec<&str> = rows.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["blind-converge", "dash-converge", "site-converge"], "only what the ledger holds");
    let op = served.json("/ops/dash/dash-converge");
    let gated = &op["ticks"][0]["outcomes"][0];
    assert_eq!((&gated["why"], &gated["approve"]), (&Value::Null, &Value::from(APPROVE)), "no op.json, so no why");
    assert!(!served.html("/").contains("/diff\""), "no live-diff links without declarations");
    let a = served.get("/envs/site/diff", "application/json");
    assert_eq!(a.status, 404);
    assert!(a.body.contains("carries no declarations"), "{}", a.body);

    // An address that does not parse is a usage error; a taken port fails to bind.
    sandbox.stock(&["serve", "--addr", "localhost"], &[]).code(2);
    let port = served.base.rsplit_once(':').unwrap().1;
    let out = sandbox.stock(&["serve", "--addr", &format!("127.0.0.1:{port}")], &[]);
    out.code(1);
    assert!(out.stderr.contains("cannot serve on 127.0.0.1:"), "{}", out.all());
}

#[test]
fn the_stock_binary_hands_serve_to_the_project_binary() {
    let sandbox = estate_sandbox();
    let served = Served::start_with(&sandbox, STOCK, &[("CHANT_PROJECT_BIN", PROJECT)]);
    let estate = served.json("/");
    assert_eq!(row(&rows(&estate), "busy-converge")["health"], "never-ticked", "the project binary's carried ops");
    let op = served.json("/ops/dash/dash-converge");
    assert!(op["ticks"][0]["outcomes"][0]["why"].as_str().is_some_and(|w| w.starts_with("A drifted")), "{op}");
    assert!(served.html("/").contains(r#"href="/envs/site/diff""#), "the live diff is served");
    assert_eq!(served.json("/envs/site/diff")["env"], "site");
}

/// Asserts that the only script element of `page` (HTML as served, or a browser's DOM) is the
/// dashboard's own `/assets/copy.js`, loaded by URL: no inline script, nothing from a ledger value.
pub(super) fn assert_no_inline_script(name: &str, page: &str) {
    let lower = page.to_ascii_lowercase();
    let scripts = lower.matches("<script").count();
    let own = lower.matches(r#"<script src="/assets/copy.js" defer></script>"#).count()
        + lower.matches(r#"<script src="/assets/copy.js" defer=""></script>"#).count();
    assert_eq!(scripts, own, "{name}: a script element other than /assets/copy.js: {page}");
    assert!(scripts <= 1, "{name}: {page}");
}

/// One raw HTTP/1.1 GET of `path` naming `host`, over a plain socket (ureq names the address it
/// connects to): the status and the body.
pub(crate) fn get_as(base: &str, path: &str, host: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    let status = answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default())
}

/// Where the browser's screenshots go, for people to look at.
pub(crate) fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs Debian's headless `chromium` with `args` then `url`, bounded by `timeout`.
pub(crate) fn chromium(sandbox: &Sandbox, args: &[&str], url: &str) -> String {
    let profile = sandbox.root().join("chromium-profile");
    let profile = format!("--user-data-dir={}", profile.display());
    let mut all = vec!["90", "chromium", "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check"];
    // Chromium refuses to start as root without it; the tests run as root in CI.
    all.push("--no-sandbox");
    all.extend(["--disable-background-networking", "--disable-component-update", "--disable-extensions"]);
    all.push(&profile);
    all.extend_from_slice(args);
    all.push(url);
    let out = sandbox.run_in("timeout", sandbox.root(), &all, &[]);
    assert!(
        out.code == 0,
        "chromium failed (exit {}); is Debian's chromium installed (`apt-get install -y chromium`)?\n{}",
        out.code,
        out.all()
    );
    out.stdout
}

#[test]
fn a_real_browser_shows_health_gates_and_markup_as_text() {
    let sandbox = estate_sandbox();
    let served = Served::start(&sandbox, PROJECT);
    // A file edited by hand: the diff page shows the edited line.
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    let shots = screenshot_dir();
    let pages = [("estate", "/"), ("op", "/ops/dash/dash-converge"), ("gates", "/gates"), ("diff", "/envs/site/diff")];
    let mut doms = std::collections::BTreeMap::new();
    for (name, path) in pages {
        let url = format!("{}{path}", served.base);
        let dom = chromium(&sandbox, &["--dump-dom"], &url);
        let shot = shots.join(format!("{name}.png"));
        let _ = std::fs::remove_file(&shot);
        let arg = format!("--screenshot={}", shot.display());
        chromium(&sandbox, &[&arg, "--window-size=1280,900", "--hide-scrollbars"], &url);
        let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", shot.display()));
        assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000, "{name}: a real picture at {}", shot.display());
        eprintln!("screenshot of {path}: {}", shot.display());
        doms.insert(name, dom);
    }
    // The estate lists the ops with their health, after the browser parsed the page.
    let estate = &doms["estate"];
    for (op, health) in [("site-converge", "in-sync"), ("dash-converge", "gated"), ("blind-converge", "unknown")] {
        assert!(estate.contains(&format!(r#"data-op="{op}" data-health="{health}""#)), "{op}: {estate}");
    }
    // The op page shows the gated outcome and its approve command.
    let op = &doms["op"];
    assert!(op.contains(r#"<tr data-action="gated">"#), "{op}");
    assert!(op.contains(&shown_command(APPROVE)), "{op}");
    // The why and the resource name holding <script> are text: the DOM has no script element,
    // and the title the script would have set is not set.
    for (name, dom) in &doms {
        assert_no_inline_script(name, dom);
        assert!(!dom.contains("pwned</title>"), "{name}");
    }
    assert!(op.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "{op}");
    assert!(op.contains("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code> in-sync"), "the resource name: {op}");
    assert!(estate.contains("<title>Estate · chant</title>"), "{estate}");
    // The diff page shows the hand-edited line as text, marked as the live side.
    let diff = &doms["diff"];
    assert!(diff.contains(r#"<span class="del">-port = 1</span>"#), "{diff}");
}

/// A port another process holds: exit 1 naming the address, and how to choose another.
#[test]
fn a_port_in_use_is_refused_with_how_to_choose_another() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = sandbox.project(&["serve", "--addr", &addr], &[]);
    out.code(1);
    assert!(out.stderr.contains(&format!("cannot serve on {addr}")), "{}", out.all());
    assert!(
        out.stderr.contains("hint: another process serves on that port: choose another with --addr"),
        "{}",
        out.all()
    );
    // `localhost:<port>` names the same loopback address.
    let port = taken.local_addr().unwrap().port();
    let out = sandbox.project(&["serve", "--addr", &format!("localhost:{port}")], &[]);
    out.code(1);
    assert!(out.stderr.contains(&format!("cannot serve on 127.0.0.1:{port}")), "{}", out.all());
}
