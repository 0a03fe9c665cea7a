//! The supervisor's listing: the output of `sprite-env services list`, read whole or not at all.
//!
//! Two forms are read. **JSON**: an array of services, or an object whose `services` is one;
//! each entry an object with a non-empty string `name`, its state in `state.status` or `status`
//! (a string or null), and, when present, `cmd` (string), `args` and `needs` (arrays of strings,
//! or null) and `http_port` (a port number or null). **Table**: one service per line, at least two
//! tab-separated columns (`name, state[, needs, port, cmd...]`), a state column that is empty or
//! `-` when the supervisor shows none.
//!
//! Anything else is not a listing: empty output, a warning line before the JSON, a line without a
//! tab, a state outside [`STATES`], a port that is not a number, an entry without a name, or one
//! name listed twice. A listing that is not read makes every service `unknown` (never `drifted`:
//! a hole in the reading is no reason to restart anything), so one stray line can never turn a
//! healthy estate into "nothing is running".

use serde::Deserialize;
use serde_json::Value;

/// The states a supervisor lists: sprite-env's own (`stopped`, `running`, `stopping`, `failed`)
/// and the stand-in's `starting`.
pub const STATES: [&str; 5] = ["stopped", "starting", "running", "stopping", "failed"];

/// The most output `services list` may print before the read fails, in bytes (a listing of
/// thousands of services is well under a MiB).
pub const MAX_OUTPUT: usize = 4 * 1024 * 1024;

/// One service as the supervisor lists it. Fields the listing lacks are `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its name.
    pub name: String,
    /// Its state (one of [`STATES`]), when listed.
    pub status: Option<String>,
    /// Its command line (cmd and args joined by spaces), when listed.
    pub cmd: Option<String>,
    /// What it needs, when listed.
    pub needs: Option<Vec<String>>,
    /// Its HTTP port (`Some(None)`: listed as none), when listed.
    pub http_port: Option<Option<u64>>,
    /// What the supervisor says of its process, when its JSON listing says it (the table does
    /// not): read leniently, a field of another type is absent.
    pub runtime: Runtime,
}

/// A listed service's process, as the supervisor's JSON state gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runtime {
    /// The pid of its process while it runs (`state.pid`).
    pub pid: Option<i64>,
    /// When it was last started, RFC 3339 (`state.started_at`).
    pub started_at: Option<String>,
    /// How many times it was started again after its first start (`state.restarts`).
    pub restarts: Option<u64>,
}

/// Why a `services list` output is not a listing. Every text quoted from the output is shown
/// escaped (`{:?}`), so no control character of it reaches a record or a terminal.
#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    /// The output was empty.
    #[error("it printed nothing (an empty listing is `[]`)")]
    Empty,
    /// The output was longer than [`MAX_OUTPUT`].
    #[error("it printed more than {limit} bytes")]
    TooLong {
        /// The limit.
        limit: usize,
    },
    /// The output starts like JSON and does not parse.
    #[error("its JSON does not parse")]
    Json(#[source] serde_json::Error),
    /// The JSON holds no list of services.
    #[error("its JSON holds no list of services")]
    NoList,
    /// An entry of the JSON list is not a service.
    #[error("entry {index} of its JSON list is not a service")]
    Entry {
        /// The entry's position, from 0.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// A line of the table is not a row.
    #[error("line {line} is not a row of the table (a name and a state, tab-separated): {text:?}")]
    Row {
        /// The line number, from 1.
        line: usize,
        /// The line, cut to 80 characters.
        text: String,
    },
    /// A service has no name.
    #[error("entry {index} has an empty name")]
    NoName {
        /// The entry's position, from 0.
        index: usize,
    },
    /// A service is listed in a state outside [`STATES`].
    #[error("it lists {name:?} in state {state:?}, which is none of {}", STATES.join(", "))]
    State {
        /// The service.
        name: String,
        /// The state listed.
        state: String,
    },
    /// A port column is not a number.
    #[error("it lists {name:?} with port {port:?}, which is not a port number")]
    Port {
        /// The service.
        name: String,
        /// The column.
        port: String,
    },
    /// One name is listed twice.
    #[error("it lists {name:?} twice")]
    Duplicate {
        /// The name.
        name: String,
    },
}

/// One JSON entry, in the shapes sprite-env and the stand-in print. Unknown fields (`env`,
/// `dir`, the state's `pid`) are allowed; known ones must have their type.
#[derive(Deserialize)]
struct Entry {
    name: String,
    #[serde(default)]
    state: Option<EntryState>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    cmd: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    needs: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "present")]
    http_port: Option<Option<u16>>,
}

