//! Cron expressions: the 5-field schedules a ConvergeOp accepts, parsed by croner (the crate the
//! runtime computes fire times with) and held to three rules on top of it.
//!
//! croner's strict mode (no seconds, no year, day-of-month and day-of-week combined with OR, as
//! Vixie cron does) is the parser, so the macros refuse at compile time exactly what the
//! scheduler could not run. Where croner is more lenient, this module is the stricter gate:
//!
//! - a step wider than its field (`*/61`, which croner reads as minute 0) is refused;
//! - an expression that never fires in any 8-year window (`0 0 30 2 *`) is refused;
//! - the `L`, `W` and `#` modifiers (croner's extensions) are refused: a schedule is plain cron.
//!
//! Before croner sees the expression, the field count, reversed ranges and values outside their
//! field are checked here as well, so each refusal names its field in plain words.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// Why a cron expression is refused. Returned by [`parse_cron`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The expression does not have 5 fields.
    #[error(
        "cron expression \"{expr}\" has {count} field(s); a schedule takes exactly 5 (minute hour day-of-month month day-of-week), e.g. \"*/10 * * * *\""
    )]
    FieldCount {
        /// The expression as written.
        expr: String,
        /// How many fields it has.
        count: usize,
    },
    /// A step is zero, not a number, or wider than its field.
    #[error("cron expression \"{expr}\": step `/{step}` in the {field} field is outside 1-{max}")]
    Step {
        /// The expression as written.
        expr: String,
        /// The step as written.
        step: String,
        /// The field's name.
        field: &'static str,
        /// The widest step the field takes.
        max: u8,
    },
    /// A range runs from a larger value to a smaller one.
    #[error(
        "cron expression \"{expr}\": range `{range}` in the {field} field runs backwards; write the smaller value first"
    )]
    Backwards {
        /// The expression as written.
        expr: String,
        /// The range as written.
        range: String,
        /// The field's name.
        field: &'static str,
    },
    /// A number lies outside its field's range.
    #[error("cron expression \"{expr}\": `{value}` is outside the {field} field's range {range}")]
    OutOfRange {
        /// The expression as written.
        expr: String,
        /// The number as written.
        value: String,
        /// The field's name.
        field: &'static str,
        /// The values the field takes (`0-59`, `1-12 or jan-dec`).
        range: String,
    },
    /// croner refuses a field (a word it does not know, stray characters, a malformed range).
    #[error("cron expression \"{expr}\": `{text}` is not a value of the {field} field (expected {range})")]
    NotAValue {
        /// The expression as written.
        expr: String,
        /// The field as written.
        text: String,
        /// The field's name.
        field: &'static str,
        /// The values the field takes.
        range: String,
        /// croner's reason.
        #[source]
        source: Croner,
    },
    /// croner refuses the expression and no single field explains why.
    #[error("cron expression \"{expr}\" is not valid")]
    Invalid {
        /// The expression as written.
        expr: String,
        /// croner's reason.
        #[source]
        source: Croner,
    },
    /// The expression uses `L`, `W` or `#`.
    #[error(
        "cron expression \"{expr}\" uses `L`, `W` or `#`, which a 5-field schedule does not take; name the days of the month or week instead"
    )]
    Modifier {
        /// The expression as written.
        expr: String,
    },
    /// No fire time exists in any 8-year window.
    #[error(
        "cron expression \"{expr}\" never fires: no month it names has the day of the month it names (within any 8 years)"
    )]
    NeverFires {
        /// The expression as written.
        expr: String,
    },
}

/// croner's reason for refusing an expression, kept as text (croner's error is neither `Clone` nor
/// comparable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Croner(String);

/// A valid cron expression: croner's parsed form and the expanded sets of each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronFields {
    /// Minutes 0-59.
    pub minutes: Vec<u8>,
    /// Hours 0-23.
    pub hours: Vec<u8>,
    /// Days of the month 1-31.
    pub days_of_month: Vec<u8>,
    /// Months 1-12.
    pub months: Vec<u8>,
    /// Days of the week 0-6 (0 = Sunday; 7 is read as 0).
    pub days_of_week: Vec<u8>,
    /// Whether the day-of-month field was a wildcard (then only day-of-week restricts).
    pub dom_any: bool,
    /// Whether the day-of-week field was a wildcard.
    pub dow_any: bool,
    /// croner's parsed expression, which computes the fire times.
    pub cron: Cron,
}

