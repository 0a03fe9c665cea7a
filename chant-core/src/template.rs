//! `${VAR}` expansion in step arguments, done when the step runs (never at compile time).
//!
//! Pure: the variables come from a lookup the caller passes (the runtime passes the process
//! environment, tests a table), so the same code expands for a run, for the pre-run check of
//! `chant run`, and in unit tests.

/// A `${VAR}` whose variable is unset, or a malformed reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// The variable is not set.
    #[error("step `{step}`: argument `{arg}` uses ${{{var}}}, but {var} is not set; export it or remove the reference")]
    Unset {
        /// The step.
        step: String,
        /// The argument.
        arg: String,
        /// The variable.
        var: String,
    },
    /// `${` without a closing `}` or with an invalid name.
    #[error(
        "step `{step}`: argument `{arg}` has a malformed ${{...}} reference; write ${{NAME}} with letters, digits and _"
    )]
    Malformed {
        /// The step.
        step: String,
        /// The argument.
        arg: String,
    },
}

/// Expands every `${VAR}` in `text` through `lookup`. `$$` is not special; a lone `$` stays.
///
/// # Errors
///
/// [`ExpandError::Unset`] naming the variable and the step, or [`ExpandError::Malformed`].
pub fn expand(
    text: &str,
    step: &str,
    arg: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Malformed { step: step.into(), arg: arg.into() });
        };
        let name = &after[..end];
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(ExpandError::Malformed { step: step.into(), arg: arg.into() });
        }
        match lookup(name) {
            Some(v) => out.push_str(&v),
            None => return Err(ExpandError::Unset { step: step.into(), arg: arg.into(), var: name.into() }),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        (name == "HOME").then(|| "/home/a".to_owned())
    }

    #[test]
    fn expands_and_refuses() {
        assert_eq!(expand("${HOME}/box/run.sh", "shell", "cmd", &vars).unwrap(), "/home/a/box/run.sh");
        assert_eq!(expand("cost $5", "shell", "cmd", &vars).unwrap(), "cost $5");
        let e = expand("${NOPE}/x", "shell", "cmd", &vars).unwrap_err();
        assert_eq!(e, ExpandError::Unset { step: "shell".into(), arg: "cmd".into(), var: "NOPE".into() });
        assert!(e.to_string().contains("NOPE is not set"));
        assert!(matches!(expand("${HOME", "s", "a", &vars), Err(ExpandError::Malformed { .. })));
        assert!(matches!(expand("${1X}", "s", "a", &vars), Err(ExpandError::Malformed { .. })));
    }
}