#[derive(Deserialize)]
struct EntryState {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    pid: Option<Value>,
    #[serde(default)]
    started_at: Option<Value>,
    #[serde(default)]
    restarts: Option<Value>,
}

/// Tells a field that is present (even as `null`) from one that is absent.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Parses a `services list` output: JSON (an array, or an object's `services`) or the
/// tab-separated table (`name, state[, needs, port, cmd...]`).
///
/// # Errors
///
/// [`ListingError`] for any output that is not a listing of the known shape (see the module
/// docs); the caller then reads every service as `unknown`.
pub fn parse_list(text: &str) -> Result<Vec<Listed>, ListingError> {
    if text.len() > MAX_OUTPUT {
        return Err(ListingError::TooLong { limit: MAX_OUTPUT });
    }
    let t = text.trim();
    if t.is_empty() {
        return Err(ListingError::Empty);
    }
    // The table keeps its own whitespace: a trailing tab is an empty state column.
    let listed = if t.starts_with('[') || t.starts_with('{') { parse_json(t)? } else { parse_table(text)? };
    for (i, l) in listed.iter().enumerate() {
        if l.name.is_empty() {
            return Err(ListingError::NoName { index: i });
        }
        if let Some(state) = l.status.as_deref().filter(|s| !STATES.contains(s)) {
            return Err(ListingError::State { name: clip(&l.name), state: clip(state) });
        }
        if listed[..i].iter().any(|o| o.name == l.name) {
            return Err(ListingError::Duplicate { name: clip(&l.name) });
        }
    }
    Ok(listed)
}

fn parse_json(t: &str) -> Result<Vec<Listed>, ListingError> {
    let v: Value = serde_json::from_str(t).map_err(ListingError::Json)?;
    let items = match v {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("services") {
            Some(Value::Array(items)) => items,
            _ => return Err(ListingError::NoList),
        },
        _ => return Err(ListingError::NoList),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let e: Entry = serde_json::from_value(item).map_err(|source| ListingError::Entry { index, source })?;
            let runtime = e
                .state
                .as_ref()
                .map(|s| Runtime {
                    pid: s.pid.as_ref().and_then(Value::as_i64),
                    started_at: s.started_at.as_ref().and_then(Value::as_str).map(str::to_owned),
                    restarts: s.restarts.as_ref().and_then(Value::as_u64),
                })
                .unwrap_or_default();
            let status = e.state.and_then(|s| s.status).or(e.status);
            let cmd = e.cmd.map(|c| std::iter::once(c).chain(e.args.unwrap_or_default()).collect::<Vec<_>>().join(" "));
            let needs = e.needs.map(Option::unwrap_or_default);
            let http_port = e.http_port.map(|p| p.filter(|p| *p > 0).map(u64::from));
            Ok(Listed { name: e.name, status, cmd, needs, http_port, runtime })
        })
        .collect()
}

fn parse_table(t: &str) -> Result<Vec<Listed>, ListingError> {
    let mut listed = Vec::new();
    for (i, l) in t.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = l.split('\t').collect();
        if cols.len() < 2 {
            return Err(ListingError::Row { line: i + 1, text: clip(l) });
        }
        let col = |i: usize| cols.get(i).map(|c| c.trim()).filter(|c| !c.is_empty() && *c != "-");
        let name = cols[0].trim().to_owned();
        let wide = cols.len() >= 5;
        let http_port = match col(3).filter(|_| wide) {
            None => wide.then_some(None),
            Some(p) => match p.parse::<u16>() {
                Ok(p) => Some(Some(u64::from(p)).filter(|p| *p > 0)),
                Err(_) => return Err(ListingError::Port { name: clip(&name), port: clip(p) }),
            },
        };
        listed.push(Listed {
            status: col(1).map(str::to_owned),
            needs: wide.then(|| col(2).map(|n| n.split(',').map(str::to_owned).collect()).unwrap_or_default()),
            http_port,
            cmd: wide.then(|| cols[4..].join(" ")),
            name,
            runtime: Runtime::default(),
        });
    }
    Ok(listed)
}

