//! The observation contract: how a lexicon reports what it saw, and how chant turns that into a
//! change set, status rows and the [`ConvergeSymptom`](crate::model::ConvergeSymptom).
//!
//! Observation is a tri-state per declared entity — present (with ownership), absent (in neither
//! map: the only verdict that may become a `create`), unobserved (with a total reason: never a
//! `create` or a `delete`) — defined in [`observation`]. [`change_set`] classifies each entity
//! against the declaration and the last recorded apply; [`status`] derives the per-component rows
//! and the env's symptom from the change sets. Those two are pure and do no I/O; the only
//! effectful function here is [`observe_component`], which asks a [`Lexicon`]. [`conformance`] is
//! the suite a lexicon author runs to prove their reader keeps the contract; [`check`] runs it,
//! with the ownership-channel and estate-reader checks, against a lexicon bound to a real env
//! (`chant dev check-lexicon`).
//!
//! One component, end to end, is in the files lexicon's crate docs (`chant-files`).

pub mod change_set;
pub mod check;
pub mod conformance;
pub mod deep;
pub mod estate;
pub mod lifetime;
pub mod observation;
pub mod properties;
pub mod status;

pub use change_set::{
    ActionCounts, ChangeAction, ChangeEntry, ChangeSet, Delta, Evidence, LastApply, build_change_set,
};
pub use estate::{EstateError, EstateHook};
pub use observation::{
    ChangeSink, ChannelError, ChannelKeys, DeclaredEntity, EntityTexts, Lexicon, LexiconError, Marker, Observation,
    Ownership, OwnershipChannel, PresentResource, ReadPath, SubscribeError, Subscription, Unobserved, check_channel,
    check_lexicon, normalize, observe_component,
};
pub use properties::{Properties, PropertyName};
pub use status::{
    ComponentInput, EnvAssessment, assess, assess_component, derive_symptom, describe_unobserved, some_names,
    status_row, unobserved_by_cause, unobserved_cause,
};
