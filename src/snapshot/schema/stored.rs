//! Values read by a stored layout, without the game's types: what `keepsake dump` prints, and
//! how a load skips a field the type no longer has.
