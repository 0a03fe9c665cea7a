//! The errors of the box services lexicon: finding and running the supervisor, reading its
//! listing, changing services, and the step arguments.

use super::declaration;

/// An error of the box services lexicon. No message holds more than one line of the supervisor's
/// own output, sanitised.
#[derive(Debug, thiserror::Error)]
pub enum SpriteError {
    /// No supervisor was found.
    #[error("no sprite-env on PATH or in /.sprite/bin (chant ships a stand-in: put chant's `sprite-env` on PATH)")]
    NoSupervisor,
    /// The supervisor could not be run.
    #[error("sprite-env {command} failed")]
    Run {
        /// The first words of the command line (`services list`).
        command: String,
        /// Why it could not be run.
        #[source]
        source: chant_store::process::Error,
    },
    /// The supervisor ran and refused.
    #[error("sprite-env {command} failed: {why}")]
    Refused {
        /// The first words of the command line.
        command: String,
        /// Its stderr (or how it ended), sanitised.
        why: String,
    },
    /// `services list` printed something that is not a listing.
    #[error("sprite-env services list printed no listing")]
    Listing(#[source] super::ListingError),
    /// A restarted service never answered its health URL.
    #[error("{name} was restarted and does not answer {url}")]
    Unhealthy {
        /// The service.
        name: String,
        /// Its health URL.
        url: String,
    },
    /// `only` names a service the box block does not declare.
    #[error("only names {name}, which the box block does not declare; declared: {declared}")]
    Undeclared {
        /// The name.
        name: String,
        /// The declared services, comma-separated.
        declared: String,
    },
    /// The box block cannot be read or used.
    #[error(transparent)]
    Declaration(#[from] declaration::Error),
    /// A box step names no list of services, or several.
    #[error(transparent)]
    Source(super::step::ServiceSourceError),
    /// A box step's arguments do not form it (an unknown one, a wrong type, a bad name).
    #[error("the arguments of {step} do not form it: {message}")]
    Arguments {
        /// The step kind.
        step: String,
        /// What is wrong, as the JSON reader says it.
        message: String,
    },
    /// A box step was not told to read the box block.
    #[error("{step} reads the services from the box block: pass box = true")]
    NoBoxArgument {
        /// The step kind.
        step: String,
    },
    /// A restart step names a service its list does not hold.
    #[error("{step} was asked to restart {name}, which its services list does not hold; listed: {listed}")]
    NotListed {
        /// The step kind.
        step: String,
        /// The service asked for.
        name: String,
        /// The listed services, comma-separated.
        listed: String,
    },
    /// A restart step names no service.
    #[error("{step} names no service: pass name, or run it from a converge rule (which sets {var})")]
    NoService {
        /// The step kind.
        step: String,
        /// The variable a converge dispatch sets.
        var: &'static str,
    },
    /// The step is not a box services step.
    #[error("{0} is not a box services step")]
    NotABoxStep(String),
    /// The supervisor's state directory cannot be chosen.
    #[error("the supervisor's state directory is unknown")]
    StateDir(#[source] crate::supervisor::ClientError),
    /// The supervisor offers no change stream (a real `sprite-env` has none).
    #[error("the supervisor offers no change stream; a real sprite-env has none")]
    NoStream(#[source] crate::supervisor::ClientError),
    /// The change stream could not be kept open.
    #[error("cannot keep the change stream")]
    Stream(#[source] std::io::Error),
}
