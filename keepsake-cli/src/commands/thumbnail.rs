//! `keepsake thumbnail <file> -o out.png`.

use crate::examine::{format_section, open_regular};
use crate::output::{Outcome, print_json};
use keepsake_core::format::{self, DecodeOptions, FormatError};
use serde::Serialize;
use std::path::Path;

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

#[derive(Debug, Serialize)]
struct Report {
    file: String,
    /// `written`, `none` (the save has no thumbnail) or `damaged`.
    status: &'static str,
    output: Option<String>,
    bytes: Option<usize>,
    /// Whether the bytes start with the PNG signature (the game writes PNG).
    png: Option<bool>,
    section: Option<&'static str>,
    message: Option<String>,
}

pub fn run(path: &Path, output: &Path, json: bool) -> Outcome {
    let mut file = match open_regular(path) {
        Ok(file) => file,
        Err(error) => {
            eprintln!("keepsake: cannot read {}: {error}", path.display());
            return Outcome::Trouble;
        }
    };
    let mut report = Report {
        file: path.display().to_string(),
        status: "none",
        output: None,
        bytes: None,
        png: None,
        section: None,
        message: None,
    };
    let outcome = match format::read_thumbnail(&mut file, &DecodeOptions::default()) {
        Ok(Some(png)) => {
            if let Err(error) = std::fs::write(output, &png) {
                eprintln!("keepsake: cannot write {}: {error}", output.display());
                return Outcome::Trouble;
            }
            report.status = "written";
            report.output = Some(output.display().to_string());
            report.bytes = Some(png.len());
            report.png = Some(png.starts_with(&PNG_SIGNATURE));
            Outcome::Clean
        }
        Ok(None) => Outcome::Findings,
        Err(FormatError::Io { source, .. }) => {
            eprintln!("keepsake: cannot read {}: {source}", path.display());
            return Outcome::Trouble;
        }
        Err(error) => {
            report.status = "damaged";
            report.section = Some(format_section(&error));
            report.message = Some(error.to_string());
            Outcome::Findings
        }
    };
    if json {
        print_json(&report);
    } else {
        match report.status {
            "written" => println!(
                "wrote {} ({} bytes{})",
                output.display(),
                report.bytes.unwrap_or_default(),
                if report.png == Some(true) {
                    ", PNG"
                } else {
                    ", not a PNG"
                }
            ),
            "none" => println!("{} has no thumbnail", path.display()),
            _ => println!(
                "{} is damaged: {}: {}",
                path.display(),
                report.section.unwrap_or("file"),
                crate::text::clean(report.message.as_deref().unwrap_or_default())
            ),
        }
    }
    outcome
}
