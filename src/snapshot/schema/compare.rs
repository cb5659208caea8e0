//! What changed between a stored layout and today's, in words a game developer can act on.

use super::TypeLayout;

/// Placeholder until the comparison lands.
pub fn changes(_stored: &TypeLayout, _today: &TypeLayout) -> Vec<String> {
    Vec::new()
}
