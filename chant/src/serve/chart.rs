//! The op page's history charts, hand-written inline SVG (no script, no asset): a strip of the
//! health each tick rolled up to, and bar charts of tick duration, drift count and remediations,
//! one mark per tick shown, oldest on the left ([`super::history`]).
//!
//! They read without colour: each health cell carries its glyph (and the legend names it), each
//! bar its figure as text above it while there is room (up to about 40 ticks), and every mark a
//! `<title>` tooltip with the tick, its time and its figure. Each `<svg>` says what it shows in
//! `aria-label` (the range and mean of its figures), and the same figures follow as a table.

use maud::{Markup, html};

use super::Health;
use super::history::Point;

/// The bar area's height, in pixels.
const PLOT_H: f64 = 64.0;
/// Room above the bars for their figures.
const TOP: f64 = 16.0;
/// Room below for the time axis.
const BOTTOM: f64 = 18.0;
/// Room on the left for the value axis.
const LEFT: f64 = 52.0;
/// The narrowest a chart is drawn.
const MIN_WIDTH: f64 = 260.0;
/// The health strip's cell height.
const CELL_H: f64 = 22.0;

/// The width of one tick's slot: about 480 px for the whole series, within 4 to 28 px a tick.
fn slot(n: usize) -> f64 {
    (480.0 / n.max(1) as f64).clamp(4.0, 28.0)
}

fn width(n: usize) -> f64 {
    (LEFT + slot(n) * n as f64 + 8.0).max(MIN_WIDTH)
}

fn num(v: f64) -> String {
    let mut s = format!("{v:.1}");
    if s.ends_with(".0") {
        s.truncate(s.len() - 2);
    }
    s
}

/// A duration in milliseconds for a person: `40 ms`, `1.3 s`, `2m 5s`.
pub fn millis(ms: f64) -> String {
    match ms {
        ms if ms < 1000.0 => format!("{} ms", ms.round()),
        ms if ms < 60_000.0 => format!("{:.1} s", ms / 1000.0),
        ms => {
            let s = (ms / 1000.0).round() as u64;
            format!("{}m {}s", s / 60, s % 60)
        }
    }
}

fn count(v: f64) -> String {
    format!("{}", v.round())
}

/// The glyph each health word is drawn with, so the strip reads without colour.
pub fn glyph(h: Health) -> &'static str {
    match h {
        Health::InSync => "✓",
        Health::Healed => "+",
        Health::NeverTicked => "·",
        Health::Drifted => "~",
        Health::Damped => "≈",
        Health::Degraded => "!",
        Health::Unknown => "?",
        Health::Gated => "‖",
        Health::Failing => "✗",
        Health::GivenUp => "⊘",
    }
}

/// The fill of a health cell: the badge colours.
fn fill(h: Health) -> &'static str {
    match h {
        Health::InSync => "#2e8540",
        Health::Healed => "#2f8a4f",
        Health::NeverTicked => "#8a93a6",
        Health::Drifted => "#d98b0b",
        Health::Damped => "#9a6b2f",
        Health::Degraded => "#b5482f",
        Health::Unknown => "#6b5bb5",
        Health::Gated => "#1f6fd1",
        Health::Failing => "#c62f2f",
        Health::GivenUp => "#8b1a1a",
    }
}

