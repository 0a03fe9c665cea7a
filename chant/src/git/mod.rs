//! Git access: reads and compare-and-swap writes through gix, fetch and push through the git binary (being built).
