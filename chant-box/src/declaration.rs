//! The box block: the services a workspace member declares in its entry of
//! `chant.workspace.json`, validated with the original's rules and read on every run.
//!
//! ```json
//! { "name": "box", "dir": "examples/box", "kind": "other", "because": "...",
//!   "box": { "services": [
//!     { "name": "app", "cmd": "${HOME}/box/run-app.sh", "httpPort": 5173, "duration": "3s",
//!       "health": "http://127.0.0.1:5173/health" },
//!     { "name": "hud", "cmd": "${HOME}/box/run-daemon.sh", "needs": ["app"] },
//!     { "name": "site", "cmd": "${HOME}/box/run-site.sh", "optional": true } ] } }
//! ```
//!
//! A service may declare `checks` (`{"memMb": 200, "cpuPercent": 80, "file": {"path":
//! "var/app.heartbeat", "maxAge": "5m"}}`): limits its process tree is held to when it is
//! observed ([`crate::usage`]).
//!
//! Rules: names follow the op-name rule `[a-z][a-z0-9-]*` and are unique in the block, at most one service with `httpPort`, every `needs` names a
//! service of the block, no `needs` cycle (the error prints it, `a -> b -> a`). A `cmd` is split
//! on whitespace (no shell syntax) and each word `${VAR}`-expanded when it is used, never at
//! load; an argument holding a comma is refused (sprite-env's `--args` is comma-separated).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file holding the workspace members, next to `chant.toml`.
pub const WORKSPACE_FILE: &str = "chant.workspace.json";

/// Errors of reading or using a box block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No workspace file.
    #[error("declaration-missing: no {WORKSPACE_FILE} at {path}")]
    Missing {
        /// Where it was looked for.
        path: String,
    },
    /// The workspace file cannot be read or parsed.
    #[error("{path}: {message}")]
    Unreadable {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The op names no member.
    #[error(
        "box = true reads the box block of the op's workspace member, and this op belongs to no member of {WORKSPACE_FILE}"
    )]
    NoMember,
    /// The member is not in the workspace file.
    #[error("{path} has no member named {member}")]
    UnknownMember {
        /// The file.
        path: String,
        /// The member.
        member: String,
    },
    /// The member declares no box block.
    #[error("member {member} of {path} has no box block")]
    NoBox {
        /// The file.
        path: String,
        /// The member.
        member: String,
    },
    /// The block breaks a rule.
    #[error("declaration-invalid: {0}")]
    Invalid(String),
    /// A step's `services_file` cannot be read or is not a valid box block.
    #[error("services_file `{file}` of {step} ({path}) {message}")]
    ServicesFile {
        /// The step kind.
        step: String,
        /// The file as the step names it.
        file: String,
        /// Where it was looked for.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A `cmd` names an unset variable.
    #[error("service {service}'s cmd names ${{{var}}}, which is not set in this process's environment")]
    Unset {
        /// The service.
        service: String,
        /// The variable.
        var: String,
    },
    /// A `cmd` is empty or malformed.
    #[error("service {service}'s cmd {why}")]
    BadCmd {
        /// The service.
        service: String,
        /// What is wrong.
        why: String,
    },
}

/// One declared service.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BoxService {
    /// Its name.
    pub name: String,
    /// Its command line: words split on whitespace, each `${VAR}`-expanded when used.
    pub cmd: String,
    /// The services it needs (started first).
    #[serde(default)]
    pub needs: Vec<String>,
    /// The HTTP port it serves (at most one service of a box has one).
    #[serde(default)]
    pub http_port: Option<u16>,
    /// How long `create` streams its log (`--duration`); `--no-stream` when absent.
    #[serde(default)]
    pub duration: Option<String>,
    /// The URL that answers 200 while it is healthy.
    #[serde(default)]
    pub health: Option<String>,
    /// An optional service is observed only once listed, and applied only when named.
    #[serde(default)]
    pub optional: bool,
    /// Resource limits its process tree is held to when it is observed ([`crate::usage`]).
    #[serde(default)]
    pub checks: Option<crate::usage::Checks>,
}

#[derive(Deserialize)]
struct RawBox {
    services: Vec<BoxService>,
}

/// A validated box block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxDeclaration {
    services: Vec<BoxService>,
}

