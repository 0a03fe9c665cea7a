//! The lease on real git repositories: acquire, renew, hand-over and release on a fixed clock
//! (every call takes its `now`), a race of threads, stale and young lock files, two clones
//! arbitrating through a real bare remote, and the one leased tick (`tick::leased`) taking,
//! fencing, releasing and keeping leases.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use chant::clock::{Clock, ManualClock};
use chant::lease::{Acquisition, Error, LeaseKey, LeaseStore, Refusal, Renewal};
use chant::ledger::{Ledger, LedgerConfig};
use chant::tick::{Claim, Landing, Leased, Lost, Release};
use jiff::Timestamp;

mod batch;

const TTL: Duration = Duration::from_secs(300);

fn hermetic_env(home: &Path) -> Vec<(OsString, OsString)> {
    let fixed = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_AUTHOR_NAME", "Test Author"),
        ("GIT_AUTHOR_EMAIL", "author@example.invalid"),
        ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
        ("GIT_COMMITTER_NAME", "Test Committer"),
        ("GIT_COMMITTER_EMAIL", "committer@example.invalid"),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
    ];
    let mut env: Vec<(OsString, OsString)> = fixed.iter().map(|(k, v)| (k.into(), v.into())).collect();
    env.push(("HOME".into(), home.into()));
    env.push(("XDG_CONFIG_HOME".into(), home.into()));
    env
}

/// A temporary directory with a HOME, repositories, and the one place these tests run git.
struct World {
    tmp: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("home")).unwrap();
        World { tmp }
    }

    fn env(&self) -> Vec<(OsString, OsString)> {
        hermetic_env(&self.tmp.path().join("home"))
    }

    fn git_out(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(dir).args(args);
        for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"] {
            cmd.env_remove(name);
        }
        cmd.envs(self.env()).env("LC_MESSAGES", "C");
        cmd.output().unwrap()
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_out(dir, args);
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// As [`World::git`], with `input` on git's stdin.
    fn git_stdin(&self, dir: &Path, args: &[&str], input: &str) {
        use std::io::Write as _;
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(dir).args(args).envs(self.env()).stdin(std::process::Stdio::piped());
        for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"] {
            cmd.env_remove(name);
        }
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success(), "git {args:?}");
    }

    fn project(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
        std::fs::write(dir.join("README.md"), "project\n").unwrap();
        self.git(&dir, &["add", "README.md"]);
        self.git(&dir, &["commit", "-q", "-m", "initial"]);
        dir
    }

    fn store(&self, dir: &Path, remote: Option<&str>) -> LeaseStore {
        let config = LedgerConfig { remote: remote.map(str::to_owned), git_env: self.env(), ..LedgerConfig::default() };
        LeaseStore::new(&Ledger::open(dir, config).unwrap())
    }

    /// A local store whose clock is fixed at `now`.
    fn store_at(&self, dir: &Path, now: Timestamp) -> LeaseStore {
        let config = LedgerConfig { git_env: self.env(), clock: Clock::Fixed(now), ..LedgerConfig::default() };
        LeaseStore::new(&Ledger::open(dir, config).unwrap())
    }

    /// A local store on `clock`, a clock the test moves.
    fn store_on(&self, dir: &Path, clock: &ManualClock) -> LeaseStore {
        let config =
            LedgerConfig { git_env: self.env(), clock: Clock::Manual(clock.clone()), ..LedgerConfig::default() };
        LeaseStore::new(&Ledger::open(dir, config).unwrap())
    }

    /// Overwrites `op`'s lease ref with a live foreign lease, through git processes.
    fn steal(&self, dir: &Path, op: &str) {
        let file = self.tmp.path().join("stolen.json");
        std::fs::write(
            &file,
            format!(
                r#"{{"op":"{op}","holder":"thief:1:00000000","token":"stolen","acquiredAt":"2026-08-25T10:00:00.000Z","expiresAt":"2999-01-01T00:00:00.000Z"}}"#
            ),
        )
        .unwrap();
        let blob = self.git(dir, &["hash-object", "-w", file.to_str().unwrap()]);
        self.git(dir, &["update-ref", &format!("refs/chant/lease/{op}"), blob.trim()]);
    }

    /// The object the lease ref of `op` points at, `None` when there is none.
    fn lease_ref(&self, dir: &Path, op: &str) -> Option<String> {
        let out = self.git_out(dir, &["rev-parse", "--verify", "-q", &format!("refs/chant/lease/{op}")]);
        out.status.success().then(|| String::from_utf8(out.stdout).unwrap().trim().to_owned())
    }

    /// A bare remote and two clones of it, each with `origin` pointing at it.
    fn remote_pair(&self) -> (PathBuf, PathBuf, PathBuf) {
        let a = self.project("a");
        let bare = self.tmp.path().join("remote.git");
        self.git(self.tmp.path(), &["init", "-q", "--bare", bare.to_str().unwrap()]);
        self.git(&a, &["remote", "add", "origin", bare.to_str().unwrap()]);
        self.git(&a, &["push", "-q", "origin", "main"]);
        let b = self.tmp.path().join("b");
        self.git(self.tmp.path(), &["clone", "-q", bare.to_str().unwrap(), b.to_str().unwrap()]);
        (bare, a, b)
    }
}

