//! Table tests of the audit: one case per entry kind and per gap.

use serde_json::json;

use super::*;

const PENDING: &str = r#"{"version":1,"kind":"pending","op":"tf-apply","gate":"wave-1","timestamp":"2026-09-05T10:00:00.000Z","expiresAt":"2026-09-07T10:00:00.000Z","planDigest":"sha256:aa"}"#;
const APPROVAL: &str = r#"{"version":1,"op":"tf-apply","gate":"wave-1","resolvedBy":"alex","timestamp":"2026-09-05T11:00:00.000Z","planDigest":"sha256:aa","relayedBy":"bot"}"#;

const PENDING_R1: &str = r#"{"version":1,"kind":"pending","op":"tf-apply","gate":"wave-1","env":"prod","runId":"r1","timestamp":"2026-09-05T10:00:00.000Z","expiresAt":"2026-09-07T10:00:00.000Z","planDigest":"sha256:aa"}"#;
const SEALED_R1: &str = r#"{"version":1,"kind":"resolution","op":"tf-apply","gate":"wave-1","env":"prod","runId":"r1","resolvedBy":"alex","timestamp":"2026-09-05T10:10:00.000Z","planDigest":"sha256:aa","seal":{"signer":"alex","signature":"s"}}"#;
const SEALED_R1_OTHER_TIME: &str = r#"{"version":1,"kind":"resolution","op":"tf-apply","gate":"wave-1","env":"prod","runId":"r1","resolvedBy":"alex","timestamp":"2026-09-05T10:20:00.000Z","planDigest":"sha256:aa","seal":{"signer":"alex","signature":"s"}}"#;
const PENDING_R2: &str = r#"{"version":1,"kind":"pending","op":"tf-apply","gate":"wave-1","env":"prod","runId":"r2","timestamp":"2026-09-05T11:00:00.000Z","expiresAt":"2026-09-07T11:00:00.000Z","planDigest":"sha256:bb"}"#;
const SEALED_R2: &str = r#"{"version":1,"kind":"resolution","op":"tf-apply","gate":"wave-1","env":"prod","runId":"r2","resolvedBy":"alex","timestamp":"2026-09-05T11:10:00.000Z","planDigest":"sha256:bb","seal":{"signer":"alex","signature":"s"}}"#;

fn ledger(op: &str, lines: &[&str]) -> GateLedger {
    let text = lines.join("\n");
    GateLedger { op: op.to_owned(), lines: file_lines(&format!("_gates/{op}.jsonl"), &text) }
}

fn kinds(audit: &Audit) -> Vec<EntryKind> {
    audit.entries.iter().map(|e| e.kind).collect()
}

fn gaps(audit: &Audit) -> Vec<GapKind> {
    audit.gaps.iter().map(|g| g.kind).collect()
}

fn apply(at: &str, gate: &str, digest: Option<&str>) -> Apply {
    Apply {
        reference: format!("reports/{at}"),
        at: at.into(),
        op: None,
        gate: gate.into(),
        digest: digest.map(Into::into),
    }
}

#[test]
fn each_ledger_line_kind_is_its_entry_kind() {
    let cases: &[(&str, &[&str], &[EntryKind])] = &[
        ("a request", &[PENDING], &[EntryKind::ApprovalRequested]),
        ("an approval", &[PENDING, APPROVAL], &[EntryKind::ApprovalRequested, EntryKind::Approved]),
        (
            "an override request and record",
            &[
                r#"{"version":1,"kind":"pending","op":"tf-apply","gate":"override-no-friday","timestamp":"t","expiresAt":"u"}"#,
                r#"{"version":1,"op":"tf-apply","gate":"override-no-friday","resolvedBy":"sam","timestamp":"t","note":"hotfix"}"#,
            ],
            &[EntryKind::OverrideRequested, EntryKind::OverrideRecorded],
        ),
        (
            "chant's expire",
            &[
                PENDING,
                r#"{"version":1,"kind":"expired","op":"tf-apply","gate":"wave-1","resolvedBy":"alex","timestamp":"t","env":"","runId":"r"}"#,
            ],
            &[EntryKind::ApprovalRequested, EntryKind::Expired],
        ),
        (
            "chant's passed fact is an apply under the approval",
            &[
                PENDING,
                APPROVAL,
                r#"{"version":1,"kind":"passed","op":"tf-apply","gate":"wave-1","resolvedBy":"alex","timestamp":"2026-09-05T12:00:00.000Z","env":"prod","runId":"r"}"#,
            ],
            &[EntryKind::ApprovalRequested, EntryKind::Approved, EntryKind::Applied],
        ),
    ];
    for (name, lines, want) in cases {
        let l = [ledger("tf-apply", lines)];
        let audit = derive(&Input::new(&l));
        assert_eq!(kinds(&audit), *want, "{name}");
        assert!(audit.gaps.is_empty(), "{name}: {:?}", audit.gaps);
    }
    let l = [ledger("tf-apply", &[PENDING, APPROVAL])];
    let audit = derive(&Input::new(&l));
    let approved = &audit.entries[1];
    assert_eq!((approved.approver.as_deref(), approved.relayed_by.as_deref()), (Some("alex"), Some("bot")));
    assert_eq!(approved.seal, Some(Seal::Unsigned));
    assert_eq!(approved.plan_digest.as_deref(), Some("sha256:aa"));
    let source = approved.source.as_ref().unwrap();
    assert_eq!((source.path.as_str(), source.line, source.text.as_str()), ("_gates/tf-apply.jsonl", 2, APPROVAL));
    let l = [ledger(
        "policy-override",
        &[
            r#"{"version":1,"op":"policy-override","gate":"any","resolvedBy":"sam","timestamp":"t","note":"incident 12"}"#,
        ],
    )];
    let audit = derive(&Input::new(&l));
    assert_eq!(kinds(&audit), [EntryKind::OverrideRecorded]);
    assert_eq!(audit.entries[0].note.as_deref(), Some("incident 12"), "the reason is in the note");
}