impl BoxDeclaration {
    /// Validates `services` (in declared order).
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the broken rule.
    pub fn new(services: Vec<BoxService>) -> Result<Self, Error> {
        for (i, s) in services.iter().enumerate() {
            if s.name.trim().is_empty() {
                return Err(Error::Invalid(format!("services[{i}] has no name")));
            }
            if let Err(e) = crate::supervisor::check_name(&s.name) {
                return Err(Error::Invalid(format!("services[{i}]: {e}")));
            }
            if let Some(Err(e)) = s.checks.as_ref().map(|c| c.validate(&s.name)) {
                return Err(Error::Invalid(e));
            }
            if services[..i].iter().any(|o| o.name == s.name) {
                return Err(Error::Invalid(format!("service {} is declared twice; names are unique in a box", s.name)));
            }
        }
        let ported: Vec<&str> = services.iter().filter(|s| s.http_port.is_some()).map(|s| s.name.as_str()).collect();
        if ported.len() > 1 {
            return Err(Error::Invalid(format!(
                "services {} both declare httpPort; at most one service of a box has one",
                ported.join(" and ")
            )));
        }
        for s in &services {
            if let Some(n) = s.needs.iter().find(|n| !services.iter().any(|o| &o.name == *n)) {
                return Err(Error::Invalid(format!(
                    "service {} needs {n}, which the box block does not declare",
                    s.name
                )));
            }
        }
        let decl = BoxDeclaration { services };
        if let Some(cycle) = decl.cycle() {
            return Err(Error::Invalid(format!("the services' needs form a cycle: {}", cycle.join(" -> "))));
        }
        Ok(decl)
    }

    /// Parses and validates a box block (`{"services": [...]}`).
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for a malformed or invalid block.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        let raw: RawBox =
            serde_path_to_error::deserialize(value).map_err(|e| Error::Invalid(format!("the box block at {e}")))?;
        BoxDeclaration::new(raw.services)
    }

    /// Reads the box block of `member` from the workspace file in `root` (the directory of
    /// `chant.toml`).
    ///
    /// # Errors
    ///
    /// [`Error`]: no file, no such member, no box block, an invalid block.
    pub fn read(root: &Path, member: Option<&str>) -> Result<Self, Error> {
        let path: PathBuf = root.join(WORKSPACE_FILE);
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Error::Missing { path: shown }),
            Err(e) => return Err(Error::Unreadable { path: shown, message: e.to_string() }),
        };
        let member = member.ok_or(Error::NoMember)?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::Unreadable { path: shown.clone(), message: e.to_string() })?;
        let entry = doc
            .get("members")
            .and_then(serde_json::Value::as_array)
            .and_then(|ms| ms.iter().find(|m| m.get("name").and_then(serde_json::Value::as_str) == Some(member)))
            .ok_or_else(|| Error::UnknownMember { path: shown.clone(), member: member.to_owned() })?;
        let block = entry.get("box").ok_or_else(|| Error::NoBox { path: shown, member: member.to_owned() })?;
        BoxDeclaration::from_value(block)
    }

    /// The services, in declared order.
    pub fn services(&self) -> &[BoxService] {
        &self.services
    }

    /// The service named `name`.
    pub fn get(&self, name: &str) -> Option<&BoxService> {
        self.services.iter().find(|s| s.name == name)
    }

    /// The services in start order: depth first, so each comes after what it needs; declared
    /// order otherwise.
    pub fn start_order(&self) -> Vec<&BoxService> {
        let mut out: Vec<&BoxService> = Vec::new();
        fn visit<'a>(d: &'a BoxDeclaration, s: &'a BoxService, out: &mut Vec<&'a BoxService>) {
            if out.iter().any(|o| o.name == s.name) {
                return;
            }
            for n in &s.needs {
                if let Some(dep) = d.get(n) {
                    visit(d, dep, out);
                }
            }
            if !out.iter().any(|o| o.name == s.name) {
                out.push(s);
            }
        }
        for s in &self.services {
            visit(self, s, &mut out);
        }
        out
    }

    fn cycle(&self) -> Option<Vec<String>> {
        fn walk(d: &BoxDeclaration, name: &str, path: &mut Vec<String>, done: &mut Vec<String>) -> Option<Vec<String>> {
            if let Some(i) = path.iter().position(|p| p == name) {
                let mut cycle = path[i..].to_vec();
                cycle.push(name.to_owned());
                return Some(cycle);
            }
            if done.iter().any(|x| x == name) {
                return None;
            }
            path.push(name.to_owned());
            for n in d.get(name).map(|s| s.needs.as_slice()).unwrap_or_default() {
                if let Some(c) = walk(d, n, path, done) {
                    return Some(c);
                }
            }
            path.pop();
            done.push(name.to_owned());
            None
        }
        let mut done = Vec::new();
        self.services.iter().find_map(|s| walk(self, &s.name, &mut Vec::new(), &mut done))
    }
}

