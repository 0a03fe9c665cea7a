//! A full disk during an append (issue #19, fault campaign): the project repository lives on a
//! 1 MiB tmpfs, filled to the last block before a run appends its record. The append fails with
//! the storage error named and the run exits 1 naming its record: kept for the next write while
//! the kept records' directory (a tmpfs of its own) has room, lost once it is full too. The ledger
//! branch is unchanged, nothing half-written is left (no lock, no temporary file of a kept record,
//! `git fsck --strict` clean), and once space is freed the next run appends the kept record and
//! its own.
//!
//! Mounting a tmpfs needs root (`mount -t tmpfs -o size=1m`); where it cannot be mounted the test
//! says so on stderr and checks nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::support::{PROJECT, Sandbox, config_with_roots};

/// A tmpfs of 1 MiB mounted at `at`, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Writes zeros to `path` until the file system is full.
fn fill(path: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 4096];
    while file.write_all(&block).is_ok() {}
    let _ = file.write_all(&[0]);
    let _ = file.sync_all();
}

/// Every file under `dir` whose name ends with `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn a_full_disk_during_an_append_leaves_the_branch_unchanged_and_nothing_torn() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let mount = sandbox.root().join("small");
    let Some(_tmpfs) = Tmpfs::mount(&mount) else {
        eprintln!("faults_disk: skipped, a 1 MiB tmpfs cannot be mounted here (needs root)");
        return;
    };
    let project = mount.join("project");
    sandbox.init_repo(&project);
    std::fs::write(project.join("chant.toml"), config_with_roots(&["site"])).unwrap();
    let at = |m: u32| format!("2026-03-01T00:{m:02}:00.000Z");
    let run = |m: u32| sandbox.run_in(PROJECT, &project, &["run", "site-ping", "--json"], &[("CHANT_NOW", &at(m))]);
    let first = run(0);
    first.code(0);
    let before = sandbox.tip_of(&project).expect("the first run made the branch");

    // The kept records' directory on a file system of its own, with room: the append fails, the
    // record is kept, and the run says which record and where, and exits 1.
    let git_dir = project.join(".git");
    let pending = git_dir.join("chant/pending");
    let Some(_pending_fs) = Tmpfs::mount(&pending) else { panic!("a second tmpfs cannot be mounted") };
    let filler = mount.join("filler");
    fill(&filler);
    let full = run(10);
    full.code(1);
    let kept_id = full.json()["id"].as_str().unwrap().to_owned();
    for want in [
        format!("the run record {kept_id} of site-ping was not recorded on the ledger"),
        "it is kept in".to_owned(),
        "No space left on device".to_owned(),
    ] {
        assert!(full.stderr.contains(&want), "the failed append does not say {want:?}:\n{}", full.all());
    }
    assert_eq!(sandbox.tip_of(&project).as_deref(), Some(before.as_str()), "the branch moved on a full disk");
    assert_eq!(files_ending(&pending, ".json").len(), 1, "the record is kept");

    // Both full: the record cannot even be kept, and the run says it is lost.
    let pending_filler = pending.join("filler");
    fill(&pending_filler);
    let lost = run(15);
    lost.code(1);
    let lost_id = lost.json()["id"].as_str().unwrap().to_owned();
    for want in
        [format!("the run record {lost_id} of site-ping was not recorded on the ledger"), "it is lost".to_owned()]
    {
        assert!(lost.stderr.contains(&want), "the lost record is not reported as {want:?}:\n{}", lost.all());
    }
    assert_eq!(sandbox.tip_of(&project).as_deref(), Some(before.as_str()), "the branch moved on a full disk");
    assert_eq!(files_ending(&git_dir, ".lock"), Vec::<PathBuf>::new(), "a lock was left");
    assert_eq!(files_ending(&git_dir.join("chant"), ".tmp"), Vec::<PathBuf>::new(), "a half-kept record was left");
    sandbox.git(&project, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
    std::fs::remove_file(&pending_filler).unwrap();

    std::fs::remove_file(&filler).unwrap();
    let next = run(20);
    next.code(0);
    let id = next.json()["id"].as_str().unwrap().to_owned();
    let lines = sandbox.ledger_lines_of(&project);
    for (path, line) in &lines {
        let parsed: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("a torn line in {path} ({e}): {line}"));
        assert!(parsed.is_object());
    }
    assert!(lines.iter().any(|(_, l)| l.contains(&id)), "the run after the disk was freed is not on the ledger");
    assert!(lines.iter().any(|(_, l)| l.contains(&kept_id)), "the kept record was not appended");
    assert!(!lines.iter().any(|(_, l)| l.contains(&lost_id)), "a record reported lost is on the ledger");
    sandbox.git(&project, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
}
