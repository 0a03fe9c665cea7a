//! A remote that fails mid-push (issue #19, fault campaign), through the real binaries: a bare
//! remote whose `pre-receive` hook rejects the ledger branch, one whose hook hangs past the
//! configured `[ledger] git_timeout`, and one that vanishes (the hook renames the bare directory
//! away) while the ledger branch is being pushed. In each, the tick acts and exits 0, its record
//! stays on the local ledger branch, the run says so on stderr, and the next tick after the
//! remote is back pushes it: the remote's branch then holds both records.
//!
//! The hooks let the lease refs through, so the lease is taken on the remote and the tick runs;
//! a remote that refuses every ref refuses the lease too, and then the tick acts on nothing and
//! says why (the last test).

use std::path::{Path, PathBuf};

use super::support::{Out, Sandbox, config_with_roots};

/// A `pre-receive` hook that runs `action` when the ledger branch is pushed and accepts the rest.
fn hook(action: &str) -> String {
    format!(
        "#!/bin/sh\nwhile read old new ref; do\n  case \"$ref\" in refs/heads/chant/*) {action} ;; esac\ndone\nexit 0\n"
    )
}

/// A project whose `chant.toml` names `origin`, a bare repository beside it.
struct Remote {
    sandbox: Sandbox,
    bare: PathBuf,
}

impl Remote {
    fn new() -> Remote {
        let config = format!("{}\n[ledger]\nremote = \"origin\"\ngit_timeout = \"5s\"\n", config_with_roots(&["site"]));
        let sandbox = Sandbox::new(&config);
        let bare = sandbox.root().join("remote.git");
        sandbox.git(sandbox.root(), &["-c", "init.defaultBranch=main", "init", "-q", "--bare", "remote.git"]);
        let dir = &sandbox.dir;
        sandbox.git(dir, &["add", "chant.toml"]);
        sandbox.git(dir, &["commit", "-q", "-m", "chant.toml with a remote"]);
        sandbox.git(dir, &["remote", "add", "origin", bare.to_str().unwrap()]);
        sandbox.git(dir, &["push", "-q", "origin", "main"]);
        Remote { sandbox, bare }
    }

    fn set_hook(&self, script: Option<&str>) {
        let path = self.bare.join("hooks/pre-receive");
        match script {
            Some(script) => {
                std::fs::write(&path, script).unwrap();
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// A tick of `site-converge` at minute `minute` of 2026-03-01, with drift so it dispatches.
    fn tick(&self, minute: u32) -> Out {
        std::fs::create_dir_all(self.sandbox.path("estates/site")).unwrap();
        std::fs::write(self.sandbox.path("estates/site/app.conf"), format!("minute = {minute}\n")).unwrap();
        let now = format!("2026-03-01T{:02}:{:02}:00.000Z", minute / 60, minute % 60);
        self.sandbox.project(&["tick", "site-converge", "--json"], &[("CHANT_NOW", now.as_str())])
    }

    /// Whether a line of the ledger branch in `dir` holds the record `id`.
    fn holds(&self, dir: &Path, id: &str) -> bool {
        self.sandbox.ledger_lines_of(dir).iter().any(|(_, line)| line.contains(&format!("\"id\":\"{id}\"")))
    }

    /// Runs one faulty round (`fault` set up before it, `restore` after it), then a healthy one,
    /// and checks what each left where.
    fn round_trip(&self, fault: impl FnOnce(&Remote), restore: impl FnOnce(&Remote), says: &str) {
        let first = self.tick(0);
        first.code(0);
        let first = first.json()["id"].as_str().unwrap().to_owned();
        assert!(self.holds(&self.bare, &first), "a healthy remote got the first tick");

        fault(self);
        let out = self.tick(10);
        out.code(0);
        let kept = out.json()["id"].as_str().unwrap().to_owned();
        assert!(
            out.stderr.contains("did not reach origin") && out.stderr.contains(says),
            "the run does not say its record missed the remote ({says}):\n{}",
            out.stderr
        );
        assert!(self.holds(&self.sandbox.dir, &kept), "the tick record is not on the local ledger branch");
        restore(self);
        assert!(!self.holds(&self.bare, &kept), "the faulty remote holds the record after all");

        let next = self.tick(20);
        next.code(0);
        assert!(!next.stderr.contains("did not reach"), "the remote is back, yet:\n{}", next.stderr);
        let next = next.json()["id"].as_str().unwrap().to_owned();
        for id in [&first, &kept, &next] {
            assert!(self.holds(&self.bare, id), "record {id} did not reach the remote once it was back");
        }
        for dir in [&self.sandbox.dir, &self.bare] {
            self.sandbox.git(dir, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
        }
    }
}

#[test]
fn a_remote_that_rejects_the_ledger_keeps_the_record_locally_and_gets_it_next_round() {
    let remote = Remote::new();
    remote.round_trip(
        |r| r.set_hook(Some(&hook("echo 'the ledger branch is protected' >&2; exit 1"))),
        |r| r.set_hook(None),
        "pre-receive hook declined",
    );
}

#[test]
fn a_remote_that_hangs_is_cut_at_the_git_timeout_and_gets_the_record_next_round() {
    let remote = Remote::new();
    remote.round_trip(|r| r.set_hook(Some(&hook("exec sleep 30"))), |r| r.set_hook(None), "did not finish within 5s");
}

#[test]
fn a_remote_that_disappears_mid_push_gets_the_record_once_it_is_back() {
    let remote = Remote::new();
    let gone = remote.sandbox.root().join("gone.git");
    remote.round_trip(
        |r| r.set_hook(Some(&hook(&format!("mv \"$(pwd)\" {}; exit 1", gone.display())))),
        |r| {
            std::fs::rename(&gone, &r.bare).unwrap();
            r.set_hook(None);
        },
        "origin",
    );
}

#[test]
fn a_remote_that_refuses_every_ref_refuses_the_lease_and_the_tick_acts_on_nothing() {
    let remote = Remote::new();
    remote.set_hook(Some("#!/bin/sh\necho 'read-only remote' >&2\nexit 1\n"));
    let out = remote.tick(0);
    assert_ne!(out.code, 0, "a tick without its lease exited 0:\n{}", out.all());
    assert!(out.stderr.contains("cannot take the lease of site-converge"), "{}", out.stderr);
    let files: Vec<_> =
        std::fs::read_dir(remote.sandbox.path("estates/site")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, ["app.conf"], "the tick applied the declaration without its lease");
}
