//! **Search**: resources across the envs' live estates, found by kind or by name.
//!
//! [`search`] binds every lexicon of each env asked about, observes what it declares (the same
//! read a tick makes, [`observe_component`]) and, when asked (`ambient`), what nothing declares
//! and nothing references, of the kinds the lexicon announces ([`Lexicon::ambient_kinds`]). The
//! query is a kind when some lexicon names that kind (declared, observed or announced as
//! ambient), else a name pattern the caller's matcher decides on.
//!
//! What could not be read is never an empty answer: an env whose lexicons cannot be bound, an
//! entity the read could not see, an ambient scan that failed or a scope it could not scan is
//! listed in [`Found::not_observed`], so "no match" is said only when everything was read.
//!
//! [`Lexicon::ambient_kinds`]: chant_lexicon::observe::Lexicon::ambient_kinds

use serde::Serialize;

use crate::project::Project;
use chant_lexicon::observe::estate::{Reading, ambient_of};
use chant_lexicon::observe::{Observation, Ownership, observe_component};

/// How the query was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MatchedAs {
    /// A kind some lexicon names: every resource of that kind.
    Kind,
    /// A name pattern.
    Name,
}

/// Where a found resource comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// Declared by the env, and observed by the lexicon's describe read.
    Managed,
    /// Observed by the lexicon's describe read but declared by nothing: a table beside the
    /// declared ones in a declared schema, a column the declaration leaves out, a resource the
    /// last apply owns and the declaration no longer names.
    Undeclared,
    /// Simply there: nothing declares it, nothing references it (`--ambient`).
    Ambient,
}

/// One resource found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The env.
    pub env: String,
    /// The lexicon that read it.
    pub lexicon: String,
    /// Its name.
    pub name: String,
    /// Its kind, when the lexicon says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Managed, undeclared or ambient.
    pub origin: Origin,
    /// Whose it is (what the describe read observed: managed and undeclared resources).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ownership: Option<Ownership>,
}

/// Something that could not be read and might have matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotObserved {
    /// The env.
    pub env: String,
    /// The lexicon, when the failure is one lexicon's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexicon: Option<String>,
    /// The entity or scope, when the failure is one entity's or one scope's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its kind, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Why, in words (no password).
    pub cause: String,
}

impl NotObserved {
    /// One line in words: `staging postgres app.users (table): <cause>`.
    pub fn line(&self) -> String {
        let mut out = self.env.clone();
        for part in [&self.lexicon, &self.name].into_iter().flatten() {
            out.push(' ');
            out.push_str(part);
        }
        if let Some(kind) = &self.kind {
            out.push_str(&format!(" ({kind})"));
        }
        format!("{out}: {}", self.cause)
    }
}

/// A lexicon whose ambient resources of the queried kind were not searched (`--ambient` adds
/// them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AmbientHint {
    /// The env.
    pub env: String,
    /// The lexicon.
    pub lexicon: String,
    /// The kinds of which it reports ambient resources possible (`ambientKinds`).
    pub kinds: Vec<String>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// The query as given.
    pub query: String,
    /// How it was read.
    pub matched_as: MatchedAs,
    /// Whether ambient resources were searched.
    pub ambient: bool,
    /// The envs searched, in order.
    pub envs: Vec<String>,
    /// The resources found, by env, lexicon and name.
    pub matches: Vec<Hit>,
    /// What could not be read and might have matched.
    pub not_observed: Vec<NotObserved>,
    /// Without `ambient`: the lexicons that report ambient resources of the queried kind (or,
    /// for a name, of any kind) possible, which this answer left out.
    pub ambient_hints: Vec<AmbientHint>,
}

/// The answer a search gives, which fixes the command's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Something matched (whatever else could not be read).
    Found,
    /// Nothing matched, and everything was read: the answer is no.
    NoneFound,
    /// Nothing matched, and something that might have matched could not be read: no answer.
    Unobserved,
}

impl Found {
    /// Returns the verdict.
    pub fn verdict(&self) -> Verdict {
        if !self.matches.is_empty() {
            Verdict::Found
        } else if self.not_observed.is_empty() {
            Verdict::NoneFound
        } else {
            Verdict::Unobserved
        }
    }
}

/// What one lexicon of one env read.
struct Read {
    env: String,
    bound: chant_lexicon::BoundLexicon,
    declared: Vec<chant_lexicon::observe::DeclaredEntity>,
    observation: Observation,
    ambient_kinds: Vec<String>,
}

impl Read {
    fn kinds(&self) -> impl Iterator<Item = &str> {
        self.declared
            .iter()
            .filter_map(|d| d.kind.as_deref())
            .chain(self.ambient_kinds.iter().map(String::as_str))
            .chain(self.observation.resources.values().filter_map(|p| p.kind.as_deref()))
            .chain(self.observation.unobserved.values().filter_map(|u| u.kind.as_deref()))
    }
}

