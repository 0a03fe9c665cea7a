//! Leases in batches through a real bare remote (`LeaseStore::acquire_every`, `renew_every`,
//! `release_every`): one push carries many leases and the remote decides each ref on its own,
//! and a batched fence answers from what the batch's pushes proved.

use chant::clock::Clock;
use chant::lease::{Acquisition, Held, LeaseKey, LeaseStore, Refusal, Renewal};
use chant::ledger::{Ledger, LedgerConfig};
use chant::tick::{Fence, Lost, Proof, Proofs};

use super::{TTL, World, acquired, at, key};

fn keys(n: usize) -> Vec<LeaseKey> {
    (0..n).map(|i| key(&format!("op-{i}"))).collect()
}

fn remote_leases(world: &World, bare: &std::path::Path) -> Vec<String> {
    let refs = world.git(bare, &["for-each-ref", "--format=%(refname:lstrip=3)", "refs/chant/lease/"]);
    refs.lines().map(str::to_owned).collect()
}

fn all_acquired(outcomes: Vec<Result<Acquisition, chant::lease::Error>>) -> Vec<Held> {
    outcomes.into_iter().map(|o| acquired(o.unwrap()).0).collect()
}

#[test]
fn one_push_lands_each_lease_on_its_own() {
    let world = World::new();
    let (bare, a, b) = world.remote_pair();
    let store_a = world.store(&a, Some("origin"));
    let store_b = world.store(&b, Some("origin"));
    let keys = keys(6);

    store_a.fetch_every().unwrap();
    let held_a = all_acquired(store_a.acquire_every(&keys[..4], "a:1:aaaaaaaa", TTL, at(0)).unwrap());
    assert_eq!(remote_leases(&world, &bare), ["op-0", "op-1", "op-2", "op-3"]);

    // B reads the remote, then A takes op-4 behind B's back: B's view of op-4 is stale.
    store_b.fetch_every().unwrap();
    let (held_a4, _) = acquired(store_a.acquire(&keys[4], "a:1:aaaaaaaa", TTL, at(0)).unwrap());
    let outcomes = store_b.acquire_every(&keys[2..], "b:1:bbbbbbbb", TTL, at(1)).unwrap();
    let outcomes: Vec<Acquisition> = outcomes.into_iter().map(Result::unwrap).collect();
    for held in &outcomes[..2] {
        assert!(
            matches!(held, Acquisition::Refused { reason: Refusal::Held, held_by: Some(r) } if r.holder == "a:1:aaaaaaaa"),
            "a lease the fetch saw live is not pushed at all: {held:?}"
        );
    }
    assert!(
        matches!(&outcomes[2], Acquisition::Refused { reason: Refusal::Race, .. }),
        "the remote refused the ref that moved since B read it: {:?}",
        outcomes[2]
    );
    assert!(matches!(&outcomes[3], Acquisition::Acquired { renewed: false, .. }), "{:?}", outcomes[3]);
    assert_eq!(world.lease_ref(&b, "op-4"), None, "the refused write was undone locally");
    let on_remote = world.git(&bare, &["cat-file", "-p", "refs/chant/lease/op-4"]);
    assert!(on_remote.contains(&held_a4.record.token), "A's lease of op-4 stands");
    let on_remote = world.git(&bare, &["cat-file", "-p", "refs/chant/lease/op-5"]);
    assert!(on_remote.contains("b:1:bbbbbbbb"), "B's lease of op-5 landed in the same push");

    // A renews its five in one push: tokens kept, expiry later.
    let mut mine = held_a.clone();
    mine.push(held_a4);
    let renewed: Vec<Held> = store_a
        .renew_every(&mine, TTL, at(2))
        .unwrap()
        .into_iter()
        .map(|r| match r.unwrap() {
            Renewal::Renewed(h) => h,
            other => panic!("{other:?}"),
        })
        .collect();
    for (old, new) in mine.iter().zip(&renewed) {
        assert_eq!(old.record.token, new.record.token);
        assert!(new.record.expires_at > old.record.expires_at);
    }
    // A cannot renew or release what is B's: a stale Held for op-5 is lost, nothing is touched.
    let Acquisition::Acquired { held: b5, .. } = &outcomes[3] else { unreachable!() };
    let forged =
        Held { record: chant::lease::LeaseRecord { holder: "a:1:aaaaaaaa".into(), ..b5.record.clone() }, ..b5.clone() };
    assert!(matches!(
        store_a.renew_every(std::slice::from_ref(&forged), TTL, at(2)).unwrap()[0],
        Ok(Renewal::Lost { .. })
    ));

    let mut releasing = renewed;
    releasing.push(forged);
    let released: Vec<bool> = store_a.release_every(&releasing).unwrap().into_iter().map(Result::unwrap).collect();
    assert_eq!(released, [true, true, true, true, true, false]);
    assert_eq!(remote_leases(&world, &bare), ["op-5"], "only B's lease is left");
    assert_eq!(world.lease_ref(&a, "op-0"), None, "the local refs went with the remote's");
    assert_eq!(
        store_b.release_every(std::slice::from_ref(b5)).unwrap().into_iter().map(Result::unwrap).collect::<Vec<_>>(),
        [true]
    );
    store_a.fetch_every().unwrap();
    let copies = world.git(&a, &["for-each-ref", "--format=%(refname)", "refs/chant/lease-remote/"]);
    assert_eq!(copies, "", "the fetch of every lease pruned the copies of released ones");
}

