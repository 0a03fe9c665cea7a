//! The tick record of an in-sync estate is the same bytes tick after tick: the observation's
//! shortcuts (the thin read by name in an opened directory, the deep verdict classified without
//! property trees for a file as declared) change how the estate is read, never what is recorded.

use crate::support::{Sandbox, config_with_roots, converge_key};

/// The stored ledger lines of `op`'s tick records, oldest first, each with its `id` blanked
/// (the one field minted fresh per tick; the clock is fixed by `CHANT_NOW`).
fn tick_lines(sandbox: &Sandbox, env: &str, op: &str) -> Vec<String> {
    let dir = format!("{}/", converge_key(env, op).dir());
    sandbox
        .ledger_lines_of(&sandbox.dir)
        .into_iter()
        .filter(|(path, _)| path.starts_with(&dir))
        .map(|(_, line)| {
            let mut value: serde_json::Value = serde_json::from_str(&line).unwrap();
            value["id"] = serde_json::Value::Null;
            value.to_string()
        })
        .collect()
}

#[test]
fn in_sync_ticks_of_the_same_estate_record_the_same_bytes() {
    let sandbox = Sandbox::new(&config_with_roots(&["site", "bulk"]));
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    sandbox.project(&["run", "bulk-apply"], &[]).code(0);
    let now = [("CHANT_NOW", "2026-01-02T03:04:05Z")];
    for (env, op) in [("site", "site-converge"), ("bulk", "bulk-converge")] {
        for _ in 0..2 {
            let out = sandbox.project(&["tick", "--no-lease", op], &now);
            out.code(0);
            assert!(out.stdout.contains("drifted=0 remediated=0"), "{}", out.all());
        }
        let lines = tick_lines(&sandbox, env, op);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0], lines[1], "two in-sync ticks of {op} record the same bytes but for their id");
        let record: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(record["symptom"]["status"], "reconciled", "{record}");
        assert!(record.get("driftedPaths").is_none(), "{record}");
    }
}
