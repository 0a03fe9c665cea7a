//! Schedulers generated from the ConvergeOps' own schedules: systemd service and timer units
//! (one pair per scheduled op, or one long-running operator service) and crontab lines, each
//! running `operator --once --op <op>` on exactly the op's cron.
//!
//! [`Plan::of`] splits the ops into the scheduled, each with its cron and time zone, and the
//! unscheduled, which get no invented cadence: every generator leaves them out and says so
//! ([`Plan::left_out`]). [`on_calendar`] translates a 5-field cron expression into systemd
//! `OnCalendar=` expressions that fire at the same instants (cron's OR of a restricted day of
//! month and a restricted day of week becomes two expressions, since systemd ANDs them).
//! Everything here is text: nothing is installed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chant_lexicon::model::OpDocument;
use chant_lexicon::model::cron::{self, CronFields};

/// Why a scheduler cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `--op` names no ConvergeOp of the project.
    #[error("--op {name}: no ConvergeOp of that name{hint} (ConvergeOps: {known})")]
    UnknownOp {
        /// The name given.
        name: String,
        /// `; did you mean ...?`, or empty.
        hint: String,
        /// The project's ConvergeOps, comma-separated.
        known: String,
    },
    /// No chosen op declares a schedule, so there is nothing to schedule.
    #[error(
        "no ConvergeOp to schedule: {unscheduled} declare(s) no schedule, and chant invents no cadence (give the op a \
         `schedule`, as in `schedule: \"*/15 * * * *\"` in its `converge_op!`, or run the long-lived operator instead: \
         `operator`, whose service unit `ci systemd --operator` writes)"
    )]
    NothingScheduled {
        /// The unscheduled ops, comma-separated (`none` when the project has no ConvergeOp).
        unscheduled: String,
    },
    /// An op's cron expression cannot be read (the compiler checked it, so only a hand-edited
    /// op.json gets here).
    #[error("ConvergeOp {op}: {source}")]
    Cron {
        /// The op.
        op: String,
        /// Why.
        #[source]
        source: Box<cron::Error>,
    },
}

/// One scheduled ConvergeOp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduled {
    /// The op's name.
    pub op: String,
    /// Its env.
    pub env: Option<String>,
    /// Its 5-field cron expression, as declared.
    pub cron: String,
    /// Its IANA time zone; UTC when `None`.
    pub tz: Option<String>,
}

impl Scheduled {
    /// The time zone the schedule is read in (`UTC` when the op names none).
    pub fn zone(&self) -> &str {
        self.tz.as_deref().unwrap_or("UTC")
    }
}

/// The ConvergeOps a scheduler runs, and those it leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The scheduled ops, in name order.
    pub scheduled: Vec<Scheduled>,
    /// The ops that declare no schedule, in name order: left out.
    pub unscheduled: Vec<String>,
}

impl Plan {
    /// Splits `ops` (only the one named `only`, when given) into scheduled and unscheduled.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownOp`] when `only` names none of `ops`; [`Error::NothingScheduled`] when no
    /// chosen op has a schedule.
    pub fn of(ops: &[&OpDocument], only: Option<&str>) -> Result<Plan, Error> {
        let chosen: Vec<&OpDocument> = match only {
            Some(name) => {
                let found: Vec<&OpDocument> = ops.iter().copied().filter(|o| o.name.as_str() == name).collect();
                if found.is_empty() {
                    let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
                    let hint = chant_lexicon::model::contract::did_you_mean(name, names.iter().copied())
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    let known = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
                    return Err(Error::UnknownOp { name: name.to_owned(), hint, known });
                }
                found
            }
            None => ops.to_vec(),
        };
        let mut plan = Plan::default();
        for o in chosen {
            match &o.schedule {
                Some(s) => plan.scheduled.push(Scheduled {
                    op: o.name.to_string(),
                    env: o.env.as_ref().map(ToString::to_string),
                    cron: s.cron.clone(),
                    tz: s.tz.clone(),
                }),
                None => plan.unscheduled.push(o.name.to_string()),
            }
        }
        plan.scheduled.sort_by(|a, b| a.op.cmp(&b.op));
        plan.unscheduled.sort();
        if plan.scheduled.is_empty() {
            let unscheduled = if plan.unscheduled.is_empty() { "none".to_owned() } else { plan.unscheduled.join(", ") };
            return Err(Error::NothingScheduled { unscheduled });
        }
        Ok(plan)
    }

