//! What every command ends with: its outcome (the exit code) and, with `--json`, its report.

use std::process::ExitCode;

/// The outcome of a command, as its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Exit 0.
    Clean,
    /// Exit 1: damage or differences found.
    Findings,
    /// Exit 2: something could not be read or written.
    Trouble,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        ExitCode::from(match outcome {
            Outcome::Clean => 0,
            Outcome::Findings => 1,
            Outcome::Trouble => 2,
        })
    }
}

/// Prints a report as pretty JSON.
pub fn print_json<T: serde::Serialize>(report: &T) {
    match serde_json::to_string_pretty(report) {
        Ok(text) => println!("{text}"),
        Err(error) => eprintln!("keepsake: could not write JSON: {error}"),
    }
}
