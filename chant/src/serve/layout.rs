//! Where the graph page's boxes and arrows go: Graphviz's `dot` when it is on `PATH`, a small
//! built-in layered layout when it is not, when `dot` fails or runs past [`DOT_TIMEOUT`], and for
//! a graph of more than [`DOT_MAX_NODES`] boxes.
//!
//! Either way only *positions* come out of here: `dot` is asked for its plain-text layout
//! (`dot -Tplain`: each box's centre and each edge's spline control points) of a graph whose
//! nodes are `n0`, `n1`, ... with sizes given and no labels, so no resource name ever reaches
//! Graphviz and nothing Graphviz writes reaches the page as markup. The SVG itself is written by
//! [`super::graph_svg`], which escapes every name.
//!
//! The built-in layout is a plain layered (Sugiyama-style) drawing, left to right: cycles broken
//! by a depth-first search, each node on the layer after its longest chain of predecessors, the
//! nodes of a layer ordered by a few barycenter sweeps, edges drawn straight between box sides.
//! Linear in the edges per sweep, so a 2,000-table estate lays out in milliseconds.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::time::Duration;

use crate::process::{Input, Limits, capture, command};

/// How long `dot` may take before the built-in layout is used instead.
pub const DOT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most boxes `dot` is given: it lays out 300 in about 0.25 s and 2,000 in about 7 s, so a
/// larger graph gets the built-in layout (milliseconds) and the page stays fast.
pub const DOT_MAX_NODES: usize = 300;

/// The most bytes of `dot -Tplain` output read (a 2,000-node graph writes about 1 MB).
const DOT_MAX_OUTPUT: usize = 32 * 1024 * 1024;

/// The margin around the drawing, in pixels.
const MARGIN: f64 = 12.0;

/// The space between layers and between boxes of a layer (built-in layout), in pixels.
const LAYER_GAP: f64 = 72.0;
const NODE_GAP: f64 = 18.0;

/// A box's size, in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// A point, in pixels, y growing downwards (SVG's).
pub type Point = (f64, f64);

/// What placed the boxes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// Graphviz's `dot`.
    Graphviz,
    /// The built-in layered layout, and why `dot` was not used.
    BuiltIn {
        /// Why (`dot is not on PATH`, `dot timed out after 10s`).
        why: String,
    },
}

impl Engine {
    /// Describes the engine for the page (`Graphviz dot`, `built-in layered layout (dot is not on PATH)`).
    pub fn describe(&self) -> String {
        match self {
            Engine::Graphviz => "Graphviz dot".to_owned(),
            Engine::BuiltIn { why } => format!("built-in layered layout ({why})"),
        }
    }
}

/// One edge's line.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgePath {
    /// The points: a cubic B-spline's control points (`1 + 3k` of them) when `spline`, else a
    /// polyline.
    pub points: Vec<Point>,
    /// Whether `points` are spline control points.
    pub spline: bool,
}

/// A placed graph: every box's centre and every edge's line, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// What placed them.
    pub engine: Engine,
    /// The drawing's width, in pixels, margins included.
    pub width: f64,
    /// Its height.
    pub height: f64,
    /// The centre of each box, in the order of the sizes given.
    pub centres: Vec<Point>,
    /// The line of each edge, in the order of the edges given.
    pub edges: Vec<EdgePath>,
}

/// Lays out boxes of `sizes` joined by `edges` (indexes into `sizes`): with `dot` when it runs
/// and there are at most [`DOT_MAX_NODES`] boxes, else with the built-in layout.
pub fn layout(sizes: &[Size], edges: &[(usize, usize)]) -> Layout {
    if sizes.len() > DOT_MAX_NODES {
        let why = format!("{} boxes, more than the {DOT_MAX_NODES} dot is given", sizes.len());
        return built_in(sizes, edges, why);
    }
    match graphviz(sizes, edges, DOT_TIMEOUT) {
        Ok(layout) => layout,
        Err(why) => built_in(sizes, edges, why),
    }
}

/// The DOT text `dot` is given: node ids and sizes only, never a name.
fn dot_input(sizes: &[Size], edges: &[(usize, usize)]) -> String {
    let mut out = String::from(
        "digraph g {\n  graph [rankdir=LR, nodesep=0.25, ranksep=0.9];\n  node [shape=box, fixedsize=true, label=\"\"];\n",
    );
    for (i, s) in sizes.iter().enumerate() {
        let _ = writeln!(out, "  n{i} [width={:.3}, height={:.3}];", s.w / 72.0, s.h / 72.0);
    }
    for &(a, b) in edges {
        if a < sizes.len() && b < sizes.len() {
            let _ = writeln!(out, "  n{a} -> n{b};");
        }
    }
    out.push_str("}\n");
    out
}

