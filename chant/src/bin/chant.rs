//! The stock `chant` binary: everything that needs only the ledger or op.json files, in any
//! repository, without building the project.

fn main() -> std::process::ExitCode {
    chant::cli::stock_main()
}
