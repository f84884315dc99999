//! `.scm` queries, embedded from `queries/` (stub).
