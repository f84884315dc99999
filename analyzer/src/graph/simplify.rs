//! LoopSimplify normal form (stub).