#[test]
fn seal_says_how_an_approval_was_authorised() {
    let cases = [
        (r#""seal":{"signer":"alex@example.org","signature":"x"}"#, Seal::Sealed, true, Some("alex@example.org")),
        (r#""via":"pr-review""#, Seal::Review, false, None),
        (r#""review":{"url":"https://github.com/o/r/pull/1"}"#, Seal::Review, false, None),
        (r#""via":"pr-review","seal":{"signer":"bo","signature":"x"}"#, Seal::Review, true, Some("bo")),
        (r#""note":"plain""#, Seal::Unsigned, false, None),
    ];
    for (extra, seal, sealed, signer) in cases {
        let line =
            format!(r#"{{"version":1,"op":"tf-apply","gate":"wave-1","resolvedBy":"alex","timestamp":"t",{extra}}}"#);
        let l = [ledger("tf-apply", &[PENDING, &line])];
        let audit = derive(&Input::new(&l));
        let e = &audit.entries[1];
        assert_eq!((e.seal, e.sealed, e.signer.as_deref()), (Some(seal), sealed, signer), "{extra}");
    }
}

/// A name, ledgers, applies, whether gate `wave-1` needs a seal, and the gaps.
type GapCase = (&'static str, Vec<GateLedger>, Vec<Apply>, bool, Vec<GapKind>);

#[test]
fn each_gap_is_found() {
    let sealed_line = r#"{"version":1,"op":"tf-apply","gate":"wave-1","resolvedBy":"alex","timestamp":"t","seal":{"signer":"a","signature":"s"}}"#;
    let needs_seal = |_: &str, g: &str| g == "wave-1";
    let cases: Vec<GapCase> = vec![
        (
            "approval without request",
            vec![ledger("tf-apply", &[APPROVAL])],
            vec![],
            false,
            vec![GapKind::ApprovalWithoutRequest],
        ),
        ("unsealed", vec![ledger("tf-apply", &[PENDING, APPROVAL])], vec![], true, vec![GapKind::Unsealed]),
        (
            "unsealed, the request saying its gate is sealed (the stock binary knows no op)",
            vec![ledger(
                "tf-apply",
                &[&PENDING.replace(r#""kind":"pending","#, r#""kind":"pending","sealed":true,"#), APPROVAL],
            )],
            vec![],
            false,
            vec![GapKind::Unsealed],
        ),
        ("sealed is no gap", vec![ledger("tf-apply", &[PENDING, sealed_line])], vec![], true, vec![]),
        (
            "a seal of chant's request is no gap",
            vec![ledger("tf-apply", &[PENDING_R2, SEALED_R2])],
            vec![],
            true,
            vec![],
        ),
        (
            "a seal of another request is misplaced",
            vec![ledger("tf-apply", &[PENDING_R1, SEALED_R1, PENDING_R2, SEALED_R1_OTHER_TIME])],
            vec![],
            true,
            vec![GapKind::MisplacedSeal],
        ),
        (
            "a seal of another plan is misplaced",
            vec![ledger("tf-apply", &[PENDING_R2, &SEALED_R2.replace("sha256:bb", "sha256:cc")])],
            vec![],
            true,
            vec![GapKind::MisplacedSeal],
        ),
        (
            "a sealed line replayed unchanged is misplaced",
            vec![ledger("tf-apply", &[PENDING_R2, SEALED_R2, SEALED_R2])],
            vec![],
            true,
            vec![GapKind::MisplacedSeal],
        ),
        (
            "an apply with no approval",
            vec![ledger("tf-apply", &[PENDING])],
            vec![apply("2026-09-05T12:00:00Z", "wave-1", None)],
            false,
            vec![GapKind::Approval],
        ),
        (
            "an apply of another plan",
            vec![ledger("tf-apply", &[PENDING, APPROVAL])],
            vec![apply("2026-09-05T12:00:00Z", "wave-1", Some("sha256:bb"))],
            false,
            vec![GapKind::Approval],
        ),
        (
            "an apply before the approval",
            vec![ledger("tf-apply", &[PENDING, APPROVAL])],
            vec![apply("2026-09-05T10:30:00Z", "wave-1", None)],
            false,
            vec![GapKind::Approval],
        ),
        (
            "one approval admits one apply",
            vec![ledger("tf-apply", &[PENDING, APPROVAL])],
            vec![
                apply("2026-09-05T12:00:00Z", "wave-1", Some("sha256:aa")),
                apply("2026-09-05T13:00:00Z", "wave-1", None),
            ],
            false,
            vec![GapKind::Approval],
        ),
        (
            "an override apply with no override",
            vec![],
            vec![apply("2026-09-05T12:00:00Z", "override-no-friday", None)],
            false,
            vec![GapKind::Override],
        ),
        (
            "a passed fact with nothing behind it",
            vec![ledger(
                "tf-apply",
                &[
                    r#"{"version":1,"kind":"passed","op":"tf-apply","gate":"wave-1","resolvedBy":"x","timestamp":"t","env":"p","runId":"r"}"#,
                ],
            )],
            vec![],
            false,
            vec![GapKind::Approval],
        ),
        (
            "malformed",
            vec![ledger("tf-apply", &["garbage", r#"{"version":1,"op":"tf-apply"}"#])],
            vec![],
            false,
            vec![GapKind::MalformedLine, GapKind::MalformedLine],
        ),
    ];
    for (name, ledgers, applies, seal, want) in cases {
        let mut input = Input::new(&ledgers);
        input.applies = &applies;
        if seal {
            input.sealed = &needs_seal;
        }
        let audit = derive(&input);
        assert_eq!(gaps(&audit), want, "{name}: {:?}", audit.gaps);
    }
    let l = [ledger("tf-apply", &[PENDING, "garbage"])];
    let audit = derive(&Input::new(&l));
    let g = &audit.gaps[0];
    assert!(g.message.starts_with("_gates/tf-apply.jsonl:2: not a gate fact: not JSON"), "{}", g.message);
    assert_eq!(g.source.as_ref().unwrap().text, "garbage");
}

#[test]
fn applies_point_at_the_approval_they_ran_under_and_overrides_are_spent() {
    let over = r#"{"version":1,"op":"tf-apply","gate":"override-freeze","resolvedBy":"sam","timestamp":"2026-09-05T11:00:00.000Z","note":"incident"}"#;
    let over_req = r#"{"version":1,"kind":"pending","op":"tf-apply","gate":"override-freeze","timestamp":"2026-09-05T10:00:00.000Z","expiresAt":"u"}"#;
    let l = [ledger("tf-apply", &[PENDING, APPROVAL, over_req, over])];
    let applies = [
        apply("2026-09-05T12:00:00Z", "wave-1", Some("sha256:aa")),
        apply("2026-09-05T12:00:00Z", "override-freeze", None),
    ];
    let mut input = Input::new(&l);
    input.applies = &applies;
    let audit = derive(&input);
    assert!(audit.gaps.is_empty(), "{:?}", audit.gaps);
    let applied = audit.entries.iter().find(|e| e.kind == EntryKind::Applied).unwrap();
    assert_eq!(applied.under.as_ref(), Some(&audit.entries[1].id));
    assert_eq!(applied.reference.as_deref(), Some("reports/2026-09-05T12:00:00Z"));
    assert_eq!(applied.op, "tf-apply");
    let spent = audit.entries.iter().find(|e| e.kind == EntryKind::OverrideSpent).unwrap();
    assert_eq!(spent.under.as_ref(), Some(&audit.entries[3].id));
}

#[test]
fn ids_digest_source_and_record_and_a_caller_may_supply_its_own() {
    let l = [ledger("tf-apply", &[PENDING, APPROVAL])];
    let a = derive(&Input::new(&l));
    assert!(a.entries.iter().all(|e| e.id.starts_with("sha256:") && e.id.len() == 71));
    assert_ne!(a.entries[0].id, a.entries[1].id);
    assert_eq!(derive(&Input::new(&l)), a, "the same lines give the same ids");
    let moved = [GateLedger { op: "tf-apply".into(), lines: vec![Source::at("_gates/x.jsonl", 9, PENDING)] }];
    assert_ne!(derive(&Input::new(&moved)).entries[0].id, a.entries[0].id, "the source is part of the id");

    let own = |e: &Entry| format!("{}#{}", e.source.as_ref().map_or(0, |s| s.line), e.id.len());
    let applies = [apply("2026-09-05T12:00:00Z", "wave-1", None)];
    let mut input = Input::new(&l);
    input.applies = &applies;
    input.id = &own;
    let audit = derive(&input);
    let ids: Vec<&str> = audit.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["1#71", "2#71", "0#71"]);
    assert_eq!(audit.entries[2].under.as_deref(), Some("2#71"), "applies point at the caller's ids");
}

#[test]
fn a_removed_line_is_a_revocation_by_the_removing_commit_and_approvals_carry_committed_by() {
    let log = format!(
        "\u{1e}c1\u{1f}2026-09-05T10:00:00+00:00\u{1f}Runner\u{1f}ci@example.org\n\ndiff --git a/_gates/tf-apply.jsonl b/_gates/tf-apply.jsonl\n--- /dev/null\n+++ b/_gates/tf-apply.jsonl\n@@ -0,0 +1 @@\n+{PENDING}\n\
         \u{1e}c2\u{1f}2026-09-05T11:00:00+00:00\u{1f}Mallory\u{1f}m@example.org\n\ndiff --git a/_gates/tf-apply.jsonl b/_gates/tf-apply.jsonl\n--- a/_gates/tf-apply.jsonl\n+++ b/_gates/tf-apply.jsonl\n@@ -1,0 +2 @@\n+{APPROVAL}\n\
         \u{1e}c3\u{1f}2026-09-06T09:00:00+00:00\u{1f}Lead\u{1f}lead@example.org\n\ndiff --git a/_gates/tf-apply.jsonl b/_gates/tf-apply.jsonl\n--- a/_gates/tf-apply.jsonl\n+++ b/_gates/tf-apply.jsonl\n@@ -2 +1,0 @@\n-{APPROVAL}\n"
    );
    let l = [GateLedger { op: "tf-apply".into(), lines: lines_from_log(&log) }];
    let applies = [apply("2026-09-06T10:00:00Z", "wave-1", None)];
    let mut input = Input::new(&l);
    input.applies = &applies;
    let audit = derive(&input);
    assert_eq!(
        kinds(&audit),
        [EntryKind::ApprovalRequested, EntryKind::Approved, EntryKind::Revoked, EntryKind::Applied]
    );
    let approved = &audit.entries[1];
    assert_eq!(
        approved.committed_by.as_deref(),
        Some("Mallory"),
        "resolvedBy says alex; the commit says who pushed it"
    );
    assert!(approved.committer_mismatch, "Mallory is neither the approver alex nor the relayer bot");
    let revoked = &audit.entries[2];
    assert_eq!(revoked.under.as_ref(), Some(&approved.id));
    assert_eq!(revoked.at, "2026-09-06T09:00:00+00:00");
    let source = revoked.source.as_ref().unwrap();
    assert_eq!((source.commit.as_deref(), source.author.as_deref(), source.removed), (Some("c3"), Some("Lead"), true));
    assert_eq!(gaps(&audit), [GapKind::Approval], "a revoked approval admits nothing");
}

#[test]
fn carried_approvals_are_checked_against_the_old_ledger_when_given() {
    let old_pending = r#"{"version":1,"kind":"pending","op":"old-apply","gate":"rollout","timestamp":"2026-09-01T10:00:00.000Z","expiresAt":"u"}"#;
    let carried = |at: &str| {
        format!(
            r#"{{"version":1,"op":"tf-apply","gate":"wave-1","resolvedBy":"alex","timestamp":"t","carriedFrom":{{"op":"old-apply","gate":"rollout","at":"{at}"}}}}"#
        )
    };
    let good = carried("2026-09-01T10:00:00.000Z");
    let bad = carried("2026-09-02T10:00:00.000Z");
    let cases: Vec<(&str, Vec<GateLedger>, Vec<GapKind>)> = vec![
        ("cited and present", vec![ledger("old-apply", &[old_pending]), ledger("tf-apply", &[&good])], vec![]),
        (
            "cited and absent",
            vec![ledger("old-apply", &[old_pending]), ledger("tf-apply", &[&bad])],
            vec![GapKind::CarriedWithoutSource],
        ),
        (
            "no request in the old ledger",
            vec![ledger("old-apply", &[]), ledger("tf-apply", &[&good])],
            vec![GapKind::ApprovalWithoutRequest],
        ),
        ("without the old ledger, not checked", vec![ledger("tf-apply", &[&bad])], vec![]),
    ];
    for (name, ledgers, want) in cases {
        let audit = derive(&Input::new(&ledgers));
        assert_eq!(gaps(&audit), want, "{name}");
        assert_eq!(audit.entries.last().unwrap().carried_from.as_ref().unwrap().op, "old-apply", "{name}");
    }
}

#[test]
fn decision_records_become_hook_entries_linked_to_approval_and_apply() {
    let l = [ledger("tf-apply", &[PENDING, APPROVAL])];
    let applies = [apply("2026-09-05T12:00:00Z", "wave-1", Some("sha256:aa"))];
    let record = json!({"gate": "wave-1", "digest": "sha256:aa", "outcomes": [
        {"moment": "before-apply", "name": "smoke", "outcome": "passed", "exit": 0},
        {"moment": "after-apply", "name": "canary", "target": "eu", "outcome": "held", "reason": "waiting on the lead"},
    ]});
    let decisions = [
        Decision { reference: "decisions/1.json".into(), at: "2026-09-05T12:30:00Z".into(), record: record.clone() },
        Decision { reference: "decisions/2.json".into(), at: "t".into(), record: Value::String(record.to_string()) },
        Decision { reference: "decisions/3.json".into(), at: "t".into(), record: json!({"not": "a record"}) },
        Decision {
            reference: "decisions/4.json".into(),
            at: "t".into(),
            record: json!({"gate": "g", "outcomes": [{"moment": "m", "name": "n", "outcome": "maybe"}]}),
        },
    ];
    let mut input = Input::new(&l);
    input.applies = &applies;
    input.decisions = &decisions;
    let audit = derive(&input);
    let hooks: Vec<&Entry> = audit.entries.iter().filter(|e| e.kind == EntryKind::Hook).collect();
    assert_eq!(hooks.len(), 4, "two outcomes, from the object and from its text");
    let applied = audit.entries.iter().find(|e| e.kind == EntryKind::Applied).unwrap();
    for h in &hooks {
        assert_eq!(h.under.as_ref(), Some(&audit.entries[1].id));
        assert_eq!(h.applied.as_ref(), Some(&applied.id));
        assert_eq!(h.wave.as_deref(), Some("wave-1"));
    }
    assert_eq!(hooks[1].hook.as_ref().unwrap().outcome, "held");
    assert_eq!(hooks[1].hook.as_ref().unwrap().target.as_deref(), Some("eu"));
    assert_eq!(gaps(&audit), [GapKind::MalformedLine, GapKind::MalformedLine]);
    assert_eq!(audit.gaps[0].reference.as_deref(), Some("decisions/3.json"));
    assert!(audit.gaps[1].message.contains("\"maybe\""), "{}", audit.gaps[1].message);
}

#[test]
fn the_committer_is_compared_with_the_approver_except_for_chants_own_identity() {
    let by = |author: &str, email: &str| {
        let mut s = Source::at("_gates/tf-apply/0/0.jsonl", 2, APPROVAL);
        s.commit = Some("c2".into());
        s.author = Some(author.into());
        s.email = Some(email.into());
        s
    };
    let fact: GateFact = serde_json::from_str(APPROVAL).unwrap();
    for (author, email, mismatch) in [
        ("alex", "chant@localhost", false),
        ("Alex", "a@example.org", false),
        ("Alex Smith", "alex@example.org", false),
        ("bot", "ci@example.org", false),
        ("chant", "chant@localhost", false),
        ("mallory", "mallory@example.org", true),
        ("chant", "mallory@example.org", true),
    ] {
        assert_eq!(committer_mismatch(&by(author, email), &fact), mismatch, "{author} <{email}>");
    }
    assert!(!committer_mismatch(&Source::at("p", 1, APPROVAL), &fact), "a line read without its commit");
}
