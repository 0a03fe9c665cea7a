//! Fuzz targets: one entry point for every parser of input that comes from outside chant (op.json,
//! ledger lines and shard names, gate facts, lease blobs, `chant.toml`, the workspace box block,
//! cron, durations, `services list` output in both forms, supervisor protocol messages, behaviour
//! engine answers, `CHANT_NOW`, an observer's reading, git's output, approvers and URLs, the
//! redactor over free text, sealed gate facts and the gate audit's lines, gate plan documents,
//! accepted observation baselines, a tick record's notification events and their payloads, and the
//! names, comments, defaults and contents `import` writes into a generated module).
//!
//! Each target takes arbitrary bytes, runs them through the parser as chant does with the
//! outside input, and goes on through what chant does with a parse that succeeds (validating a
//! document, deciding a gate, computing a fire time), so that a panic anywhere on that path
//! shows. A target never panics and never asserts: the property is "returns". The driver is
//! `chant/tests/integration/fuzz.rs` (proptest over bytes, mutated seeds from
//! `chant/tests/fuzz-corpus/<target>/` and dictionary tokens); `README.md` has the campaign
//! command. Nothing here is for programs: it is public only so that the test binary reaches it.

use std::borrow::Cow;
use std::path::Path;

use jiff::Timestamp;

use crate::ledger::{ShardKey, fuzz as ledger_fuzz};

/// One fuzz target.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Its name (the corpus directory's too).
    pub name: &'static str,
    /// Runs one input through it.
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target { name: "op_json", run: op_json },
    Target { name: "ledger_lines", run: ledger_lines },
    Target { name: "shard_names", run: shard_names },
    Target { name: "gate_facts", run: gate_facts },
    Target { name: "lease_blob", run: lease_blob },
    Target { name: "chant_toml", run: chant_toml },
    #[cfg(feature = "box")]
    Target { name: "workspace_box", run: workspace_box },
    Target { name: "cron", run: cron },
    Target { name: "duration", run: duration },
    #[cfg(feature = "box")]
    Target { name: "services_list", run: services_list },
    #[cfg(feature = "box")]
    Target { name: "supervisor_messages", run: supervisor_messages },
    Target { name: "behaviour_answer", run: behaviour_answer },
    Target { name: "chant_now", run: chant_now },
    Target { name: "observer_reading", run: observer_reading },
    Target { name: "git_output", run: git_output },
    Target { name: "approval", run: approval },
    Target { name: "redact", run: redact },
    Target { name: "gate_seals", run: gate_seals },
    Target { name: "plan_documents", run: plan_documents },
    Target { name: "baseline_documents", run: baseline_documents },
    #[cfg(feature = "notify")]
    Target { name: "notify_payloads", run: notify_payloads },
    #[cfg(all(feature = "import", feature = "postgres"))]
    Target { name: "import_module", run: import_module },
];

