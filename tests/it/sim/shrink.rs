//! Cutting a failing run down to the fewest steps that still fail (delta debugging: drop
//! chunks of steps, halving the chunk when no chunk can go).

use super::plan::{Config, Step};
use super::run::{Failure, run};

/// How many runs shrinking may take.
const MAX_RUNS: usize = 3_000;

/// The shortest list of `steps` found that still fails under `config`, and its failure.
pub fn shrink(config: Config, steps: &[Step], failure: Failure) -> (Vec<Step>, Failure) {
    let mut current = up_to(steps.to_vec(), &failure);
    let mut last = failure;
    let mut runs = 0;
    let mut chunk = current.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        let mut progressed = false;
        while start < current.len() && runs < MAX_RUNS {
            let end = (start + chunk).min(current.len());
            let candidate: Vec<Step> = current[..start]
                .iter()
                .chain(&current[end..])
                .cloned()
                .collect();
            runs += 1;
            match run(config, &candidate) {
                Err(failure) => {
                    current = up_to(candidate, &failure);
                    last = failure;
                    progressed = true;
                }
                Ok(_) => start = end,
            }
        }
        if runs >= MAX_RUNS || (!progressed && chunk == 1) {
            return (current, last);
        }
        if !progressed {
            chunk = chunk.div_ceil(2);
        }
    }
}

/// The steps up to the one a failure was found after (all of them for one found at the end).
fn up_to(mut steps: Vec<Step>, failure: &Failure) -> Vec<Step> {
    if let Some(step) = failure.step {
        steps.truncate(step + 1);
    }
    steps
}
