//! Validated names used as folder names: profiles and game ids.

use super::error::StoreError;
use std::fmt;

/// The longest name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// A profile name that is safe to use as a single folder name on every desktop platform.
///
/// Rejected: empty names, `.` and `..`, path separators and drive colons, control characters,
/// characters Windows forbids (`< > : " | ? *`), leading or trailing spaces, a trailing dot,
/// Windows device names (`CON`, `NUL`, `COM1`, … with or without an extension), and names longer
/// than [`MAX_NAME_LEN`] bytes.
///
/// ```
/// use keepsake_core::store::ProfileName;
///
/// assert!(ProfileName::new("player one").is_ok());
/// assert!(ProfileName::new("../elsewhere").is_err());
/// assert!(ProfileName::new("con").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProfileName(String);

impl ProfileName {
    /// Validates `name` as a profile name.
    pub fn new(name: impl Into<String>) -> Result<Self, StoreError> {
        let name = name.into();
        match problem_with(&name) {
            Some(reason) => Err(StoreError::InvalidName {
                what: "profile",
                name,
                reason,
            }),
            None => Ok(ProfileName(name)),
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ProfileName {
    fn default() -> Self {
        ProfileName("default".to_owned())
    }
}

impl fmt::Display for ProfileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Validates a game id used as the folder under the platform's data directory.
pub(crate) fn validate_game_id(game_id: &str) -> Result<(), StoreError> {
    match problem_with(game_id) {
        Some(reason) => Err(StoreError::InvalidName {
            what: "game id",
            name: game_id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

const WINDOWS_DEVICES: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Why `name` is not a safe folder name, if it is not.
fn problem_with(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Some("it is longer than 64 bytes");
    }
    if name == "." || name == ".." {
        return Some("it names the current or parent folder");
    }
    if name.contains(['/', '\\']) {
        return Some("it contains a path separator");
    }
    if name.chars().any(char::is_control) {
        return Some("it contains a control character");
    }
    if name.contains(['<', '>', ':', '"', '|', '?', '*']) {
        return Some("it contains one of < > : \" | ? *, which Windows forbids in names");
    }
    if name.starts_with(' ') || name.ends_with(' ') || name.ends_with('.') {
        return Some("it starts or ends with a space, or ends with a dot");
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    if WINDOWS_DEVICES
        .iter()
        .any(|device| device.eq_ignore_ascii_case(stem))
    {
        return Some("it is a reserved Windows device name");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for name in [
            "default",
            "Player 2",
            "ünïcødé",
            "save.game",
            "a",
            "console",
        ] {
            assert!(
                ProfileName::new(name).is_ok(),
                "{name:?} should be accepted"
            );
        }
    }

    #[test]
    fn rejects_unsafe_names() {
        let long = "x".repeat(65);
        for name in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "/abs",
            "C:\\x",
            "c:",
            "nul",
            "NUL.txt",
            "Com1",
            "lpt9.log",
            "tab\there",
            "nl\n",
            "del\u{7f}",
            "what?",
            " lead",
            "trail ",
            "dot.",
            &long,
        ] {
            assert!(
                matches!(ProfileName::new(name), Err(StoreError::InvalidName { .. })),
                "{name:?} should be rejected"
            );
        }
    }
}