fn at(minutes: i64) -> Timestamp {
    let base: Timestamp = "2026-08-25T10:00:00Z".parse().unwrap();
    base.checked_add(jiff::SignedDuration::from_mins(minutes)).unwrap()
}

fn key(op: &str) -> LeaseKey {
    LeaseKey::new(None, op).unwrap()
}

#[track_caller]
fn acquired(outcome: Acquisition) -> (chant::lease::Held, bool) {
    match outcome {
        Acquisition::Acquired { held, renewed, .. } => (held, renewed),
        other => panic!("expected the lease, got {other:?}"),
    }
}

#[test]
fn a_lease_dated_beyond_the_maximum_ttl_is_stale_taken_over_and_said_so() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store(&dir, None);
    let k = key("op");
    // A blob that claims the lease until the year 2999 (a clock far ahead, or a hand edit): no
    // TTL chant accepts could have written it. It used to lock the op out for ever.
    world.steal(&dir, "op");
    let found = store.current(&k).unwrap().unwrap();
    assert!(found.is_stale(at(0)) && !found.is_live(at(0)));
    let (held, renewed) = match store.acquire(&k, "me:1:00000001", TTL, at(0)).unwrap() {
        Acquisition::Acquired { held, renewed, stale: Some(stale) } => {
            assert_eq!((stale.holder.as_str(), stale.token.as_str()), ("thief:1:00000000", "stolen"));
            (held, renewed)
        }
        other => panic!("a stale lease was not taken over as such: {other:?}"),
    };
    assert!(!renewed);
    assert_ne!(held.record.token, "stolen", "a new fencing token");
    assert_eq!(held.record.expires_at, "2026-08-25T10:05:00.000Z");

    // Exactly the maximum TTL ahead is still live; a second more is stale.
    let mut edge = held.record.clone();
    edge.expires_at = "2026-08-26T10:00:00.000Z".into();
    assert!(edge.is_live(at(0)) && !edge.is_stale(at(0)));
    edge.expires_at = "2026-08-26T10:00:01.000Z".into();
    assert!(edge.is_stale(at(0)) && !edge.is_live(at(0)));

    // No TTL past the maximum is written.
    let long = chant::lease::MAX_TTL + Duration::from_secs(1);
    let refused = store.acquire(&key("other"), "me:1:00000001", long, at(0)).unwrap_err();
    assert_eq!(refused.to_string(), "a lease TTL of 86401s is longer than the maximum of 24h");
    assert!(matches!(store.renew(&held, long, at(1)), Err(chant::lease::Error::TtlTooLong { .. })));
    assert!(store.still_holds(&held).unwrap());
}

