//! Colour on a terminal: statuses and summary words are styled with `anstyle` and written
//! through `anstream`, which strips the styles when stdout is not a terminal. `--color
//! auto|always|never` chooses; under `auto`, a non-empty `NO_COLOR` turns colour off.

use anstyle::{AnsiColor, Style};

use crate::tick::health::HealthState;

/// When to colour, from `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum When {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always, even when piped.
    Always,
    /// Never.
    Never,
}

/// Sets the process-wide choice `anstream` honours for every later write.
pub fn init(when: When) {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let choice = match when {
        When::Always => anstream::ColorChoice::Always,
        When::Never => anstream::ColorChoice::Never,
        When::Auto if no_color => anstream::ColorChoice::Never,
        When::Auto => anstream::ColorChoice::Auto,
    };
    choice.write_global();
}

/// The style of a health word: green in sync, yellow drifted or waiting, red failing or unknown.
pub fn style(state: HealthState) -> Style {
    let colour = match state {
        HealthState::InSync | HealthState::Healed => AnsiColor::Green,
        HealthState::Drifted | HealthState::Gated | HealthState::Damped => AnsiColor::Yellow,
        HealthState::Unknown | HealthState::Degraded | HealthState::GivenUp | HealthState::Failing => AnsiColor::Red,
        HealthState::NeverTicked => return Style::new().dimmed(),
    };
    Style::new().fg_color(Some(colour.into())).bold()
}

/// `word` wrapped in the style of `state` (stripped again by `anstream` off a terminal).
pub fn paint(state: HealthState, word: &str) -> String {
    let s = style(state);
    format!("{s}{word}{s:#}")
}

/// Paints the health word of every `  health    : <word> ...` line of `operator status`.
pub fn paint_health_lines(text: &str) -> String {
    const KEY: &str = "  health    : ";
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let word_at = line.strip_prefix(KEY).map(|rest| rest.split([' ', ',', '\n']).next().unwrap_or_default());
        match word_at.and_then(|w| HealthState::parse(w).map(|s| (w, s))) {
            Some((word, state)) => {
                out.push_str(KEY);
                out.push_str(&paint(state, word));
                out.push_str(&line[KEY.len() + word.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_health_word_is_painted_and_the_rest_of_the_text_is_kept() {
        let text = "op (env)\n  health    : unknown (1 unobserved)\n  last tick : x\n";
        let painted = paint_health_lines(text);
        let red = style(HealthState::Unknown);
        assert_eq!(painted, format!("op (env)\n  health    : {red}unknown{red:#} (1 unobserved)\n  last tick : x\n"));
    }
}