impl BoxService {
    /// The command line split on whitespace, each word expanded through `lookup`.
    ///
    /// # Errors
    ///
    /// [`Error::Unset`] for an unset variable, [`Error::BadCmd`] for an empty command or an
    /// argument holding a comma.
    pub fn argv(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        for word in self.cmd.split_whitespace() {
            let w = chant_lexicon::model::template::expand(word, "box", "cmd", lookup).map_err(|e| match e {
                chant_lexicon::model::template::ExpandError::Unset { var, .. } => {
                    Error::Unset { service: self.name.clone(), var }
                }
                chant_lexicon::model::template::ExpandError::Malformed { .. } => Error::BadCmd {
                    service: self.name.clone(),
                    why: format!("has a malformed ${{...}} reference in {word}"),
                },
            })?;
            if !out.is_empty() && w.contains(',') {
                return Err(Error::BadCmd {
                    service: self.name.clone(),
                    why: format!("has an argument with a comma ({w}); sprite-env's --args is comma-separated"),
                });
            }
            out.push(w);
        }
        if out.is_empty() {
            return Err(Error::BadCmd { service: self.name.clone(), why: "is empty".into() });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(json: &str) -> Result<BoxDeclaration, Error> {
        BoxDeclaration::from_value(&serde_json::from_str(json).unwrap())
    }

    #[test]
    fn validates_the_originals_rules() {
        let d = decl(
            r#"{"services":[{"name":"hud","cmd":"h","needs":["app"]},{"name":"app","cmd":"a","httpPort":80},{"name":"site","cmd":"s","optional":true}]}"#,
        )
        .unwrap();
        let order: Vec<&str> = d.start_order().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(order, ["app", "hud", "site"]);
        assert!(d.get("site").unwrap().optional);

        let dup = decl(r#"{"services":[{"name":"a","cmd":"x"},{"name":"a","cmd":"y"}]}"#).unwrap_err();
        assert_eq!(dup.to_string(), "declaration-invalid: service a is declared twice; names are unique in a box");
        let ports = decl(r#"{"services":[{"name":"a","cmd":"x","httpPort":1},{"name":"b","cmd":"y","httpPort":2}]}"#);
        assert!(ports.unwrap_err().to_string().contains("services a and b both declare httpPort"));
        let undeclared = decl(r#"{"services":[{"name":"a","cmd":"x","needs":["z"]}]}"#).unwrap_err();
        assert!(undeclared.to_string().contains("service a needs z, which the box block does not declare"));
        let cycle = decl(
            r#"{"services":[{"name":"a","cmd":"x","needs":["b"]},{"name":"b","cmd":"y","needs":["c"]},{"name":"c","cmd":"z","needs":["a"]}]}"#,
        )
        .unwrap_err();
        assert_eq!(cycle.to_string(), "declaration-invalid: the services' needs form a cycle: a -> b -> c -> a");
        let escape = decl(r#"{"services":[{"name":"../../escape","cmd":"x"}]}"#).unwrap_err();
        assert!(escape.to_string().contains(r#"services[0]: service name "../../escape" must match"#), "{escape}");
        let forged = decl(r#"{"services":[{"name":"a\trunning","cmd":"x"}]}"#).unwrap_err();
        assert!(forged.to_string().contains(r#"service name "a\trunning" must match"#), "{forged}");
        let unknown = decl(r#"{"services":[{"name":"a","cmd":"x","port":3}]}"#).unwrap_err();
        assert!(unknown.to_string().contains("unknown field `port`"), "{unknown}");
    }

    #[test]
    fn expands_cmd_words_and_refuses_commas_and_unset_variables() {
        let d = decl(r#"{"services":[{"name":"a","cmd":"${ROOT}/run.sh --port ${PORT}"},{"name":"b","cmd":"x a,b"},{"name":"c","cmd":"  "}]}"#)
            .unwrap();
        let vars = |k: &str| match k {
            "ROOT" => Some("/srv".to_owned()),
            "PORT" => Some("8080".to_owned()),
            _ => None,
        };
        assert_eq!(d.get("a").unwrap().argv(&vars).unwrap(), ["/srv/run.sh", "--port", "8080"]);
        let unset = d.get("a").unwrap().argv(&|_| None).unwrap_err();
        assert_eq!(unset.to_string(), "service a's cmd names ${ROOT}, which is not set in this process's environment");
        assert!(d.get("b").unwrap().argv(&vars).unwrap_err().to_string().contains("comma (a,b)"));
        assert_eq!(d.get("c").unwrap().argv(&vars).unwrap_err().to_string(), "service c's cmd is empty");
    }

    #[test]
    fn reads_the_members_block_from_the_workspace_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(BoxDeclaration::read(dir.path(), Some("box")), Err(Error::Missing { .. })));
        std::fs::write(
            dir.path().join(WORKSPACE_FILE),
            r#"{"members":[{"name":"web","dir":"web"},{"name":"box","dir":"b","box":{"services":[{"name":"app","cmd":"a"}]}}]}"#,
        )
        .unwrap();
        assert_eq!(BoxDeclaration::read(dir.path(), Some("box")).unwrap().services().len(), 1);
        assert!(matches!(BoxDeclaration::read(dir.path(), Some("web")), Err(Error::NoBox { .. })));
        assert!(matches!(BoxDeclaration::read(dir.path(), Some("nope")), Err(Error::UnknownMember { .. })));
        assert_eq!(BoxDeclaration::read(dir.path(), None), Err(Error::NoMember));
    }
}
