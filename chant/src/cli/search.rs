//! `search <kind|name> [--ambient] [--env E] [--json]`: resources across the envs' live estates,
//! by kind (when some lexicon names that kind: `table`, `file`, `service`) or by name glob
//! (`app.*`, `etc/*.conf`; `*` crosses `/`), through [`crate::search`].
//!
//! Without `--ambient` only what the lexicons' describe read sees is searched (declared, or owned
//! by the last apply); where a lexicon reports ambient resources of the queried kind possible
//! (`ambientKinds`), a note says that `--ambient` would add them. What could not be read is
//! listed as not observed, never as no match.
//!
//! Exit codes, as `grep` and `lifecycle diff --exit-code`: 0 something found (whatever else
//! could not be read), 1 nothing found and everything was read, 4 nothing found and something
//! that might have matched could not be read (no answer), 2 a usage error (a malformed glob, an
//! env this binary declares nothing for, the stock binary outside a project).

use clap::Args;

use super::error::println;
use super::lifecycle::{envs_asked, member_of};
use super::{Binary, CommandError, Exit};
use crate::observe::some_names;
use crate::search::{Found, MatchedAs, Origin, Verdict, search};

/// Find resources across the envs' live estates by kind or name glob
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// A kind some lexicon names (`table`, `file`, `service`), or a name glob (`app.*`).
    pub query: String,
    /// Also search the ambient resources (what nothing declares and nothing references) of the
    /// kinds the lexicons report possible.
    #[arg(long)]
    pub ambient: bool,
    /// Only this env (default: every env this binary declares).
    #[arg(long)]
    pub env: Option<String>,
    /// Print one JSON document on one line on stdout.
    #[arg(long)]
    pub json: bool,
}

/// What the not-observed lines are grouped by: env, lexicon and cause.
type GroupKey<'a> = (&'a str, Option<&'a str>, &'a str);

/// Renders what a search found for a person, one line each.
pub fn render(found: &Found) -> Vec<String> {
    let what = match found.matched_as {
        MatchedAs::Kind => "kind",
        MatchedAs::Name => "name",
    };
    let ambient = if found.ambient { ", ambient included" } else { "" };
    let mut out = vec![format!(
        "search {:?} (as a {what}{ambient}) across {} env(s): {} found, {} not observed",
        found.query,
        found.envs.len(),
        found.matches.len(),
        found.not_observed.len()
    )];
    for m in &found.matches {
        let origin = match (m.origin, m.ownership) {
            (Origin::Ambient, _) => "ambient".to_owned(),
            (Origin::Managed, Some(o)) => format!("managed, {}", o.as_str()),
            (Origin::Managed, None) => "managed".to_owned(),
            (Origin::Undeclared, Some(o)) => format!("undeclared, {}", o.as_str()),
            (Origin::Undeclared, None) => "undeclared".to_owned(),
        };
        let kind = m.kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default();
        out.push(format!("  {} {} {}{kind} [{origin}]", m.env, m.lexicon, m.name));
    }
    // One line per env, lexicon and cause: an unbound env of a thousand files is one line.
    let mut groups: Vec<(GroupKey<'_>, Vec<String>)> = Vec::new();
    for n in &found.not_observed {
        let key = (n.env.as_str(), n.lexicon.as_deref(), n.cause.as_str());
        let name = n.name.clone().map(|name| match &n.kind {
            Some(k) => format!("{name} ({k})"),
            None => name,
        });
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.extend(name),
            None => groups.push((key, name.into_iter().collect())),
        }
    }
    for ((env, lexicon, cause), names) in groups {
        let lexicon = lexicon.map(|l| format!(" {l}")).unwrap_or_default();
        let names = if names.is_empty() { String::new() } else { format!(" {}", some_names(&names)) };
        out.push(format!("  not observed: {env}{lexicon}{names}: {cause}"));
    }
    for h in &found.ambient_hints {
        out.push(format!(
            "  note: {} in {} reports ambient {} possible; --ambient adds what nothing declares",
            h.lexicon,
            h.env,
            h.kinds.join(", ")
        ));
    }
    match found.verdict() {
        Verdict::Found => {}
        Verdict::NoneFound => out.push("  nothing found".to_owned()),
        Verdict::Unobserved => {
            out.push("  nothing found among what could be read; this is not an answer (see not observed)".to_owned())
        }
    }
    out
}

/// The name matcher of a glob (`*` and `?` cross `/`; `[...]` and `{a,b}` as usual).
fn matcher(query: &str) -> Result<globset::GlobMatcher, CommandError> {
    let glob = globset::GlobBuilder::new(query)
        .literal_separator(false)
        .build()
        .map_err(|e| CommandError::usage_with(format!("{query:?} is not a name glob"), e))?;
    Ok(glob.compile_matcher())
}

/// Runs `search`.
pub fn cmd_search(binary: Binary, args: &SearchArgs) -> Result<Exit, CommandError> {
    if binary == Binary::Stock {
        return Err(CommandError::usage(
            "the stock chant binary carries no env declarations, so it has no estate to search; run it in a project, \
             or use the project's own binary (`cargo run --bin <project-bin> -- search ...`)",
        ));
    }
    let glob = matcher(&args.query)?;
    let envs = envs_asked(binary, args.env.as_deref())?;
    if envs.is_empty() {
        return Err(CommandError::usage("this binary declares no env, so there is no estate to search"));
    }
    let project = super::open_project()?;
    let found = search(&project, &envs, &args.query, &|name| glob.is_match(name), args.ambient, &|env| {
        member_of(&project, env)
    });
    if args.json {
        let line = super::error::to_json(&found, "the search")?;
        println(&project.redactor.redact(&line))?;
    } else {
        for line in render(&found) {
            println(&project.redactor.redact(&line))?;
        }
    }
    Ok(match found.verdict() {
        Verdict::Found => Exit::Done,
        Verdict::NoneFound => Exit::Failed,
        Verdict::Unobserved => Exit::Unobserved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_matches_across_slashes_and_a_bad_one_is_a_usage_error() {
        let m = matcher("etc/*.conf").unwrap();
        assert!(m.is_match("etc/app.conf") && !m.is_match("etc/app.json"));
        assert!(matcher("*.conf").unwrap().is_match("etc/sub/app.conf"));
        assert!(matcher("app.{users,orders}").unwrap().is_match("app.orders"));
        let e = matcher("app.[").unwrap_err();
        assert_eq!(e.exit(), Exit::Usage);
        assert!(e.lines()[0].contains("\"app.[\" is not a name glob"), "{:?}", e.lines());
    }
}