#[test]
fn a_batched_fence_answers_from_its_proofs_until_they_expire() {
    let world = World::new();
    let (_bare, a, b) = world.remote_pair();
    let at_clock = |dir: &std::path::Path, minutes: i64| {
        let config = LedgerConfig {
            remote: Some("origin".into()),
            git_env: world.env(),
            clock: Clock::Fixed(at(minutes)),
            ..LedgerConfig::default()
        };
        LeaseStore::new(&Ledger::open(dir, config).unwrap())
    };
    let store = at_clock(&a, 0);
    let (held, _) = acquired(store.acquire(&key("op"), "a:1:aaaaaaaa", TTL, at(0)).unwrap());

    // Another clone overwrites the remote's lease, ignoring it (as no chant holder does).
    let thief = at_clock(&b, 0);
    thief.fetch_every().unwrap();
    let forged = world.tmp.path().join("forged.json");
    std::fs::write(
        &forged,
        r#"{"op":"op","holder":"thief:1:00000000","token":"stolen","acquiredAt":"2026-08-25T10:00:00.000Z","expiresAt":"2026-08-25T11:00:00.000Z"}"#,
    )
    .unwrap();
    let blob = world.git(&b, &["hash-object", "-w", forged.to_str().unwrap()]);
    world.git(&b, &["push", "-q", "--force", "origin", &format!("{}:refs/chant/lease/op", blob.trim())]);

    let proofs = Proofs::default();
    proofs.set(&held.key, Proof::Landed(held.record.clone()));
    let fence = Fence::batched(store.clone(), held.clone(), proofs.clone());
    assert_eq!(fence.check(), Ok(()), "within the landed write's TTL the fence answers from the proof");

    // Past the proof's expiry, the fence reads the remote and finds the theft.
    let later = at_clock(&a, 6);
    let fence = Fence::batched(later, held.clone(), proofs.clone());
    assert_eq!(fence.check(), Err(Lost::TakenOver { by: Some("thief:1:00000000".into()) }));

    // A renewal that found the lease lost fences at once.
    proofs.set(&held.key, Proof::Lost { by: Some("thief:1:00000000".into()) });
    let fence = Fence::batched(store, held, proofs);
    assert_eq!(fence.check(), Err(Lost::TakenOver { by: Some("thief:1:00000000".into()) }));
}

#[test]
fn a_presence_lease_rides_the_fetch_of_every_lease_beside_the_ops_and_is_released_like_them() {
    let world = World::new();
    let (bare, a, b) = world.remote_pair();
    let store_a = world.store(&a, Some("origin"));
    let store_b = world.store(&b, Some("origin"));
    let (holder_a, holder_b) = ("a:1:aaaaaaaa", "b:1:bbbbbbbb");
    let presence = LeaseKey::presence(holder_b);
    assert!(presence.is_presence() && !key("op-0").is_presence());
    assert!(presence.ref_name().starts_with("refs/chant/lease/_operators/"), "{}", presence.ref_name());
    assert_eq!(presence.ref_name().len(), "refs/chant/lease/_operators/".len() + 16);
    assert!(LeaseKey::new(None, "_operators").is_err(), "no op can take the presence directory's name");

    // A holds an op; B announces itself: one push, beside A's op lease on the remote.
    store_a.fetch_every().unwrap();
    all_acquired(store_a.acquire_every(&keys(1), holder_a, TTL, at(0)).unwrap());
    store_b.fetch_every().unwrap();
    let held_b = all_acquired(store_b.acquire_every(std::slice::from_ref(&presence), holder_b, TTL, at(0)).unwrap());
    let mut on_remote = remote_leases(&world, &bare);
    on_remote.sort();
    assert_eq!(on_remote, [presence.op().to_owned(), "op-0".to_owned()]);

    // A sees B's presence through the one fetch of every lease (the glob takes nested refs);
    // nobody sees their own, and a lapsed one is no peer.
    store_a.fetch_every().unwrap();
    let seen = store_a.presences_seen(holder_a, at(1)).unwrap();
    assert_eq!(seen.iter().map(|s| s.record.holder.as_str()).collect::<Vec<_>>(), [holder_b]);
    assert!(store_a.presences_seen(holder_b, at(1)).unwrap().is_empty(), "its own");
    let lapsed = at(i64::try_from(TTL.as_secs() / 60).unwrap() + 1);
    assert!(store_a.presences_seen(holder_a, lapsed).unwrap().is_empty(), "lapsed");

    // B releases it with the same push of deletions as any lease.
    let released = store_b.release_every(&held_b).unwrap();
    assert!(matches!(released[..], [Ok(true)]), "{released:?}");
    assert_eq!(remote_leases(&world, &bare), ["op-0"]);
    store_a.fetch_every().unwrap();
    assert!(store_a.presences_seen(holder_a, at(1)).unwrap().is_empty(), "the fetch prunes it");
}

