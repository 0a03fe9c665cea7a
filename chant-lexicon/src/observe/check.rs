//! The checks `chant dev check-lexicon` runs against a lexicon bound to a real env: the
//! ownership-channel declaration against the hooks that serve it, and the conformance suites
//! ([`super::conformance`], [`super::deep::conformance`]) on the env's declared estate.
//!
//! [`check_bound`] runs, in order, each yielding one [`Check`]:
//!
//! - **read-paths**: every read path the lexicon lists ([`Lexicon::read_paths`]) is served by a
//!   hook: `observeResourcesDeep` by a deep read that does not answer not-implemented,
//!   `exportResources` by an export hook (asked through `export`); a listed path no hook serves
//!   fails, naming it;
//! - **ownership-channel**: the declared channel's keys are complete, it names at least one
//!   path, and every path it names is one the lexicon lists and a hook serves
//!   ([`check_lexicon`]); no channel is a real answer and passes;
//! - **observation**: the observation suite on the declared entities (shape, reason and
//!   ownership totality, unobserved never `create`, declared never `delete`, marker shape, and
//!   ownership held to the declared channel);
//! - **probe-absent**: a name nothing declares or holds is not reported present (a reader that
//!   answers "present" without looking fails here);
//! - **deep**: the deep-read checks, when the lexicon lists or answers the deep read;
//! - **ambient**: every ambient resource is of a kind the lexicon announces
//!   ([`Lexicon::ambient_kinds`]) and is neither declared nor observed, and a lexicon announcing
//!   kinds answers the ambient read.

use std::fmt;

use serde::Serialize;

use super::conformance::{Scenario, Suite};
use super::deep::DeepError;
use super::observation::{DeclaredEntity, Lexicon, ReadPath, check_lexicon, observe_component};

/// Whether a hook serves a read path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// It does.
    Yes,
    /// It answers not-implemented.
    No,
    /// It cannot be told here (why).
    Unknown(String),
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome", content = "details")]
pub enum Outcome {
    /// Every rule held; what was checked.
    Pass(String),
    /// What broke, one line each.
    Fail(Vec<String>),
    /// Not run, and why.
    Skip(String),
}

/// One named check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// The check's name (`ownership-channel`).
    pub check: &'static str,
    /// Its outcome.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Check {
    /// Returns true when the check failed.
    pub fn failed(&self) -> bool {
        matches!(self.outcome, Outcome::Fail(_))
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::Pass(what) => write!(f, "pass  {}: {what}", self.check),
            Outcome::Skip(why) => write!(f, "skip  {}: {why}", self.check),
            Outcome::Fail(lines) => {
                write!(f, "FAIL  {}: {}", self.check, lines.first().map(String::as_str).unwrap_or_default())?;
                for l in lines.iter().skip(1) {
                    write!(f, "\n        {l}")?;
                }
                Ok(())
            }
        }
    }
}

/// The name [`check_bound`] probes with: no lexicon declares or holds it.
pub const PROBE: &str = "chant-check-lexicon-probe-0c3d9a";

fn outcome(bad: Vec<String>, pass: impl Into<String>) -> Outcome {
    if bad.is_empty() { Outcome::Pass(pass.into()) } else { Outcome::Fail(bad) }
}

/// Whether `path` is served by a hook of `lexicon` (`export` answers for `exportResources`).
fn served(lexicon: &dyn Lexicon, declared: &[DeclaredEntity], path: ReadPath, export: &dyn Fn() -> Served) -> Served {
    match path {
        ReadPath::DescribeResources => Served::Yes,
        ReadPath::ObserveResourcesDeep => match lexicon.observe_resources_deep(declared) {
            Err(DeepError::NotImplemented { .. }) => Served::No,
            _ => Served::Yes,
        },
        ReadPath::ExportResources => export(),
    }
}

