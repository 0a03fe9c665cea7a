//! The op.json loader: parses a set of op.json documents and re-validates them against the same
//! contract the macros enforce at compile time.
//!
//! This is the runtime backstop for a rule table that did not come through the macros (edited by
//! hand, written by another tool, or older than this build): every compile-time refusal is
//! refused here too, naming the file, the op, the rule id and the reason. A set is checked
//! together because `run()` targets live in other documents.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use super::contract::{self, ClassKind, SymptomKind};
use super::cron::parse_cron;
use super::name::Name;
use super::op::{OP_JSON_VERSION, OpDocument, Step};
use super::rule::{Action, Predicate, Rule, Source, check_predicate};

/// One problem found in an op.json document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where the document came from (a path, or `embedded:<name>`).
    pub origin: String,
    /// The op's name, once known.
    pub op: Option<String>,
    /// The rule's id, for a problem in a rule.
    pub rule: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.origin)?;
        match (&self.op, &self.rule) {
            (Some(op), Some(rule)) => write!(f, "op \"{op}\", rule \"{rule}\": ")?,
            (Some(op), None) => write!(f, "op \"{op}\": ")?,
            (None, Some(rule)) => write!(f, "rule \"{rule}\": ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in a set of documents; empty means the set is valid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The documents that parsed, by origin, in input order.
    pub documents: Vec<(String, OpDocument)>,
    /// Every problem, in input order.
    pub problems: Vec<Problem>,
}

impl Report {
    /// Returns true when no problem was found.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Parses and validates a set of op.json texts, given as `(origin, text)` pairs, together.
pub fn check_set<'a>(inputs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Report {
    let mut report = Report::default();
    for (origin, text) in inputs {
        let mut p = Ctx { origin, op: None, problems: &mut report.problems };
        if let Some(doc) = parse_document(&mut p, text) {
            report.documents.push((origin.to_owned(), doc));
        }
    }
    check_documents(&mut report);
    report
}

struct Ctx<'a, 'p> {
    origin: &'a str,
    op: Option<String>,
    problems: &'p mut Vec<Problem>,
}

impl Ctx<'_, '_> {
    fn push(&mut self, rule: Option<&str>, message: impl Into<String>) {
        self.problems.push(Problem {
            origin: self.origin.to_owned(),
            op: self.op.clone(),
            rule: rule.map(str::to_owned),
            message: message.into(),
        });
    }
}

/// Parses one document: the quick way ([`parse_accepted`]) when it takes it, else the way that
/// says what is wrong ([`parse_explained`]).
fn parse_document(p: &mut Ctx<'_, '_>, text: &str) -> Option<OpDocument> {
    parse_accepted(text).or_else(|| parse_explained(p, text))
}

/// The quick way for a document [`parse_explained`] accepts as written: one typed parse of the
/// text, without the tree of values and the path tracking the explained way needs to name a
/// problem (most of what opening a catalog of 2,000 ops cost). It takes a document only where the
/// explained way would take it with no problem and the same result: the typed parse refuses all
/// the explained way refuses before it (a bad name, a budget that is not a non-negative integer,
/// a rule's unknown key, wrong type or `null` where a value is due, the document's unknown keys),
/// and what the typed parse lets through (a blank `why`, a `flapThreshold` of 0) is checked here.
/// `None` for anything else: the explained way then says what.
fn parse_accepted(text: &str) -> Option<OpDocument> {
    let doc: OpDocument = serde_json::from_str(text).ok()?;
    let rules_hold = doc.converge.as_ref().is_none_or(|spec| {
        spec.rules.iter().all(|rule| {
            contract::is_written(&rule.why) && rule.flap_threshold.is_none_or(contract::flap_threshold_holds)
        })
    });
    rules_hold.then_some(doc)
}

/// Parses one document the way that names each problem: the JSON first, the names, each rule on
/// its own (so a problem names its rule), the rest typed with the path of what does not match.
fn parse_explained(p: &mut Ctx<'_, '_>, text: &str) -> Option<OpDocument> {
    let mut value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            p.push(None, format!("not valid JSON at line {}, column {}: {e}", e.line(), e.column()));
            return None;
        }
    };
    p.op = value.get("name").and_then(Value::as_str).map(str::to_owned);
    // The names are checked here, with what they name, before the typed parse would refuse them
    // with a format error.
    let mut named = true;
    for (key, what) in [("name", "op name"), ("env", "env name")] {
        if let Some(Err(e)) = value.get(key).and_then(Value::as_str).map(|n| Name::parse(what, n)) {
            p.push(None, e.to_string());
            named = false;
        }
    }
    if !named {
        return None;
    }
    // Rules are parsed one by one so a problem names its rule; the rest of the document is typed.
    let raw_rules = value
        .get_mut("converge")
        .and_then(|c| c.get_mut("rules"))
        .map(|r| std::mem::replace(r, Value::Array(Vec::new())));
    if let Some(b) = value.get("converge").and_then(|c| c.get("budget")).filter(|b| !b.is_u64()) {
        p.push(None, format!("`budget` must be a non-negative integer (the most run() dispatches per tick), got {b}"));
        return None;
    }
    let mut doc: OpDocument = match serde_path_to_error::deserialize(value) {
        Ok(d) => d,
        Err(e) => {
            p.push(None, format!("does not match the op.json format at `{}`: {}", e.path(), e.inner()));
            return None;
        }
    };
    if let (Some(spec), Some(raw)) = (doc.converge.as_mut(), raw_rules) {
        let Value::Array(items) = raw else {
            p.push(None, "`converge.rules` must be an array of rules");
            return None;
        };
        for (i, item) in items.into_iter().enumerate() {
            if let Some(rule) = parse_rule(p, i, item) {
                spec.rules.push(rule);
            }
        }
    }
    Some(doc)
}

