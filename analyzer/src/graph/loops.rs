//! Natural loops (stub).
