//! An env nobody declared is never `reconciled`: a typo'd `lifecycle diff` env exits 2 with a
//! suggestion, a ConvergeOp reading an undeclared env makes its binary's catalog refuse to load
//! (naming the op and the env) unless its `observe:` step supplies the verdicts, and the stock
//! binary, which carries no declarations, says so and exits 2.

use super::support::{STOCK, Sandbox, config_with_roots};

/// The binary whose ConvergeOp reads the undeclared env `nowhere`.
const UNDECLARED: &str = env!("CARGO_BIN_EXE_e2e-undeclared");

#[test]
fn a_typod_env_exits_2_with_a_suggestion() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["lifecycle", "diff", "sitee", "--live"], &[]);
    out.code(2);
    assert!(
        out.stderr.contains("env `sitee` has no declaration in this binary; did you mean `site`?"),
        "{}",
        out.all()
    );
    assert!(!out.all().contains("reconciled"), "{}", out.all());
    sandbox.project(&["lifecycle", "diff", "site", "--live"], &[]).code(0);
}

#[test]
fn a_converge_op_on_an_undeclared_env_is_refused_when_the_catalog_loads() {
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    for args in [&["tick", "ghost-converge"][..], &["ops"], &["operator", "--once"]] {
        let out = sandbox.run_in(UNDECLARED, &sandbox.dir, args, &[]);
        out.code(2);
        assert!(
            out.stderr.contains("op \"ghost-converge\": env \"nowhere\" has no declaration in this binary"),
            "{args:?}\n{}",
            out.all()
        );
        assert!(!out.stderr.contains("watch-converge"), "the observer supplies its verdicts: {}", out.all());
        assert!(!out.all().contains("reconciled="), "{}", out.all());
    }
    assert_eq!(sandbox.tip(), None, "nothing ticked");
}

#[test]
fn the_stock_binary_carries_no_declarations_and_says_so() {
    // A chant.toml and no Cargo workspace: the stock binary answers itself.
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.run_in(STOCK, &sandbox.dir, &["lifecycle", "diff", "site", "--live"], &[]);
    out.code(2);
    assert!(out.stderr.contains("the stock chant binary carries no env declarations"), "{}", out.all());
    assert!(!out.all().contains("reconciled"), "{}", out.all());
}