const RULE_KEYS: [&str; 6] = ["id", "when", "then", "why", "flapThreshold", "source"];

fn parse_rule(p: &mut Ctx<'_, '_>, index: usize, item: Value) -> Option<Rule> {
    let Value::Object(mut map) = item else {
        p.push(None, format!("rule #{} is not an object", index + 1));
        return None;
    };
    let id = match map.get("id") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            p.push(
                Some(&format!("#{}", index + 1)),
                "a rule must have a string `id` (flap counters and history are keyed by it)",
            );
            return None;
        }
    };
    let rid = Some(id.as_str());
    let mut ok = true;
    let name = match Name::parse("rule id", id.as_str()) {
        Ok(n) => Some(n),
        Err(e) => {
            p.push(rid, e.to_string());
            ok = false;
            None
        }
    };
    for key in map.keys() {
        if !RULE_KEYS.contains(&key.as_str()) {
            let hint =
                contract::did_you_mean(key, RULE_KEYS).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
            p.push(rid, format!("unknown rule key `{key}`{hint}"));
            ok = false;
        }
    }
    let why = match map.remove("why") {
        Some(Value::String(s)) if contract::is_written(&s) => s,
        _ => {
            p.push(rid, "every rule must carry its why: add a non-blank `why` saying why the rule exists");
            ok = false;
            String::new()
        }
    };
    let when = match map.remove("when").map(serde_json::from_value::<Predicate>) {
        Some(Ok(w)) => Some(w),
        Some(Err(e)) => {
            p.push(
                rid,
                format!(
                    "predicate is outside the evaluable subset (eq/neq/gt/gte/lt/lte/truthy/falsy/all-of/any-of over a symptom field): {e}"
                ),
            );
            None
        }
        None => {
            p.push(rid, "a rule needs a `when` predicate");
            None
        }
    };
    let then = match map.remove("then").map(serde_json::from_value::<Action>) {
        Some(Ok(a)) => Some(a),
        Some(Err(e)) => {
            p.push(rid, format!("the action must be {{kind: \"run\", op}} or {{kind: \"report\", reason}}: {e}"));
            None
        }
        None => {
            p.push(rid, "a rule needs a `then` action");
            None
        }
    };
    let flap_threshold = match map.remove("flapThreshold") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if contract::flap_threshold_holds(n) => Some(n),
            _ => {
                p.push(rid, format!("flapThreshold must be an integer >= 1, got {v}"));
                ok = false;
                None
            }
        },
    };
    let source = match map.remove("source").map(serde_json::from_value::<Source>) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            p.push(rid, format!("`source` must be {{file, line}}: {e}"));
            ok = false;
            None
        }
    };
    let (Some(id), Some(when), Some(then), true) = (name, when, then, ok) else { return None };
    Some(Rule { id, when, then, why, flap_threshold, source })
}

