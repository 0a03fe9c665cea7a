//! Finding a project's binaries: the bins `chant.toml` and `chant.workspace.json` name, or the one
//! bin target of the workspace whose package depends on `chant`.
//!
//! `[project] bin = "staging"` names the root's project binary; a member of
//! `chant.workspace.json` may name its own (`"bin": "box"`). When nothing names one, `cargo
//! metadata` is asked for the workspace's packages: exactly one bin target among the packages
//! that depend on `chant` is the project binary; none or several is an error that says what was
//! looked for and the line to add.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::Error;
use crate::config::Config;

/// The package name of chant's facade, as cargo metadata names a project's dependency on it.
const FACADE_PACKAGE: &str = env!("CARGO_PKG_NAME");

/// One project binary as configuration or cargo names it, not yet built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinTarget {
    /// The bin target's name (`staging`).
    pub name: String,
    /// The package that holds it (`chant-examples`).
    pub package: String,
    /// The workspace member whose binary it is, when `chant.workspace.json` says.
    pub member: Option<String>,
}

/// A workspace as `cargo metadata --no-deps` describes it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Metadata {
    pub(crate) packages: Vec<Package>,
    pub(crate) target_directory: PathBuf,
    pub(crate) workspace_root: PathBuf,
}

/// One package of the workspace.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Package {
    pub(crate) name: String,
    pub(crate) manifest_path: PathBuf,
    pub(crate) dependencies: Vec<Dependency>,
    pub(crate) targets: Vec<Target>,
}

/// One dependency of a package.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Dependency {
    pub(crate) name: String,
}

/// One target of a package.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Target {
    pub(crate) name: String,
    pub(crate) kind: Vec<String>,
}

impl Package {
    fn bins(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().filter(|t| t.kind.iter().any(|k| k == "bin")).map(|t| t.name.as_str())
    }

    /// Whether the package depends on chant's facade: cargo metadata names a dependency by its
    /// package (`chant-ops`), whatever the manifest renames it to.
    fn depends_on_chant(&self) -> bool {
        self.dependencies.iter().any(|d| d.name == FACADE_PACKAGE)
    }

    /// Returns the package's directory.
    pub(crate) fn dir(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new("."))
    }
}

/// A member of `chant.workspace.json`, as far as finding binaries needs it.
#[derive(Debug, Clone, Deserialize)]
struct Member {
    name: String,
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    bin: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct WorkspaceFile {
    #[serde(default)]
    members: Vec<Member>,
}

/// Reads the members of `chant.workspace.json` beside `chant.toml` (none when there is no file).
fn members(root: &Path) -> Result<Vec<Member>, Error> {
    let path = root.join(crate::config::WORKSPACE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::Read { path, source }),
    };
    let file: WorkspaceFile =
        serde_json::from_str(&text).map_err(|e| Error::Workspace { path: path.clone(), message: e.to_string() })?;
    Ok(file.members)
}

/// Returns the project binaries of the project at `config.root`, given the workspace's metadata.
///
/// # Errors
///
/// [`Error::UnknownBin`] when a configured bin is no bin target of the workspace,
/// [`Error::NoCandidate`] / [`Error::Ambiguous`] when nothing names one and the workspace has no
/// or several candidates, and errors reading `chant.workspace.json`.
pub(crate) fn targets(config: &Config, metadata: &Metadata) -> Result<Vec<BinTarget>, Error> {
    let members = members(&config.root)?;
    let mut named: Vec<(Option<String>, String)> = Vec::new();
    if let Some(bin) = &config.project.bin {
        named.push((None, bin.clone()));
    }
    for m in &members {
        if let Some(bin) = &m.bin
            && !named.iter().any(|(_, b)| b == bin)
        {
            named.push((Some(m.name.clone()), bin.clone()));
        }
    }
    let find = |bin: &str| metadata.packages.iter().find(|p| p.bins().any(|b| b == bin));
    if !named.is_empty() {
        return named
            .into_iter()
            .map(|(member, bin)| {
                let package = find(&bin).ok_or_else(|| Error::UnknownBin {
                    bin: bin.clone(),
                    known: candidates(metadata).into_iter().map(|t| t.name).collect(),
                })?;
                let member = member.or_else(|| member_of(&config.root, &members, package));
                Ok(BinTarget { name: bin, package: package.name.clone(), member })
            })
            .collect();
    }
    match candidates(metadata).as_slice() {
        [] => Err(Error::NoCandidate { root: metadata.workspace_root.clone() }),
        [one] => Ok(vec![one.clone()]),
        many => {
            Err(Error::Ambiguous { candidates: many.iter().map(|t| format!("{} ({})", t.name, t.package)).collect() })
        }
    }
}