/// Runs every check against `lexicon`, bound to an env whose declared entities are `declared`;
/// `export` says whether the lexicon's export hook serves `exportResources`.
pub fn check_bound(lexicon: &dyn Lexicon, declared: &[DeclaredEntity], export: &dyn Fn() -> Served) -> Vec<Check> {
    let name = lexicon.name().to_owned();
    let mut out = Vec::new();

    // read-paths
    let mut bad = Vec::new();
    let mut unknown = Vec::new();
    for path in lexicon.read_paths() {
        match served(lexicon, declared, *path, export) {
            Served::Yes => {}
            Served::No => bad.push(format!("lists {} among its read paths, and no hook serves it", path.as_str())),
            Served::Unknown(why) => unknown.push(format!("{} ({why})", path.as_str())),
        }
    }
    let listed: Vec<&str> = lexicon.read_paths().iter().map(|p| p.as_str()).collect();
    let mut pass = format!("{} served", listed.join(", "));
    if !unknown.is_empty() {
        pass = format!("{pass}; not told: {}", unknown.join(", "));
    }
    out.push(Check { check: "read-paths", outcome: outcome(bad, pass) });

    // ownership-channel
    let channel = lexicon.ownership_channel();
    let mut bad = Vec::new();
    if let Err(e) = check_lexicon(lexicon) {
        bad.push(e.to_string());
    }
    for path in channel.iter().flat_map(|c| c.reads.iter()) {
        if lexicon.read_paths().contains(path) && served(lexicon, declared, *path, export) == Served::No {
            bad.push(format!(
                "lexicon {name} declares its ownership marker on {}, which no hook serves",
                path.as_str()
            ));
        }
    }
    let pass = match &channel {
        None => "no channel declared: every owned read must answer unknown".to_owned(),
        Some(c) => format!(
            "keys {}/{}/{} read on {}",
            c.keys.managed_by,
            c.keys.stack,
            c.keys.env,
            c.reads.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        ),
    };
    out.push(Check { check: "ownership-channel", outcome: outcome(bad, pass) });

    // observation
    let scenario = |title: &str, entities: Vec<DeclaredEntity>| {
        let read = |d: &[DeclaredEntity]| lexicon.describe_resources(d);
        let observation = super::normalize(read(&entities), &entities);
        Scenario::new(title, entities, move |_| Ok(observation.clone()))
    };
    let suite = match Suite::for_lexicon(lexicon) {
        Ok(s) => s,
        Err(_) => Suite::new(name.clone()),
    };
    let result = suite.scenario(scenario("declared estate", declared.to_vec())).run();
    let observed = observe_component(lexicon, declared);
    let pass = format!(
        "{} declared: {} present, {} unobserved, {} absent",
        declared.len(),
        observed.resources.len(),
        observed.unobserved.len(),
        declared.iter().filter(|d| observed.is_absent(&d.name)).count()
    );
    let bad = match result {
        Ok(()) => Vec::new(),
        Err(e) => e.violations.iter().map(ToString::to_string).collect(),
    };
    out.push(Check { check: "observation", outcome: outcome(bad, pass) });

    // probe-absent
    let probe = DeclaredEntity::new(PROBE);
    let mut with_probe = declared.to_vec();
    with_probe.push(probe);
    let read = observe_component(lexicon, &with_probe);
    let bad = if read.resources.contains_key(PROBE) {
        vec![format!("{PROBE}, which nothing declares or holds, is reported present")]
    } else {
        Vec::new()
    };
    let seen = if read.unobserved.contains_key(PROBE) { "unobserved" } else { "absent" };
    out.push(Check { check: "probe-absent", outcome: outcome(bad, format!("an undeclared name reads {seen}")) });

    // deep
    let deep = match lexicon.observe_resources_deep(declared) {
        Err(DeepError::NotImplemented { .. }) if !lexicon.read_paths().contains(&ReadPath::ObserveResourcesDeep) => {
            Outcome::Skip("no deep read".to_owned())
        }
        _ => match super::deep::conformance::check(lexicon, declared, super::deep::conformance::Expect::default()) {
            Ok(()) => Outcome::Pass("the deep read keeps the deep contract".to_owned()),
            Err(lines) => Outcome::Fail(lines),
        },
    };
    out.push(Check { check: "deep", outcome: deep });

    // ambient
    let kinds = lexicon.ambient_kinds();
    let ambient = match lexicon.observe_ambient(declared, &observed) {
        Err(e) if e.is_not_implemented() && kinds.is_empty() => Outcome::Skip("no ambient read".to_owned()),
        Err(e) if e.is_not_implemented() => Outcome::Fail(vec![format!(
            "reports ambient {} possible (ambientKinds) but implements no ambient read",
            kinds.join(", ")
        )]),
        Err(e) => Outcome::Skip(format!("the ambient read failed here, so it could not be checked: {}", e.chain())),
        Ok(a) => {
            let mut bad = Vec::new();
            for (n, r) in &a.resources {
                if !kinds.contains(&r.kind) {
                    bad.push(format!("{n} is ambient of kind {}, which ambientKinds does not announce", r.kind));
                }
                if declared.iter().any(|d| &d.name == n) || observed.resources.contains_key(n) {
                    bad.push(format!("{n} is reported ambient but is declared or observed (managed, not ambient)"));
                }
            }
            let pass = format!("{} ambient of {}", a.resources.len(), kinds.join(", "));
            outcome(bad, pass)
        }
    };
    out.push(Check { check: "ambient", outcome: ambient });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UnobservedReason;
    use crate::observe::{
        ChannelKeys, LexiconError, Observation, Ownership, OwnershipChannel, PresentResource, Unobserved,
    };

    /// A reader that looks: the declared name `a` is present, `b` unreadable, the rest absent.
    struct Honest;

    impl Lexicon for Honest {
        fn name(&self) -> &str {
            "honest"
        }
        fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            let mut o = Observation::new();
            for d in declared {
                match d.name.as_str() {
                    "a" => o.insert_present("a", PresentResource::new(Ownership::Unknown)),
                    "b" => o.insert_unobserved("b", Unobserved::new(UnobservedReason::ReadFailed)),
                    _ => {}
                }
            }
            Ok(o)
        }
    }

    /// Says every name is present, and claims a deep read and a channel on it it does not serve.
    struct Liar;

    impl Lexicon for Liar {
        fn name(&self) -> &str {
            "liar"
        }
        fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            let mut o = Observation::new();
            for d in declared {
                o.insert_present(&d.name, PresentResource::new(Ownership::Owned));
            }
            Ok(o)
        }
        fn read_paths(&self) -> &[ReadPath] {
            &[ReadPath::DescribeResources, ReadPath::ObserveResourcesDeep]
        }
        fn ownership_channel(&self) -> Option<OwnershipChannel> {
            let keys = ChannelKeys { managed_by: "managed-by".into(), stack: "stack".into(), env: "env".into() };
            Some(OwnershipChannel { keys, reads: vec![ReadPath::ObserveResourcesDeep] })
        }
    }

    fn declared() -> Vec<DeclaredEntity> {
        vec![DeclaredEntity::new("a"), DeclaredEntity::new("b"), DeclaredEntity::new("c")]
    }

    fn by_name(checks: &[Check]) -> Vec<(&'static str, bool)> {
        checks.iter().map(|c| (c.check, c.failed())).collect()
    }

    #[test]
    fn an_honest_reader_passes_every_check() {
        let checks = check_bound(&Honest, &declared(), &|| Served::No);
        assert!(checks.iter().all(|c| !c.failed()), "{checks:#?}");
        assert_eq!(checks[2].outcome, Outcome::Pass("3 declared: 1 present, 1 unobserved, 1 absent".into()));
    }

    #[test]
    fn a_reader_that_claims_what_it_does_not_serve_fails_naming_the_path() {
        let checks = check_bound(&Liar, &declared(), &|| Served::No);
        assert_eq!(
            by_name(&checks),
            [
                ("read-paths", true),
                ("ownership-channel", true),
                ("observation", false),
                ("probe-absent", true),
                ("deep", true),
                ("ambient", false)
            ]
        );
        let text = checks.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        assert!(
            text.contains("FAIL  read-paths: lists observeResourcesDeep among its read paths, and no hook serves it")
        );
        assert!(text.contains("declares its ownership marker on observeResourcesDeep, which no hook serves"), "{text}");
        assert!(text.contains(&format!("{PROBE}, which nothing declares or holds, is reported present")));
    }
}