/// Searches the live estates of `envs` for `query`: a kind when some lexicon names it, else a
/// name `name_matches` accepts; with `ambient`, the ambient resources of the lexicons' announced
/// kinds too (scanned only where the queried kind is one of them, or for a name, any). Each env's
/// records are its member's (`member_of`).
pub fn search(
    project: &Project,
    envs: &[&str],
    query: &str,
    name_matches: &dyn Fn(&str) -> bool,
    ambient: bool,
    member_of: &dyn Fn(&str) -> Option<String>,
) -> Found {
    let mut reads = Vec::new();
    let mut not_observed = Vec::new();
    let failed = |env: &str, lexicon: Option<&str>, cause: String| NotObserved {
        env: env.to_owned(),
        lexicon: lexicon.map(str::to_owned),
        name: None,
        kind: None,
        cause,
    };
    for env in envs {
        let member = member_of(env);
        let lexicons = match project.lexicons(member.as_deref(), env) {
            Ok(l) => l,
            Err(e) => {
                let cause = format!("its lexicons could not be bound: {}", chant_store::error::chain(&e));
                not_observed.push(failed(env, None, cause));
                continue;
            }
        };
        for bound in lexicons {
            let declared = match bound.declared_entities() {
                Ok(d) => d,
                Err(e) => {
                    let cause = format!("its declaration could not be read: {}", e.chain());
                    not_observed.push(failed(env, Some(bound.name()), cause));
                    continue;
                }
            };
            let observation = observe_component(bound.lexicon(), &declared);
            let ambient_kinds = bound.lexicon().ambient_kinds();
            reads.push(Read { env: (*env).to_owned(), bound, declared, observation, ambient_kinds });
        }
    }
    let is_kind = reads.iter().any(|r| r.kinds().any(|k| k.eq_ignore_ascii_case(query)));
    let matched_as = if is_kind { MatchedAs::Kind } else { MatchedAs::Name };
    let hit = |name: &str, kind: Option<&str>| match matched_as {
        MatchedAs::Kind => kind.is_some_and(|k| k.eq_ignore_ascii_case(query)),
        MatchedAs::Name => name_matches(name),
    };
    // An unobserved entity of unknown kind might be of the queried one.
    let might = |name: &str, kind: Option<&str>| match matched_as {
        MatchedAs::Kind => kind.is_none_or(|k| k.eq_ignore_ascii_case(query)),
        MatchedAs::Name => name_matches(name),
    };
    let mut matches = Vec::new();
    let mut ambient_hints = Vec::new();
    for r in reads {
        let lexicon = r.bound.name().to_owned();
        let declared: std::collections::HashSet<&str> = r.declared.iter().map(|d| d.name.as_str()).collect();
        for (name, p) in &r.observation.resources {
            if hit(name, p.kind.as_deref()) {
                matches.push(Hit {
                    env: r.env.clone(),
                    lexicon: lexicon.clone(),
                    name: name.clone(),
                    kind: p.kind.as_deref().map(str::to_owned),
                    origin: if declared.contains(name.as_str()) { Origin::Managed } else { Origin::Undeclared },
                    ownership: Some(p.ownership),
                });
            }
        }
        for (name, u) in &r.observation.unobserved {
            if might(name, u.kind.as_deref()) {
                not_observed.push(NotObserved {
                    env: r.env.clone(),
                    lexicon: Some(lexicon.clone()),
                    name: Some(name.clone()),
                    kind: u.kind.as_deref().map(str::to_owned),
                    cause: u.cause(),
                });
            }
        }
        let relevant: Vec<String> = match matched_as {
            MatchedAs::Kind => r.ambient_kinds.iter().filter(|k| k.eq_ignore_ascii_case(query)).cloned().collect(),
            MatchedAs::Name => r.ambient_kinds.clone(),
        };
        if relevant.is_empty() {
            continue;
        }
        if !ambient {
            ambient_hints.push(AmbientHint { env: r.env.clone(), lexicon, kinds: relevant });
            continue;
        }
        match ambient_of(r.bound.lexicon(), &r.declared, &r.observation, None) {
            Reading::NotImplemented => not_observed.push(NotObserved {
                env: r.env.clone(),
                lexicon: Some(lexicon.clone()),
                name: None,
                kind: None,
                cause: format!("it reports ambient {} possible but implements no ambient read", relevant.join(", ")),
            }),
            Reading::Failed(e) => not_observed.push(NotObserved {
                env: r.env.clone(),
                lexicon: Some(lexicon.clone()),
                name: None,
                kind: None,
                cause: format!("its ambient resources could not be read: {e}"),
            }),
            Reading::Read(a) => {
                for (name, res) in &a.resources {
                    if hit(name, Some(&res.kind)) {
                        matches.push(Hit {
                            env: r.env.clone(),
                            lexicon: lexicon.clone(),
                            name: name.clone(),
                            kind: Some(res.kind.clone()),
                            origin: Origin::Ambient,
                            ownership: None,
                        });
                    }
                }
                for (scope, u) in &a.holes {
                    not_observed.push(NotObserved {
                        env: r.env.clone(),
                        lexicon: Some(lexicon.clone()),
                        name: Some(scope.clone()),
                        kind: u.kind.as_deref().map(str::to_owned),
                        cause: format!("the ambient scan of this scope failed: {}", u.cause()),
                    });
                }
            }
        }
    }
    Found {
        query: query.to_owned(),
        matched_as,
        ambient,
        envs: envs.iter().map(|e| (*e).to_owned()).collect(),
        matches,
        not_observed,
        ambient_hints,
    }
}