struct FieldDef {
    name: &'static str,
    min: u8,
    max: u8,
    names: &'static [&'static str],
}

impl FieldDef {
    fn range(&self) -> String {
        let mut h = format!("{}-{}", self.min, self.max);
        if let (Some(first), Some(last)) = (self.names.first(), self.names.last()) {
            h.push_str(&format!(" or {first}-{last}"));
        }
        h
    }
}

const FIELDS: [FieldDef; 5] = [
    FieldDef { name: "minute", min: 0, max: 59, names: &[] },
    FieldDef { name: "hour", min: 0, max: 23, names: &[] },
    FieldDef { name: "day-of-month", min: 1, max: 31, names: &[] },
    FieldDef {
        name: "month",
        min: 1,
        max: 12,
        names: &["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
    },
    FieldDef { name: "day-of-week", min: 0, max: 7, names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

/// Returns croner's parser in strict 5-field mode: seconds and years are refused, and the
/// day-of-month and day-of-week fields combine with OR, as Vixie cron does.
pub fn strict_parser() -> CronParser {
    CronParser::builder().seconds(Seconds::Disallowed).year(Year::Disallowed).dom_and_dow(false).build()
}

/// Expands the `@hourly`-style nicknames to their 5 fields.
fn expand_nickname(expr: &str) -> &str {
    match expr.trim() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other => other,
    }
}

/// Parses and validates a 5-field cron expression (or one of the `@hourly`-style nicknames).
///
/// # Errors
///
/// Returns an [`Error`] naming the expression and, where one field is at fault, the field and
/// the values it takes.
pub fn parse_cron(expr: &str) -> Result<CronFields, Error> {
    let expanded = expand_nickname(expr);
    let parts: Vec<&str> = expanded.split_whitespace().collect();
    if parts.len() != FIELDS.len() {
        return Err(Error::FieldCount { expr: expr.to_owned(), count: parts.len() });
    }
    for (part, def) in parts.iter().zip(FIELDS.iter()) {
        check_field(expr, part, def)?;
    }
    let cron = strict_parser().parse(expanded).map_err(|e| refusal(expr, &parts, &e))?;
    let p = &cron.pattern;
    if p.days.has_modifiers() || p.days_of_week.has_modifiers() {
        return Err(Error::Modifier { expr: expr.to_owned() });
    }
    let set = |c: &croner::CronComponent| -> Vec<u8> {
        c.values().into_iter().filter_map(|v| u8::try_from(v).ok()).collect()
    };
    let mut days_of_week: Vec<u8> = set(&p.days_of_week).into_iter().map(|d| d % 7).collect();
    days_of_week.sort_unstable();
    days_of_week.dedup();
    let fields = CronFields {
        minutes: set(&p.minutes),
        hours: set(&p.hours),
        days_of_month: set(&p.days),
        months: set(&p.months),
        days_of_week,
        dom_any: p.is_dom_wildcard(),
        dow_any: p.is_dow_wildcard(),
        cron: cron.clone(),
    };
    if !fires_ever(&fields) {
        return Err(Error::NeverFires { expr: expr.to_owned() });
    }
    Ok(fields)
}

/// Names the field croner refuses: each field is tried alone, the others left `*`.
fn refusal(expr: &str, parts: &[&str], e: &croner::errors::CronError) -> Error {
    let source = Croner(e.to_string());
    for (i, def) in FIELDS.iter().enumerate() {
        let alone: Vec<&str> = (0..FIELDS.len()).map(|j| if j == i { parts[i] } else { "*" }).collect();
        if strict_parser().parse(&alone.join(" ")).is_err() {
            return Error::NotAValue {
                expr: expr.to_owned(),
                text: parts[i].to_owned(),
                field: def.name,
                range: def.range(),
                source,
            };
        }
    }
    Error::Invalid { expr: expr.to_owned(), source }
}

/// The checks croner does not make (a step wider than its field) or words less plainly: each
/// list item's step, range order and numbers.
fn check_field(expr: &str, text: &str, def: &FieldDef) -> Result<(), Error> {
    for item in text.split(',') {
        let (base, step) = match item.split_once('/') {
            Some((b, s)) => (b, Some(s)),
            None => (item, None),
        };
        if let Some(s) = step
            && !s.parse::<u8>().is_ok_and(|n| n >= 1 && n <= def.max)
        {
            return Err(Error::Step { expr: expr.to_owned(), step: s.to_owned(), field: def.name, max: def.max });
        }
        let number = |t: &str| t.parse::<u32>().ok().filter(|_| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
        let (lo, hi) = base.split_once('-').unwrap_or((base, base));
        for t in [lo, hi] {
            if let Some(n) = number(t)
                && (n < u32::from(def.min) || n > u32::from(def.max))
            {
                return Err(Error::OutOfRange {
                    expr: expr.to_owned(),
                    value: t.to_owned(),
                    field: def.name,
                    range: def.range(),
                });
            }
        }
        if let (Some(a), Some(b)) = (number(lo), number(hi))
            && a > b
        {
            return Err(Error::Backwards { expr: expr.to_owned(), range: base.to_owned(), field: def.name });
        }
    }
    Ok(())
}

/// The longest day of each month, counting February 29 (a leap year falls in every 8 years).
const MONTH_DAYS: [u8; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

fn fires_ever(f: &CronFields) -> bool {
    // With a restricted day-of-week the expression fires weekly on those days (Vixie OR), so only
    // a day-of-month restriction alone can make it impossible.
    if !f.dow_any && !f.days_of_week.is_empty() {
        return true;
    }
    f.months.iter().any(|m| {
        let max = MONTH_DAYS.get(usize::from(m.saturating_sub(1))).copied().unwrap_or(0);
        f.days_of_month.iter().any(|d| *d <= max)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_common_forms() {
        for e in
            ["*/10 * * * *", "0 3 * * 1-5", "15,45 */2 1 * SUN", "0 0 29 2 *", "@hourly", "0 0 31 1,2 *", "0 0 * * 7"]
        {
            assert!(parse_cron(e).is_ok(), "{e}: {:?}", parse_cron(e));
        }
    }

    #[test]
    fn refuses_bad_forms_with_the_field_named() {
        let cases = [
            ("*/61 * * * *", "minute"),
            ("61 * * * *", "minute"),
            ("* 24 * * *", "hour"),
            ("* * 0 * *", "day-of-month"),
            ("* * * 13 *", "month"),
            ("* * * * 8", "day-of-week"),
            ("*/10 * * * * *", "exactly 5"),
            ("* * *", "exactly 5"),
            ("0 0 30 2 *", "never fires"),
            ("0 0 31 4,6,9,11 *", "never fires"),
            ("5-1 * * * *", "backwards"),
            ("x * * * *", "not a value"),
        ];
        for (e, needle) in cases {
            let err = parse_cron(e).expect_err(e).to_string();
            assert!(err.contains(needle), "{e}: {err}");
        }
    }

    #[test]
    fn croner_is_the_parser_and_its_refusals_name_the_field() {
        // Words croner does not know are refused by croner, and the field is named.
        let err = parse_cron("0 0 * smarch *").expect_err("not a month");
        assert!(matches!(err, Error::NotAValue { field: "month", .. }), "{err:?}");
        assert!(std::error::Error::source(&err).is_some(), "croner's reason is the source");
        // croner's extensions are not part of a 5-field schedule.
        for e in ["0 0 L * *", "0 0 15W * *", "0 0 * * 5#2"] {
            assert!(matches!(parse_cron(e), Err(Error::Modifier { .. })), "{e}");
        }
        // A step wider than its field, which croner would read as a single value.
        assert!(matches!(parse_cron("0 0 */32 * *"), Err(Error::Step { field: "day-of-month", .. })));
        assert!(matches!(parse_cron("0 0 * * */8"), Err(Error::Step { field: "day-of-week", .. })));
    }

    #[test]
    fn day_of_week_restriction_rescues_an_impossible_day_of_month() {
        assert!(parse_cron("0 0 30 2 1").is_ok());
    }

    #[test]
    fn expands_steps_and_names() {
        let f = parse_cron("*/15 0 1 jan-mar mon,7").unwrap();
        assert_eq!(f.minutes, vec![0, 15, 30, 45]);
        assert_eq!(f.months, vec![1, 2, 3]);
        assert_eq!(f.days_of_week, vec![0, 1]);
        assert!(!f.dow_any && !f.dom_any);
    }
}
