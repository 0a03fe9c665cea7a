//! Builder chains laid out as rustfmt lays them out, printed straight to text.
//!
//! A generated declaration is one long builder chain (`PostgresDeclaration::new().table(..)`),
//! thousands of calls for a large database. Building it as tokens, parsing the tokens into a
//! `syn` tree and printing that with `prettyplease` costs more than reading the database, so a
//! generator that writes only builder calls describes its body as an [`Expr`] and this module
//! prints it directly, with rustfmt's default rules for the shapes an [`Expr`] has
//! (`max_width` 100, `fn_call_width`, `chain_width` and `array_width` 60, four-space indent):
//!
//! - a call, an array or a chain stays on one line when it fits the line and its own width
//!   limit;
//! - otherwise a chain puts each `.method(..)` on a line of its own, one indent deeper than the
//!   receiver, and a call or array puts each argument on a line of its own, one indent deeper,
//!   each followed by a comma, except that a call whose only argument is a call or chain that
//!   fits after the parenthesis keeps it there.
//!
//! Pure, and tested against rustfmt itself.

use proc_macro2::Literal;

/// rustfmt's `max_width`.
const MAX_WIDTH: usize = 100;
/// rustfmt's `fn_call_width`, `chain_width` and `array_width` under its default heuristics.
const SMALL_WIDTH: usize = 60;
/// One indent.
const INDENT: usize = 4;

/// A builder expression: string literals, raw tokens, arrays, calls and method chains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A string literal, escaped as Rust writes it.
    Str(String),
    /// Text written as is (`0o644`, `true`).
    Raw(String),
    /// `[a, b]`.
    Array(Vec<Expr>),
    /// `path(args)`.
    Call(String, Vec<Expr>),
    /// `receiver.method(args).method(args)`.
    Chain(Box<Expr>, Vec<(String, Vec<Expr>)>),
}

impl Expr {
    /// A string literal.
    pub fn str(text: impl AsRef<str>) -> Self {
        Expr::Str(Literal::string(text.as_ref()).to_string())
    }

    /// A call.
    pub fn call(path: impl Into<String>, args: Vec<Expr>) -> Self {
        Expr::Call(path.into(), args)
    }

    /// Appends `.method(args)`, making `self` a chain if it is not one.
    #[must_use]
    pub fn method(self, method: impl Into<String>, args: Vec<Expr>) -> Self {
        match self {
            Expr::Chain(receiver, mut calls) => {
                calls.push((method.into(), args));
                Expr::Chain(receiver, calls)
            }
            other => Expr::Chain(Box::new(other), vec![(method.into(), args)]),
        }
    }

    /// Appends `.method(args)` in place.
    pub fn push_method(&mut self, method: impl Into<String>, args: Vec<Expr>) {
        let this = std::mem::replace(self, Expr::Raw(String::new()));
        *self = this.method(method, args);
    }

    /// Returns the expression on one line.
    pub fn one_line(&self) -> String {
        let mut out = String::new();
        self.write_line(&mut out);
        out
    }

    /// Returns the expression's width on one line, or `None` when it is wider than `limit`
    /// (found without printing it, and stopping as soon as it is).
    fn width_within(&self, limit: usize) -> Option<usize> {
        match self {
            Expr::Str(s) | Expr::Raw(s) => (s.len() <= limit).then_some(s.len()),
            Expr::Array(items) => args_within(items, 2, limit),
            Expr::Call(path, args) => args_within(args, path.len() + 2, limit),
            Expr::Chain(receiver, calls) => {
                let mut width = receiver.width_within(limit)?;
                for (method, args) in calls {
                    width = args_within(args, width + method.len() + 3, limit)?;
                }
                Some(width)
            }
        }
    }

    fn write_line(&self, out: &mut String) {
        match self {
            Expr::Str(s) | Expr::Raw(s) => out.push_str(s),
            Expr::Array(items) => {
                out.push('[');
                write_args_line(items, out);
                out.push(']');
            }
            Expr::Call(path, args) => {
                out.push_str(path);
                out.push('(');
                write_args_line(args, out);
                out.push(')');
            }
            Expr::Chain(receiver, calls) => {
                receiver.write_line(out);
                for (method, args) in calls {
                    out.push('.');
                    out.push_str(method);
                    out.push('(');
                    write_args_line(args, out);
                    out.push(')');
                }
            }
        }
    }

    /// Returns true when rustfmt would keep the expression on one line, width allowing: every
    /// call's and array's arguments within their limit, and every chain of two or more methods
    /// within the chain limit.
    fn flat_ok(&self) -> bool {
        match self {
            Expr::Str(_) | Expr::Raw(_) => true,
            Expr::Array(items) | Expr::Call(_, items) => args_ok(items),
            Expr::Chain(receiver, calls) => {
                (calls.len() < 2 || self.width_within(SMALL_WIDTH).is_some())
                    && receiver.flat_ok()
                    && calls.iter().all(|(_, args)| args_ok(args))
            }
        }
    }

