//! Service control by hand: `services start|stop|restart <name>` through the supervisor, the way
//! `monit start|stop|restart <name>` controls a Monit service. A start or a restart waits for the
//! declared health URL, as the `restart-service` op does; a stop waits for nothing more than the
//! supervisor's answer.

use std::time::Instant;

use serde_json::{Value, json};

use super::declaration::BoxDeclaration;
use super::{Settings, SpriteError, probe, service_env, supervise_with};

/// What to do to a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Start it (nothing to do when it runs).
    Start,
    /// Stop it.
    Stop,
    /// Stop it and start it again.
    Restart,
}

impl Control {
    /// The supervisor's verb (`restart`).
    pub fn as_str(self) -> &'static str {
        match self {
            Control::Start => "start",
            Control::Stop => "stop",
            Control::Restart => "restart",
        }
    }
}

/// Asks the supervisor to `what` the declared service `name`; a start or restart then waits for
/// its health URL. Returns `{name, action, healthy}` (`healthy`: null for a stop or without a
/// health URL). `var` looks up the variables the declared commands name.
///
/// # Errors
///
/// [`SpriteError`]: the supervisor refused or could not be run, or the health URL never
/// answered 200 within the wait.
pub fn control(
    decl: &BoxDeclaration,
    name: &str,
    what: Control,
    settings: &Settings,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, SpriteError> {
    // The values of the variables the declared commands name go with it: chant's stand-in keeps
    // `${VAR}` as declared and expands it when it spawns.
    supervise_with(settings, &["services", what.as_str(), name], settings.change_timeout, service_env(decl, var))?;
    let health = decl.get(name).and_then(|s| s.health.clone()).filter(|_| what != Control::Stop);
    let Some(url) = health else { return Ok(json!({"name": name, "action": what.as_str(), "healthy": null})) };
    let deadline = Instant::now() + settings.wait;
    loop {
        if probe(&url, settings.probe_timeout) {
            return Ok(json!({"name": name, "action": what.as_str(), "healthy": true}));
        }
        if Instant::now() >= deadline {
            return Err(SpriteError::Unhealthy { name: name.to_owned(), url });
        }
        std::thread::sleep(settings.wait_interval);
    }
}