/// Lays out with Graphviz's `dot` through chant's process module, bounded by `timeout`.
///
/// # Errors
///
/// Why not, in words, when `dot` is not on `PATH`, fails, runs past `timeout` or writes
/// something this does not read.
pub fn graphviz(sizes: &[Size], edges: &[(usize, usize)], timeout: Duration) -> Result<Layout, String> {
    let mut cmd = command("dot");
    cmd.arg("-Tplain");
    let input = Input { bytes: Some(dot_input(sizes, edges).into_bytes()), hold_open: false };
    let limits = Limits { timeout, grace: Duration::from_millis(500), max_output: Some(DOT_MAX_OUTPUT) };
    let out = match capture(&mut cmd, input, limits) {
        Ok(out) => out,
        Err(crate::process::Error::Spawn { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err("dot is not on PATH".to_owned());
        }
        Err(e) => return Err(format!("dot did not run: {}", crate::error::chain(&e))),
    };
    if !out.success() {
        let first = out.stderr.lines().next().unwrap_or("").trim().chars().take(200).collect::<String>();
        return Err(format!("dot failed: {} {first}", out.describe(timeout)).trim_end().to_owned());
    }
    parse_plain(&out.stdout, sizes.len(), edges).ok_or_else(|| "dot wrote a layout this page cannot read".to_owned())
}

/// Reads `dot -Tplain` output (inches, y up) into a layout in pixels (y down).
fn parse_plain(text: &str, nodes: usize, edges: &[(usize, usize)]) -> Option<Layout> {
    let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
    let node_index = |s: &str| s.strip_prefix('n').and_then(|n| n.parse::<usize>().ok()).filter(|&i| i < nodes);
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next()?.split_whitespace().collect();
    let ["graph", scale, w, h, ..] = head.as_slice() else { return None };
    let (scale, w, h) = (num(scale)?, num(w)?, num(h)?);
    let px = 72.0 * scale;
    let at = |x: f64, y: f64| (MARGIN + x * px, MARGIN + (h - y) * px);
    let mut centres = vec![None; nodes];
    let mut paths: BTreeMap<(usize, usize), VecDeque<Vec<Point>>> = BTreeMap::new();
    for line in lines {
        let t: Vec<&str> = line.split_whitespace().collect();
        match t.first().copied() {
            Some("node") if t.len() >= 4 => {
                let i = node_index(t[1])?;
                centres[i] = Some(at(num(t[2])?, num(t[3])?));
            }
            Some("edge") if t.len() >= 4 => {
                let (a, b) = (node_index(t[1])?, node_index(t[2])?);
                let n: usize = t[3].parse().ok()?;
                let coords = t.get(4..4 + 2 * n)?;
                let points: Option<Vec<Point>> = coords.chunks(2).map(|c| Some(at(num(c[0])?, num(c[1])?))).collect();
                paths.entry((a, b)).or_default().push_back(points?);
            }
            _ => {}
        }
    }
    let centres: Vec<Point> = centres.into_iter().collect::<Option<_>>()?;
    let edges = edges
        .iter()
        .map(|&(a, b)| match paths.get_mut(&(a, b)).and_then(VecDeque::pop_front) {
            Some(points) if points.len() >= 4 && (points.len() - 1).is_multiple_of(3) => {
                EdgePath { points, spline: true }
            }
            // A self loop or an edge dot did not draw: a straight line between the centres.
            _ => EdgePath { points: vec![centres[a], centres[b]], spline: false },
        })
        .collect();
    Some(Layout {
        engine: Engine::Graphviz,
        width: w * px + 2.0 * MARGIN,
        height: h * px + 2.0 * MARGIN,
        centres,
        edges,
    })
}

/// Lays out with the built-in layered layout; `why` says why `dot` was not used.
pub fn built_in(sizes: &[Size], edges: &[(usize, usize)], why: String) -> Layout {
    let n = sizes.len();
    let valid: Vec<(usize, usize)> = edges.iter().copied().filter(|&(a, b)| a < n && b < n && a != b).collect();
    let forward = acyclic(n, &valid);
    let layer = layers(n, &forward);
    let depth = layer.iter().copied().max().map_or(0, |d| d + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (v, &l) in layer.iter().enumerate() {
        rows[l].push(v);
    }
    order(&mut rows, &layer, &valid);
    // x: each layer as wide as its widest box; y: boxes stacked, each layer centred.
    let widths: Vec<f64> = rows.iter().map(|r| r.iter().map(|&v| sizes[v].w).fold(0.0, f64::max)).collect();
    let heights: Vec<f64> =
        rows.iter().map(|r| r.iter().map(|&v| sizes[v].h + NODE_GAP).sum::<f64>() - NODE_GAP).collect();
    let tallest = heights.iter().copied().fold(0.0, f64::max);
    let mut centres = vec![(0.0, 0.0); n];
    let mut x = MARGIN;
    for (l, row) in rows.iter().enumerate() {
        let mut y = MARGIN + (tallest - heights[l]) / 2.0;
        for &v in row {
            centres[v] = (x + widths[l] / 2.0, y + sizes[v].h / 2.0);
            y += sizes[v].h + NODE_GAP;
        }
        x += widths[l] + LAYER_GAP;
    }
    let width = if n == 0 { 2.0 * MARGIN } else { x - LAYER_GAP + MARGIN };
    let lines = edges
        .iter()
        .map(|&(a, b)| {
            let points = if a < n && b < n {
                vec![border(centres[a], sizes[a], centres[b]), border(centres[b], sizes[b], centres[a])]
            } else {
                Vec::new()
            };
            EdgePath { points, spline: false }
        })
        .collect();
    Layout { engine: Engine::BuiltIn { why }, width, height: tallest.max(0.0) + 2.0 * MARGIN, centres, edges: lines }
}

/// The edges with those that close a cycle (found by an iterative depth-first search) reversed.
fn acyclic(n: usize, edges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        out_of[a].push(b);
    }
    // 0 unseen, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut back = std::collections::BTreeSet::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some((v, next)) = stack.last_mut() {
            let v = *v;
            if let Some(&w) = out_of[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        back.insert((v, w));
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    edges.iter().map(|&(a, b)| if back.contains(&(a, b)) { (b, a) } else { (a, b) }).collect()
}

/// Each node's layer: one past the longest chain of predecessors (edges acyclic).
fn layers(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut out_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for &(a, b) in edges {
        out_of[a].push(b);
        indegree[b] += 1;
    }
    let mut layer = vec![0usize; n];
    let mut ready: VecDeque<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    while let Some(v) = ready.pop_front() {
        for &w in &out_of[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push_back(w);
            }
        }
    }
    layer
}

/// Orders each layer's nodes by the mean position of their neighbours in the layer before (then
/// after), a few sweeps: fewer crossings, never a different layering.
fn order(rows: &mut [Vec<usize>], layer: &[usize], edges: &[(usize, usize)]) {
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); layer.len()];
    for &(a, b) in edges {
        neighbours[a].push(b);
        neighbours[b].push(a);
    }
    let mut position = vec![0usize; layer.len()];
    let place = |rows: &[Vec<usize>], position: &mut Vec<usize>| {
        for row in rows {
            for (i, &v) in row.iter().enumerate() {
                position[v] = i;
            }
        }
    };
    place(rows, &mut position);
    for sweep in 0..4 {
        let down = sweep % 2 == 0;
        let count = rows.len();
        for step in 1..count {
            let l = if down { step } else { count - 1 - step };
            let adjacent = if down { l - 1 } else { l + 1 };
            let mut keyed: Vec<(f64, usize)> = rows[l]
                .iter()
                .map(|&v| {
                    let near: Vec<usize> =
                        neighbours[v].iter().filter(|&&w| layer[w] == adjacent).map(|&w| position[w]).collect();
                    let key = if near.is_empty() {
                        position[v] as f64
                    } else {
                        near.iter().sum::<usize>() as f64 / near.len() as f64
                    };
                    (key, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            rows[l] = keyed.into_iter().map(|(_, v)| v).collect();
            for (i, &v) in rows[l].iter().enumerate() {
                position[v] = i;
            }
        }
    }
}

/// Where the segment from `centre` (a box of `size`) towards `toward` leaves the box.
fn border(centre: Point, size: Size, toward: Point) -> Point {
    let (dx, dy) = (toward.0 - centre.0, toward.1 - centre.1);
    if dx == 0.0 && dy == 0.0 {
        return centre;
    }
    let sx = if dx == 0.0 { f64::INFINITY } else { (size.w / 2.0) / dx.abs() };
    let sy = if dy == 0.0 { f64::INFINITY } else { (size.h / 2.0) / dy.abs() };
    let s = sx.min(sy).min(1.0);
    (centre.0 + dx * s, centre.1 + dy * s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes(n: usize) -> Vec<Size> {
        vec![Size { w: 100.0, h: 30.0 }; n]
    }

    fn overlap(l: &Layout, sizes: &[Size]) -> bool {
        for i in 0..sizes.len() {
            for j in i + 1..sizes.len() {
                let (a, b) = (l.centres[i], l.centres[j]);
                let apart_x = (a.0 - b.0).abs() >= (sizes[i].w + sizes[j].w) / 2.0;
                let apart_y = (a.1 - b.1).abs() >= (sizes[i].h + sizes[j].h) / 2.0;
                if !apart_x && !apart_y {
                    return true;
                }
            }
        }
        false
    }

    #[test]
    fn the_built_in_layout_puts_each_edge_left_to_right_without_overlaps() {
        // pgbench: accounts, tellers -> branches; history -> accounts, branches, tellers.
        let sizes = boxes(4);
        let edges = [(0, 1), (2, 1), (3, 0), (3, 1), (3, 2)];
        let l = built_in(&sizes, &edges, "test".into());
        assert_eq!(l.engine, Engine::BuiltIn { why: "test".into() });
        for &(a, b) in &edges {
            assert!(l.centres[a].0 < l.centres[b].0, "{a} -> {b} points right: {:?}", l.centres);
        }
        assert!(!overlap(&l, &sizes), "{:?}", l.centres);
        assert_eq!(l.edges.len(), edges.len());
        for (path, &(a, b)) in l.edges.iter().zip(&edges) {
            assert_eq!(path.points.len(), 2);
            // Each line starts on its source box's border and ends on its target's.
            assert!((path.points[0].0 - (l.centres[a].0 + 50.0)).abs() < 1e-9, "{path:?}");
            assert!((path.points[1].0 - (l.centres[b].0 - 50.0)).abs() < 1e-9, "{path:?}");
        }
        for c in &l.centres {
            assert!(c.0 - 50.0 >= 0.0 && c.0 + 50.0 <= l.width && c.1 - 15.0 >= 0.0 && c.1 + 15.0 <= l.height);
        }
    }

    #[test]
    fn cycles_self_loops_and_bad_indexes_lay_out_without_a_panic() {
        let sizes = boxes(3);
        let l = built_in(&sizes, &[(0, 1), (1, 2), (2, 0), (1, 1), (7, 0)], "t".into());
        assert_eq!(l.edges.len(), 5);
        assert!(l.edges[4].points.is_empty(), "an edge to no node is not drawn");
        assert!(!overlap(&l, &sizes));
        let empty = built_in(&[], &[], "t".into());
        assert!(empty.centres.is_empty() && empty.width > 0.0);
        // Many nodes, no edges: one layer, stacked; past dot's share, the built-in layout says so.
        let wide = layout(&boxes(2_000), &[]);
        assert!(wide.centres.iter().all(|c| c.0 == wide.centres[0].0));
        assert_eq!(wide.engine, Engine::BuiltIn { why: "2000 boxes, more than the 300 dot is given".into() });
    }

    #[test]
    fn dot_plain_output_is_read_in_pixels_with_y_down_and_never_names_a_resource() {
        let input = dot_input(&boxes(2), &[(0, 1)]);
        assert!(input.contains("n0 [width=1.389, height=0.417];") && input.contains("n0 -> n1;"), "{input}");
        let plain = "graph 1 3.5 1\nnode n0 0.7 0.5 1.39 0.42 \"\" solid box black lightgrey\n\
                     node n1 2.8 0.5 1.39 0.42 \"\" solid box black lightgrey\n\
                     edge n0 n1 4 1.4 0.5 1.7 0.5 1.9 0.5 2.1 0.5 solid black\nstop\n";
        let l = parse_plain(plain, 2, &[(0, 1), (1, 0)]).unwrap();
        assert_eq!(l.engine, Engine::Graphviz);
        assert!((l.centres[0].0 - (MARGIN + 0.7 * 72.0)).abs() < 1e-9);
        assert!((l.centres[0].1 - (MARGIN + 0.5 * 72.0)).abs() < 1e-9, "y flipped: {:?}", l.centres);
        assert!(l.edges[0].spline && l.edges[0].points.len() == 4);
        assert!(!l.edges[1].spline, "an edge dot did not draw is a straight line");
        assert!(parse_plain("graph 1 x 1\n", 1, &[]).is_none());
        assert!(parse_plain("graph 1 1 1\nnode n5 1 1 1 1\n", 1, &[]).is_none(), "no such node");
        assert!(parse_plain("graph 1 1 1\n", 1, &[]).is_none(), "a node without a place");
    }

    #[test]
    fn graphviz_when_it_runs_places_every_box() {
        // The layout from the real `dot` when it is installed (CI installs it); without it the
        // error names why, and the page falls back.
        let sizes = boxes(3);
        match graphviz(&sizes, &[(0, 1), (1, 2)], DOT_TIMEOUT) {
            Ok(l) => {
                assert_eq!(l.centres.len(), 3);
                assert!(l.centres[0].0 < l.centres[1].0 && l.centres[1].0 < l.centres[2].0, "{:?}", l.centres);
                assert!(l.edges.iter().all(|e| e.spline));
            }
            Err(why) => assert_eq!(why, "dot is not on PATH"),
        }
    }
}
