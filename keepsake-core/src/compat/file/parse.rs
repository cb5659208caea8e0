//! [`SaveSchema::parse`]: the one reader of the schema file's text, which refuses anything it
//! would not write back the same, naming the line (and the type it is in).

use super::types::{Encoding, MAGIC, SCHEMA_FORMAT_VERSION, SaveSchema, SchemaType};
use crate::blob::ColumnKind;
use crate::schema::{Field, Leaf, MAX_DEPTH, TypeLayout, Variant, VariantFields};
use std::path::Path;

/// A schema file larger than this is refused before it is read: a game's schema is some
/// kilobytes, and the file may come from anywhere.
pub const MAX_SCHEMA_FILE_LEN: u64 = 16 << 20;

/// Why a schema file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SchemaFileError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_SCHEMA_FILE_LEN`] or not UTF-8 text.
    #[error("{path}: not a schema file ({reason})")]
    NotText {
        /// The file.
        path: String,
        /// Too large, or not UTF-8.
        reason: String,
    },
    /// The first line is not `keepsake-schema <version>`.
    #[error(
        "not a keepsake schema file: its first line should be `{MAGIC} {SCHEMA_FORMAT_VERSION}`, \
         found {found:?}"
    )]
    NotASchema {
        /// The first line.
        found: String,
    },
    /// A format version this build does not read.
    #[error(
        "schema file format version {found} is newer than this build reads \
         ({SCHEMA_FORMAT_VERSION}): update bevy_keepsake or the keepsake tool"
    )]
    NewerFormat {
        /// The file's format version.
        found: u32,
    },
    /// A line that does not read.
    #[error("line {line}{}: {reason}", in_type(type_path.as_deref()))]
    Syntax {
        /// The line's number, from 1.
        line: usize,
        /// The type whose block holds the line.
        type_path: Option<String>,
        /// What is wrong.
        reason: String,
    },
}

fn in_type(type_path: Option<&str>) -> String {
    type_path.map_or_else(String::new, |path| format!(" (type {path})"))
}

impl SaveSchema {
    /// Reads the schema file's text (see the format in the [module](super)).
    pub fn parse(text: &str) -> Result<Self, SchemaFileError> {
        Parser::new(text).file()
    }

    /// Reads a schema file written by [`write_file`](Self::write_file) (or by hand).
    pub fn read_file(path: impl AsRef<Path>) -> Result<Self, SchemaFileError> {
        read_file(path.as_ref())
    }
}

