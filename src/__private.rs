//! What the crate's own tests and benchmarks reach beyond its API: the capture and decode
//! without compiled plans (the generic path the planned one is measured and checked against),
//! and which types have plans. Not a stable API and nothing a game calls: the name and the
//! hidden docs say so, and semver does not cover it.

pub use crate::snapshot::capture::full::{capture_without_plans, planned_type_paths};
pub use crate::snapshot::load::decode::decode_without_plans;
