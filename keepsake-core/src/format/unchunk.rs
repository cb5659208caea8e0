//! The payload of format version 2, read: the chunk table verified, then every chunk checked
//! against its CRC and decompressed into its place in one buffer, in parallel.
//!
//! # Why `std::thread::scope` and not Bevy's `ComputeTaskPool`
//!
//! The format layer is engine-free (tools and the `keepsake` CLI use it without Bevy), and a
//! load already runs as a task of Bevy's `AsyncComputeTaskPool`: waiting there on tasks of
//! another pool would hold one of its threads while the frame's systems compete for the rest.
//! Scoped threads borrow the file's buffer and the output directly, are joined before the
//! function returns, and only start when there is enough to do: spawning one costs some tens
//! of microseconds, decompressing [`BYTES_PER_THREAD`] about half a millisecond.

use super::budget::Budget;
use super::codec::Compression;
use super::error::{FormatError, Section};
use super::header::Header;
use super::table::{ChunkEntry, ChunkTable, TableCheck, read_table};
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

/// Uncompressed bytes that justify one more thread.
const BYTES_PER_THREAD: usize = 512 << 10;

/// Verifies the chunk table and the chunks of the version-2 payload `buffer[payload]` (which
/// starts at file offset `offset`; a sealed one opened in place), and returns the bundle's
/// postcard bytes: in place when every chunk is stored as is (no copy), else in a new buffer of
/// exactly the uncompressed length (already checked against the limits). The table, the jobs
/// and the output are paid from `budget`.
pub(crate) fn join_chunks<'a>(
    header: &Header,
    buffer: Cow<'a, [u8]>,
    (payload, offset): (Range<usize>, u64),
    budget: &Budget,
) -> Result<(Cow<'a, [u8]>, Range<usize>), FormatError> {
    let check = TableCheck::of(header);
    let table = read_table(header, &buffer[payload.clone()], offset, check, budget)?;
    // A job per chunk, and again once the jobs are split among threads.
    budget.charge_items::<Job<'_>>(Section::ChunkTable, 2 * table.chunks.len())?;
    let data = payload.start + table.table_len()..payload.end;
    // An opened seal vouches for every byte: the chunks' CRCs would be a second pass over the
    // payload that can no longer fail.
    let crcs = match check {
        TableCheck::Crc(_) => ChunkCrcs::Check,
        TableCheck::Sealed => ChunkCrcs::Skip,
    };
    if table.compressed() == 0 {
        if crcs == ChunkCrcs::Check {
            let mut nothing = [0u8; 0];
            let jobs = jobs(&table, &buffer[data.clone()], &mut nothing[..]);
            run(jobs, crcs, |_| Ok(()))?;
        }
        return Ok((buffer, data));
    }
    budget.charge(Section::Payload, header.payload_uncompressed_len.into())?;
    let mut out = vec![0u8; header.payload_uncompressed_len as usize];
    let jobs = jobs(&table, &buffer[data], &mut out);
    run(jobs, crcs, decompress)?;
    let len = out.len();
    Ok((Cow::Owned(out), 0..len))
}

/// Whether each chunk's CRC is checked before it is decompressed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ChunkCrcs {
    Check,
    /// The payload came out of an opened seal, which authenticated it whole.
    Skip,
}

/// One chunk to check and decompress.
struct Job<'a> {
    index: usize,
    offset: u64,
    entry: ChunkEntry,
    stored: &'a [u8],
    /// Where it decompresses to (empty when the payload is used in place).
    out: &'a mut [u8],
}

/// A job per chunk, each with its stored bytes and its part of `out` (when `out` is not empty,
/// it is exactly as long as the chunks uncompressed: the table was checked against the header).
fn jobs<'a>(table: &ChunkTable, data: &'a [u8], mut out: &'a mut [u8]) -> Vec<Job<'a>> {
    let mut stored_from = 0;
    table
        .with_offsets()
        .enumerate()
        .map(|(index, (offset, entry))| {
            let stored = &data[stored_from..stored_from + entry.stored_len as usize];
            stored_from += stored.len();
            let len = if out.is_empty() {
                0
            } else {
                entry.uncompressed_len as usize
            };
            let (own, rest) = std::mem::take(&mut out).split_at_mut(len);
            out = rest;
            Job {
                index,
                offset,
                entry: *entry,
                stored,
                out: own,
            }
        })
        .collect()
}

/// Checks every job's CRC (unless told to skip them), then does `work` on it; on as many
/// threads as the uncompressed bytes justify, each taking a run of consecutive chunks. The
/// error of the first damaged chunk (in file order) is returned.
fn run(
    jobs: Vec<Job<'_>>,
    crcs: ChunkCrcs,
    work: fn(&mut Job<'_>) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let total: usize = jobs.iter().map(|job| job.out.len()).sum();
    let threads = available_threads().min(total / BYTES_PER_THREAD).max(1);
    let groups = split(jobs, total.div_ceil(threads));
    let do_group = |group: Vec<Job<'_>>| {
        group.into_iter().try_for_each(|mut job| {
            if crcs == ChunkCrcs::Check {
                verify(&job)?;
            }
            work(&mut job)
        })
    };
    if groups.len() <= 1 {
        return groups.into_iter().try_for_each(do_group);
    }
    // The calling thread takes the first run itself: one thread fewer to start.
    let mut groups = groups.into_iter();
    let first = groups.next().unwrap_or_default();
    std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .map(|group| scope.spawn(move || do_group(group)))
            .collect();
        let mut results = vec![do_group(first)];
        results.extend(handles.into_iter().map(|handle| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }));
        results.into_iter().collect()
    })
}

/// Consecutive runs of jobs of about `per_group` uncompressed bytes each.
fn split(jobs: Vec<Job<'_>>, per_group: usize) -> Vec<Vec<Job<'_>>> {
    let mut groups: Vec<Vec<Job<'_>>> = vec![Vec::new()];
    let mut in_group = 0;
    for job in jobs {
        if in_group >= per_group.max(1) {
            groups.push(Vec::new());
            in_group = 0;
        }
        in_group += job.out.len();
        if let Some(group) = groups.last_mut() {
            group.push(job);
        }
    }
    groups
}

fn verify(job: &Job<'_>) -> Result<(), FormatError> {
    let computed = crc32fast::hash(job.stored);
    if computed == job.entry.crc {
        return Ok(());
    }
    Err(FormatError::ChunkChecksumMismatch {
        index: job.index,
        offset: job.offset,
        end: job.offset + job.stored.len() as u64,
        stored: job.entry.crc,
        computed,
    })
}

fn decompress(job: &mut Job<'_>) -> Result<(), FormatError> {
    Compression::decompress_into(job.entry.codec, job.stored, job.out).map_err(|reason| {
        FormatError::ChunkDecompress {
            index: job.index,
            offset: job.offset,
            reason,
        }
    })
}

/// The threads a load may use: the machine's, asked once (it reads cgroup files on Linux).
fn available_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}
