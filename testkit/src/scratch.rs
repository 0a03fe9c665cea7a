//! A scratch cargo project that uses the macros through a minimal stand-in for the `chant` facade,
//! built with the real `cargo` in its own target directory: what the export test and the
//! rule-table benchmark build.
//!
//! The stand-in mirrors exactly the items of `chant::__private` that generated code names, so the
//! build exercises the macros, the op.json export and the compile-time registry checks without
//! compiling the whole runtime (gix and friends) a second time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The stand-in facade's `src/lib.rs`.
const FACADE: &str = r#"
pub use chant_macros::{converge_op, main, op, when};
pub mod prelude { pub use crate::{converge_op, op, when}; }
pub mod __private {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ClassKind { ReadOnly, Mutating, Destructive }
    pub struct OpName<const H: u64>;
    pub trait Declared<M> { const NAME: &'static str; const CLASS: ClassKind; }
    pub trait DeclaredConverge<M> { const NAME: &'static str; }
    pub struct Probe<const H: u64, M>(core::marker::PhantomData<M>);
    impl<const H: u64, M> Probe<H, M> where OpName<H>: Declared<M> {
        pub const CLASS: Option<ClassKind> = Some(<OpName<H> as Declared<M>>::CLASS);
    }
    pub struct NotDeclared;
    pub trait Undeclared { const CLASS: Option<ClassKind>; }
    impl<const H: u64> Undeclared for Probe<H, NotDeclared> { const CLASS: Option<ClassKind> = None; }
    pub struct ConvergeProbe<const H: u64, M>(core::marker::PhantomData<M>);
    impl<const H: u64, M> ConvergeProbe<H, M> where OpName<H>: DeclaredConverge<M> { pub const FOUND: bool = true; }
    pub trait UndeclaredConverge { const FOUND: bool; }
    impl<const H: u64> UndeclaredConverge for ConvergeProbe<H, NotDeclared> { const FOUND: bool = false; }
    pub struct StepContext;
    pub type StepFn = fn(&StepContext) -> Result<(), ()>;
    pub struct RegisteredOp {
        pub name: &'static str,
        pub class: ClassKind,
        pub json: &'static str,
        pub steps: &'static [(&'static str, StepFn)],
        pub krate: &'static str,
    }
    pub mod inventory { pub use crate::__submit as submit; }
    pub enum DefaultCommand { Help, Tick(&'static str) }
    pub fn project_main(_: DefaultCommand) -> std::process::ExitCode { std::process::ExitCode::SUCCESS }
}
#[doc(hidden)]
#[macro_export]
macro_rules! __submit { ($($t:tt)*) => { const _: $crate::__private::RegisteredOp = $($t)*; }; }
"#;

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A scratch project: a facade crate named `chant` and a user crate `user`.
pub struct Scratch {
    /// Held for the scratch project's life: the scratch projects share one target directory and
    /// both name their crate `user`, so two of them building at once overwrite each other's
    /// artifacts (seen as a spurious "Dirty user" on a fresh target directory).
    _serial: std::sync::MutexGuard<'static, ()>,
    /// The project's root.
    pub root: PathBuf,
    /// Where exports go (`CHANT_OPS_DIR`).
    pub ops_dir: PathBuf,
}

impl Scratch {
    /// Creates (or reuses) the scratch project `name` under cargo's per-target temp directory,
    /// with `lib_rs` as the user crate's source.
    pub fn new(tmp: &Path, name: &str, lib_rs: &str) -> Self {
        let root = tmp.join(name);
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let macros = workspace.join("chant-macros");
        std::fs::create_dir_all(root.join("chant/src")).unwrap();
        std::fs::create_dir_all(root.join("user/src")).unwrap();
        write_if_changed(
            &root.join("chant/Cargo.toml"),
            &format!(
                "[package]\nname = \"chant\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nchant-macros = {{ path = {:?} }}\n",
                macros.display().to_string()
            ),
        );
        write_if_changed(&root.join("chant/src/lib.rs"), FACADE);
        write_if_changed(
            &root.join("user/Cargo.toml"),
            "[package]\nname = \"user\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nchant = { path = \"../chant\" }\n",
        );
        write_if_changed(&root.join("Cargo.toml"), "[workspace]\nresolver = \"3\"\nmembers = [\"chant\", \"user\"]\n");
        // Start from the workspace's lock file so the build resolves offline to the same versions.
        if !root.join("Cargo.lock").exists() {
            std::fs::copy(workspace.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
        }
        let serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let s = Scratch { _serial: serial, ops_dir: root.join("ops"), root };
        s.set_source(lib_rs);
        s
    }

    /// Replaces the user crate's source (only when it changed, so cargo's freshness holds).
    pub fn set_source(&self, lib_rs: &str) {
        write_if_changed(&self.root.join("user/src/lib.rs"), lib_rs);
    }

    /// Runs `cargo build -p user` with `args`, returning its output.
    pub fn build(&self, args: &[&str]) -> Output {
        self.build_with(args, &[])
    }

    /// Runs `cargo build -p user` with `args` and extra environment variables.
    pub fn build_with(&self, args: &[&str], envs: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.envs(envs.iter().copied());
        cmd.current_dir(&self.root)
            .args(["build", "--offline", "-p", "user"])
            .args(args)
            // One target directory for every scratch project, so their dependencies compile once
            // (cargo's lock serialises concurrent builds).
            .env("CARGO_TARGET_DIR", self.root.parent().unwrap_or(&self.root).join("scratch-target"))
            .env("CHANT_OPS_DIR", &self.ops_dir)
            .env_remove("RUSTC_WRAPPER")
            .env_remove("CARGO_BUILD_TARGET_DIR");
        cmd.output().unwrap()
    }

    /// Builds and asserts success.
    pub fn build_ok(&self, args: &[&str]) -> Output {
        let out = self.build(args);
        assert!(out.status.success(), "cargo build failed:\n{}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// The export of op `name`.
    pub fn export(&self, name: &str) -> PathBuf {
        self.ops_dir.join("user").join(format!("{name}.json"))
    }
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}