/// A fixed instant inside the range every parser accepts.
fn now() -> Timestamp {
    Timestamp::from_second(1_780_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Splits off the first line: a target's option, the rest its input.
fn head(text: &str) -> (&str, &str) {
    text.split_once('\n').unwrap_or((text, ""))
}

fn op_json(bytes: &[u8]) {
    let text = text(bytes);
    let report = crate::model::validate::check_set([("fuzz.json", &*text)]);
    for (_, doc) in &report.documents {
        let _ = crate::tick::execute::op_digest(doc);
        let _ = doc.folded_class();
        for step in doc.phases.iter().chain(&doc.on_failure).flat_map(|p| &p.steps) {
            let _ = step.expanded(&|name: &str| name.len().is_multiple_of(2).then(|| "v".to_owned()));
        }
    }
}

fn converge_key() -> Option<ShardKey> {
    ShardKey::converge(None, "staging", "staging-converge").ok()
}

fn ledger_lines(bytes: &[u8]) {
    let Some(key) = converge_key() else { return };
    let legacy = bytes.first().is_some_and(|b| b % 2 == 1);
    let ticks = ledger_fuzz::shard_content::<crate::tick::TickRecord>(&key, bytes, legacy);
    if let Some(newest) = ticks.records.last() {
        let _ = crate::schedule::LastTick::from_stamps(&newest.record.started_at, &newest.record.timestamp);
        let _ = newest.record.summary.line("staging");
    }
    let _ = ledger_fuzz::shard_content::<crate::runner::RunRecord>(&key, bytes, legacy);
    let _ = ledger_fuzz::shard_content::<crate::lexicon::files::ApplyRecord>(&key, bytes, legacy);
}

fn shard_names(bytes: &[u8]) {
    let text = text(bytes);
    let (path, rest) = head(&text);
    let mut parts = path.splitn(3, '/');
    let (member, env, op) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let key = ShardKey::converge(member.filter(|m| !m.is_empty()), env, op);
    let dir = key.map(|k| k.dir()).unwrap_or_else(|_| "s/op/converge".to_owned());
    let (buckets, shards) = rest.split_once("\n\n").unwrap_or((rest, ""));
    let buckets: Vec<&str> = buckets.lines().collect();
    let shards: Vec<&str> = shards.lines().collect();
    let _ = ledger_fuzz::shard_names(&dir, &buckets, &shards);
}

fn gate_facts(bytes: &[u8]) {
    let Ok(key) = ShardKey::gate(None, "prod-apply") else { return };
    let facts: Vec<crate::gate::GateFact> =
        ledger_fuzz::shard_content(&key, bytes, false).records.into_iter().map(|s| s.record).collect();
    for f in &facts {
        let _ = crate::gate::decide(&facts, &f.op, &f.gate, f.resource.as_deref(), now());
    }
    let _ = crate::gate::pending(&facts, now());
    let _ = crate::gate::pending(&facts, Timestamp::MAX);
}

fn lease_blob(bytes: &[u8]) {
    if let Some(record) = crate::lease::LeaseRecord::parse(bytes) {
        for at in [now(), Timestamp::MIN, Timestamp::MAX] {
            let _ = (record.is_live(at), record.is_stale(at));
        }
    }
}

fn chant_toml(bytes: &[u8]) {
    let text = text(bytes);
    let path = Path::new("/fuzz/chant.toml");
    for keys in [crate::config::Keys::Any, crate::config::Keys::Registered] {
        if let Ok(config) = crate::config::Config::parse(path, &text, keys) {
            let _ = config.secret_vars();
            for env in config.envs.values() {
                for value in env.values().values() {
                    let _ = config.resolve(value);
                }
            }
        }
    }
}

#[cfg(feature = "box")]
fn workspace_box(bytes: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else { return };
    if let Ok(decl) = crate::lexicon::sprite::BoxDeclaration::from_value(&value) {
        for service in decl.start_order() {
            let _ = service.argv(&|name: &str| name.len().is_multiple_of(2).then(|| "v".to_owned()));
        }
    }
}

fn cron(bytes: &[u8]) {
    let text = text(bytes);
    let (expr, tz) = head(&text);
    let _ = crate::model::cron::parse_cron(expr);
    let tz = Some(tz).filter(|t| !t.is_empty());
    if let Ok(schedule) = crate::schedule::Schedule::parse(expr, tz) {
        let _ = schedule.next_after(now());
        let _ = schedule.fire_in(now(), Timestamp::MAX);
        let _ = schedule.next_after(Timestamp::MAX);
    }
}

fn duration(bytes: &[u8]) {
    let text = text(bytes);
    if let Ok(d) = crate::duration::parse(&text) {
        let _ = crate::duration::format(d);
    }
    let _ = crate::duration::Timeout::parse(&text);
}

#[cfg(feature = "box")]
fn services_list(bytes: &[u8]) {
    let _ = crate::lexicon::sprite::parse_list(&text(bytes));
}

#[cfg(feature = "box")]
fn supervisor_messages(bytes: &[u8]) {
    use crate::supervisor::{Event, Request, Response, Service};
    let text = text(bytes);
    if let Ok(request) = serde_json::from_str::<Request>(&text) {
        for name in request.names() {
            let _ = crate::supervisor::check_name(name);
        }
    }
    let _ = serde_json::from_str::<Response>(&text);
    let _ = serde_json::from_str::<Event>(&text);
    let _ = serde_json::from_str::<Vec<Service>>(&text);
    let words: Vec<&str> = text.split_whitespace().collect();
    crate::supervisor::fuzz_args(&words);
}

fn behaviour_answer(bytes: &[u8]) {
    let _ = crate::behaviour::wire::parse_answer(&text(bytes));
}

fn chant_now(bytes: &[u8]) {
    let text = text(bytes);
    // `@` names a clock file: the target parses instants, it does not read files.
    if !text.trim_start().starts_with('@')
        && let Ok(clock) = crate::clock::Clock::from_value(Some(&text))
    {
        let _ = crate::clock::format(clock.now());
    }
    if let Some(at) = crate::clock::parse(&text) {
        let _ = crate::clock::format(at);
    }
}

fn observer_reading(bytes: &[u8]) {
    let _ = crate::tick::parse_observation(&text(bytes), "staging");
}

fn git_output(bytes: &[u8]) {
    use crate::git::porcelain;
    let text = text(bytes);
    let _ = porcelain::parse_version(&text);
    for line in porcelain::parse_push(&text) {
        let _ = porcelain::classify_refusal(&line, &text);
    }
    let _ = porcelain::classify_fetch_failure(&text);
    let _ = crate::git::blame::parse(&text);
}

fn approval(bytes: &[u8]) {
    let text = text(bytes);
    let _ = crate::approval::Approver::parse(&text);
    let _ = crate::approval::ApprovalUrl::parse(&text);
    let _ = crate::model::Name::parse("op name", text.as_ref());
    let _ = crate::terminal::printable(&text).to_string();
}

fn redact(bytes: &[u8]) {
    let text = text(bytes);
    let redactor = crate::redact::Redactor::new([String::from("s3cr3t-value")]);
    let _ = redactor.redact(&text);
    let _ = redactor.record(&text);
    let _ = crate::redact::sanitise(&text);
    let _ = crate::redact::strip_url_password(&text);
}

/// Gate facts as lines (sealed or not): each resolution checked against each pending fact as a
/// run checks a seal before `ssh-keygen` ([`crate::gate::seal::covers`], its signed payload), the
/// answering sets, and the audit over the same lines, read as a file and as a `git log` patch.
fn gate_seals(bytes: &[u8]) {
    use crate::gate::{FactKind, GateFact, audit, seal};
    let text = text(bytes);
    let facts: Vec<GateFact> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    for p in facts.iter().filter(|f| f.kind == FactKind::Pending) {
        for r in facts.iter().filter(|f| f.kind == FactKind::Resolution) {
            let _ = seal::covers(r, p);
            let _ = seal::payload(r);
        }
        let _ = seal::answering(&facts, &p.op, &p.gate, p.resource.as_deref());
        let _ = seal::after_standing(&facts, &p.op, &p.gate, p.resource.as_deref());
    }
    let _ = seal::unsealed_standing(&facts, now());
    let sealed = |_: &str, _: &str| true;
    for lines in [audit::file_lines("_gates/fuzz/0/0.jsonl", &text), audit::lines_from_log(&text)] {
        let ledgers = [audit::GateLedger { op: "fuzz".to_owned(), lines }];
        let mut input = audit::Input::new(&ledgers);
        input.sealed = &sealed;
        let _ = audit::derive(&input);
    }
}

/// A gate plan document, alone and as the plan of a pending fact: its digest, its lines, what
/// changed from it to itself, and the check `approve` makes before showing or approving it.
fn plan_documents(bytes: &[u8]) {
    use crate::gate::plan::{self, GatePlan};
    let text = text(bytes);
    if let Ok(p) = serde_json::from_str::<GatePlan>(&text) {
        let _ = (p.digest(), p.lines(), plan::changed(&p.changes, &p.changes));
    }
    if let Ok(fact) = serde_json::from_str::<crate::gate::GateFact>(&text) {
        let _ = plan::check_recorded(&fact).map_err(|e| e.to_string());
        let _ = fact.plan_digest.as_deref().map(plan::is_digest);
    }
}

/// An accepted observation baseline as the ledger holds it: parsed for env `site`, written back
/// and parsed again, subtracted from a report that drifts at every accepted path, each path
/// split as `--clear` splits it, and cleared.
fn baseline_documents(bytes: &[u8]) {
    use crate::observe::deep::baseline::{self, Baseline};
    use crate::observe::deep::{EntityDeep, PathDrift};
    let Ok(mut b) = Baseline::parse_for(bytes, "chant/lifecycle:site/observation-baseline.json", "site") else {
        return;
    };
    let _ = Baseline::parse(b.to_document().as_bytes(), "again");
    let entities: Vec<String> = b.accepted.iter().map(|a| a.entity.clone()).collect();
    let names: Vec<&str> = entities.iter().map(String::as_str).collect();
    for a in b.accepted.clone() {
        let drift = PathDrift {
            path: a.path.clone(),
            declared: serde_json::Value::Null,
            live: Some(a.value.clone()),
            owner: None,
            baseline: None,
        };
        let mut report = EntityDeep {
            entity: a.entity.clone(),
            kind: None,
            drift: vec![drift],
            unclaimed: Vec::new(),
            baselined: Vec::new(),
            subentities: std::collections::BTreeMap::new(),
        };
        b.subtract(&mut report);
        let _ = baseline::split_target(&format!("{}.{}", a.entity, a.path), &names);
        b.clear(&a.entity, &a.path);
    }
}

/// A tick record read from the ledger, through the events it raises under a context taken from
/// the input, to each event's payload (the JSON a webhook receives and a command reads), which
/// must read back as JSON.
#[cfg(feature = "notify")]
fn notify_payloads(bytes: &[u8]) {
    let text = text(bytes);
    let (option, rest) = head(&text);
    let Ok(record) = serde_json::from_str::<crate::tick::TickRecord>(rest) else { return };
    let n = option.bytes().fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(u64::from(b)));
    let why = |rule: &str| rule.len().is_multiple_of(2).then(|| format!("why {rule}"));
    let cx = crate::notify::event::Context {
        why: &why,
        unknown_run: n % 7,
        unknown_ticks: n % 5,
        problem_open: n.is_multiple_of(2),
        unknown_sent: n.is_multiple_of(3),
    };
    let _ = crate::notify::event::is_unknown(&record);
    for event in crate::notify::event::events(&record, &cx) {
        let _ = event.is_problem();
        if let Ok(body) = serde_json::to_string(&event) {
            let read: Result<serde_json::Value, _> = serde_json::from_str(&body);
            if read.is_err() {
                broken("a notification payload does not read back as JSON", &body);
            }
        }
    }
}

/// Reports a broken property to the driver: a fuzz target's one way to say "this input breaks
/// what chant promises", as a panic the driver catches, shrinks and prints.
#[cfg(any(feature = "notify", feature = "import"))]
#[expect(clippy::panic, reason = "the fuzz driver catches a target's panic and shrinks its input")]
fn broken(property: &str, detail: &str) {
    panic!("{property}:\n{detail}");
}

/// The names, types, defaults, comments, definitions, paths and contents `import` writes into a
/// module, taken from the input's lines (a postgres table with a column, a constraint and an
/// index, and a file, each field one line), generated and rendered as `import` renders them. The
/// property: the module renders, and is valid Rust that holds no character rustc refuses
/// (`render_module` checks it; an input it refuses is a broken property, not a skipped one), and
/// no doc line holds a secret.
#[cfg(all(feature = "import", feature = "postgres"))]
fn import_module(bytes: &[u8]) {
    use crate::lexicon::export::{Attr, ExportOptions, ExportOwnership, ExportedResource, ExportedTemplate};
    use crate::lexicon::postgres::export::attr;
    let text = text(bytes);
    let mut fields = text.split('\n');
    let mut next = || fields.next().unwrap_or_default().to_owned();
    let env = next();
    let redactor = crate::redact::Redactor::new([String::from("s3cr3t-value")]);
    let (schema, table, source) = (next(), next(), next());
    let mut t = ExportedTemplate::new("postgres", &env, &source, next());
    t.push(ExportedResource::new("schema", schema.clone(), ExportOwnership::Foreign));
    let column = ExportedResource::new("column", next(), ExportOwnership::Foreign)
        .attr(attr::TYPE, Attr::Text(next()))
        .attr(attr::NOT_NULL, Attr::Flag(bytes.len().is_multiple_of(2)))
        .attr(attr::DEFAULT, Attr::Text(next()))
        .attr(attr::COMMENT, Attr::Text(next()));
    let constraint = ExportedResource::new("constraint", next(), ExportOwnership::Foreign)
        .attr(attr::CONSTRAINT, Attr::Text(next()))
        .attr(attr::DEFINITION, Attr::Text(next()));
    let index = ExportedResource::new("index", next(), ExportOwnership::Foreign)
        .attr(attr::DEFINITION, Attr::Text(next()))
        .attr(attr::COLUMNS, Attr::Names(vec![next(), next()]))
        .attr(attr::UNIQUE, Attr::Flag(bytes.len().is_multiple_of(3)));
    t.push(
        ExportedResource::new("table", format!("{schema}.{table}"), ExportOwnership::Foreign)
            .attr(attr::COMMENT, Attr::Text(next()))
            .child(column)
            .child(constraint)
            .child(index),
    );
    let walk = crate::lexicon::files::export::Walk {
        files: vec![crate::lexicon::files::export::LiveFile {
            path: next(),
            mode: 0o644,
            content: next().into_bytes(),
        }],
        skipped: vec![next()],
    };
    let files = crate::lexicon::files::export::template(&walk, &env, &next(), "now", &ExportOptions::default());
    let (Ok(pg), Ok(fs)) = (
        crate::lexicon::postgres::codegen::generate(&t, &redactor),
        crate::lexicon::files::export::generate(&files, &redactor),
    ) else {
        return;
    };
    let command = format!("chant import --from {env} --select {}", next());
    match crate::lexicon::export::render_module(&env, &command, &[(&t, &pg), (&files, &fs)], &redactor) {
        Ok(source) => {
            // Free text is redacted; a name is the declaration itself and stays.
            if source.lines().any(|l| l.trim_start().starts_with("//") && l.contains("s3cr3t-value")) {
                broken("a secret reached the module's docs", &source);
            }
        }
        Err(e) => broken("the module does not render", &format!("{e}: {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::TARGETS;

    #[test]
    fn targets_take_the_empty_input_and_have_distinct_names() {
        for t in TARGETS {
            (t.run)(b"");
        }
        let mut names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TARGETS.len());
    }
}