fn read_file(path: &Path) -> Result<SaveSchema, SchemaFileError> {
    let shown = || path.display().to_string();
    let io = |source| SchemaFileError::Io {
        path: shown(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_SCHEMA_FILE_LEN {
        return Err(SchemaFileError::NotText {
            path: shown(),
            reason: format!("{len} bytes, more than {MAX_SCHEMA_FILE_LEN}"),
        });
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let text = String::from_utf8(bytes).map_err(|error| SchemaFileError::NotText {
        path: shown(),
        reason: format!("not UTF-8 text: {error}"),
    })?;
    SaveSchema::parse(&text)
}

/// One line that is neither blank nor a comment.
struct Line<'a> {
    number: usize,
    indent: usize,
    content: &'a str,
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
    /// The type being read, for errors.
    type_path: Option<String>,
}

type Parsed<T> = Result<T, SchemaFileError>;

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        let lines = text
            .lines()
            .enumerate()
            .map(|(index, line)| {
                let content = line.trim_end();
                let body = content.trim_start_matches(' ');
                Line {
                    number: index + 1,
                    indent: content.len() - body.len(),
                    content: body,
                }
            })
            .filter(|line| !line.content.is_empty() && !line.content.starts_with('#'))
            .collect();
        Parser {
            lines,
            at: 0,
            type_path: None,
        }
    }

    fn error(&self, line: usize, reason: impl Into<String>) -> SchemaFileError {
        SchemaFileError::Syntax {
            line,
            type_path: self.type_path.clone(),
            reason: reason.into(),
        }
    }

    fn file(mut self) -> Parsed<SaveSchema> {
        self.format_line()?;
        let mut types: Vec<SchemaType> = Vec::new();
        while let Some(line) = self.lines.get(self.at) {
            self.type_path = None;
            let (number, content) = (line.number, line.content);
            self.expect_indent(line, 0)?;
            let Some(rest) = content.strip_prefix("type ") else {
                return Err(
                    self.error(number, format!("expected `type <path>`, found {content:?}"))
                );
            };
            let type_path = self.text(number, rest)?;
            if types.iter().any(|ty| ty.type_path == type_path) {
                return Err(self.error(number, format!("type {type_path} is listed twice")));
            }
            self.type_path = Some(type_path.clone());
            self.at += 1;
            types.push(self.type_block(number, type_path)?);
        }
        Ok(SaveSchema::new(types))
    }

    fn format_line(&mut self) -> Parsed<()> {
        let Some(first) = self.lines.first() else {
            return Err(SchemaFileError::NotASchema {
                found: String::new(),
            });
        };
        let not_a_schema = || SchemaFileError::NotASchema {
            found: first.content.to_owned(),
        };
        let version = first
            .content
            .strip_prefix(MAGIC)
            .and_then(|rest| rest.strip_prefix(' '))
            .filter(|_| first.indent == 0)
            .ok_or_else(not_a_schema)?;
        let found: u32 = version.parse().map_err(|_| not_a_schema())?;
        if found > SCHEMA_FORMAT_VERSION {
            return Err(SchemaFileError::NewerFormat { found });
        }
        if found == 0 {
            return Err(not_a_schema());
        }
        self.at = 1;
        Ok(())
    }

    fn expect_indent(&self, line: &Line<'_>, indent: usize) -> Parsed<()> {
        match line.indent == indent {
            true => Ok(()),
            false => Err(self.error(
                line.number,
                format!("indented by {} spaces, expected {indent}", line.indent),
            )),
        }
    }

    /// The next line if it is indented by exactly `indent` (a child at that level); `None` at
    /// a line indented less (the block has ended).
    fn child(&self, indent: usize) -> Parsed<Option<(usize, &'a str)>> {
        let Some(line) = self.lines.get(self.at) else {
            return Ok(None);
        };
        if line.content.starts_with('\t') {
            return Err(self.error(line.number, "indented with a tab: indent with spaces"));
        }
        if line.indent < indent {
            return Ok(None);
        }
        self.expect_indent(line, indent)?;
        Ok(Some((line.number, line.content)))
    }

    /// The properties of a type, then its layout.
    fn type_block(&mut self, number: usize, type_path: String) -> Parsed<SchemaType> {
        let mut block = Block::default();
        while let Some((line, content)) = self.child(2)? {
            self.at += 1;
            let (key, value) = content.split_once(' ').unwrap_or((content, ""));
            match key {
                "kind" => set(&mut block.kind, self.kind(line, value)?, self, line, key)?,
                "version" => set(
                    &mut block.version,
                    self.number(line, value)?,
                    self,
                    line,
                    key,
                )?,
                "encoding" => set(
                    &mut block.encoding,
                    (line, value.to_owned()),
                    self,
                    line,
                    key,
                )?,
                "migrates-from" => {
                    let versions = self.versions(line, value)?;
                    set(&mut block.migrates_from, versions, self, line, key)?;
                }
                "renamed-from" => block.renamed_from.push(self.text(line, value)?),
                "layout" => {
                    let layout = self.node(line, value, 4, 0)?;
                    set(&mut block.layout, layout, self, line, key)?;
                }
                _ => return Err(self.error(line, format!("unknown property {key:?}"))),
            }
        }
        self.finish(number, type_path, block)
    }

    fn finish(&self, number: usize, type_path: String, block: Block) -> Parsed<SchemaType> {
        let missing = |what: &str| self.error(number, format!("the type has no `{what}` line"));
        let ty = SchemaType {
            type_path,
            kind: block.kind.ok_or_else(|| missing("kind"))?,
            version: block.version.ok_or_else(|| missing("version"))?,
            migrates_from: block.migrates_from.unwrap_or_default(),
            renamed_from: block.renamed_from,
            layout: block.layout.ok_or_else(|| missing("layout"))?,
        };
        let (line, encoding) = block.encoding.ok_or_else(|| missing("encoding"))?;
        if encoding != ty.encoding().name() {
            let expected = ty.encoding();
            let other = match expected {
                Encoding::Serde => "a serde layout",
                Encoding::Reflect => "a layout that is not serde",
            };
            return Err(self.error(
                line,
                format!(
                    "encoding {encoding:?} with {other}: expected `encoding {}`",
                    expected.name()
                ),
            ));
        }
        if let Some(bad) = ty.migrates_from.iter().find(|v| **v >= ty.version) {
            return Err(self.error(
                number,
                format!(
                    "migrates-from {bad} is not older than version {}",
                    ty.version
                ),
            ));
        }
        Ok(ty)
    }

    fn kind(&self, line: usize, value: &str) -> Parsed<ColumnKind> {
        match value {
            "component" => Ok(ColumnKind::Component),
            "resource" => Ok(ColumnKind::Resource),
            _ => Err(self.error(
                line,
                format!("kind {value:?}: expected component or resource"),
            )),
        }
    }

    fn number<T: std::str::FromStr>(&self, line: usize, value: &str) -> Parsed<T> {
        // `parse` takes a leading `+`, which the writer never writes.
        match value.starts_with(|c: char| c.is_ascii_digit()) {
            true => value.parse().ok(),
            false => None,
        }
        .ok_or_else(|| self.error(line, format!("{value:?} is not a number")))
    }

    fn versions(&self, line: usize, value: &str) -> Parsed<Vec<u32>> {
        let versions = value
            .split(' ')
            .map(|v| self.number(line, v))
            .collect::<Parsed<Vec<u32>>>()?;
        match versions.windows(2).all(|pair| pair[0] < pair[1]) {
            true => Ok(versions),
            false => Err(self.error(line, "migrates-from versions must ascend")),
        }
    }
}

