//! Verification after acting: no record claims a repair that a re-observation does not back.
//!
//! After a tick's dispatches, the tick observes the env again (the same observation, with the
//! same bounds) and [`verify`] decides, per dispatch that succeeded, whether the symptom it
//! answered is gone: the rule's predicate no longer holds for the env (or, in resource mode, for
//! the resource it was dispatched for). Only then does the outcome stay `ran` and count as
//! remediated. A predicate that still holds makes it `ineffective`, saying what still differs; a
//! re-observation that failed, or that reads the env or the resource `unknown` (or no longer lists
//! the resource), makes it `unverified`: never a repair. Both count towards flap damping like any
//! dispatch. Pure; the tick calls it with what it observed.

use chant_lexicon::model::{EnvStatus, ResourceStatus, Rule, evaluate};

use super::plan::Subject;
use super::record::{Action, DriftedPath, Outcome};

/// What the re-observation after the dispatches read.
#[derive(Debug, Clone, Copy)]
pub enum After<'a> {
    /// It read the env: the symptom, and (env mode) the drifted paths it found.
    Observed(Subject<'a>, &'a [DriftedPath]),
    /// It failed; the reason, already redacted.
    Failed(&'a str),
}

/// Turns each `ran` outcome of `outcomes` into what the re-observation `after` backs: `ran`
/// (remediated), `ineffective` or `unverified`, with the reason.
pub fn verify(outcomes: &mut [Outcome], rules: &[Rule], after: After<'_>) {
    for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
        let op = o.op.clone().unwrap_or_default();
        let Some(rule) = rules.iter().find(|r| r.id.as_str() == o.rule_id) else { continue };
        let (subject, drifted) = match after {
            After::Failed(reason) => {
                o.action = Action::Unverified;
                o.reason = Some(format!(
                    "\"{op}\" ran, and the observation after it failed ({reason}); not counted as remediated"
                ));
                continue;
            }
            After::Observed(subject, drifted) => (subject, drifted),
        };
        let verdict = match (subject, o.resource.as_deref()) {
            (Subject::Env(s), _) if s.status == EnvStatus::Unknown => Err(format!(
                "\"{op}\" ran, and the env is unknown after it ({}); not counted as remediated",
                reasons(s.unobserved_reasons.iter().map(|r| r.as_str()))
            )),
            (Subject::Env(s), _) => Ok((evaluate(&rule.when, s), format!("status {}", s.status.as_str()))),
            (Subject::Resources(rs), Some(name)) => match rs.iter().find(|r| r.resource == name) {
                None => Err(format!(
                    "\"{op}\" ran, and resource \"{name}\" is no longer observed after it; not counted as remediated"
                )),
                Some(r) if r.status == ResourceStatus::Unknown => {
                    Err(format!("\"{op}\" ran, and resource \"{name}\" is unknown after it; not counted as remediated"))
                }
                Some(r) => Ok((evaluate(&rule.when, r), format!("resource \"{name}\" is {}", r.status.as_str()))),
            },
            (Subject::Resources(_), None) => {
                Err(format!("\"{op}\" ran for no resource in resource mode; not counted as remediated"))
            }
        };
        match verdict {
            Err(reason) => {
                o.action = Action::Unverified;
                o.reason = Some(reason);
            }
            Ok((true, state)) => {
                o.action = Action::Ineffective;
                o.reason = Some(format!(
                    "\"{op}\" ran and the symptom it answered is still there after it: {state}{}",
                    still(drifted)
                ));
            }
            Ok((false, _)) => {}
        }
    }
}

fn reasons<'a>(r: impl Iterator<Item = &'a str>) -> String {
    let r: Vec<&str> = r.collect();
    if r.is_empty() { "unobserved".to_owned() } else { r.join(", ") }
}

/// `; still differs: files/app.conf content, +2 more`, from the re-observation's drifted paths.
fn still(drifted: &[DriftedPath]) -> String {
    const SHOWN: usize = 3;
    if drifted.is_empty() {
        return String::new();
    }
    let named: Vec<String> =
        drifted.iter().take(SHOWN).map(|d| format!("{}/{} {}", d.component, d.entity, d.path)).collect();
    let more = drifted.len().saturating_sub(SHOWN);
    let more = if more > 0 { format!(", +{more} more") } else { String::new() };
    format!("; still differs: {}{more}", named.join(", "))
}
