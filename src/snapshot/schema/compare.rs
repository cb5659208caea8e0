//! What changed between a stored layout and today's, in words a game developer can act on.