    /// The sentence saying which ops were left out, `None` when none was: for a comment line in
    /// the generated text and a note on stderr.
    pub fn left_out(&self) -> Option<String> {
        if self.unscheduled.is_empty() {
            return None;
        }
        Some(format!(
            "left out: {} declare(s) no schedule, and chant invents no cadence (give it a `schedule`, or tick it \
             with the long-lived operator)",
            self.unscheduled.join(", ")
        ))
    }
}

/// Where the generated schedulers run the project binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The project binary, an absolute path.
    pub bin: PathBuf,
    /// The project checkout it runs in, an absolute path.
    pub workdir: PathBuf,
    /// The name of the binary that generated the text, for the header line.
    pub generator: String,
}

/// One generated unit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFile {
    /// Its file name (`chant-staging-converge.timer`).
    pub name: String,
    /// Its content.
    pub text: String,
}

/// The systemd unit name prefix of the generated units.
pub const UNIT_PREFIX: &str = "chant-";

/// Translates a cron expression into `OnCalendar=` expressions firing at the same instants in
/// `tz` (UTC when `None`): one expression, or two when both the day of month and the day of week
/// are restricted (cron fires when either matches; systemd needs both, so each gets its own).
///
/// # Errors
///
/// The cron expression cannot be read ([`cron::parse_cron`]).
pub fn on_calendar(expr: &str, tz: Option<&str>) -> Result<Vec<String>, cron::Error> {
    let f = cron::parse_cron(expr)?;
    let zone = tz.unwrap_or("UTC");
    let time = format!("{}:{}:00", list(&f.hours, 0, 23), list(&f.minutes, 0, 59));
    let months = list(&f.months, 1, 12);
    let date = |days: &str| format!("*-{months}-{days}");
    let all_days = list(&f.days_of_month, 1, 31);
    let weekdays = weekdays(&f);
    Ok(match (f.dom_any, f.dow_any) {
        (true, true) | (false, true) => vec![format!("{} {time} {zone}", date(&all_days))],
        (true, false) => vec![format!("{weekdays} {} {time} {zone}", date("*"))],
        (false, false) => {
            vec![format!("{} {time} {zone}", date(&all_days)), format!("{weekdays} {} {time} {zone}", date("*"))]
        }
    })
}