    /// Prints the expression at `indent`, starting in column `column` of a line whose text
    /// after the expression takes `trail` columns (a `,` or a `)`), into `out`.
    pub fn print(&self, indent: usize, column: usize, trail: usize, out: &mut String) {
        let room = MAX_WIDTH.saturating_sub(column + trail);
        if self.width_within(room).is_some() && self.flat_ok() {
            self.write_line(out);
            return;
        }
        match self {
            Expr::Str(text) | Expr::Raw(text) => out.push_str(text),
            Expr::Array(items) => {
                out.push('[');
                print_vertical(items, indent, out);
                out.push(']');
            }
            Expr::Call(path, args) => {
                out.push_str(path);
                print_args(args, indent, column + path.len(), trail, out);
            }
            Expr::Chain(receiver, calls) => {
                let start = out.len();
                receiver.print(indent, column, 0, out);
                let receiver_broke = out[start..].contains('\n');
                if let [(method, args)] = calls.as_slice() {
                    // One method: on a line of its own when it fits there whole, else after
                    // the receiver with its arguments broken.
                    let inner = indent + INDENT;

                    if receiver_broke {
                        out.push('\n');
                        push_indent(out, indent);
                        out.push('.');
                        out.push_str(method);
                        print_args(args, indent, indent + 1 + method.len(), trail, out);
                    } else if args_within(args, method.len() + 3, MAX_WIDTH.saturating_sub(inner + trail)).is_some()
                        && args_ok(args)
                    {
                        out.push('\n');
                        push_indent(out, inner);
                        out.push('.');
                        out.push_str(method);
                        out.push('(');
                        write_args_line(args, out);
                        out.push(')');
                    } else {
                        let column = out.len() - out[..out.len()].rfind('\n').map_or(0, |i| i + 1);
                        out.push('.');
                        out.push_str(method);
                        print_args(args, indent, column + 1 + method.len(), trail, out);
                    }
                    return;
                }
                // A receiver that broke over lines keeps its methods at its own indent.
                let inner = if receiver_broke { indent } else { indent + INDENT };
                for (i, (method, args)) in calls.iter().enumerate() {
                    out.push('\n');
                    push_indent(out, inner);
                    out.push('.');
                    out.push_str(method);
                    let call_trail = if i + 1 == calls.len() { trail } else { 0 };
                    print_args(args, inner, inner + 1 + method.len(), call_trail, out);
                }
            }
        }
    }
}

/// Whether `args` stay on one line as far as rustfmt's width limits go (a lone argument has
/// only the line's width to fit).
fn args_ok(args: &[Expr]) -> bool {
    if let [only] = args {
        return only.flat_ok();
    }
    args_within(args, 0, SMALL_WIDTH).is_some() && args.iter().all(Expr::flat_ok)
}

/// The width of `args` on one line after `used` columns, or `None` past `limit`.
fn args_within(args: &[Expr], used: usize, limit: usize) -> Option<usize> {
    let mut width = used + args.len().saturating_sub(1) * 2;
    for a in args {
        width += a.width_within(limit.checked_sub(width)?)?;
    }
    (width <= limit).then_some(width)
}

