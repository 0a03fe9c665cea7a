//! The example binaries carry the library's ops: inventory registration survives linking across
//! crates, and both binaries list the same documents the library embeds.

// Helpers outside `#[test]` functions unwrap freely: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::process::Command;

fn ops_json(bin: &str) -> Vec<serde_json::Value> {
    let out = Command::new(bin).args(["ops", "--json"]).output().unwrap();
    assert!(out.status.success(), "{bin} ops --json: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn both_binaries_list_the_library_ops() {
    for bin in [env!("CARGO_BIN_EXE_staging"), env!("CARGO_BIN_EXE_staging-converge")] {
        let docs = ops_json(bin);
        let names: Vec<&str> = docs.iter().map(|d| d["name"].as_str().unwrap()).collect();
        for want in ["staging-apply", "staging-converge", "staging-smoke", "staging-teardown"] {
            assert!(names.contains(&want), "{bin} lacks {want}: {names:?}");
        }
        let converge = docs.iter().find(|d| d["name"] == "staging-converge").unwrap();
        assert_eq!(converge["member"], "staging");
        assert_eq!(converge["converge"]["rules"].as_array().unwrap().len(), 4);
        // Relative to the repository root (#15.5), as `git blame` there wants it.
        assert_eq!(converge["converge"]["rules"][0]["source"]["file"], "examples/staging/src/ops.rs");
    }
}
