//! Shared helpers for the fixture and end-to-end tests.
