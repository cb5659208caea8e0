//! Saves written by older builds on an older Bevy, which need knowledge a save does not carry.

pub mod bevy_0_19;
