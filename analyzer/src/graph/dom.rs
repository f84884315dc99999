//! Dominator and post-dominator trees (stub).
