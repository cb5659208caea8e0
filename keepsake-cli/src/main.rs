//! `keepsake`: read bevy_keepsake save files from the command line.
//!
//! Built on `keepsake-core` alone, the library's engine-free core (`format`, `store`,
//! `blob::inspect`, `schema` to read values by the layouts a save records, `compat`): it links
//! no Bevy, needs none of the game's types, and never writes to a save folder.

mod commands;
mod examine;
mod folders;
mod output;
mod seal;
mod text;
mod views;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  success: everything read is intact (verify), the saves are equal (diff), every kept
     save loads (compat)
  1  damage found (any command), a value not readable by its stored layout (dump),
     differences found (diff), no thumbnail (thumbnail), or a kept save that would not
     load with the schema's types (compat)
  2  usage error, a file or folder could not be read or written, a schema file that does
     not read, or verify or compat found no save file";

/// Inspect, dump, verify, list and compare bevy_keepsake save files (.ksav), and check kept
/// saves against a game's schema.
#[derive(Parser, Debug)]
#[command(name = "keepsake", version, after_help = EXIT_CODES)]
struct Cli {
    /// Print JSON instead of tables (one document on stdout, for scripts).
    #[arg(long, global = true)]
    json: bool,

    /// A file holding the game's seal key, to open sealed saves (format version 3): 64
    /// hexadecimal digits, or the key's 32 bytes. Or set KEEPSAKE_KEY to the 64 digits. Without
    /// the seal key a sealed save's header and metadata are read and checked, its payload is
    /// not; with it `verify` checks the seal. The key is never printed.
    #[arg(long, global = true, value_name = "PATH")]
    key_file: Option<PathBuf>,

    /// No longer accepted: a seal key on the command line shows in shell history and process lists
    /// (use --key-file or KEEPSAKE_KEY). Kept to say so rather than to fail as unknown.
    #[arg(
        long,
        global = true,
        hide = true,
        value_name = "REMOVED",
        num_args = 0..=1,
        value_parser = seal::forget_key
    )]
    key: Option<Option<seal::Forgotten>>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the slots of a profile folder, or of every profile under a save root.
    #[command(after_help = EXIT_CODES)]
    List {
        /// A profile folder (holding *.ksav files) or a save root (one folder per profile).
        folder: PathBuf,
    },
    /// Show a save file's header, sections, metadata and world snapshot table.
    #[command(after_help = EXIT_CODES)]
    Inspect {
        /// The save file.
        file: PathBuf,
        /// Also print each stored value's raw bytes (hex; the game's types are needed to read
        /// them: see `snapshot::dump`).
        #[arg(long)]
        values: bool,
        /// With --values: at most this many rows per type.
        #[arg(long, default_value_t = 20, value_name = "N")]
        rows: usize,
        /// With --values: at most this many bytes per value.
        #[arg(long, default_value_t = 32, value_name = "N")]
        bytes: usize,
        /// Also print each type's stored layout in full (fields, variants, nested types)
        /// beneath its line.
        #[arg(long)]
        layouts: bool,
    },
    /// Print a save's values with their field names, read through the layouts the save
    /// records (no game types needed): resources, then entity by entity.
    #[command(after_help = EXIT_CODES)]
    Dump {
        /// The save file.
        file: PathBuf,
        /// Only types whose path contains this text (e.g. `Transform`, `my_game::`).
        #[arg(long = "type", value_name = "SUBSTRING")]
        type_contains: Option<String>,
        /// Only the entity with this index in the save (the `#N` the dump shows).
        #[arg(long, value_name = "INDEX")]
        entity: Option<u32>,
        /// At most this many entities.
        #[arg(long, value_name = "N")]
        rows: Option<usize>,
    },
    /// Check save files end to end (CRCs, decompression, postcard, world snapshot structure);
    /// exits 1 if any is damaged.
    #[command(after_help = EXIT_CODES)]
    Verify {
        /// Save files, profile folders or save roots (folders: every *.ksav, one level deep).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Write a save's thumbnail (PNG) to a file.
    #[command(after_help = EXIT_CODES)]
    Thumbnail {
        /// The save file.
        file: PathBuf,
        /// Where to write the PNG.
        #[arg(short, long, value_name = "PNG")]
        output: PathBuf,
    },
    /// Compare two saves: metadata, and per type the rows only in A, only in B, and changed.
    #[command(after_help = EXIT_CODES)]
    Diff {
        /// The first save file.
        a: PathBuf,
        /// The second save file.
        b: PathBuf,
    },
    /// Write the schema file (types, kinds, versions, layouts) of the types a save holds, as it
    /// records them. The tool does not have the game's types: give it a save made by today's
    /// build that holds every saved type. A save does not record migrations or renames, so the
    /// file lists none; a game writes its complete schema
    /// with `SaveSchema::of_app(&app).write_file(..)` (or `compat::assert_schema_file` in a test).
    #[command(after_help = EXIT_CODES)]
    Schema {
        /// A save file written by today's build of the game.
        file: PathBuf,
        /// Write the schema to this file instead of printing it.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Check every save in a folder (every slot and generation, sub-folders one level down)
    /// against a schema file: per save, per type and per field, what changed without a
    /// migration. Exits 1 if any save would not load.
    #[command(after_help = EXIT_CODES)]
    Compat {
        /// The schema file the game commits (see `schema`).
        schema: PathBuf,
        /// The folder of kept saves.
        folder: PathBuf,
    },
}

fn main() -> ExitCode {
    // clap exits with 2 on usage errors, as documented.
    let cli = Cli::parse();
    let json = cli.json;
    let key = match seal::key(cli.key_file.as_deref(), cli.key.is_some()) {
        Ok(key) => key,
        Err(message) => {
            eprintln!("keepsake: {message}");
            return ExitCode::from(2);
        }
    };
    let options = seal::decode_options(key);
    let options = &options;
    let outcome = match cli.command {
        Command::List { folder } => commands::list::run(&folder, json),
        Command::Inspect {
            file,
            values,
            rows,
            bytes,
            layouts,
        } => {
            let values = values.then_some(commands::inspect::ValueCaps { rows, bytes });
            commands::inspect::run(&file, values, layouts, options, json)
        }
        Command::Dump {
            file,
            type_contains,
            entity,
            rows,
        } => {
            let filter = commands::dump::Filter {
                type_contains,
                entity,
                rows,
            };
            commands::dump::run(&file, &filter, options, json)
        }
        Command::Verify { paths } => commands::verify::run(&paths, options, json),
        Command::Thumbnail { file, output } => commands::thumbnail::run(&file, &output, json),
        Command::Diff { a, b } => commands::diff::run(&a, &b, options, json),
        Command::Schema { file, output } => {
            commands::compat::schema(&file, output.as_deref(), options)
        }
        Command::Compat { schema, folder } => {
            commands::compat::run(&schema, &folder, options, json)
        }
    };
    outcome.into()
}