#[test]
fn acquire_renew_hand_over_and_release_on_a_fixed_clock() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store(&dir, None);
    let k = key("staging-converge");
    assert_eq!(k.ref_name(), "refs/chant/lease/staging-converge");
    assert_eq!(LeaseKey::new(Some("platform"), "x").unwrap().ref_name(), "refs/chant/lease/_members/platform/x");

    let (a, renewed) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(0)).unwrap());
    assert!(!renewed);
    assert_eq!(a.record.acquired_at, "2026-08-25T10:00:00.000Z");
    assert_eq!(a.record.expires_at, "2026-08-25T10:05:00.000Z");
    // The ref points directly at a blob holding the record, keys in the original's order.
    assert_eq!(world.git(&dir, &["cat-file", "-t", &k.ref_name()]).trim(), "blob");
    let blob = world.git(&dir, &["cat-file", "-p", &k.ref_name()]);
    assert!(blob.starts_with(r#"{"op":"staging-converge","holder":"host:1:aaaaaaaa","token":""#), "{blob}");

    // Another holder is refused while the lease is live.
    match store.acquire(&k, "host:2:bbbbbbbb", TTL, at(1)).unwrap() {
        Acquisition::Refused { held_by: Some(r), reason: Refusal::Held } => assert_eq!(r.holder, "host:1:aaaaaaaa"),
        other => panic!("{other:?}"),
    }
    // The holder renews: same token, later expiry.
    let (a2, renewed) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(2)).unwrap());
    assert!(renewed);
    assert_eq!(a2.record.token, a.record.token);
    assert_eq!(a2.record.expires_at, "2026-08-25T10:07:00.000Z");
    let Renewal::Renewed(a3) = store.renew(&a2, TTL, at(3)).unwrap() else { panic!("renewal lost") };
    assert_eq!(
        (a3.record.token.as_str(), a3.record.expires_at.as_str()),
        (a.record.token.as_str(), "2026-08-25T10:08:00.000Z")
    );
    assert!(store.still_holds(&a3).unwrap());

    // Expired: the lease changes hands with a new token.
    let (b, renewed) = acquired(store.acquire(&k, "host:2:bbbbbbbb", TTL, at(8)).unwrap());
    assert!(!renewed);
    assert_ne!(b.record.token, a.record.token);
    assert!(!store.still_holds(&a3).unwrap(), "the fence sees the loss");
    assert!(
        matches!(store.renew(&a3, TTL, at(9)).unwrap(), Renewal::Lost { found: Some(r) } if r.holder == "host:2:bbbbbbbb")
    );
    assert!(!store.release(&a3).unwrap(), "a lost lease is not ours to release");
    assert!(store.release(&b).unwrap());
    assert_eq!(world.git(&dir, &["for-each-ref", "refs/chant/lease/"]), "");
    assert_eq!(world.git_out(&dir, &["fsck", "--strict"]).status.code(), Some(0));
}

/// Two stores of one repository on one manual clock: the lease expires when the test advances
/// the clock past its TTL, not before, and with no real wait (each acquire tries once).
#[test]
fn a_lease_expires_when_the_manual_clock_is_advanced_past_its_ttl() {
    let world = World::new();
    let dir = world.project("p");
    let clock = ManualClock::new(at(0));
    let (a, b) = (world.store_on(&dir, &clock), world.store_on(&dir, &clock));
    let k = key("manual");
    let once = Duration::ZERO;
    let (held, _) = acquired(a.acquire_waiting(&k, "host:1:aaaaaaaa", TTL, once).unwrap());
    assert_eq!(held.record.expires_at, "2026-08-25T10:05:00.000Z", "dated by the manual clock");
    let refused = |outcome: Acquisition| matches!(outcome, Acquisition::Refused { reason: Refusal::Held, .. });
    assert!(refused(b.acquire_waiting(&k, "host:2:bbbbbbbb", TTL, once).unwrap()), "live at 10:00");

    clock.advance(Duration::from_secs(299));
    assert_eq!(b.clock().now(), at(5).checked_sub(jiff::SignedDuration::from_secs(1)).unwrap(), "one clock");
    assert!(refused(b.acquire_waiting(&k, "host:2:bbbbbbbb", TTL, once).unwrap()), "live a second before expiry");
    assert!(a.still_holds(&held).unwrap());

    clock.advance(Duration::from_secs(1));
    let (taken, renewed) = acquired(b.acquire_waiting(&k, "host:2:bbbbbbbb", TTL, once).unwrap());
    assert!(!renewed);
    assert_ne!(taken.record.token, held.record.token);
    assert_eq!(taken.record.acquired_at, "2026-08-25T10:05:00.000Z");
    assert!(!a.still_holds(&held).unwrap(), "the first holder sees the loss");
    assert!(b.release(&taken).unwrap());
}