/// The days of the week of `f` in systemd's words (`Mon..Fri`, `Sun,Sat`).
fn weekdays(f: &CronFields) -> String {
    const NAMES: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    // systemd's week starts on Monday; cron's 0 is Sunday.
    let mut monday_first: Vec<u8> = f.days_of_week.iter().map(|d| (d + 6) % 7).collect();
    monday_first.sort_unstable();
    runs(&monday_first)
        .into_iter()
        .map(|(a, b)| {
            let (x, y) = (NAMES[usize::from(a)], NAMES[usize::from(b)]);
            match b - a {
                0 => x.to_owned(),
                1 => format!("{x},{y}"),
                _ => format!("{x}..{y}"),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A field's values in systemd's words: `*` for the whole field, else runs (`00..05,07`).
fn list(values: &[u8], min: u8, max: u8) -> String {
    if values.len() == usize::from(max - min) + 1 {
        return "*".to_owned();
    }
    runs(values)
        .into_iter()
        .map(|(a, b)| match b - a {
            0 => format!("{a:02}"),
            1 => format!("{a:02},{b:02}"),
            _ => format!("{a:02}..{b:02}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Sorted values as runs of consecutive numbers, each `(first, last)`.
fn runs(values: &[u8]) -> Vec<(u8, u8)> {
    let mut out: Vec<(u8, u8)> = Vec::new();
    for &v in values {
        match out.last_mut() {
            Some((_, last)) if v == *last + 1 => *last = v,
            _ => out.push((v, v)),
        }
    }
    out
}

/// Quotes one argument of a systemd `ExecStart=` line (double quotes when it is not plain;
/// `%` and `$` doubled, as systemd expands both).
fn systemd_arg(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+:@=,".contains(&b));
    let quoted = if plain { arg.to_owned() } else { format!("\"{}\"", arg.replace('\\', "\\\\").replace('"', "\\\"")) };
    quoted.replace('%', "%%").replace('$', "$$")
}

/// Quotes one word for `sh` (single quotes when it is not plain).
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+:@=,".contains(&b));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// The service and timer of every scheduled op of `plan`: `chant-<op>.service` runs one
/// operator round for the op (`operator --once --op <op>`, which ticks it when due and honours
/// its lease, suspension and windows), `chant-<op>.timer` fires it on the op's cron.
///
/// # Errors
///
/// [`Error::Cron`] when an op's cron cannot be read.
pub fn systemd_units(plan: &Plan, inv: &Invocation) -> Result<Vec<UnitFile>, Error> {
    let mut out = Vec::new();
    for s in &plan.scheduled {
        let calendars = on_calendar(&s.cron, s.tz.as_deref())
            .map_err(|source| Error::Cron { op: s.op.clone(), source: Box::new(source) })?;
        let env = s.env.as_deref().map(|e| format!(" (env {e})")).unwrap_or_default();
        let unit = format!("{UNIT_PREFIX}{}", s.op);
        let mut service = header(inv, "systemd", &format!("one operator round for ConvergeOp {}", s.op));
        let _ = writeln!(service, "[Unit]\nDescription=chant: one operator round for ConvergeOp {}{env}", s.op);
        service.push_str("Wants=network-online.target\nAfter=network-online.target\n\n");
        service.push_str("[Service]\nType=oneshot\n");
        let _ = writeln!(service, "WorkingDirectory={}", path_text(&inv.workdir).replace('%', "%%"));
        let _ = writeln!(service, "ExecStart={} operator --once --op {}", systemd_arg(&path_text(&inv.bin)), s.op);
        // Above the operator's default --grace (10s): a stop lets the tick finish and release.
        service.push_str("TimeoutStopSec=30s\nKillMode=mixed\n");
        out.push(UnitFile { name: format!("{unit}.service"), text: service });

        let mut timer = header(inv, "systemd", &format!("the schedule of ConvergeOp {}", s.op));
        let _ = writeln!(
            timer,
            "[Unit]\nDescription=chant: the schedule of ConvergeOp {} ({} {})\n",
            s.op,
            s.cron,
            s.zone()
        );
        timer.push_str("[Timer]\n");
        for c in &calendars {
            let _ = writeln!(timer, "OnCalendar={c}");
        }
        // A missed fire runs at boot; the round's due check ticks it only if a fire was missed.
        let _ = writeln!(timer, "Persistent=true\nAccuracySec=1s\nUnit={unit}.service\n");
        timer.push_str("[Install]\nWantedBy=timers.target\n");
        out.push(UnitFile { name: format!("{unit}.timer"), text: timer });
    }
    Ok(out)
}

/// One long-running service for the operator daemon (`operator`, or `operator --env <env>`),
/// restarted on failure; a stop sends SIGTERM, which lets a running tick finish and releases the
/// leases.
pub fn operator_unit(inv: &Invocation, env: Option<&str>) -> UnitFile {
    let mut s = header(inv, "systemd --operator", "the operator daemon, ticking every ConvergeOp on its schedule");
    let scope = env.map(|e| format!(" of env {e}")).unwrap_or_default();
    let _ = writeln!(s, "[Unit]\nDescription=chant operator: ticks every ConvergeOp{scope} on its schedule");
    s.push_str("Wants=network-online.target\nAfter=network-online.target\n\n");
    s.push_str("[Service]\nType=exec\n");
    let _ = writeln!(s, "WorkingDirectory={}", path_text(&inv.workdir).replace('%', "%%"));
    let args = env.map(|e| format!(" --env {}", systemd_arg(e))).unwrap_or_default();
    let _ = writeln!(s, "ExecStart={} operator{args}", systemd_arg(&path_text(&inv.bin)));
    s.push_str("Restart=on-failure\nRestartSec=5s\n");
    s.push_str("TimeoutStopSec=30s\nKillMode=mixed\n\n");
    s.push_str("[Install]\nWantedBy=multi-user.target\n");
    UnitFile { name: format!("{UNIT_PREFIX}operator.service"), text: s }
}

fn header(inv: &Invocation, what: &str, purpose: &str) -> String {
    format!("# Generated by `{} ci {what}`: {purpose}.\n", inv.generator)
}

/// A crontab: one line per scheduled op of `plan`, on the op's own cron, running
/// `operator --once --op <op>` in the project checkout; each op's time zone is set with
/// `CRON_TZ=` before its line, and the unscheduled ops are named in a comment.
pub fn crontab(plan: &Plan, inv: &Invocation) -> String {
    let mut s = header(inv, "cron", "one line per scheduled ConvergeOp, on the op's own schedule");
    s.push_str(
        "# Install with `crontab <file>` as the user owning the checkout. CRON_TZ is honoured by cronie and\n\
         # busybox crond; a cron that ignores it reads every line in the machine's time zone.\n",
    );
    if let Some(left) = plan.left_out() {
        let _ = writeln!(s, "# {left}");
    }
    let mut zone = "";
    let cd = shell_quote(&path_text(&inv.workdir));
    let bin = shell_quote(&path_text(&inv.bin));
    for op in &plan.scheduled {
        if op.zone() != zone {
            zone = op.zone();
            let _ = writeln!(s, "CRON_TZ={zone}");
        }
        // `%` ends a crontab command; escaped, cron hands the shell a plain `%`.
        let command = format!("cd {cd} && {bin} operator --once --op {}", op.op).replace('%', "\\%");
        let _ = writeln!(s, "{} {command}", op.cron.trim());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_calendar_follows_crons_fields() {
        let c = |e: &str| on_calendar(e, None).unwrap();
        assert_eq!(c("*/15 * * * *"), ["*-*-* *:00,15,30,45:00 UTC"]);
        assert_eq!(c("0 3 * * *"), ["*-*-* 03:00:00 UTC"]);
        assert_eq!(c("0 9-17 * * 1-5"), ["Mon..Fri *-*-* 09..17:00:00 UTC"]);
        assert_eq!(c("30 2 1,15 * 0"), ["*-*-01,15 02:30:00 UTC", "Sun *-*-* 02:30:00 UTC"]);
        assert_eq!(c("0 0 * jan,jul 6,0"), ["Sat,Sun *-01,07-* 00:00:00 UTC"]);
        assert_eq!(c("@hourly"), ["*-*-* *:00:00 UTC"]);
        assert_eq!(on_calendar("0 3 * * *", Some("Europe/Berlin")).unwrap(), ["*-*-* 03:00:00 Europe/Berlin"]);
        assert!(on_calendar("0 3 * *", None).is_err());
    }

    #[test]
    fn quoting_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("/srv/p"), "/srv/p");
        assert_eq!(shell_quote("/srv/my p"), "'/srv/my p'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(systemd_arg("/srv/my p/100%"), "\"/srv/my p/100%%\"");
    }
}
