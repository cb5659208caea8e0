//! The report of a folder of kept saves checked against a schema: per save, per stored type,
//! what a load does, and in words what changed without a migration.

use super::check::{ColumnCheck, Verdict};
use std::fmt::{self, Display, Formatter};
use std::path::PathBuf;

/// Every kept save of a folder, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompatReport {
    /// The folder checked.
    pub folder: PathBuf,
    /// How many types the schema holds.
    pub schema_types: usize,
    /// The folder could not be listed.
    pub folder_error: Option<String>,
    /// Each save file found, in path order.
    pub saves: Vec<SaveCheck>,
}

/// One kept save, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveCheck {
    /// The file.
    pub path: PathBuf,
    /// The file could not be read, or is damaged (then `columns` is empty).
    pub error: Option<String>,
    /// Each stored column, in stored order.
    pub columns: Vec<ColumnCheck>,
    /// Why a decode with the game's registered types failed (`bevy_keepsake`'s
    /// `compat::check_kept_saves` decodes; the layout check alone leaves it `None`).
    pub load_error: Option<String>,
}

impl SaveCheck {
    /// The save's problems: an unreadable file, a failed decode, each column that is one.
    pub fn problems(&self) -> usize {
        let columns = self.columns.iter().filter(|c| c.verdict.is_problem());
        columns.count() + usize::from(self.error.is_some()) + usize::from(self.load_error.is_some())
    }
}

impl CompatReport {
    /// Every problem: the saves' own, and a folder that cannot be listed or holds no save (a
    /// guard that checked nothing must not pass).
    pub fn problems(&self) -> usize {
        let saves: usize = self.saves.iter().map(SaveCheck::problems).sum();
        saves + usize::from(self.folder_error.is_some() || self.saves.is_empty())
    }

    /// Whether every kept save loads with today's types.
    pub fn passed(&self) -> bool {
        self.problems() == 0
    }
}

impl Display for CompatReport {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let problems = self.problems();
        writeln!(
            f,
            "{} saves in {} checked against {} types: {}",
            self.saves.len(),
            self.folder.display(),
            self.schema_types,
            match problems {
                0 => "every one loads".to_owned(),
                1 => "1 problem".to_owned(),
                n => format!("{n} problems"),
            }
        )?;
        if let Some(error) = &self.folder_error {
            writeln!(f, "PROBLEM the folder cannot be listed: {error}")?;
        } else if self.saves.is_empty() {
            writeln!(
                f,
                "PROBLEM no save files (*.ksav) found: nothing was checked"
            )?;
        }
        self.saves.iter().try_for_each(|save| write!(f, "{save}"))
    }
}

/// The file's line, then a line per column that is not unchanged.
impl Display for SaveCheck {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let unchanged = (self.columns.iter())
            .filter(|c| c.verdict == Verdict::Unchanged)
            .count();
        let status = match self.problems() {
            0 => "ok".to_owned(),
            1 => "1 problem".to_owned(),
            n => format!("{n} problems"),
        };
        writeln!(
            f,
            "\n{}: {status} ({unchanged} {} unchanged)",
            self.path.display(),
            if unchanged == 1 { "type" } else { "types" }
        )?;
        if let Some(error) = &self.error {
            writeln!(f, "  PROBLEM cannot be read: {error}")?;
        }
        let no_layout = |c: &&ColumnCheck| c.verdict == Verdict::NoLayout;
        let quiet = |c: &&ColumnCheck| c.verdict == Verdict::Unchanged || no_layout(c);
        for column in self.columns.iter().filter(|c| !quiet(c)) {
            write!(f, "{column}")?;
        }
        // A save from before layouts has none on any column: one line, not one per type.
        let without = self.columns.iter().filter(no_layout).count();
        if without > 0 {
            writeln!(
                f,
                "  note {without} types saved before layouts (blob layout 1): they cannot be \
                 checked by layout (a decode with the game's types can)"
            )?;
        }
        if let Some(error) = &self.load_error {
            writeln!(f, "  PROBLEM does not load with today's types: {error}")?;
        }
        Ok(())
    }
}

/// `  <mark> <type> v<version>: <verdict>`, then one line per change.
impl Display for ColumnCheck {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mark = if self.verdict.is_problem() {
            "PROBLEM"
        } else {
            "note"
        };
        let name = match &self.loads_as {
            Some(today) => format!("{} (today {today})", self.type_path),
            None => self.type_path.clone(),
        };
        let version = self.stored_version;
        let (summary, changes) = match &self.verdict {
            Verdict::Unchanged => ("unchanged".to_owned(), &[][..]),
            Verdict::ReadsByName(changes) => ("changed; loads by name".to_owned(), &changes[..]),
            Verdict::Migrates { today } => (format!("migrates to version {today}"), &[][..]),
            Verdict::NoLayout => (
                "saved before layouts: cannot be checked by layout (a decode with the game's \
                 types can)"
                    .to_owned(),
                &[][..],
            ),
            Verdict::NotRegistered => (
                "not registered today: skipped on load (register it, or \
                 register_saveable_rename if it moved)"
                    .to_owned(),
                &[][..],
            ),
            Verdict::NeedsMigration(changes) => (
                format!(
                    "changed without a migration (version {version} in the save and today): \
                     register one from version {version} (register_saveable_migration::<Old, \
                     Today>({version}))"
                ),
                &changes[..],
            ),
            Verdict::NoMigration { today } => (
                format!("no migration from version {version} to today's {today}"),
                &[][..],
            ),
            Verdict::Newer { today } => (
                format!("written by a newer build (today's version is {today})"),
                &[][..],
            ),
            Verdict::KindChanged { stored, today } => (
                format!(
                    "saved as a {}, registered as a {} today",
                    stored.name(),
                    today.name()
                ),
                &[][..],
            ),
        };
        writeln!(f, "  {mark} {name} v{version}: {summary}")?;
        for change in changes {
            let label = match change.kind.needs_migration() {
                true => "needs a migration",
                false => "loads",
            };
            writeln!(f, "      {label}: {change}")?;
        }
        Ok(())
    }
}