/// The history section of an op page over `points` (oldest first).
pub fn history(points: &[Point]) -> Markup {
    html! {
        section.history {
            h2 { "History " span.muted { "(the " (points.len()) " tick(s) shown, oldest on the left)" } }
            @if points.is_empty() {
                p.muted { "No tick is recorded yet." }
            } @else {
                div style="display:flex;flex-wrap:wrap;gap:4px 28px;overflow-x:auto" {
                    div {
                        h3 { "Health per tick" }
                        (strip(points))
                        p.muted.legend style="margin:2px 0;font-size:12px" {
                            @for h in legend(points) { span style="margin-right:10px" { code { (glyph(h)) } " " (h.as_str()) } }
                        }
                    }
                    div {
                        h3 { "Tick duration" }
                        (bars("duration", "Tick duration", points, |p| p.duration_ms.map(|v| v as f64), millis))
                    }
                    div {
                        h3 { "Drift count" }
                        (bars("drifted", "Drift count", points, |p| Some(p.drifted as f64), count))
                    }
                    div {
                        h3 { "Remediations" }
                        (bars("remediated", "Remediations", points, |p| Some(p.remediated as f64), count))
                    }
                }
                details {
                    summary { "The same figures as a table" }
                    table.history {
                        thead { tr { th { "tick" } th { "at" } th { "duration" } th { "drifted" } th { "remediated" } th { "health" } } }
                        tbody { @for p in points.iter().rev() { tr data-tick=(p.id) {
                            td { code { (p.id) } } td { (p.timestamp) }
                            td { (p.duration_ms.map_or_else(|| "n/a".to_owned(), |d| millis(d as f64))) }
                            td { (p.drifted) } td { (p.remediated) } td { (glyph(p.health)) " " (p.health.as_str()) }
                        } } }
                    }
                }
            }
        }
    }
}

/// The distinct health words of `points`, worst first.
fn legend(points: &[Point]) -> Vec<Health> {
    let mut seen: Vec<Health> = points.iter().map(|p| p.health).collect();
    seen.sort_by(|a, b| b.cmp(a));
    seen.dedup();
    seen
}

/// The health strip: one cell per tick, its glyph inside while there is room.
fn strip(points: &[Point]) -> Markup {
    let n = points.len();
    let s = slot(n);
    let w = width(n);
    let h = CELL_H + BOTTOM + 4.0;
    let label = format!("Health over {n} tick(s), oldest first: {}", counts(points).join(", "));
    html! {
        svg.chart data-chart="health" xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(label)
            width=(num(w)) height=(num(h)) viewBox={ "0 0 " (num(w)) " " (num(h)) }
            font-family="system-ui,sans-serif" font-size="11" {
            title { (label) }
            @for (i, p) in points.iter().enumerate() {
                @let x = LEFT + i as f64 * s;
                rect.mark data-tick=(p.id) data-health=(p.health.as_str()) x=(num(x)) y="2"
                    width=(num((s - 1.0).max(1.0))) height=(num(CELL_H)) fill=(fill(p.health)) {
                    title { "tick " (p.id) " at " (p.timestamp) ": " (p.health.as_str()) }
                }
                @if s >= 12.0 {
                    text x=(num(x + s / 2.0 - 0.5)) y=(num(2.0 + CELL_H / 2.0 + 4.0)) text-anchor="middle" fill="#fff" {
                        (glyph(p.health))
                    }
                }
            }
            (time_axis(points, CELL_H + 4.0, w))
        }
    }
}

/// The env page's compact health strip of one op: a 12 px cell per tick (oldest on the left),
/// each with its glyph and a `<title>` naming the tick, its time and its health, and no axis
/// (the op page draws the full one). Empty without a tick.
pub fn mini_strip(points: &[Point]) -> Markup {
    const CELL: f64 = 12.0;
    const HIGH: f64 = 16.0;
    if points.is_empty() {
        return html! {};
    }
    let w = CELL * points.len() as f64;
    let label = match (points.first(), points.last()) {
        (Some(first), Some(last)) => format!(
            "Health of the last {} tick(s), from {} to {}: {}",
            points.len(),
            minute(&first.timestamp),
            minute(&last.timestamp),
            counts(points).join(", ")
        ),
        _ => String::new(),
    };
    html! {
        svg.strip data-chart="health" xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(label)
            width=(num(w)) height=(num(HIGH)) viewBox={ "0 0 " (num(w)) " " (num(HIGH)) }
            font-family="system-ui,sans-serif" font-size="10" style="vertical-align:middle" {
            title { (label) }
            @for (i, p) in points.iter().enumerate() {
                @let x = i as f64 * CELL;
                rect.mark data-tick=(p.id) data-health=(p.health.as_str()) x=(num(x)) y="0"
                    width=(num(CELL - 1.0)) height=(num(HIGH)) fill=(fill(p.health)) {
                    title { "tick " (p.id) " at " (p.timestamp) ": " (p.health.as_str()) }
                }
                text x=(num(x + CELL / 2.0 - 0.5)) y="12" text-anchor="middle" fill="#fff" { (glyph(p.health)) }
            }
        }
    }
}

