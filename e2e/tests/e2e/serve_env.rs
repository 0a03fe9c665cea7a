//! The dashboard's env page (`/envs/{env}`) and copy buttons end to end: the staging example's
//! binary serves the env page over real HTTP on 127.0.0.1 after a real tick applied the env and
//! a file was edited by hand; its JSON is held to `lifecycle diff staging --live --json` (one row
//! per change-set entry, the same action, kind and address), its filter, its links to the diff
//! page's lines, its refusal of a foreign `Host`, and, in Debian's headless `chromium`, its DOM
//! (the edited file `drifted`), the copy buttons the dashboard's own script shows, and no inline
//! script anywhere. Screenshots go under the target directory with the other dashboard pages'.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::serve::{Served, assert_no_inline_script, chromium, estate_sandbox, get_as, screenshot_dir};
use crate::support::{PROJECT, Sandbox, config_with_roots};

/// The tick's clock: 150 s before the server's (`serve.rs`'s `SERVE_AT`).
const TICK_AT: &str = "2026-03-01T10:10:00.000Z";

/// The example's project binary, beside this package's binaries.
fn staging_binary() -> String {
    let bin = Path::new(PROJECT).parent().unwrap().join(format!("staging{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} is missing: run the suite with --workspace (it builds chant-examples)", bin.display());
    bin.display().to_string()
}

/// The staging example applied by a real tick, then `app.conf` edited by hand and a file nobody
/// declared put beside it.
fn staging_sandbox(bin: &str) -> Sandbox {
    let sandbox = Sandbox::new(&config_with_roots(&["staging"]));
    let tick = sandbox.run_in(bin, &sandbox.dir, &["tick", "staging-converge", "--json"], &[("CHANT_NOW", TICK_AT)]);
    tick.code(0);
    std::fs::write(sandbox.path("estates/staging/app.conf"), "port = 1\n").unwrap();
    std::fs::write(sandbox.path("estates/staging/stray.txt"), "nobody declared me\n").unwrap();
    sandbox
}

fn resource<'a>(page: &'a Value, name: &str) -> &'a Value {
    page["resources"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("{name}: {page}"))
}

