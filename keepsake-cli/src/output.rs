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
        Ok(text) => print_text(&(text + "\n")),
        Err(error) => eprintln!("keepsake: could not write JSON: {error}"),
    }
}

/// Prints text on stdout. A reader that stops early (`keepsake dump save.ksav | head`) ends
/// the output quietly, where `print!` would panic on the closed pipe.
pub fn print_text(text: &str) {
    use std::io::{ErrorKind, Write};
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && error.kind() != ErrorKind::BrokenPipe
    {
        eprintln!("keepsake: could not write the output: {error}");
    }
}
