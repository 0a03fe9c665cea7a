//! The command line (being built).

use crate::__private::DefaultCommand;

/// Runs a project binary's command line.
pub fn project_main(_default: DefaultCommand) -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
