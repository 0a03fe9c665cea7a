//! The command transport: the engine is a program, given the rendered request on stdin, answering
//! on stdout.
//!
//! The value names one program (no arguments, no shell): a bare name is looked up on the `PATH`
//! of the environment chant was given, a value with a `/` is used as a path. The child runs
//! through [`chant_store::process`] in its own process group with an environment of exactly `PATH` and
//! nothing else ([`child_environment`]), so an inherited variable cannot carry a credential past
//! the request-side screen; the command transport sends no token. A program that is not found,
//! cannot start, exits non-zero, is killed, or outlives the timeout (then its whole group is
//! killed) is `engine-unreachable`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{TransportOptions, Wire, WireCondition, wire_refusal};
use crate::behaviour::engine::{EngineAddress, EnvVars, Resolved};
use crate::behaviour::refusal::Refusal;
use chant_store::process;

/// The environment an engine program gets: `PATH` (when set) and nothing else.
pub fn child_environment(env: &EnvVars) -> Vec<(String, String)> {
    env.get("PATH").map(|path| vec![("PATH".to_owned(), path.to_owned())]).unwrap_or_default()
}

/// Runs an engine program.
#[derive(Debug)]
pub struct CommandTransport {
    wire: Wire,
    environment: Vec<(String, String)>,
    options: TransportOptions,
}

impl CommandTransport {
    /// Creates the transport for the program `engine` names, with `PATH` from `env`.
    pub fn new(lexicon: &str, engine: Resolved<EngineAddress>, env: &EnvVars, options: TransportOptions) -> Self {
        CommandTransport {
            wire: Wire { lexicon: lexicon.to_owned(), engine, token: None },
            environment: child_environment(env),
            options,
        }
    }

    /// Returns who is on the other end.
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    fn program(&self) -> Option<PathBuf> {
        let name = self.wire.engine.value.as_str();
        if name.contains('/') {
            return Some(PathBuf::from(name));
        }
        let path = self.environment.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str())?;
        path.split(':')
            .filter(|dir| !dir.is_empty())
            .map(|dir| Path::new(dir).join(name))
            .find(|candidate| candidate.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
    }

    fn exchange(&self, body: &[u8]) -> Result<String, WireCondition> {
        let program =
            self.program().ok_or_else(|| WireCondition::NotFound(self.wire.engine.value.as_str().to_owned()))?;
        let mut spec = process::Spec::new(program);
        spec.clear_env = true;
        spec.env = self.environment.clone();
        spec.stdin = Some(body.to_vec());
        spec.timeout = self.options.timeout;
        spec.grace = self.options.grace;
        let output = process::run(&spec).map_err(|e| WireCondition::Spawn(chant_store::error::chain(&e)))?;
        if output.timed_out {
            return Err(WireCondition::Timeout(self.options.timeout));
        }
        if !output.success() {
            return Err(WireCondition::Exit { how: output.describe(self.options.timeout), stderr: output.stderr });
        }
        let limit = usize::try_from(self.options.max_answer_bytes).unwrap_or(usize::MAX);
        if output.stdout.len() > limit {
            return Err(WireCondition::Unparseable(format!("the answer is over {limit} bytes")));
        }
        Ok(output.stdout)
    }
}

impl super::Transport for CommandTransport {
    fn send(&self, body: &[u8]) -> Result<String, Refusal> {
        self.exchange(body).map_err(|c| wire_refusal(&self.wire, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_environment_is_path_alone() {
        let env = EnvVars::new().with("PATH", "/usr/bin:/bin").with("HOME", "/root").with("BEHAVIOUR_TOKEN", "t");
        assert_eq!(child_environment(&env), [("PATH".to_owned(), "/usr/bin:/bin".to_owned())]);
        assert!(child_environment(&EnvVars::new()).is_empty());
    }
}