/// A type's properties as they are read.
#[derive(Default)]
struct Block {
    kind: Option<ColumnKind>,
    version: Option<u32>,
    encoding: Option<(usize, String)>,
    migrates_from: Option<Vec<u32>>,
    renamed_from: Vec<String>,
    layout: Option<TypeLayout>,
}

/// Sets a property given once.
fn set<T>(
    slot: &mut Option<T>,
    value: T,
    parser: &Parser<'_>,
    line: usize,
    key: &str,
) -> Parsed<()> {
    match slot.replace(value) {
        None => Ok(()),
        Some(_) => Err(parser.error(line, format!("`{key}` is given twice"))),
    }
}

// The layout nodes.
impl Parser<'_> {
    /// The node whose line (after its label) is `head`, its children indented by `indent`.
    fn node(&mut self, line: usize, head: &str, indent: usize, depth: usize) -> Parsed<TypeLayout> {
        if depth > MAX_DEPTH {
            return Err(self.error(
                line,
                format!("the layout nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        if let Some(leaf) = Leaf::ALL.iter().find(|leaf| leaf.name() == head) {
            return self.no_children(indent).map(|()| TypeLayout::Leaf(*leaf));
        }
        let (keyword, arg) = head.split_once(' ').unwrap_or((head, ""));
        let next = depth + 1;
        let layout = match (keyword, arg.is_empty()) {
            ("struct", false) => TypeLayout::Struct {
                type_path: self.text(line, arg)?,
                fields: self.named(indent, next)?,
            },
            ("tuple-struct", false) => TypeLayout::TupleStruct {
                type_path: self.text(line, arg)?,
                fields: self.positional(indent, next)?,
            },
            ("tuple", true) => TypeLayout::Tuple(self.positional(indent, next)?),
            ("list", true) => TypeLayout::List(self.only(line, "[]", indent, next)?),
            ("set", true) => TypeLayout::Set(self.only(line, "[]", indent, next)?),
            ("array", false) => TypeLayout::Array {
                len: self.number(line, arg)?,
                item: self.only(line, "[]", indent, next)?,
            },
            ("map", true) => TypeLayout::Map {
                key: self.only(line, "{key}", indent, next)?,
                value: self.only(line, "{}", indent, next)?,
            },
            ("enum", false) => TypeLayout::Enum {
                type_path: self.text(line, arg)?,
                variants: self.variants(indent, next)?,
            },
            ("serde", false) => TypeLayout::Serde {
                type_path: self.text(line, arg)?,
                reflected: self.only(line, "reflected", indent, next)?,
            },
            _ => self.plain(line, keyword, arg, indent)?,
        };
        Ok(layout)
    }

    /// The nodes without children.
    fn plain(
        &mut self,
        line: usize,
        keyword: &str,
        arg: &str,
        indent: usize,
    ) -> Parsed<TypeLayout> {
        let layout = match (keyword, arg.is_empty()) {
            ("handle", false) => TypeLayout::Handle {
                asset_type: self.text(line, arg)?,
            },
            ("untyped-handle", true) => TypeLayout::UntypedHandle,
            ("opaque", false) => TypeLayout::Opaque {
                type_path: self.text(line, arg)?,
            },
            ("deep", false) => TypeLayout::Deep {
                type_path: self.text(line, arg)?,
            },
            _ => {
                let head = format!("{keyword} {arg}");
                return Err(self.error(line, format!("unknown layout {:?}", head.trim_end())));
            }
        };
        self.no_children(indent).map(|()| layout)
    }

    fn no_children(&self, indent: usize) -> Parsed<()> {
        match self.lines.get(self.at) {
            Some(line) if line.indent >= indent => Err(self.error(
                line.number,
                "this layout has no fields or items to indent under it",
            )),
            _ => Ok(()),
        }
    }

    /// The next child, `<label>: <node>`.
    fn labelled(
        &mut self,
        indent: usize,
        depth: usize,
    ) -> Parsed<Option<(usize, String, TypeLayout)>> {
        let Some((line, content)) = self.child(indent)? else {
            return Ok(None);
        };
        let (label, head) = self.label(line, content)?;
        self.at += 1;
        let layout = self.node(line, head, indent + 2, depth)?;
        Ok(Some((line, label, layout)))
    }

    fn named(&mut self, indent: usize, depth: usize) -> Parsed<Vec<Field>> {
        let mut fields = Vec::new();
        while let Some((_, name, layout)) = self.labelled(indent, depth)? {
            fields.push(Field { name, layout });
        }
        Ok(fields)
    }

    fn positional(&mut self, indent: usize, depth: usize) -> Parsed<Vec<TypeLayout>> {
        let mut fields = Vec::new();
        while let Some((line, label, layout)) = self.labelled(indent, depth)? {
            if label != fields.len().to_string() {
                let expected = fields.len();
                return Err(self.error(
                    line,
                    format!("expected field `{expected}:`, found `{label}:`"),
                ));
            }
            fields.push(layout);
        }
        Ok(fields)
    }

    /// The one child labelled `label` (a list's items, a map's keys …).
    fn only(
        &mut self,
        line: usize,
        label: &str,
        indent: usize,
        depth: usize,
    ) -> Parsed<Box<TypeLayout>> {
        match self.labelled(indent, depth)? {
            Some((_, found, layout)) if found == label => Ok(Box::new(layout)),
            Some((at, found, _)) => {
                Err(self.error(at, format!("expected `{label}:`, found `{found}:`")))
            }
            None => Err(self.error(line, format!("`{label}:` is missing under this line"))),
        }
    }

    fn variants(&mut self, indent: usize, depth: usize) -> Parsed<Vec<Variant>> {
        let mut variants = Vec::new();
        while let Some((line, content)) = self.child(indent)? {
            self.at += 1;
            let (keyword, name) = content.split_once(' ').unwrap_or((content, ""));
            let name = self.text(line, name)?;
            let fields = match keyword {
                "variant" => VariantFields::Unit,
                "tuple-variant" => VariantFields::Tuple(self.positional(indent + 2, depth)?),
                "struct-variant" => VariantFields::Struct(self.named(indent + 2, depth)?),
                _ => return Err(self.error(line, format!("expected a variant, found {content:?}"))),
            };
            if matches!(fields, VariantFields::Unit) {
                self.no_children(indent + 2)?;
            }
            variants.push(Variant { name, fields });
        }
        Ok(variants)
    }
}

// Texts: bare or quoted.
impl Parser<'_> {
    /// A text that ends its line.
    fn text(&self, line: usize, value: &str) -> Parsed<String> {
        if !value.starts_with('"') {
            return match value.is_empty() {
                true => Err(self.error(line, "a name or type path is missing")),
                false => Ok(value.to_owned()),
            };
        }
        match unquote(value) {
            Some((text, "")) => Ok(text),
            Some((_, rest)) => {
                Err(self.error(line, format!("unexpected {rest:?} after the quoted text")))
            }
            None => Err(self.error(line, format!("{value:?} is not a well-formed quoted text"))),
        }
    }

    /// `label: rest` → the label and the rest.
    fn label<'l>(&self, line: usize, content: &'l str) -> Parsed<(String, &'l str)> {
        let split = match content.starts_with('"') {
            true => {
                unquote(content).and_then(|(label, rest)| Some((label, rest.strip_prefix(": ")?)))
            }
            false => content
                .split_once(": ")
                .filter(|(label, _)| !label.is_empty())
                .map(|(label, rest)| (label.to_owned(), rest)),
        };
        split.ok_or_else(|| {
            self.error(
                line,
                format!("expected `<field>: <layout>`, found {content:?}"),
            )
        })
    }
}

/// A quoted text at the start of `value` (escapes resolved) and what follows it.
fn unquote(value: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = value.strip_prefix('"')?.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((out, &value[at + 2..])),
            '\\' => out.push(match chars.next()?.1 {
                '"' => '"',
                '\\' => '\\',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => unicode(&mut chars)?,
                _ => return None,
            }),
            c => out.push(c),
        }
    }
    None
}

/// The rest of a `\u{…}` escape.
fn unicode(chars: &mut std::str::CharIndices<'_>) -> Option<char> {
    if chars.next()?.1 != '{' {
        return None;
    }
    let mut hex = String::new();
    for (_, c) in chars.by_ref() {
        if c == '}' {
            return char::from_u32(u32::from_str_radix(&hex, 16).ok()?);
        }
        if hex.len() == 6 {
            return None;
        }
        hex.push(c);
    }
    None
}
