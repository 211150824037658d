//! # oi-python
//!
//! The compiled half of oi's Python package: `interpreter._oi`.
