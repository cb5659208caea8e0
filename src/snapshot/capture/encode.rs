//! Encoding many rows of a table's column (a cached capture's changed or rebuilt pieces, a full
//! capture's table): on the calling thread alone when they cost little, else spread over
//! Bevy's `ComputeTaskPool` with the calling thread helping.
//!
//! # Why in parallel, and why here
//!
//! A save's main-thread part is mostly re-encoding the values that changed since the last
//! save, and on worlds of strings, maps and long `Vec`s that is several milliseconds at 100k
//! entities (issue 24's frame bench). The capture runs in an exclusive system, so the frame's
//! other systems wait for it and the compute pool's threads are idle: they can share the
//! encoding. The pieces are independent (each job writes its own `Rows`), and the world is
//! only read, so the tasks need no locks; the calling thread puts the results together in
//! order, so the pieces, and the blob, are the same as a sequential capture's.
//!
//! Copying the changed values for the async pool to encode later, as the issue suggested, was
//! measured first: a map of strings costs about as much to copy (`reflect_clone`) as to encode
//! (its keys are one allocation each, read from memory the same way), so it would not have
//! shortened the main thread's part.
//!
//! Each task builds its own [`ValueWriter`] (a type's reflection plan is built in microseconds).
//! A writer of a type that can hold asset handles records the ones it leaves out in a
//! [`CaptureAssets`], which is not shared between threads: such a column is encoded on the main
//! thread alone.

use super::piece::Rows;
use crate::snapshot::register::EncodeRow;
use crate::snapshot::value::assets::{CaptureAssets, CaptureProblem, RuntimeAssetHandles};
use crate::snapshot::value::{TypeOps, ValueWriter};
use bevy::reflect::TypeRegistry;
use bevy::tasks::ComputeTaskPool;
use std::time::{Duration, Instant};

/// Rows a table's column encodes on the calling thread, timed, before it decides whether the
/// rest is worth spreading over the compute pool.
pub(super) const SAMPLE_ROWS: usize = 512;

/// The work, estimated from the sample, that pays for spreading it: a scope wakes the pool's
/// threads and joins them (tens of microseconds), and each task builds its own writer. Rows
/// cost from about 10 ns (a small struct) to over 1 µs (a map of strings), so the estimate is
/// timed rather than counted.
const WORTH_SPREADING: Duration = Duration::from_micros(200);

/// Runs of jobs per thread: threads are not equally fast (on the 2-core test machine the
/// pool's thread took up to twice as long as the main thread for the same rows), so each takes
/// runs until none are left rather than one equal share.
const RUNS_PER_THREAD: usize = 4;

/// The rows of one piece to encode: table rows `first + offset`, for each offset (ascending).
pub(super) struct RowJob<'j> {
    pub(super) first: usize,
    pub(super) offsets: &'j [usize],
}

/// Builds the value writer of a type (the plan's or, to compare, the reflection serializer's).
pub(super) type WriterFn =
    for<'a> fn(&'a TypeRegistry, &TypeOps, &'a CaptureAssets) -> ValueWriter<'a>;

/// How to build a writer of the column's type on any thread.
#[derive(Clone, Copy)]
pub(super) struct WriterRecipe<'a> {
    pub(super) types: &'a TypeRegistry,
    pub(super) ops: &'a TypeOps,
    pub(super) policy: RuntimeAssetHandles,
    pub(super) build: WriterFn,
}

/// The compute pool to spread `remaining` more rows over, when `sampled` rows took `took` on
/// the calling thread and the rest is estimated to take long enough to pay for it, and the
/// column's writer records no left-out asset handles (a record is the calling thread's
/// writer's own).
pub(super) fn pool_worth_it(
    (sampled, took): (usize, Duration),
    remaining: usize,
    writer: &ValueWriter<'_>,
) -> Option<&'static ComputeTaskPool> {
    let pool = ComputeTaskPool::try_get().filter(|pool| pool.thread_num() > 0)?;
    let estimate = took.mul_f64(remaining as f64 / sampled.max(1) as f64);
    (estimate >= WORTH_SPREADING && !writer.records_handles()).then_some(pool)
}

/// Every job's rows encoded, each job into its own [`Rows`], in order.
pub(super) struct Encoded {
    pub(super) rows: Vec<Rows>,
    /// How many of them were spread over the compute pool.
    pub(super) spread: usize,
}

