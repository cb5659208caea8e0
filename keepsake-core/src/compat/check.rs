//! The check of one save's columns against a [`SaveSchema`], engine-free: what a load of each
//! stored type would do with today's types, judged from the layouts alone.

use crate::blob::{ColumnKind, StoredColumn, inspect};
use crate::compat::file::{SaveSchema, SchemaType};
use crate::error::BlobError;
use crate::legacy::bevy_0_19;
use crate::schema::TypeLayout;
use crate::schema::compare::{self, Change, ChangeKind};
use crate::schema::resolve;

/// What a load would do with one stored column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnCheck {
    /// The stored type path.
    pub type_path: String,
    /// Today's type path when it is another (a rename, or a Bevy type that moved).
    pub loads_as: Option<String>,
    /// The schema version the save was written at.
    pub stored_version: u32,
    /// The verdict.
    pub verdict: Verdict,
}

/// What a load does with a stored column; [`is_problem`](Verdict::is_problem) tells the ones
/// that lose or refuse saved values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Today's layout is the stored one (or only gained variants after the stored ones).
    Unchanged,
    /// The layout changed in ways a load reads by name (listed: added fields take their
    /// default, removed fields are dropped, moved fields and variants are found by name).
    ReadsByName(Vec<Change>),
    /// An older version with a registered migration chain to today's.
    Migrates {
        /// Today's version.
        today: u32,
    },
    /// A save from before layouts (blob layout 1): it cannot be checked by layout (a decode
    /// with the game's types can).
    NoLayout,
    /// A type the game no longer registers (and no rename points at): skipped on load.
    NotRegistered,
    /// Same version, and a change no load reads (the changes that need a migration come first,
    /// then those that load).
    NeedsMigration(Vec<Change>),
    /// An older version with no migration chain to today's.
    NoMigration {
        /// Today's version.
        today: u32,
    },
    /// A version newer than today's: the save was written by a later build.
    Newer {
        /// Today's version.
        today: u32,
    },
    /// Stored as a component and registered as a resource, or the reverse.
    KindChanged {
        /// The stored kind.
        stored: ColumnKind,
        /// Today's kind.
        today: ColumnKind,
    },
}

impl Verdict {
    /// Whether a load would refuse the column's values (a decode error) or read them wrong.
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            Verdict::NeedsMigration(_)
                | Verdict::NoMigration { .. }
                | Verdict::Newer { .. }
                | Verdict::KindChanged { .. }
        )
    }
}

/// Checks every column of an `ecs_blob` against `schema`; `Err` when the blob's structure does
/// not read (a damaged save).
pub fn check_blob(schema: &SaveSchema, blob: &[u8]) -> Result<Vec<ColumnCheck>, BlobError> {
    let table = inspect(blob)?;
    table
        .columns
        .iter()
        .map(|column| check_column(schema, column))
        .collect()
}

fn check_column(schema: &SaveSchema, column: &StoredColumn<'_>) -> Result<ColumnCheck, BlobError> {
    let today = schema.lookup(column.type_path).or_else(|| {
        // A save from before layouts names Bevy types by their 0.19 paths, as the loader knows.
        let moved = column
            .layout
            .is_none()
            .then(|| bevy_0_19::path_now(column.type_path));
        schema.lookup(moved??)
    });
    let verdict = match today {
        None => Verdict::NotRegistered,
        Some(today) => verdict(column, today)?,
    };
    Ok(ColumnCheck {
        type_path: column.type_path.to_owned(),
        loads_as: today
            .map(|today| today.type_path.clone())
            .filter(|path| path != column.type_path),
        stored_version: column.schema_version,
        verdict,
    })
}

/// The verdict on a column; `Err` when its layout's tree is more than its bytes may cost.
fn verdict(column: &StoredColumn<'_>, today: &SchemaType) -> Result<Verdict, BlobError> {
    let version = column.schema_version;
    if column.kind != today.kind {
        return Ok(Verdict::KindChanged {
            stored: column.kind,
            today: today.kind,
        });
    }
    if version > today.version {
        return Ok(Verdict::Newer {
            today: today.version,
        });
    }
    if version < today.version {
        return Ok(match today.migrates_from.contains(&version) {
            true => Verdict::Migrates {
                today: today.version,
            },
            false => Verdict::NoMigration {
                today: today.version,
            },
        });
    }
    let Some(stored) = &column.layout else {
        return Ok(Verdict::NoLayout);
    };
    Ok(layout_verdict(&stored.decode()?, &today.layout))
}

/// The verdict on values stored with `stored` for today's layout of the same version: the
/// loader's own rule decides (`schema::resolve`, which a load asks too), and
/// [`compare::changes`] words it (the changes that need a migration first).
pub(crate) fn layout_verdict(stored: &TypeLayout, today: &TypeLayout) -> Verdict {
    // The fast reader's rule: a layout that reads as is, whatever the encoding.
    if compare::reads_as_is(stored, today) {
        return Verdict::Unchanged;
    }
    let mut changes = compare::changes(stored, today);
    let refusal = match resolve::resolve(stored, today) {
        Ok(resolution) if resolution.lost_variants.is_empty() => {
            return match changes.is_empty() {
                // Only type paths differ (a nested type moved): read by name as before.
                true => Verdict::Unchanged,
                false => Verdict::ReadsByName(changes),
            };
        }
        Ok(_) => None,
        Err(incompatible) => Some(incompatible),
    };
    let worded = changes.iter().any(|change| change.kind.needs_migration());
    if let (Some(refused), false) = (refusal, worded) {
        // A refusal the changes do not name as one (a tuple of another arity, a removed field
        // that cannot be skipped, a serde column whose bytes may have changed): say it.
        changes.insert(
            0,
            Change {
                path: refused.path,
                kind: ChangeKind::TypeChanged {
                    stored: refused.stored,
                    today: refused.today,
                },
            },
        );
    }
    changes.sort_by_key(|change| !change.kind.needs_migration());
    Verdict::NeedsMigration(changes)
}