/// A batch is pushed from the repository's push directory (`.git/chant/push.git`), which borrows
/// its objects and includes its configuration: a remote reachable only through a URL rewrite
/// of the clone's own configuration still takes the batch, the clone's many tags do not slow
/// the push down by what git would match them against, and a push directory made for a clone
/// that has since moved is made again for where it is now.
#[test]
fn a_batch_is_pushed_from_the_push_directory_with_the_clones_own_configuration() {
    let world = World::new();
    let (bare, a, _b) = world.remote_pair();
    // Only the clone's configuration knows where `chant-test:` goes.
    world.git(&a, &["config", &format!("url.{}.insteadOf", bare.display()), "chant-test:"]);
    world.git(&a, &["remote", "set-url", "origin", "chant-test:"]);
    let tags: String = (0..2000)
        .map(|i| format!("create refs/tags/v{i} {}\n", world.git(&a, &["rev-parse", "HEAD"]).trim()))
        .collect();
    world.git_stdin(&a, &["update-ref", "--stdin"], &tags);

    let store = world.store(&a, Some("origin"));
    store.fetch_every().unwrap();
    let held = all_acquired(store.acquire_every(&keys(50), "a:1:aaaaaaaa", TTL, at(0)).unwrap());
    assert_eq!(remote_leases(&world, &bare).len(), 50, "every lease landed through the rewritten URL");
    let push_dir = a.join(".git/chant/push.git");
    let lent = std::fs::read_to_string(push_dir.join("objects/info/alternates")).unwrap();
    assert_eq!(lent.trim_end(), std::fs::canonicalize(a.join(".git/objects")).unwrap().to_str().unwrap());
    assert_eq!(world.git(&push_dir, &["for-each-ref"]), "", "the push directory holds no references");
    assert_eq!(world.git(&push_dir, &["config", "--bool", "core.bare"]).trim(), "true");

    // The clone moves: the push directory lends the old place's objects, and is made again.
    let moved = world.tmp.path().join("moved");
    std::fs::rename(&a, &moved).unwrap();
    let store = world.store(&moved, Some("origin"));
    let released: Vec<bool> = store.release_every(&held).unwrap().into_iter().map(Result::unwrap).collect();
    assert!(released.iter().all(|r| *r), "{released:?}");
    assert_eq!(remote_leases(&world, &bare), Vec::<String>::new());
    let lent = std::fs::read_to_string(moved.join(".git/chant/push.git/objects/info/alternates")).unwrap();
    assert!(lent.starts_with(std::fs::canonicalize(&moved).unwrap().to_str().unwrap()), "{lent}");
}

/// Releasing what this store wrote takes one push and no fetch: the deletions are conditioned on
/// the blobs it wrote (its renewals' included), so the remote deletes only leases still its own.
/// A lease it has no own blob for must be looked at first. Shown with a remote whose fetch URL
/// is broken and whose push URL works.
#[test]
fn releasing_what_this_store_wrote_needs_no_fetch() {
    let world = World::new();
    let (bare, a, b) = world.remote_pair();
    let store_a = world.store(&a, Some("origin"));
    let store_b = world.store(&b, Some("origin"));
    let keys = keys(3);
    store_a.fetch_every().unwrap();
    let held = all_acquired(store_a.acquire_every(&keys[..2], "a:1:aaaaaaaa", TTL, at(0)).unwrap());
    // A renewal lands after `held` was taken: the release conditions on the renewal's blob.
    let renewed = store_a.renew_every(&held, TTL, at(1)).unwrap();
    assert!(renewed.iter().all(|r| matches!(r, Ok(Renewal::Renewed(_)))), "{renewed:?}");
    store_b.fetch_every().unwrap();
    let (b2, _) = acquired(store_b.acquire(&keys[2], "b:1:bbbbbbbb", TTL, at(1)).unwrap());

    let broken = world.tmp.path().join("no-such-remote.git");
    world.git(&a, &["config", "remote.origin.pushurl", bare.to_str().unwrap()]);
    world.git(&a, &["config", "remote.origin.url", broken.to_str().unwrap()]);
    assert!(store_a.fetch_every().is_err(), "the fetch URL is broken");

    // `held` (before the renewal) and a Held naming B's blob under A's holder.
    let forged =
        Held { record: chant::lease::LeaseRecord { holder: "a:1:aaaaaaaa".into(), ..b2.record.clone() }, ..b2 };
    let mut releasing = held;
    releasing.push(forged);
    let released = store_a.release_every(&releasing).unwrap();
    assert!(matches!(released[..2], [Ok(true), Ok(true)]), "released without a fetch: {released:?}");
    assert!(released[2].is_err(), "B's lease needs a look at the remote, which failed: {:?}", released[2]);
    assert_eq!(remote_leases(&world, &bare), ["op-2"], "B's lease stands");
    assert_eq!(world.lease_ref(&a, "op-0"), None, "the local refs went with the remote's");
}