fn check_documents(report: &mut Report) {
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (origin, doc) in &report.documents {
        by_name.entry(doc.name.as_str()).or_default().push(origin.as_str());
    }
    let classes: BTreeMap<&str, ClassKind> =
        report.documents.iter().map(|(_, d)| (d.name.as_str(), d.folded_class())).collect();
    let mut problems = Vec::new();
    for (origin, doc) in &report.documents {
        let mut p = Ctx { origin, op: Some(doc.name.to_string()), problems: &mut problems };
        if let Some(origins) = by_name.get(doc.name.as_str()).filter(|o| o.len() > 1) {
            p.push(None, format!("the op name is declared more than once in this set ({})", origins.join(", ")));
        }
        check_document(&mut p, doc, &classes);
        for c in super::component::declared(doc) {
            if c != doc.name.as_str() && by_name.contains_key(c) {
                p.push(
                    None,
                    format!(
                        "component \"{c}\" has the name of op \"{c}\"; both would own the gate ledger `_gates/{c}`, so rename the component"
                    ),
                );
            }
        }
    }
    report.problems.extend(problems);
}

fn check_document(p: &mut Ctx<'_, '_>, doc: &OpDocument, classes: &BTreeMap<&str, ClassKind>) {
    if doc.version != OP_JSON_VERSION {
        p.push(
            None,
            format!("op.json version {} is not supported; this chant reads version {OP_JSON_VERSION}", doc.version),
        );
    }
    if let Some(Err(e)) = doc.schedule.as_ref().map(|s| parse_cron(&s.cron)) {
        p.push(None, e.to_string());
    }
    for phase in doc.phases.iter().chain(doc.on_failure.iter()) {
        for step in &phase.steps {
            check_step(p, step);
        }
    }
    for problem in super::component::check(doc) {
        p.push(None, problem.to_string());
    }
    for problem in super::carry::check(doc) {
        p.push(None, problem.to_string());
    }
    let folded = doc.folded_class();
    if doc.class != folded {
        p.push(
            None,
            format!(
                "`class` says {} but its steps fold to {}; the class is derived from the steps, never self-reported",
                doc.class.as_str(),
                folded.as_str()
            ),
        );
    }
    if let Some(spec) = &doc.converge {
        check_converge(p, doc, spec, classes);
    }
}

/// Checks what the typed parse leaves: a step's recorded class must be the one its kind and
/// arguments give (names, argument types and the delete mode were checked by parsing it).
fn check_step(p: &mut Ctx<'_, '_>, step: &Step) {
    let expected = step.expected_class();
    if step.class() != expected {
        p.push(
            None,
            format!(
                "step `{}` is recorded as {} but is {}; a step's class follows from its kind and arguments",
                step.kind(),
                step.class().as_str(),
                expected.as_str()
            ),
        );
    }
}

