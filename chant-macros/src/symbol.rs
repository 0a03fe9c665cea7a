//! The keywords of the DSL, in one place: field names of `op!` and `converge_op!`, predicate,
//! action and rule-option names.

/// `name:`
pub(crate) const NAME: &str = "name";
/// `overview:`
pub(crate) const OVERVIEW: &str = "overview";
/// `env:`
pub(crate) const ENV: &str = "env";
/// `phases:`
pub(crate) const PHASES: &str = "phases";
/// `on_failure:`
pub(crate) const ON_FAILURE: &str = "on_failure";
/// `dial:`
pub(crate) const DIAL: &str = "dial";
/// `budget:`
pub(crate) const BUDGET: &str = "budget";
/// `schedule:`
pub(crate) const SCHEDULE: &str = "schedule";
/// `tz:`
pub(crate) const TZ: &str = "tz";
/// `observe:`
pub(crate) const OBSERVE: &str = "observe";
/// `rules:`
pub(crate) const RULES: &str = "rules";
/// `windows:`
pub(crate) const WINDOWS: &str = "windows";
/// `restart_limit:`
pub(crate) const RESTART_LIMIT: &str = "restart_limit";
/// `restart_limit: limit(...)`
pub(crate) const LIMIT: &str = "limit";
/// `limit(N, within = "...")`
pub(crate) const WITHIN: &str = "within";

/// The fields `op!` accepts, in the order the docs list them.
pub(crate) const OP_FIELDS: &[&str] = &[NAME, OVERVIEW, ENV, PHASES, ON_FAILURE];
/// The fields `converge_op!` accepts.
pub(crate) const CONVERGE_FIELDS: &[&str] =
    &[NAME, OVERVIEW, ENV, DIAL, BUDGET, SCHEDULE, TZ, WINDOWS, RESTART_LIMIT, OBSERVE, RULES];

/// `phase("Name", [...])`
pub(crate) const PHASE: &str = "phase";
/// The argument of `phase` naming the component it belongs to.
pub(crate) const COMPONENT: &str = "component";
/// `when!(...)`
pub(crate) const WHEN: &str = "when";

/// `all_of(...)`
pub(crate) const ALL_OF: &str = "all_of";

/// `run("op")`
pub(crate) const RUN: &str = "run";
/// `report("reason")`
pub(crate) const REPORT: &str = "report";
/// `propose("op")`
pub(crate) const PROPOSE: &str = "propose";
/// The actions a rule may take.
pub(crate) const ACTIONS: &[&str] = &[RUN, REPORT, PROPOSE];

/// `id = "..."`
pub(crate) const ID: &str = "id";
/// `why = "..."`
pub(crate) const WHY: &str = "why";
/// `flap_threshold = N`
pub(crate) const FLAP_THRESHOLD: &str = "flap_threshold";
/// The options a rule accepts.
pub(crate) const RULE_OPTIONS: &[&str] = &[ID, WHY, FLAP_THRESHOLD];

/// `main!(default = ...)`
pub(crate) const DEFAULT: &str = "default";
/// `main!(default = tick("op"))`
pub(crate) const TICK: &str = "tick";
/// `main!(default = help)`
pub(crate) const HELP: &str = "help";
