//! Token resolution for region/section intrinsics (stub, see issue 3).