fn check_converge(
    p: &mut Ctx<'_, '_>,
    doc: &OpDocument,
    spec: &super::op::ConvergeSpec,
    classes: &BTreeMap<&str, ClassKind>,
) {
    let Some(env) = &doc.env else {
        p.push(None, "a ConvergeOp needs an `env`");
        return;
    };
    let expected_labels = [("Converge", "true"), ("Dial", spec.dial.as_str()), ("Env", env.as_str())];
    for (k, v) in expected_labels {
        if doc.labels.get(k).map(String::as_str) != Some(v) {
            p.push(None, format!("label `{k}` must be \"{v}\" for this ConvergeOp"));
        }
    }
    if spec.rules.is_empty() {
        p.push(None, "at least one rule is required: an empty table has nothing to converge");
    }
    for w in &spec.windows {
        if let Err(e) = w.check() {
            p.push(None, format!("window {w}: {e}"));
        }
    }
    if let Some(Err(e)) = spec.restart_limit.as_ref().map(super::limit::RestartLimit::check) {
        p.push(None, e.to_string());
    }
    let kind = match &spec.observe {
        Some(step) => {
            check_step(p, step);
            if step.class() != ClassKind::ReadOnly {
                p.push(None, format!("the observer `{}` is not read-only; an observer must only read", step.kind()));
            }
            SymptomKind::Resource
        }
        None => SymptomKind::Converge,
    };
    let mut seen = BTreeSet::new();
    for rule in &spec.rules {
        let rid = Some(rule.id.as_str());
        if !seen.insert(rule.id.as_str()) {
            p.push(rid, "duplicate rule id: flap counters are keyed by id, so ids must be unique");
        }
        for problem in check_predicate(&rule.when, kind) {
            p.push(rid, format!("predicate is outside the evaluable subset: {}", problem.message(kind)));
        }
        let (verb, target) = match &rule.then {
            Action::Run { op } => ("run", op),
            Action::Propose { op } => ("propose", op),
            Action::Report { .. } => continue,
        };
        let Some(class) = classes.get(target.as_str()) else {
            let hint = contract::did_you_mean(target, classes.keys().copied())
                .map(|s| format!("; did you mean \"{s}\"?"))
                .unwrap_or_default();
            p.push(rid, format!("{verb}(\"{target}\") names no op in this set{hint}"));
            continue;
        };
        if verb == "propose" {
            if let Err(refusal) = contract::permits_proposal(spec.dial, *class) {
                p.push(rid, refusal.message(target));
            }
            continue;
        }
        if let Err(refusal) = contract::permits(spec.dial, *class) {
            p.push(rid, refusal.message(target));
        }
        if *class == ClassKind::Mutating
            && let Some(field) = contract::adopt_safe_field(&rule.when)
        {
            p.push(rid, contract::adopt_safe_refusal(target, field, false));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ConvergeOp's op.json with one rule whose members are `rule` (JSON members, no braces)
    /// and `spec` added to its `converge` object.
    fn converge_doc(rule: &str, spec: &str) -> String {
        format!(
            r#"{{"version": 1, "name": "c", "overview": "o", "env": "e",
            "labels": {{"Converge": "true", "Dial": "observe", "Env": "e"}}, "class": "read-only",
            "converge": {{"dial": "observe", "budget": 3{spec}, "rules": [{{{rule}}}]}}}}"#
        )
    }

    const RULE: &str = r#""id": "r", "why": "w",
        "when": {"kind": "field-comparison", "field": "status", "op": "eq", "value": "drifted"},
        "then": {"kind": "report", "reason": "x"}"#;

    /// What the explained way makes of `text`: the document when it found no problem.
    fn explained(text: &str) -> Option<OpDocument> {
        let mut problems = Vec::new();
        let doc = parse_explained(&mut Ctx { origin: "t.json", op: None, problems: &mut problems }, text);
        doc.filter(|_| problems.is_empty())
    }

    /// The quick way takes a document only where the explained way takes the same one with no
    /// problem: checked on valid documents (which it must take, or it saves nothing) and on
    /// every edit the explained way refuses or the typed parse reads differently.
    #[test]
    fn the_quick_parse_takes_only_what_the_explained_one_accepts_unchanged() {
        let valid = [
            converge_doc(RULE, ""),
            converge_doc(&format!(r#"{RULE}, "flapThreshold": 1, "source": {{"file": "src/ops.rs", "line": 7}}"#), ""),
            converge_doc(RULE, r#", "windows": [{"kind": "deny", "cron": "0 9 * * 1-5", "duration": "8h"}]"#),
        ];
        for text in &valid {
            let quick = parse_accepted(text);
            assert!(quick.is_some(), "the quick way refused a valid document: {text}");
            assert_eq!(quick, explained(text), "{text}");
        }
        let edits = [
            converge_doc(&format!(r#"{RULE}, "flapThreshold": null"#), ""),
            converge_doc(&format!(r#"{RULE}, "flapThreshold": 0"#), ""),
            converge_doc(&format!(r#"{RULE}, "flapThreshold": -1"#), ""),
            converge_doc(&format!(r#"{RULE}, "flapThreshold": 1.5"#), ""),
            converge_doc(&format!(r#"{RULE}, "source": null"#), ""),
            converge_doc(&format!(r#"{RULE}, "source": {{"file": "a.rs"}}"#), ""),
            converge_doc(&format!(r#"{RULE}, "flap": 2"#), ""),
            converge_doc(&RULE.replace(r#""why": "w""#, r#""why": "  ""#), ""),
            converge_doc(&RULE.replace(r#""why": "w""#, r#""why": null"#), ""),
            converge_doc(&RULE.replace(r#""id": "r""#, r#""id": "R!""#), ""),
            converge_doc(&RULE.replace(r#""id": "r""#, r#""id": 7"#), ""),
            converge_doc(&RULE.replace(r#""value": "drifted""#, r#""value": null"#), ""),
            converge_doc(&format!(r#"{RULE}, "id": "s""#), ""),
            converge_doc(RULE, r#", "budget": 4"#),
            converge_doc(RULE, "").replace(r#""budget": 3"#, r#""budget": -1"#),
            converge_doc(RULE, "").replace(r#""budget": 3"#, r#""budget": 3.0"#),
            converge_doc(RULE, "").replace(r#""budget": 3"#, r#""budget": null"#),
            converge_doc(RULE, "").replace(r#""name": "c""#, r#""name": "C""#),
            converge_doc(RULE, "").replace(r#""env": "e""#, r#""env": null"#),
            converge_doc(RULE, "").replace(r#""version": 1"#, r#""version": 1, "extra": true"#),
            converge_doc(RULE, "").replace(r#""rules": [{"#, r#""rules": null, "x": [{"#),
        ];
        for text in &edits {
            if let Some(quick) = parse_accepted(text) {
                assert_eq!(
                    Some(quick),
                    explained(text),
                    "the quick way took what the explained way reads otherwise: {text}"
                );
            }
        }
        // The edits the typed parse alone would have let through are refused by both ways.
        for text in &edits[..2] {
            assert_eq!((parse_accepted(text), explained(text)), (None, None), "{text}");
        }
        assert_eq!((parse_accepted(&edits[4]), explained(&edits[4])), (None, None));
        assert_eq!((parse_accepted(&edits[7]), explained(&edits[7])), (None, None));
    }

    /// Every op.json of the fuzz corpus (the tests' and fixtures' documents), and each of them
    /// with one member of the document, of its `converge` object or of one of its rules (a rule's
    /// optional members too) set to `null`, to a blank string, to 0, or left out: the quick way
    /// takes none of them that the explained way reads otherwise.
    #[test]
    fn the_quick_parse_agrees_with_the_explained_one_on_the_corpus_and_its_edits() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../chant/tests/fuzz-corpus/op_json");
        let (mut documents, mut taken) = (0, 0);
        for entry in std::fs::read_dir(&corpus).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(&text) else { continue };
            documents += 1;
            // Each object to edit: its JSON pointer, and the members to edit.
            let mut objects: Vec<(String, Vec<String>)> = vec![(String::new(), doc.keys().cloned().collect())];
            if let Some(Value::Object(spec)) = doc.get("converge") {
                objects.push(("/converge".to_owned(), spec.keys().cloned().collect()));
                let rules = spec.get("rules").and_then(Value::as_array).map(Vec::len).unwrap_or(0);
                for i in 0..rules {
                    let keys = RULE_KEYS.iter().map(|k| (*k).to_owned()).collect();
                    objects.push((format!("/converge/rules/{i}"), keys));
                }
            }
            let mut variants = vec![Value::Object(doc.clone())];
            for (pointer, keys) in &objects {
                for key in keys {
                    for replacement in [None, Some(Value::Null), Some(Value::from(" ")), Some(Value::from(0))] {
                        let mut variant = Value::Object(doc.clone());
                        let Some(Value::Object(object)) = variant.pointer_mut(pointer) else { continue };
                        match replacement {
                            None => drop(object.remove(key)),
                            Some(value) => drop(object.insert(key.clone(), value)),
                        }
                        variants.push(variant);
                    }
                }
            }
            for variant in variants {
                let text = variant.to_string();
                if let Some(quick) = parse_accepted(&text) {
                    taken += 1;
                    assert_eq!(
                        Some(quick),
                        explained(&text),
                        "the quick way took what the explained way reads otherwise: {text}"
                    );
                }
            }
        }
        assert!(documents >= 10, "the corpus at {} holds {documents} documents", corpus.display());
        assert!(taken >= documents, "the quick way took {taken} of the variants of {documents} documents");
    }
}