#[test]
fn the_env_page_lists_every_resource_as_lifecycle_diff_sees_it() {
    let bin = staging_binary();
    let sandbox = staging_sandbox(&bin);
    let served = Served::start(&sandbox, &bin);

    let page = served.json("/envs/staging");
    let cli = sandbox.run_in(&bin, &sandbox.dir, &["lifecycle", "diff", "staging", "--live", "--json"], &[]);
    let cli = cli.json();
    assert_eq!((&page["status"], &page["health"]), (&cli["status"], &cli["health"]), "{page}\n{cli}");
    // One row per change-set entry, the same action, kind and address; then the ambient ones.
    let rows = page["resources"].as_array().unwrap();
    let mut entries = Vec::new();
    for cs in cli["changeSets"].as_array().unwrap() {
        for e in cs["entries"].as_array().unwrap() {
            entries.push((cs["component"].clone(), e.clone()));
        }
    }
    let from_changes: Vec<&Value> = rows.iter().filter(|r| !r["action"].is_null()).collect();
    assert_eq!(from_changes.len(), entries.len(), "{page}\n{cli}");
    for (row, (component, entry)) in from_changes.iter().zip(&entries) {
        assert_eq!(row["lexicon"], *component);
        assert_eq!(row["name"], entry["name"]);
        assert_eq!(row["action"], entry["action"]);
        assert_eq!(row["kind"], entry["type"]);
        assert_eq!(row["queried"], entry.get("queried").cloned().unwrap_or(Value::Null));
    }
    let ambient: usize =
        cli["ambient"].as_object().unwrap().values().filter_map(|a| a["resources"].as_object()).map(|r| r.len()).sum();
    assert_eq!(rows.len(), entries.len() + ambient, "{page}");

    // The edited file is drifted, with its text diff on the diff page; the other file in sync.
    let edited = resource(&page, "app.conf");
    assert_eq!((&edited["verdict"], &edited["action"]), (&"drifted".into(), &"update".into()), "{page}");
    let differs = serde_json::json!(["content: text diff", "size: 9 -> 31"]);
    assert_eq!(edited["differs"], differs, "the text itself is on the diff page: {page}");
    assert!(edited.get("paths").is_none(), "content and size are said once, by `differs`, never as digests: {page}");
    assert_eq!(edited["anchor"], "d-files~app.conf");
    assert_eq!(resource(&page, "motd.txt")["verdict"], "in-sync");
    assert!(resource(&page, "motd.txt")["anchor"].is_null(), "nothing to link to: nothing differs");
    // A file nobody declares or references: ambient.
    assert_eq!(resource(&page, "stray.txt")["verdict"], "ambient", "{page}");
    assert_eq!(page["counts"]["drifted"], 1, "{page}");
    assert_eq!(page["ticks"]["ops"][0]["op"], "staging-converge", "the header's ticks: {page}");
    assert_eq!(page["ticks"]["ageSeconds"], 150, "{page}");
    // The op's health strip: its one tick, with that tick's own health.
    let history = page["ticks"]["ops"][0]["history"].as_array().unwrap();
    assert_eq!(history.len(), 1, "{page}");
    let tick_id = history[0]["id"].as_str().unwrap();
    assert_eq!(history[0]["health"], page["ticks"]["ops"][0]["health"], "{page}");
    assert!(page["observedAgeSeconds"].as_u64().is_some_and(|s| s < 15), "{page}");

    // The filter.
    let drifted = served.json("/envs/staging?verdict=drifted");
    let names: Vec<&str> =
        drifted["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["app.conf"], "{drifted}");
    assert_eq!(drifted["filter"], serde_json::json!(["drifted"]));
    assert_eq!(drifted["counts"], page["counts"], "the counts are of every resource");
    let two = served.json("/envs/staging?verdict=in-sync,drifted");
    assert_eq!(two["resources"].as_array().unwrap().len(), 2, "{two}");
    let bad = served.get("/envs/staging?verdict=absent", "application/json");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("?verdict=absent: not a verdict") && bad.body.contains("in-sync"), "{}", bad.body);

    // HTML: one row per resource, the drifted one linked to its line of the diff page.
    let html = served.html("/envs/staging");
    assert!(html.contains(r#"<tr data-verdict="drifted" data-name="app.conf">"#), "{html}");
    assert!(html.contains(r#"<tr data-verdict="in-sync" data-name="motd.txt">"#), "{html}");
    assert!(html.contains(r##"href="/envs/staging/diff#d-files~app.conf""##), "{html}");
    assert!(html.contains(r#"<meta http-equiv="refresh" content="30">"#), "{html}");
    assert!(html.contains("reloads itself every 30 s"), "the interval is on the page: {html}");
    assert!(html.contains("Observed live "), "{html}");
    let strip = html.split(r#"<tr data-op="staging-converge">"#).nth(1).unwrap_or_default();
    let strip = strip.split("</tr>").next().unwrap_or_default();
    assert!(strip.contains(r#"<svg class="strip" data-chart="health""#), "{html}");
    assert!(strip.contains(&format!(r#"data-tick="{tick_id}""#)), "{html}");
    assert_no_inline_script("env", &html);
    let filtered = served.html("/envs/staging?verdict=drifted");
    assert!(!filtered.contains(r#"data-name="motd.txt""#), "{filtered}");
    let diff = served.html("/envs/staging/diff");
    assert!(diff.contains(r#"<td id="d-files~app.conf">"#), "the diff page has the anchor: {diff}");
    // The estate links the env page.
    assert!(served.html("/").contains(r#"href="/envs/staging""#));

    // The script: served by the dashboard itself, as JavaScript.
    let js = served.get("/assets/copy.js", "*/*");
    assert_eq!(js.status, 200);
    assert_eq!(js.content_type, "text/javascript; charset=utf-8");
    assert!(js.body.contains("navigator.clipboard.writeText"), "{}", js.body);

    // Unknown envs are 404s; nothing but GET; a foreign Host is refused on the new routes too.
    assert_eq!(served.get("/envs/no-such-env", "application/json").status, 404);
    assert_eq!(served.request("POST", "/envs/staging", "application/json").status, 405);
    let port = served.base.rsplit_once(':').unwrap().1;
    for path in ["/envs/staging", "/envs/staging?verdict=drifted", "/assets/copy.js"] {
        let (status, body) = get_as(&served.base, path, &format!("evil.example:{port}"));
        assert_eq!(status, 421, "{path}: {body}");
        assert!(body.starts_with("refused: this server does not answer to the name"), "{body}");
        assert_eq!(get_as(&served.base, path, &format!("localhost:{port}")).0, 200, "{path}");
    }
}

#[test]
fn the_stock_binary_has_no_env_page() {
    let sandbox = estate_sandbox();
    let served = Served::start(&sandbox, crate::support::STOCK);
    let a = served.get("/envs/site", "application/json");
    assert_eq!(a.status, 404);
    assert!(a.body.contains("carries no declarations"), "{}", a.body);
}

fn shoot(sandbox: &Sandbox, url: &str, name: &str) -> PathBuf {
    let shot = screenshot_dir().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    chromium(sandbox, &[&arg, "--window-size=1280,720", "--hide-scrollbars"], url);
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", shot.display()));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000, "{name}: a real picture at {}", shot.display());
    eprintln!("screenshot of {url}: {}", shot.display());
    shot
}

#[test]
fn a_real_browser_shows_the_edited_file_drifted_and_the_copy_buttons() {
    let bin = staging_binary();
    let sandbox = staging_sandbox(&bin);
    let served = Served::start(&sandbox, &bin);
    let url = format!("{}/envs/staging", served.base);
    let dom = chromium(&sandbox, &["--dump-dom"], &url);
    assert!(dom.contains(r#"<tr data-verdict="drifted" data-name="app.conf">"#), "{dom}");
    assert!(dom.contains(r#"<tr data-verdict="in-sync" data-name="motd.txt">"#), "{dom}");
    assert_no_inline_script("env", &dom);
    // The dashboard's own script ran under the page's policy (it marks the document).
    assert!(dom.contains(r#"data-copy="ready""#) || dom.contains(r#"data-copy="unavailable""#), "{dom}");
    shoot(&sandbox, &url, "env");
    let filtered = chromium(&sandbox, &["--dump-dom"], &format!("{url}?verdict=drifted"));
    assert!(filtered.contains(r#"data-name="app.conf""#) && !filtered.contains(r#"data-name="motd.txt""#));

    // A page with an approve command: its copy button, shown by the script, copies the command.
    let gated = estate_sandbox();
    let served = Served::start(&gated, PROJECT);
    let url = format!("{}/gates", served.base);
    let html = served.html("/gates");
    let approve = "chant approve dash-guarded ship-web --resource web";
    let button = format!(r#"<button class="copy" type="button" hidden data-copy="{approve}">copy</button>"#);
    assert!(html.contains(&button), "without the script the button is hidden: {html}");
    let dom = chromium(&gated, &["--dump-dom"], &url);
    assert_no_inline_script("gates", &dom);
    assert!(dom.contains(r#"data-copy="ready""#), "the script found the Clipboard API on 127.0.0.1: {dom}");
    assert!(
        dom.contains(&format!(r#"<button class="copy" type="button" data-copy="{approve}">copy</button>"#)),
        "the script showed the button: {dom}"
    );
    shoot(&gated, &url, "gates-copy");
}
