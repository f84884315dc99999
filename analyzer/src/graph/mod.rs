//! Graph algorithms on CFGs given as successor lists (`succs[b]` lists the
//! successors of block `b`): dominators, post-dominators with a virtual exit,
//! natural loops and their nesting, irreducibility, and LoopSimplify.

pub mod dom;
pub mod loops;
pub mod simplify;
