//! The box-heal benchmark's project binary (`cargo bench -p chant-e2e --bench box_heal`): the full
//! chant command line over three ops and nothing else (it does not link the `chant_e2e` library).
//!
//! The ops are the op.json documents of `e2e/fixtures/box-bench/`, registered as `op!` would
//! register them, because they must belong to the workspace member `box` (its `box` block lists
//! the services) while `op!` in this crate records no member (the e2e crate is not one):
//!
//! - `box-heal`: the box example's `converge` (resource mode, `sprite_services_observe(box = true)`,
//!   rule `restart-drifted` dispatching `restart-service`), unscheduled, so the operator ticks it
//!   every round and `--interval` is its cadence;
//! - `restart-service` and `services`: the box example's, unchanged.

use chant::__private::{ClassKind, RegisteredOp, inventory};

inventory::submit! {
    RegisteredOp {
        name: "box-heal",
        class: ClassKind::ReadOnly,
        json: include_str!("../../fixtures/box-bench/box-heal.json"),
        steps: &[],
        krate: env!("CARGO_PKG_NAME"),
    }
}

inventory::submit! {
    RegisteredOp {
        name: "restart-service",
        class: ClassKind::Mutating,
        json: include_str!("../../fixtures/box-bench/restart-service.json"),
        steps: &[],
        krate: env!("CARGO_PKG_NAME"),
    }
}

inventory::submit! {
    RegisteredOp {
        name: "services",
        class: ClassKind::Mutating,
        json: include_str!("../../fixtures/box-bench/services.json"),
        steps: &[],
        krate: env!("CARGO_PKG_NAME"),
    }
}

chant::main!();
