//! Regions, sections and memory ordering (SEMANTICS.md §6, §7).
//!
//! * `tokens`: which region/section entry each intrinsic's token comes from
//!   (reaching definitions through locals; several definitions act like a
//!   phi), region ids, and the problems of CSA202-CSA206.

pub mod tokens;