/// A renewal or release by the store that set the lease last swaps against the value it set,
/// without reading the ref first; a ref moved behind its back (here by git processes) makes the
/// swap fail, and the store then reads and decides afresh: a live foreign lease is refused and
/// never released, a foreign lease of the same holder id is renewed with its own token.
#[test]
fn a_lease_moved_behind_the_stores_back_is_read_and_decided_afresh() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store(&dir, None);
    let k = key("moved");
    let (mine, _) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(0)).unwrap());
    let (renewed, was) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(2)).unwrap());
    assert!(
        was && renewed.record.token == mine.record.token && renewed.record.expires_at == "2026-08-25T10:07:00.000Z"
    );
    assert_eq!(world.lease_ref(&dir, "moved").as_deref(), Some(renewed.blob.to_string().as_str()));

    let foreign = |holder: &str, token: &str| {
        let file = world.tmp.path().join("foreign.json");
        let record = format!(
            r#"{{"op":"moved","holder":"{holder}","token":"{token}","acquiredAt":"2026-08-25T10:01:00.000Z","expiresAt":"2026-08-25T10:30:00.000Z"}}"#
        );
        std::fs::write(&file, record).unwrap();
        let blob = world.git(&dir, &["hash-object", "-w", file.to_str().unwrap()]);
        world.git(&dir, &["update-ref", "refs/chant/lease/moved", blob.trim()]);
        blob.trim().to_owned()
    };
    // Another holder took it (a hand edit; a real one would wait for expiry): refused.
    let theirs = foreign("host:2:bbbbbbbb", "theirs");
    match store.acquire(&k, "host:1:aaaaaaaa", TTL, at(2)).unwrap() {
        Acquisition::Refused { held_by: Some(r), reason: Refusal::Held } => assert_eq!(r.holder, "host:2:bbbbbbbb"),
        other => panic!("{other:?}"),
    }
    assert!(!store.release(&renewed).unwrap(), "not ours to release");
    assert_eq!(world.lease_ref(&dir, "moved"), Some(theirs), "the foreign lease is untouched");

    // The same holder id with another token (another store of this process): renewed, its token kept.
    foreign("host:1:aaaaaaaa", "other-token");
    let (again, was) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(3)).unwrap());
    assert!(was);
    assert_eq!(
        (again.record.token.as_str(), again.record.expires_at.as_str()),
        ("other-token", "2026-08-25T10:08:00.000Z")
    );
    // Released by the swap against what this store set; then gone for git too.
    assert!(store.release(&again).unwrap());
    assert_eq!(world.lease_ref(&dir, "moved"), None);
    // A renewal after the release is a fresh lease, not an extension of the released one.
    let (fresh, was) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(4)).unwrap());
    assert!(!was && fresh.record.token != "other-token");

    // A stale lock on the ref is reported by the renewal, as by any acquisition.
    let lock = dir.join(".git/refs/chant/lease/moved.lock");
    std::fs::write(&lock, "").unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    // (Two minutes on: past a third of the TTL, so the renewal writes.)
    let err = store.acquire(&k, "host:1:aaaaaaaa", TTL, at(6)).unwrap_err();
    assert!(matches!(&err, Error::StaleLock { path, .. } if *path == lock), "{err:?}");
    std::fs::remove_file(&lock).unwrap();
    let (after, was) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(7)).unwrap());
    assert!(was && after.record.token == fresh.record.token);
    assert_eq!(world.git_out(&dir, &["fsck", "--strict"]).status.code(), Some(0));
}