/// `<n> <health>` for each health word of `points`, worst first.
fn counts(points: &[Point]) -> Vec<String> {
    legend(points)
        .into_iter()
        .map(|h| format!("{} {}", points.iter().filter(|p| p.health == h).count(), h.as_str()))
        .collect()
}

/// A tick's time as the axis shows it: to the minute (`2026-03-01T10:05`).
fn minute(timestamp: &str) -> &str {
    timestamp.get(..16).unwrap_or(timestamp)
}

/// The first and last tick's times under a chart whose marks end at `y`.
fn time_axis(points: &[Point], y: f64, w: f64) -> Markup {
    let (Some(first), Some(last)) = (points.first(), points.last()) else { return html! {} };
    html! {
        text x=(num(LEFT)) y=(num(y + 12.0)) font-size="10" fill="#6b7487" { (minute(&first.timestamp)) }
        @if points.len() > 1 {
            text x=(num(w - 4.0)) y=(num(y + 12.0)) font-size="10" fill="#6b7487" text-anchor="end" { (minute(&last.timestamp)) }
        }
    }
}

/// A bar chart `kind` of `value` per tick, figures written by `show`.
fn bars(
    kind: &str,
    title: &str,
    points: &[Point],
    value: impl Fn(&Point) -> Option<f64>,
    show: impl Fn(f64) -> String,
) -> Markup {
    let n = points.len();
    let s = slot(n);
    let w = width(n);
    let h = TOP + PLOT_H + BOTTOM;
    let values: Vec<Option<f64>> = points.iter().map(&value).collect();
    let known: Vec<f64> = values.iter().flatten().copied().collect();
    let max = known.iter().copied().fold(0.0, f64::max);
    let label = if known.is_empty() {
        format!("{title} over {n} tick(s): no figure recorded")
    } else {
        let min = known.iter().copied().fold(f64::INFINITY, f64::min);
        let mean = known.iter().sum::<f64>() / known.len() as f64;
        format!("{title} over {n} tick(s), oldest first: min {}, max {}, mean {}", show(min), show(max), show(mean))
    };
    let scale = if max > 0.0 { PLOT_H / max } else { 0.0 };
    let base = TOP + PLOT_H;
    let labelled = s >= 16.0;
    html! {
        svg.chart data-chart=(kind) xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(label)
            width=(num(w)) height=(num(h)) viewBox={ "0 0 " (num(w)) " " (num(h)) }
            font-family="system-ui,sans-serif" font-size="10" {
            title { (label) }
            line x1=(num(LEFT - 2.0)) y1=(num(base)) x2=(num(w - 4.0)) y2=(num(base)) stroke="#8a93a6" {}
            @if max > 0.0 {
                text.axis x=(num(LEFT - 6.0)) y=(num(TOP + 4.0)) text-anchor="end" fill="#6b7487" { (show(max)) }
            }
            text.axis x=(num(LEFT - 6.0)) y=(num(base)) text-anchor="end" fill="#6b7487" { "0" }
            @for (i, (p, v)) in points.iter().zip(&values).enumerate() {
                @let x = LEFT + i as f64 * s + 1.0;
                @let bw = (s - 2.0).max(1.0);
                @let bh = v.map_or(2.0, |v| (v * scale).max(1.0));
                @let figure = v.map_or_else(|| "n/a".to_owned(), &show);
                rect.mark data-tick=(p.id) data-value=(v.map(num).unwrap_or_default())
                    x=(num(x)) y=(num(base - bh)) width=(num(bw)) height=(num(bh))
                    fill=(if v.is_some() { "#4a5d8a" } else { "#c9ced8" }) {
                    title { "tick " (p.id) " at " (p.timestamp) ": " (figure) }
                }
                @if labelled {
                    text.value x=(num(x + bw / 2.0)) y=(num(base - bh - 3.0)) text-anchor="middle" fill="#1d2330" { (figure) }
                }
            }
            (time_axis(points, base, w))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: &str, ms: Option<u64>, drifted: u64, remediated: u64, health: Health) -> Point {
        Point {
            id: id.into(),
            timestamp: format!("2026-03-01T10:0{}:00.000Z", id.len()),
            duration_ms: ms,
            drifted,
            remediated,
            health,
        }
    }

    fn chart<'a>(page: &'a str, kind: &str) -> &'a str {
        let start = page.find(&format!(r#"data-chart="{kind}""#)).unwrap_or_else(|| panic!("no {kind}: {page}"));
        let rest = &page[start..];
        &rest[..rest.find("</svg>").unwrap()]
    }

    #[test]
    fn one_mark_per_tick_with_its_figure_as_text_and_tooltip() {
        let points = vec![
            point("t1", Some(40), 2, 0, Health::Drifted),
            point("t2", Some(1260), 2, 2, Health::Healed),
            point("t3", None, 0, 0, Health::InSync),
        ];
        let page = history(&points).into_string();
        for kind in ["health", "duration", "drifted", "remediated"] {
            assert_eq!(chart(&page, kind).matches(r#"class="mark""#).count(), 3, "{kind}: {page}");
        }
        let duration = chart(&page, "duration");
        assert!(duration.contains(r#"<text class="value""#) && duration.contains(">40 ms</text>"), "{duration}");
        assert!(duration.contains(">1.3 s</text>") && duration.contains(">n/a</text>"), "{duration}");
        assert!(duration.contains("<title>tick t2 at "), "{duration}");
        assert!(duration.contains(r#"aria-label="Tick duration over 3 tick(s), oldest first: min 40 ms, max 1.3 s"#));
        let drifted = chart(&page, "drifted");
        assert_eq!(drifted.matches(">2</text>").count(), 3, "two bars and the axis maximum: {drifted}");
        let health = chart(&page, "health");
        assert!(health.contains(r#"data-health="drifted""#) && health.contains(">~</text>"), "{health}");
        assert!(health.contains("aria-label=\"Health over 3 tick(s), oldest first: 1 drifted, 1 healed, 1 in-sync\""));
        // The legend and the table name each word; the table is newest first.
        assert!(page.contains("<code>~</code> drifted"), "{page}");
        let table = &page[page.find("<table").unwrap()..];
        assert!(table.find("t3").unwrap() < table.find("t1").unwrap(), "{table}");
        // The bars are in time order, and the taller figure is the taller bar.
        let heights: Vec<f64> = drifted
            .split(r#"class="mark""#)
            .skip(1)
            .map(|m| m.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(heights, [PLOT_H, PLOT_H, 1.0], "zero is a 1 px mark, not nothing");
    }

    #[test]
    fn many_ticks_keep_their_marks_and_drop_only_the_figures() {
        let points: Vec<Point> = (0..500).map(|i| point(&format!("t{i}"), Some(i), 0, 0, Health::InSync)).collect();
        let page = history(&points).into_string();
        assert_eq!(chart(&page, "duration").matches(r#"class="mark""#).count(), 500);
        assert!(!chart(&page, "duration").contains(r#"class="value""#), "no room for figures");
        assert!(chart(&page, "duration").contains("<title>tick t499 at "), "the tooltip keeps it");
        assert!(history(&[]).into_string().contains("No tick is recorded yet."));
    }

    #[test]
    fn ids_are_escaped_and_durations_read() {
        let page = history(&[point("<script>x</script>", Some(5), 0, 0, Health::Failing)]).into_string();
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("&lt;script&gt;"), "{page}");
        assert_eq!([millis(40.0), millis(1260.0), millis(125_000.0)], ["40 ms", "1.3 s", "2m 5s"]);
    }
}
