//! The environment variables every bench reads, read in one place.

/// Entity counts: `KEEPSAKE_BENCH_COUNTS` (comma-separated) when set, else `quick` with
/// `KEEPSAKE_BENCH_QUICK`, else `full`.
pub fn counts(quick: &[u32], full: &[u32]) -> Vec<u32> {
    if let Ok(list) = std::env::var("KEEPSAKE_BENCH_COUNTS") {
        return list
            .split(',')
            .map(|n| {
                let n = n.trim();
                n.parse()
                    .unwrap_or_else(|_| panic!("KEEPSAKE_BENCH_COUNTS: {n:?} is not a count"))
            })
            .collect();
    }
    match quick_run() {
        true => quick.to_vec(),
        false => full.to_vec(),
    }
}

/// Whether `KEEPSAKE_BENCH_QUICK` asks for a short run.
pub fn quick_run() -> bool {
    std::env::var_os("KEEPSAKE_BENCH_QUICK").is_some()
}