/// A holder renews every TTL/3: a renewal of a local lease this store wrote less than a third of
/// the TTL ago keeps it as written (same blob, same expiry, no write: the object count stays),
/// once the ref is seen to still hold it; past a third of the TTL it writes a new blob.
#[test]
fn a_renewal_within_a_third_of_the_ttl_keeps_the_lease_as_written() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store(&dir, None);
    let k = key("kept");
    let at_secs = |secs: i64| at(0).checked_add(jiff::SignedDuration::from_secs(secs)).unwrap();
    let objects = || world.git(&dir, &["count-objects", "-v"]);
    let (first, _) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(0)).unwrap());
    let before = objects();
    // 99 s on (a third of 300 s is 100 s): kept, nothing written.
    let (kept, renewed) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at_secs(99)).unwrap());
    assert!(renewed);
    assert_eq!((kept.blob, kept.record.expires_at.as_str()), (first.blob, "2026-08-25T10:05:00.000Z"));
    assert_eq!(objects(), before, "no blob was written");
    assert!(store.still_holds(&kept).unwrap());
    // 101 s on: a new blob, the same token, a later expiry.
    let (later, renewed) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at_secs(101)).unwrap());
    assert!(renewed && later.blob != first.blob && later.record.token == first.record.token);
    assert_eq!(later.record.expires_at, "2026-08-25T10:06:41.000Z");
    assert_eq!(world.lease_ref(&dir, "kept").as_deref(), Some(later.blob.to_string().as_str()));
    // A longer TTL asked for is not kept from a shorter one: it writes.
    let (longer, _) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL * 2, at_secs(102)).unwrap());
    assert_eq!(longer.record.expires_at, "2026-08-25T10:11:42.000Z");
    // Deleted behind the store's back within the window: read afresh, and a fresh lease.
    world.git(&dir, &["update-ref", "-d", "refs/chant/lease/kept"]);
    let (fresh, renewed) = acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL * 2, at_secs(103)).unwrap());
    assert!(!renewed && fresh.record.token != first.record.token);
}