/// Encodes every job's rows: the first [`SAMPLE_ROWS`] or so on the calling thread with
/// `writer`, the rest too unless [`pool_worth_it`] says to spread them over the compute pool
/// (whose threads build their writers from `recipe`).
pub(super) fn encode_jobs(
    jobs: &[RowJob<'_>],
    writer: &ValueWriter<'_>,
    recipe: WriterRecipe<'_>,
    encode: &EncodeRow<'_>,
) -> Result<Encoded, CaptureProblem> {
    let sample_len = sample_jobs(jobs);
    let (sample, rest) = jobs.split_at(sample_len);
    let started = Instant::now();
    let mut encoded: Vec<Rows> = sample
        .iter()
        .map(|job| encode_job(job, writer, encode))
        .collect::<Result<_, _>>()?;
    let took = (row_count(sample), started.elapsed());
    let remaining = row_count(rest);
    let spread = match pool_worth_it(took, remaining, writer) {
        Some(pool) => {
            encoded.extend(encode_spread(pool, rest, recipe, encode)?);
            remaining
        }
        None => {
            for job in rest {
                encoded.push(encode_job(job, writer, encode)?);
            }
            0
        }
    };
    Ok(Encoded {
        rows: encoded,
        spread,
    })
}

/// How many of the first jobs hold at least [`SAMPLE_ROWS`] rows (all of them when fewer).
fn sample_jobs(jobs: &[RowJob<'_>]) -> usize {
    let mut rows = 0;
    jobs.iter()
        .position(|job| {
            rows += job.offsets.len();
            rows >= SAMPLE_ROWS
        })
        .map_or(jobs.len(), |last| last + 1)
}

fn row_count(jobs: &[RowJob<'_>]) -> usize {
    jobs.iter().map(|job| job.offsets.len()).sum()
}

/// Encodes the jobs' rows spread over the pool's threads and the calling one, in runs of
/// about equal rows, each job into its own [`Rows`], in order.
pub(super) fn encode_spread(
    pool: &ComputeTaskPool,
    jobs: &[RowJob<'_>],
    recipe: WriterRecipe<'_>,
    encode: &EncodeRow<'_>,
) -> Result<Vec<Rows>, CaptureProblem> {
    let total = row_count(jobs);
    let runs = split(jobs, total, (pool.thread_num() + 1) * RUNS_PER_THREAD);
    let results = pool.scope(|scope| {
        for run in runs {
            scope.spawn(async move {
                let assets = CaptureAssets::new(recipe.policy, Vec::new());
                let writer = (recipe.build)(recipe.types, recipe.ops, &assets);
                run.iter()
                    .map(|job| encode_job(job, &writer, encode))
                    .collect::<Result<Vec<Rows>, CaptureProblem>>()
            });
        }
    });
    let mut rows = Vec::with_capacity(jobs.len());
    for run in results {
        rows.extend(run?);
    }
    Ok(rows)
}

/// `jobs` cut into at most `parts` runs of consecutive jobs with about `total / parts` rows
/// each.
fn split<'s, 'j>(jobs: &'s [RowJob<'j>], total: usize, parts: usize) -> Vec<&'s [RowJob<'j>]> {
    let per_run = total.div_ceil(parts.max(1)).max(1);
    let mut starts = vec![0];
    let mut rows = 0;
    for (k, job) in jobs.iter().enumerate().take(jobs.len().saturating_sub(1)) {
        rows += job.offsets.len();
        if rows >= per_run && starts.len() < parts {
            starts.push(k + 1);
            rows = 0;
        }
    }
    let ends = starts.iter().skip(1).copied().chain([jobs.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| &jobs[start..end])
        .collect()
}

fn encode_job(
    job: &RowJob<'_>,
    writer: &ValueWriter<'_>,
    encode: &EncodeRow<'_>,
) -> Result<Rows, CaptureProblem> {
    let mut rows = Rows::default();
    for &offset in job.offsets {
        rows.push(|out| encode(writer, job.first + offset, out))?;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_every_job_once_in_order() {
        let offsets: Vec<Vec<usize>> = [5, 1, 0, 7, 3, 3, 9, 2]
            .iter()
            .map(|&n| (0..n).collect())
            .collect();
        let jobs: Vec<RowJob<'_>> = offsets
            .iter()
            .enumerate()
            .map(|(first, offsets)| RowJob { first, offsets })
            .collect();
        for parts in 1..=10 {
            let runs = split(&jobs, 30, parts);
            assert!(runs.len() <= parts, "{parts} parts: {} runs", runs.len());
            let firsts: Vec<usize> = runs
                .iter()
                .flat_map(|run| run.iter().map(|job| job.first))
                .collect();
            assert_eq!(firsts, (0..jobs.len()).collect::<Vec<_>>(), "{parts} parts");
        }
    }
}
