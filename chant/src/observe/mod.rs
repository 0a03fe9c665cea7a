//! The observation contract: the tri-state, change set, status rows and symptom derivation (being built).
