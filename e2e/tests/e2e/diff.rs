//! `lifecycle diff --live` for a person and for CI: an edited declared file shows as a unified
//! text diff from live to declared (no content digests, no status said twice), and
//! `--exit-code` answers 0 in sync, 1 when something is to be created or updated, 4 when
//! something could not be observed, as `terraform plan -detailed-exitcode` lets CI gate on it.

use super::support::{Sandbox, config_with_roots};

#[test]
fn exit_code_is_0_in_sync_1_drifted_4_unobserved_and_an_edited_file_shows_a_text_diff() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let diff = |extra: &[&str]| {
        let mut args = vec!["lifecycle", "diff", "site", "--live", "--exit-code"];
        args.extend_from_slice(extra);
        sandbox.project(&args, &[])
    };
    // Nothing applied yet: every file is to be created.
    let out = diff(&[]);
    out.code(1);
    assert!(out.stdout.contains("create files/app.conf"), "{}", out.all());
    assert!(out.stdout.contains("--- /dev/null") && out.stdout.contains("+++ declared/app.conf"), "{}", out.all());
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    let out = diff(&[]);
    out.code(0);
    assert!(out.stdout.contains("lifecycle diff site (live): in-sync (status reconciled)"), "{}", out.all());

    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 9090\nlog_level = \"info\"\n").unwrap();
    let out = diff(&[]);
    out.code(1);
    assert!(out.stdout.contains("  files drifted: 1 update (app.conf)\n"), "{}", out.all());
    assert!(!out.stdout.contains("drifted: drifted:"), "{}", out.all());
    assert!(
        out.stdout.contains(
            "      --- live/app.conf\n      +++ declared/app.conf\n      @@ -1,2 +1,2 @@\n      -port = 9090\n      +port = 8080\n"
        ),
        "{}",
        out.all()
    );
    assert!(!out.stdout.contains("content: sha1:"), "the text diff replaces the digests: {}", out.all());
    let json = diff(&["--json"]);
    json.code(1);
    let doc = json.json();
    assert_eq!(doc["textChanges"][0]["name"], "app.conf", "{doc}");
    assert!(doc["textChanges"][0]["diff"].as_str().unwrap().contains("+port = 8080"), "{doc}");

    // A declared file that cannot be read as one makes the answer incomplete: 4 outranks 1.
    std::fs::remove_file(sandbox.path("estates/site/motd.txt")).unwrap();
    std::fs::create_dir(sandbox.path("estates/site/motd.txt")).unwrap();
    let out = diff(&[]);
    out.code(4);
    // The seed's shape: resources.queried per lexicon, joined onto the unobserved row.
    let doc = diff(&["--json"]).json();
    let motd = sandbox.path("estates/site/motd.txt").canonicalize().unwrap().display().to_string();
    assert_eq!(doc["resources"]["files"]["queried"]["motd.txt"], motd.as_str(), "{doc}");
    let row = doc["changeSets"][0]["entries"].as_array().unwrap().iter().find(|e| e["name"] == "motd.txt").unwrap();
    assert_eq!((&row["action"], &row["queried"]), (&"unobserved".into(), &motd.as_str().into()), "{doc}");
    assert!(out.stdout.contains("lifecycle diff site (live): unknown"), "{}", out.all());
    // Without --exit-code the diff itself succeeded.
    sandbox.project(&["lifecycle", "diff", "site", "--live"], &[]).code(0);
    // `--live` is the only diff there is: a new user's `lifecycle diff site` is the same one, and
    // so are `lifecycle plan` and `lifecycle status` without it.
    let bare = sandbox.project(&["lifecycle", "diff", "site", "--exit-code"], &[]);
    bare.code(4);
    assert!(bare.stdout.contains("lifecycle diff site (live): unknown"), "{}", bare.all());
    let plan = |live: &[&str]| {
        let mut args = vec!["lifecycle", "plan", "site"];
        args.extend_from_slice(live);
        let out = sandbox.project(&args, &[]);
        out.code(0);
        out.stdout
    };
    let (bare, live) = (plan(&[]), plan(&["--live"]));
    assert_eq!(bare, live);
    assert!(bare.contains("unknown"), "{bare}");
    sandbox.project(&["lifecycle", "status", "site"], &[]).code(0);
}