fn write_args_line(args: &[Expr], out: &mut String) {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        a.write_line(out);
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Prints `(args)` starting in `column`: on one line when they fit, else a lone call argument
/// kept after the parenthesis with its own arguments broken, else one argument a line.
fn print_args(args: &[Expr], indent: usize, column: usize, trail: usize, out: &mut String) {
    let room = MAX_WIDTH.saturating_sub(column + trail);
    if args.is_empty() || (args_within(args, 2, room).is_some() && args_ok(args)) {
        out.push('(');
        write_args_line(args, out);
        out.push(')');
        return;
    }
    if let [only @ Expr::Call(path, _)] = args
        && column + 2 + path.len() <= MAX_WIDTH
    {
        out.push('(');
        only.print(indent, column + 1, trail + 1, out);
        out.push(')');
        return;
    }
    out.push('(');
    print_vertical(args, indent, out);
    out.push(')');
}

fn print_vertical(items: &[Expr], indent: usize, out: &mut String) {
    let inner = indent + INDENT;
    for item in items {
        out.push('\n');
        push_indent(out, inner);
        item.print(inner, inner, 1, out);
        out.push(',');
    }
    out.push('\n');
    push_indent(out, indent);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Expr {
        Expr::str(text)
    }

    fn column(name: &str, sql_type: &str, not_null: bool, default: Option<&str>) -> Expr {
        let mut c = Expr::call("Column::new", vec![s(name), s(sql_type)]);
        if not_null {
            c.push_method("not_null", Vec::new());
        }
        if let Some(d) = default {
            c.push_method("default", vec![s(d)]);
        }
        c
    }

    fn printed(e: &Expr) -> String {
        let mut out = String::from("    ");
        e.print(4, 4, 0, &mut out);
        out
    }

    /// Declarations of every shape the printer has a rule for, short and long.
    fn cases() -> Vec<Expr> {
        let new = || Expr::call("PostgresDeclaration::new", Vec::new());
        let long = "a_table_with_a_rather_long_name_to_push_the_line";
        let mut big = new().method("schema", vec![s("empty")]);
        for (i, name) in ["t", "orders", long].iter().enumerate() {
            let mut t = Expr::call("Table::new", vec![s("shop"), s(name)])
                .method("column", vec![column("id", "bigint", true, None)])
                .method("column", vec![column("name", "text", i % 2 == 0, Some("''::text"))])
                .method("column", vec![column("created_at", "timestamp with time zone", true, Some("now()"))])
                .method(
                    "column",
                    vec![column(
                        "upstream",
                        "text",
                        false,
                        Some("'postgres://svc@upstream.invalid/app/with/a/long/path'::text"),
                    )],
                )
                .method("comment", vec![Expr::call("secret_shop_orders_comment", Vec::new())]);
            t.push_method("constraint", vec![Expr::call("Constraint::new", vec![s("t_pkey"), s("PRIMARY KEY (id)")])]);
            t.push_method(
                "constraint",
                vec![Expr::call(
                    "Constraint::new",
                    vec![s("orders_customer_id_fkey"), s("FOREIGN KEY (customer_id) REFERENCES shop.customers(id)")],
                )],
            );
            t.push_method("index", vec![Expr::call("Index::new", vec![s("t_n"), Expr::Array(vec![s("n")])])]);
            t.push_method(
                "index",
                vec![
                    Expr::call("Index::new", vec![s("t_pair"), Expr::Array(vec![s("customer_id"), s("created_at")])])
                        .method("unique", Vec::new()),
                ],
            );
            big.push_method("table", vec![t]);
        }
        let one = |t: Expr| new().method("table", vec![t]);
        vec![
            big,
            new().method("schema", vec![s("empty")]),
            one(Expr::call("Table::new", vec![s("a"), s("b")])
                .method("column", vec![column("id", "bigint", false, None)])),
            one(Expr::call("Table::new", vec![s("a"), s("b")])
                .method("column", vec![column("id", "bigint", true, None)])),
            new().method("schema", vec![s(&"s".repeat(68))]),
            new().method("schema", vec![s("aaaaaaaaaaaaaaaaaaaa")]).method("schema", vec![s("b")]),
            one(Expr::call("Table::new", vec![s(&"a".repeat(20)), s(&"b".repeat(35))])
                .method("column", vec![column("id", "bigint", false, None)])),
            one(Expr::call("Table::new", vec![s(&"a".repeat(20)), s(&"b".repeat(35))])
                .method("column", vec![column("id", "bigint", false, None)])
                .method("column", vec![column("x", "text", false, None)])),
        ]
    }

    #[test]
    fn short_chains_stay_on_one_line_and_long_ones_break_a_method_a_line() {
        let c = cases();
        assert_eq!(printed(&c[1]), "    PostgresDeclaration::new().schema(\"empty\")");
        assert_eq!(
            printed(&c[3]),
            "    PostgresDeclaration::new()\n        .table(Table::new(\"a\", \"b\").column(Column::new(\"id\", \"bigint\").not_null()))"
        );
        let big = printed(&c[0]);
        assert!(big.contains("\n                .column(Column::new(\"id\", \"bigint\").not_null())\n"), "{big}");
        assert!(
            big.contains(
                "\n                .constraint(Constraint::new(\n                    \"orders_customer_id_fkey\",\n"
            ),
            "a lone call argument is kept after the parenthesis: {big}"
        );
        assert!(big.lines().all(|l| l.len() <= MAX_WIDTH), "{big}");
    }

    /// Holds the printer to rustfmt's own layout, rustfmt run outside any rustfmt.toml.
    #[test]
    fn every_shape_is_laid_out_as_rustfmt_lays_it_out() {
        let mut source = String::new();
        for (i, e) in cases().iter().enumerate() {
            source.push_str(&format!("fn f{i}() -> PostgresDeclaration {{\n{}\n}}\n\n", printed(e)));
        }
        source.pop();
        let dir = tempfile::tempdir().unwrap();
        let mut spec = chant_store::process::Spec::new("rustfmt");
        spec.args = vec!["--edition".into(), "2024".into(), "--emit".into(), "stdout".into()];
        spec.cwd = Some(dir.path().to_path_buf());
        spec.stdin = Some(source.as_bytes().to_vec());
        let out = chant_store::process::run(&spec).unwrap();
        assert!(out.success(), "{}", out.stderr);
        assert_eq!(out.stdout.trim_start_matches("<stdin>:\n\n"), source);
    }
}
