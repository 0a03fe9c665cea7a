//! The ledger: records on the orphan branch `chant/lifecycle` (being built).
