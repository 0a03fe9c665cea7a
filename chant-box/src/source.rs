//! The **service list** a box services step reads, resolved on every run from where the step's
//! arguments say ([`ServiceSource`]): `box = true`, the box block of the op's member in
//! `chant.workspace.json`; `services = [...]`, the names given inline (no command, no health URL:
//! the observer judges them by the supervisor's state alone); `services_file = "..."`, a JSON file
//! holding a box block (`{"services": [...]}`, validated with the box block's rules), relative to
//! the project root. `sprite_apply_services` reads the box block only.

use std::path::Path;

use super::SpriteError;
use super::declaration::{BoxDeclaration, BoxService, Error};
use super::step::{BoxStep, ServiceSource};

/// Returns the services `step` (its arguments expanded) reads, for an op of `member` in the
/// project at `root`.
///
/// # Errors
///
/// [`SpriteError::Source`] for arguments naming
/// no list or several, [`SpriteError::NoBoxArgument`] for `sprite_apply_services` without
/// `box = true`, and [`SpriteError::Declaration`] when the list cannot be read: the box block, or
/// the services file ([`Error::ServicesFile`], naming the file and the field).
pub fn resolve(step: &BoxStep, root: &Path, member: Option<&str>) -> Result<BoxDeclaration, SpriteError> {
    let kind = step.kind();
    let source = match step {
        BoxStep::Apply(args) if args.from_box => ServiceSource::Box,
        BoxStep::Apply(_) => return Err(SpriteError::NoBoxArgument { step: kind.to_owned() }),
        BoxStep::Observe(args) => args.source().map_err(SpriteError::Source)?,
        BoxStep::Restart(args) => args.source().map_err(SpriteError::Source)?,
    };
    match source {
        ServiceSource::Box => Ok(BoxDeclaration::read(root, member)?),
        ServiceSource::Inline(names) => Ok(inline(names)?),
        ServiceSource::File(file) => Ok(from_file(root, kind, file)?),
    }
}

/// The services named inline: each with its name alone.
fn inline(names: &[chant_lexicon::model::Name]) -> Result<BoxDeclaration, Error> {
    BoxDeclaration::new(
        names
            .iter()
            .map(|n| BoxService {
                name: n.as_str().to_owned(),
                cmd: String::new(),
                needs: Vec::new(),
                http_port: None,
                duration: None,
                health: None,
                optional: false,
                checks: None,
            })
            .collect(),
    )
}

/// Reads the box block in `file` (relative to `root` unless absolute).
fn from_file(root: &Path, step: &str, file: &str) -> Result<BoxDeclaration, Error> {
    let path = root.join(file);
    let failed = |message: String| Error::ServicesFile {
        step: step.to_owned(),
        file: file.to_owned(),
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| failed(format!("cannot be read: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| failed(format!("is not JSON: {e}")))?;
    BoxDeclaration::from_value(&value).map_err(|e| failed(format!("is not a valid box block: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(json: serde_json::Value) -> BoxStep {
        let step: chant_lexicon::model::LexiconStep = serde_json::from_value(json).unwrap();
        BoxStep::of(&step).unwrap()
    }

    fn names(d: &BoxDeclaration) -> Vec<&str> {
        d.services().iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn each_source_resolves_and_a_bad_services_file_names_the_file_and_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(super::super::declaration::WORKSPACE_FILE),
            r#"{"members":[{"name":"box","dir":".","box":{"services":[{"name":"app","cmd":"a"}]}}]}"#,
        )
        .unwrap();
        std::fs::write(
            root.join("svc.json"),
            r#"{"services":[{"name":"web","cmd":"w","health":"http://127.0.0.1:1/"}]}"#,
        )
        .unwrap();
        std::fs::write(root.join("bad.json"), r#"{"services":[{"name":"web","cmd":"w","port":1}]}"#).unwrap();
        let observe = |args: serde_json::Value| {
            step(serde_json::json!({"kind": "sprite_services_observe", "class": "read-only", "args": args}))
        };
        let from_box = resolve(&observe(serde_json::json!({"box": true})), root, Some("box")).unwrap();
        assert_eq!(names(&from_box), ["app"]);
        let listed = resolve(&observe(serde_json::json!({"services": ["app", "hud"]})), root, None).unwrap();
        assert_eq!(names(&listed), ["app", "hud"]);
        assert_eq!(listed.get("hud").unwrap().health, None);
        let restart = step(serde_json::json!({"kind": "sprite_service_restart", "class": "mutating",
            "args": {"services_file": "svc.json"}}));
        let file = resolve(&restart, root, None).unwrap();
        assert_eq!(file.get("web").unwrap().health.as_deref(), Some("http://127.0.0.1:1/"));

        let missing = resolve(&observe(serde_json::json!({"services_file": "nope.json"})), root, None).unwrap_err();
        let text = missing.to_string();
        assert!(text.starts_with("services_file `nope.json` of sprite_services_observe ("), "{text}");
        assert!(text.contains("nope.json) cannot be read: "), "{text}");
        let invalid = resolve(&observe(serde_json::json!({"services_file": "bad.json"})), root, None).unwrap_err();
        assert!(invalid.to_string().contains("bad.json) is not a valid box block: "), "{invalid}");
        assert!(invalid.to_string().contains("unknown field `port`"), "{invalid}");
        let none = resolve(&observe(serde_json::json!({})), root, None).unwrap_err();
        assert!(none.to_string().contains("needs its services"), "{none}");
        let apply =
            step(serde_json::json!({"kind": "sprite_apply_services", "class": "mutating", "args": {"box": false}}));
        assert!(matches!(resolve(&apply, root, Some("box")), Err(SpriteError::NoBoxArgument { .. })));
    }
}
