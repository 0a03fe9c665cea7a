//! Cron expression validation: the 5-field syntax a schedule accepts, each value and step inside
//! its field's range, and at least one fire time in any 8-year window.
//!
//! Pure and dependency-free so the macros can refuse a bad schedule at compile time and the
//! runtime can re-check a loaded op.json with the same code. Computing fire times is the
//! scheduler's job (croner, in the operator); this module only decides validity and returns the
//! expanded field sets.

/// The expanded sets of one valid cron expression.
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
    /// Whether the day-of-month field was `*` (Vixie cron: then only day-of-week restricts).
    pub dom_any: bool,
    /// Whether the day-of-week field was `*`.
    pub dow_any: bool,
}

struct FieldDef {
    name: &'static str,
    min: u8,
    max: u8,
    names: &'static [&'static str],
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

/// Parses and validates a 5-field cron expression (or one of the `@hourly`-style nicknames).
///
/// # Errors
///
/// Returns a plain-words message naming the field and the allowed range, the wrong field count,
/// or that the expression never fires.
pub fn parse_cron(expr: &str) -> Result<CronFields, String> {
    let expanded = match expr.trim() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other => other,
    };
    let parts: Vec<&str> = expanded.split_whitespace().collect();
    if parts.len() != 5 {
        return Err(format!(
            "cron expression \"{expr}\" has {} field(s); a schedule takes exactly 5 (minute hour day-of-month month day-of-week), e.g. \"*/10 * * * *\"",
            parts.len()
        ));
    }
    let mut sets: Vec<Vec<u8>> = Vec::with_capacity(5);
    for (part, def) in parts.iter().zip(FIELDS.iter()) {
        sets.push(parse_field(expr, part, def)?);
    }
    let dom_any = parts[2] == "*" || parts[2] == "?";
    let dow_any = parts[4] == "*" || parts[4] == "?";
    let mut dow: Vec<u8> = sets[4].iter().map(|d| d % 7).collect();
    dow.sort_unstable();
    dow.dedup();
    let fields = CronFields {
        minutes: sets[0].clone(),
        hours: sets[1].clone(),
        days_of_month: sets[2].clone(),
        months: sets[3].clone(),
        days_of_week: dow,
        dom_any,
        dow_any,
    };
    if !fires_ever(&fields) {
        return Err(format!(
            "cron expression \"{expr}\" never fires: no month it names has the day of the month it names (within any 8 years)"
        ));
    }
    Ok(fields)
}

/// The longest day of each month, counting February 29 (a leap year falls in every 8 years).
const MONTH_DAYS: [u8; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

fn fires_ever(f: &CronFields) -> bool {
    // With a restricted day-of-week the expression fires weekly on those days (Vixie OR), so only
    // a day-of-month restriction alone can make it impossible.
    if !f.dow_any && !f.dow_any_empty() {
        return true;
    }
    f.months.iter().any(|m| {
        let max = MONTH_DAYS[usize::from(m - 1)];
        f.days_of_month.iter().any(|d| *d <= max)
    })
}

impl CronFields {
    fn dow_any_empty(&self) -> bool {
        self.days_of_week.is_empty()
    }
}

fn parse_field(expr: &str, text: &str, def: &FieldDef) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::new();
    let range_hint = || {
        let mut h = format!("{}-{}", def.min, def.max);
        if !def.names.is_empty() {
            h.push_str(&format!(" or {}-{}", def.names[0], def.names[def.names.len() - 1]));
        }
        h
    };
    for item in text.split(',') {
        let (base, step) = match item.split_once('/') {
            Some((b, s)) => (b, Some(s)),
            None => (item, None),
        };
        let step = match step {
            None => 1u8,
            Some(s) => match s.parse::<u8>() {
                Ok(n) if n >= 1 && n <= def.max => n,
                _ => {
                    return Err(format!(
                        "cron expression \"{expr}\": step `/{s}` in the {} field is outside 1-{}",
                        def.name, def.max
                    ));
                }
            },
        };
        let (lo, hi) = if base == "*" || base == "?" {
            (def.min, if def.name == "day-of-week" { 6 } else { def.max })
        } else if let Some((a, b)) = base.split_once('-') {
            let a = value(expr, a, def, &range_hint)?;
            let b = value(expr, b, def, &range_hint)?;
            if a > b {
                return Err(format!(
                    "cron expression \"{expr}\": range `{base}` in the {} field runs backwards; write the smaller value first",
                    def.name
                ));
            }
            (a, b)
        } else {
            let a = value(expr, base, def, &range_hint)?;
            (a, if step > 1 { def.max } else { a })
        };
        let mut v = lo;
        loop {
            out.push(v);
            match v.checked_add(step) {
                Some(n) if n <= hi => v = n,
                _ => break,
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn value(expr: &str, text: &str, def: &FieldDef, hint: &dyn Fn() -> String) -> Result<u8, String> {
    let lower = text.to_ascii_lowercase();
    if let Some(i) = def.names.iter().position(|n| *n == lower) {
        let offset = if def.name == "month" { 1 } else { 0 };
        return u8::try_from(i + offset).map_err(|_| format!("cron expression \"{expr}\": bad name `{text}`"));
    }
    match text.parse::<u8>() {
        Ok(n) if n >= def.min && n <= def.max => Ok(n),
        Ok(_) | Err(_) if text.chars().all(|c| c.is_ascii_digit()) && !text.is_empty() => {
            Err(format!("cron expression \"{expr}\": `{text}` is outside the {} field's range {}", def.name, hint()))
        }
        _ => Err(format!(
            "cron expression \"{expr}\": `{text}` is not a value of the {} field (expected {})",
            def.name,
            hint()
        )),
    }
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
            let err = parse_cron(e).expect_err(e);
            assert!(err.contains(needle), "{e}: {err}");
        }
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