/// At most 80 characters of a text quoted from the output.
fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_and_table_listings() {
        let json = r#"[{"name":"app","cmd":"python3","args":["a.py","80"],"needs":null,"http_port":80,"state":{"name":"app","status":"running"}},{"name":"hud","status":"stopped"}]"#;
        let l = parse_list(json).unwrap();
        assert_eq!(l[0].cmd.as_deref(), Some("python3 a.py 80"));
        assert_eq!(l[0].needs, Some(vec![]));
        assert_eq!(l[0].http_port, Some(Some(80)));
        assert_eq!(l[1].status.as_deref(), Some("stopped"));
        assert_eq!(l[1].cmd, None);
        assert_eq!(l[1].needs, None);
        assert_eq!(l[1].http_port, None);
        let t = parse_list("app\trunning\t-\t80\tpython3\ta.py\nhud\t\n").unwrap();
        assert_eq!(t[0].cmd.as_deref(), Some("python3 a.py"));
        assert_eq!(t[0].http_port, Some(Some(80)));
        assert_eq!(t[1].status, None);
        assert_eq!(t[1].needs, None);
        assert!(parse_list(r#"{"nope":1}"#).is_err());
        assert_eq!(parse_list("[]").unwrap(), vec![]);
        assert_eq!(parse_list(r#"{"services": []}"#).unwrap(), vec![]);
    }

    #[test]
    fn output_that_is_not_a_listing_is_refused_whole() {
        let app = r#"[{"name":"app","status":"running"}]"#;
        let refused = |text: &str| parse_list(text).map(|l| panic!("{text:?} was read as {l:?}")).unwrap_err();
        // A warning line before the JSON: read as a table, it would list nothing declared.
        assert!(matches!(refused(&format!("warning: config is old\n{app}")), ListingError::Row { line: 1, .. }));
        // Empty output with exit 0: not "nothing runs".
        assert!(matches!(refused(""), ListingError::Empty));
        assert!(matches!(refused(" \n\n"), ListingError::Empty));
        assert!(matches!(refused("app running\n"), ListingError::Row { .. }));
        assert!(matches!(refused("Error\tsupervisor unavailable\n"), ListingError::State { .. }));
        assert!(matches!(refused("app\trunning\t-\teighty\tsleep\n"), ListingError::Port { .. }));
        assert!(matches!(refused("app\trunning\napp\tstopped\n"), ListingError::Duplicate { .. }));
        assert!(matches!(refused(r#"[{"name":"app"},{"name":"app"}]"#), ListingError::Duplicate { .. }));
        assert!(matches!(refused(r#"[{"name":"app","status":"paused"}]"#), ListingError::State { .. }));
        assert!(matches!(refused(r#"[{"status":"running"}]"#), ListingError::Entry { index: 0, .. }));
        assert!(matches!(refused(r#"[{"name":""}]"#), ListingError::NoName { index: 0 }));
        assert!(matches!(refused(r#"["app"]"#), ListingError::Entry { .. }));
        assert!(matches!(refused(r#"[{"name":"app","needs":"hud"}]"#), ListingError::Entry { .. }));
        assert!(matches!(refused(r#"[{"name":"app","http_port":"80"}]"#), ListingError::Entry { .. }));
        assert!(matches!(refused(r#"[{"name":"app""#), ListingError::Json(_)));
        assert!(matches!(refused(r#"{"services": 3}"#), ListingError::NoList));
        let huge = format!("[{}]", vec![r#"{"name":"x"}"#; MAX_OUTPUT / 10].join(","));
        assert!(matches!(refused(&huge), ListingError::TooLong { .. }));
        // What is quoted is escaped: no raw escape sequence from the output reaches a message.
        let shown = refused("\u{1b}[2J\tweird\n").to_string();
        assert!(!shown.contains('\u{1b}'), "{shown}");
    }
}
