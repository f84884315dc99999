//! Regions, sections and memory ordering (SEMANTICS.md §6, §7).
//!
//! * `tokens`: which region/section entry each intrinsic's token comes from
//!   (reaching definitions through locals; several definitions act like a
//!   phi), region ids, and the problems of CSA202-CSA206.
//! * `events`: the memory-operation CFG, with every region/section
//!   intrinsic (user-written, OpenMP-lowered, CLIE-placed) in place.
//! * `membership`: inside/outside/ambiguous for every region and its
//!   sections (§6.2).
//! * `ordering`: which ordering edges between memory operations the regions
//!   and sections drop, and the inconsistencies of §6.3, computed like the
//!   compiler's backward walk (docs/compiler-notes.md §3).
//! * `dot`: the Graphviz memop graph (`csa-lint --dump memop-graph`), like
//!   the compiler's `-csa-view-pre-ordering-memop-cfg`, with the ordering
//!   edges kept and dropped.

pub mod dot;
pub mod events;
pub mod membership;
pub mod ordering;
pub mod tokens;
