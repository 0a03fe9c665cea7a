//! The text change of an entity: how its live content differs from its declaration, for a
//! person — a unified text diff (through `similar`) when both sides are text, a size note
//! otherwise, capped so a large file never floods a terminal or a page; what `lifecycle diff
//! --live` prints under an update, the dashboard's diff document carries as `textChanges`, and a
//! tick records (shorter, [`TICK_LINES`]) so `operator log` shows what changed as text.

use serde::{Deserialize, Serialize};

use chant_lexicon::observe::EntityTexts;

/// Inputs larger than this (either side) are not diffed, only sized.
pub const MAX_INPUT: usize = 1 << 20;
/// At most this many diff lines are shown; the rest is counted in a note.
pub const MAX_LINES: usize = 200;
/// At most this many diff lines of one entity go into a tick record.
pub const TICK_LINES: usize = 40;
/// At most this many entities' text changes go into a tick record.
pub const TICK_ENTITIES: usize = 10;

/// The text diff of one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextChange {
    /// The component (lexicon) the entity belongs to.
    pub component: String,
    /// The entity's name.
    pub name: String,
    /// The unified diff (live -> declared), or a note when the content is not text or too large.
    pub diff: String,
    /// Lines of the diff left out by [`MAX_LINES`] (or the cap it was rendered with).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub cut_lines: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Renders the difference of `texts` for `component`/`name`; `None` when the two sides are
/// equal (the entity differs in something else, such as its mode).
pub fn text_change(component: &str, name: &str, texts: &EntityTexts) -> Option<TextChange> {
    text_change_within(component, name, texts, MAX_LINES)
}

/// [`text_change`], showing at most `max_lines` lines of the diff.
pub fn text_change_within(component: &str, name: &str, texts: &EntityTexts, max_lines: usize) -> Option<TextChange> {
    let live = texts.live.as_deref().unwrap_or_default();
    if texts.live.as_deref() == Some(texts.declared.as_slice()) {
        return None;
    }
    let change = |diff: String, cut_lines| TextChange {
        component: component.to_owned(),
        name: name.to_owned(),
        diff,
        cut_lines,
    };
    if live.len() > MAX_INPUT || texts.declared.len() > MAX_INPUT {
        return Some(change(
            format!(
                "(content too large to diff: {} bytes live, {} declared; limit {MAX_INPUT})",
                live.len(),
                texts.declared.len()
            ),
            0,
        ));
    }
    let (Some(old), Some(new)) = (as_text(live), as_text(&texts.declared)) else {
        return Some(change(
            format!("(binary content: {} bytes live, {} declared)", live.len(), texts.declared.len()),
            0,
        ));
    };
    let old_name = if texts.live.is_some() { format!("live/{name}") } else { "/dev/null".to_owned() };
    let diff = similar::TextDiff::from_lines(old, new);
    let rendered = diff.unified_diff().context_radius(3).header(&old_name, &format!("declared/{name}")).to_string();
    let lines: Vec<&str> = rendered.lines().collect();
    let cut = lines.len().saturating_sub(max_lines);
    let mut shown = lines[..lines.len().min(max_lines)].join("\n");
    if cut > 0 {
        shown.push_str(&format!("\n(diff cut: {cut} more line(s) not shown)"));
    }
    Some(change(shown, cut))
}

/// `bytes` as text: valid UTF-8 without NUL bytes.
fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(declared: &str, live: Option<&str>) -> EntityTexts {
        EntityTexts { declared: declared.as_bytes().to_vec(), live: live.map(|l| l.as_bytes().to_vec()) }
    }

    #[test]
    fn an_edited_text_file_shows_a_unified_diff_from_live_to_declared() {
        let c =
            text_change("files", "app.conf", &texts("port = 8080\nlog = info\n", Some("port = 9090\nlog = info\n")))
                .unwrap();
        assert_eq!(
            c.diff,
            "--- live/app.conf\n+++ declared/app.conf\n@@ -1,2 +1,2 @@\n-port = 9090\n+port = 8080\n log = info"
        );
        assert_eq!(c.cut_lines, 0);
        assert_eq!(text_change("files", "a", &texts("same\n", Some("same\n"))), None);
        let created = text_change("files", "new.txt", &texts("hello\n", None)).unwrap();
        assert!(created.diff.starts_with("--- /dev/null\n+++ declared/new.txt\n"), "{}", created.diff);
    }

    #[test]
    fn binary_content_is_sized_and_a_long_diff_is_cut_with_a_note() {
        let bin = EntityTexts { declared: vec![0, 1, 2], live: Some(vec![0, 1]) };
        assert_eq!(text_change("files", "b", &bin).unwrap().diff, "(binary content: 2 bytes live, 3 declared)");
        let declared: String = (0..500).map(|i| format!("line {i}\n")).collect();
        let c = text_change("files", "long", &texts(&declared, Some(""))).unwrap();
        assert_eq!(c.diff.lines().count(), MAX_LINES + 1);
        assert!(c.cut_lines > 0 && c.diff.ends_with(&format!("(diff cut: {} more line(s) not shown)", c.cut_lines)));
    }
}