/// The bin targets of packages that depend on `chant`.
fn candidates(metadata: &Metadata) -> Vec<BinTarget> {
    metadata
        .packages
        .iter()
        .filter(|p| p.depends_on_chant())
        .flat_map(|p| p.bins().map(|b| BinTarget { name: b.to_owned(), package: p.name.clone(), member: None }))
        .collect()
}

/// The member of `chant.workspace.json` whose `dir` holds `package`, if any.
fn member_of(root: &Path, members: &[Member], package: &Package) -> Option<String> {
    let pkg = package.dir().canonicalize().ok()?;
    members
        .iter()
        .find(|m| m.dir.as_ref().and_then(|d| root.join(d).canonicalize().ok()).as_deref() == Some(pkg.as_path()))
        .map(|m| m.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(packages: &[(&str, bool, &[&str])]) -> Metadata {
        Metadata {
            packages: packages
                .iter()
                .map(|(name, chant, bins)| Package {
                    name: (*name).into(),
                    manifest_path: PathBuf::from(format!("/nowhere/{name}/Cargo.toml")),
                    dependencies: if *chant { vec![Dependency { name: FACADE_PACKAGE.into() }] } else { Vec::new() },
                    targets: bins.iter().map(|b| Target { name: (*b).into(), kind: vec!["bin".into()] }).collect(),
                })
                .collect(),
            target_directory: PathBuf::from("/nowhere/target"),
            workspace_root: PathBuf::from("/nowhere"),
        }
    }

    fn config(dir: &Path, bin: Option<&str>) -> Config {
        let bin = bin.map(|b| format!("bin = \"{b}\"\n")).unwrap_or_default();
        std::fs::write(dir.join("chant.toml"), format!("[project]\nname = \"p\"\n{bin}")).unwrap();
        Config::load(&dir.join("chant.toml")).unwrap()
    }

    #[test]
    fn one_candidate_is_the_project_binary_and_two_are_ambiguous() {
        let d = tempfile::tempdir().unwrap();
        let c = config(d.path(), None);
        let one = metadata(&[("chant", false, &["chant"]), ("app", true, &["app"])]);
        assert_eq!(
            targets(&c, &one).unwrap(),
            vec![BinTarget { name: "app".into(), package: "app".into(), member: None }]
        );
        let two = metadata(&[("app", true, &["app", "app-tick"])]);
        let e = targets(&c, &two).unwrap_err().to_string();
        assert!(e.contains("app (app)") && e.contains("app-tick (app)") && e.contains("[project]"), "{e}");
        let none = metadata(&[("lib", false, &["tool"])]);
        assert!(targets(&c, &none).unwrap_err().to_string().contains("depending on chant has a bin target"));
    }

    #[test]
    fn configured_bins_come_from_chant_toml_and_the_members() {
        let d = tempfile::tempdir().unwrap();
        let c = config(d.path(), Some("staging"));
        std::fs::write(
            d.path().join("chant.workspace.json"),
            r#"{"members": [{"name": "box", "dir": "b", "bin": "box"}, {"name": "x", "dir": "x"}]}"#,
        )
        .unwrap();
        let m = metadata(&[("ex", true, &["staging", "staging-converge"]), ("bx", true, &["box"])]);
        let t = targets(&c, &m).unwrap();
        assert_eq!(
            t.iter().map(|t| (t.name.as_str(), t.member.as_deref())).collect::<Vec<_>>(),
            [("staging", None), ("box", Some("box"))]
        );
        let c = config(d.path(), Some("stagin"));
        let e = targets(&c, &m).unwrap_err().to_string();
        assert!(e.contains("stagin") && e.contains("staging-converge"), "{e}");
    }
}