#[test]
fn of_eight_concurrent_acquirers_exactly_one_wins() {
    let world = World::new();
    let dir = world.project("p");
    let k = key("race");
    for round in 0..20 {
        let barrier = Arc::new(Barrier::new(8));
        let winners: Vec<chant::lease::Held> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let store = world.store(&dir, None);
                    let barrier = Arc::clone(&barrier);
                    let k = k.clone();
                    s.spawn(move || {
                        barrier.wait();
                        match store.acquire(&k, &format!("host:{i}:{round:08}"), TTL, at(round * 10)).unwrap() {
                            Acquisition::Acquired { held, .. } => Some(held),
                            Acquisition::Refused { .. } => None,
                        }
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        assert!(world.store(&dir, None).release(&winners[0]).unwrap());
    }
}

#[test]
fn a_stale_lock_names_its_path_and_a_young_one_is_a_lost_race() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store(&dir, None);
    let k = key("locked");
    let lock = dir.join(".git/refs/chant/lease/locked.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();

    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    let err = store.acquire(&k, "host:1:aaaaaaaa", TTL, at(0)).unwrap_err();
    assert!(matches!(&err, Error::StaleLock { path, .. } if *path == lock), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&format!("rm {}", lock.display())) && text.contains("refs/chant/lease/locked"), "{text}");

    file.set_modified(SystemTime::now()).unwrap();
    assert!(matches!(
        store.acquire(&k, "host:1:aaaaaaaa", TTL, at(0)).unwrap(),
        Acquisition::Refused { reason: Refusal::Race, .. }
    ));

    std::fs::remove_file(&lock).unwrap();
    acquired(store.acquire(&k, "host:1:aaaaaaaa", TTL, at(0)).unwrap());
}

/// Issue #19, defect 7: a `packed-refs.lock` left by a killed writer blocked every lease and
/// ledger append of the repository, because gix locked `packed-refs` for any compare-and-swap
/// or deletion once a `packed-refs` file existed. Now only the deletion of a reference that has
/// a packed entry takes that lock; the stale lock is named with its fix by that deletion and by
/// `operator status`.
#[test]
fn a_leftover_packed_refs_lock_blocks_no_lease_and_no_append() {
    let world = World::new();
    let dir = world.project("p");
    let config = LedgerConfig { git_env: world.env(), ..LedgerConfig::default() };
    let ledger = Ledger::open(&dir, config).unwrap();
    let store = LeaseStore::new(&ledger);
    let append_key = chant::ledger::ShardKey::converge(None, "staging", "staging-converge").unwrap();
    ledger.append(&append_key, r#"{"n":1}"#).unwrap();
    let (packed_lease, _) = acquired(store.acquire(&key("packed"), "host:1:aaaaaaaa", TTL, at(0)).unwrap());
    // `git gc` packs every ref: the ledger branch and the lease are now in packed-refs only.
    world.git(&dir, &["pack-refs", "--all", "--prune"]);
    assert!(!dir.join(".git/refs/chant/lease/packed").exists() && dir.join(".git/packed-refs").exists());
    let lock = dir.join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let old = SystemTime::now() - Duration::from_secs(60);
    std::fs::OpenOptions::new().write(true).open(&lock).unwrap().set_modified(old).unwrap();

    // A loose-only lease: acquire, renew, release, none of them touching packed-refs.lock.
    let (held, _) = acquired(store.acquire(&key("loose"), "host:1:aaaaaaaa", TTL, at(0)).unwrap());
    let renewed = match store.renew(&held, TTL, at(1)).unwrap() {
        Renewal::Renewed(renewed) => renewed,
        other => panic!("{other:?}"),
    };
    assert!(store.release(&renewed).unwrap());
    assert_eq!(world.lease_ref(&dir, "loose"), None);
    // An append to the packed branch writes its loose ref; git reads the same tip.
    let receipt = ledger.append(&append_key, r#"{"n":2}"#).unwrap();
    let tip = world.git(&dir, &["rev-parse", chant::ledger::BRANCH]);
    assert_eq!(tip.trim(), receipt.commit.to_string());
    assert_eq!(ledger.read(&append_key).unwrap().records.len(), 2);
    // The packed lease renews (a loose file now shadows its packed entry)...
    let packed_lease = match store.renew(&packed_lease, TTL, at(2)).unwrap() {
        Renewal::Renewed(renewed) => renewed,
        other => panic!("{other:?}"),
    };
    assert_eq!(std::fs::metadata(&lock).unwrap().modified().unwrap(), old, "nothing took or rewrote the lock");

    // ...but its release must rewrite packed-refs: the stale lock is named with its fix.
    let err = store.release(&packed_lease).unwrap_err();
    assert!(matches!(&err, Error::StaleLock { path, .. } if *path == lock), "{err:?}");
    assert!(err.to_string().contains(&format!("rm {}", lock.display())), "{err}");
    let view = chant::operator::status::status(&ledger, &store, &[], chant::clock::now().unwrap()).unwrap();
    let stale: Vec<(&str, &str)> = view.stale_locks.iter().map(|l| (l.path.as_str(), l.fix.as_str())).collect();
    assert_eq!(stale, [(lock.to_str().unwrap(), format!("rm {}", lock.display()).as_str())]);
    assert!(chant::operator::status::render(&view).contains(&format!("stale lock: {}", lock.display())));

    std::fs::remove_file(&lock).unwrap();
    assert!(store.release(&packed_lease).unwrap());
    assert_eq!(world.lease_ref(&dir, "packed"), None, "the packed entry did not come back");
    assert!(!lock.exists());
    world.git(&dir, &["fsck", "--no-progress"]);
}

#[test]
fn two_clones_arbitrate_through_the_remote() {
    let world = World::new();
    let (bare, a, b) = world.remote_pair();
    let store_a = world.store(&a, Some("origin"));
    let store_b = world.store(&b, Some("origin"));
    let k = key("shared");

    let (held_a, _) = acquired(store_a.acquire(&k, "a:1:aaaaaaaa", TTL, at(0)).unwrap());
    let on_remote = world.git(&bare, &["cat-file", "-p", "refs/chant/lease/shared"]);
    assert!(on_remote.contains(&held_a.record.token), "the acquisition counts once its push landed");

    match store_b.acquire(&k, "b:1:bbbbbbbb", TTL, at(1)).unwrap() {
        Acquisition::Refused { held_by: Some(r), reason: Refusal::Held } => assert_eq!(r.holder, "a:1:aaaaaaaa"),
        other => panic!("{other:?}"),
    }
    // B read the remote's lease into lease-remote, never over its own lease ref.
    assert_eq!(
        world.git(&b, &["for-each-ref", "--format=%(refname)", "refs/chant/"]).trim(),
        "refs/chant/lease-remote/shared"
    );
    let view = store_b.read(&k).unwrap();
    assert_eq!((view.local, view.remote.map(|r| r.holder)), (None, Some("a:1:aaaaaaaa".to_owned())));

    assert!(store_a.release(&held_a).unwrap());
    assert!(world.git_out(&bare, &["rev-parse", "--verify", "-q", "refs/chant/lease/shared"]).stdout.is_empty());
    let (held_b, _) = acquired(store_b.acquire(&k, "b:1:bbbbbbbb", TTL, at(2)).unwrap());
    assert_ne!(held_b.record.token, held_a.record.token);
    assert!(!store_a.still_holds(&held_a).unwrap());
    assert!(store_b.release(&held_b).unwrap());

    // Acquiring at once from both clones: the remote lets exactly one win each time.
    for round in 0..10 {
        let barrier = Arc::new(Barrier::new(2));
        let winners: Vec<(char, chant::lease::Held)> = std::thread::scope(|s| {
            let handles: Vec<_> = [('a', &store_a), ('b', &store_b)]
                .into_iter()
                .map(|(name, store)| {
                    let barrier = Arc::clone(&barrier);
                    let k = k.clone();
                    s.spawn(move || {
                        barrier.wait();
                        match store.acquire(&k, &format!("{name}:1:{round:08}"), TTL, at(10 + round * 10)).unwrap() {
                            Acquisition::Acquired { held, .. } => Some((name, held)),
                            Acquisition::Refused { .. } => None,
                        }
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(winners.len(), 1, "round {round}");
        let (name, held) = &winners[0];
        let store = if *name == 'a' { &store_a } else { &store_b };
        assert!(store.release(held).unwrap());
    }

    // A lock held on the remote is reported naming the remote and the ref; nothing is left
    // behind locally.
    let remote_lock = bare.join("refs/chant/lease/blocked.lock");
    std::fs::create_dir_all(remote_lock.parent().unwrap()).unwrap();
    std::fs::write(&remote_lock, "").unwrap();
    let err = store_a.acquire(&key("blocked"), "a:1:aaaaaaaa", TTL, at(0)).unwrap_err();
    assert!(
        matches!(&err, Error::RemoteLocked { remote, reference, .. } if remote == "origin" && reference == "refs/chant/lease/blocked"),
        "{err:?}"
    );
    assert!(world.git_out(&a, &["rev-parse", "--verify", "-q", "refs/chant/lease/blocked"]).stdout.is_empty());
}

fn take(op: &str, holder: &str) -> Claim {
    Claim::Take { key: key(op), holder: holder.to_owned(), ttl: TTL, wait: Duration::ZERO }
}

#[test]
fn the_leased_tick_takes_fences_and_releases_after_its_record_landed() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store_at(&dir, at(0));

    let ran = match chant::tick::leased(&store, take("op", "me:1:00000001"), Release::AfterWork, |fence| {
        let fence = fence.expect("a taken lease fences the work");
        assert_eq!(fence.stamp().holder, "me:1:00000001");
        assert!(world.lease_ref(&dir, "op").is_some(), "held while the work runs");
        (fence.check(), Landing::Pushed)
    }) {
        Leased::Ran(ran) => ran,
        other => panic!("{other:?}"),
    };
    assert_eq!(ran.value, Ok(()));
    assert!(ran.released && ran.lost.is_none() && ran.warnings.is_empty(), "{ran:?}");
    assert_eq!(world.lease_ref(&dir, "op"), None, "released after the work");

    // A record that did not reach the remote keeps the lease, to lapse on its own.
    let Leased::Ran(kept) =
        chant::tick::leased(&store, take("op", "me:1:00000001"), Release::AfterWork, |_| ((), Landing::NotPushed))
    else {
        panic!()
    };
    assert!(!kept.released && kept.warnings[0].contains("kept the lease of op"), "{kept:?}");
    assert!(world.lease_ref(&dir, "op").is_some());

    // Another holder's live lease: refused, and the work never runs.
    let mut ran_anyway = false;
    match chant::tick::leased(&store, take("op", "you:2:00000002"), Release::AfterWork, |_| {
        ran_anyway = true;
        ((), Landing::Nothing)
    }) {
        Leased::Refused { holder } => assert_eq!(holder.as_deref(), Some("me:1:00000001")),
        other => panic!("{other:?}"),
    }
    assert!(!ran_anyway);

    // Unleased work gets no fence and touches no lease.
    let before = world.lease_ref(&dir, "op");
    let Leased::Ran(free) =
        chant::tick::leased(&store, Claim::Unleased, Release::AfterWork, |fence| (fence.is_none(), Landing::Pushed))
    else {
        panic!()
    };
    assert!(free.value && free.held.is_none() && !free.released);
    assert_eq!(world.lease_ref(&dir, "op"), before);
}

#[test]
fn a_lease_taken_over_mid_work_fences_every_later_check_and_is_never_released() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store_at(&dir, at(0));

    let Leased::Ran(ran) = chant::tick::leased(&store, take("op", "me:1:00000001"), Release::AfterWork, |fence| {
        let fence = fence.unwrap();
        let before = fence.check();
        world.steal(&dir, "op");
        let after = fence.check();
        // The first loss is remembered: every later check answers the same.
        ((before, after, fence.check(), fence.lost()), Landing::Pushed)
    }) else {
        panic!()
    };
    let (before, after, again, lost) = ran.value;
    let thief = Lost::TakenOver { by: Some("thief:1:00000000".to_owned()) };
    assert_eq!(before, Ok(()));
    assert_eq!(after, Err(thief.clone()));
    assert_eq!(again, Err(thief.clone()));
    assert_eq!(lost, Some(thief.clone()));
    assert_eq!(ran.lost, Some(thief));
    assert!(!ran.released, "a fenced lease is not ours to release");
    let theirs = world.git(&dir, &["cat-file", "-p", "refs/chant/lease/op"]);
    assert!(theirs.contains("\"token\":\"stolen\""), "{theirs}");
}

#[test]
fn a_lease_already_held_fences_the_work_without_writing_it() {
    let world = World::new();
    let dir = world.project("p");
    let store = world.store_at(&dir, at(0));
    let (held, _) = acquired(store.acquire(&key("op"), "me:1:00000001", TTL, at(0)).unwrap());
    let blob = world.lease_ref(&dir, "op");

    let Leased::Ran(ran) = chant::tick::leased(&store, Claim::Held(held.clone()), Release::Keep, |fence| {
        (fence.map(|f| f.check()), Landing::Pushed)
    }) else {
        panic!()
    };
    assert_eq!(ran.value, Some(Ok(())));
    assert!(!ran.released, "kept for its holder");
    assert_eq!(world.lease_ref(&dir, "op"), blob, "neither renewed nor released: the same blob");
    assert!(store.still_holds(&held).unwrap());
}
