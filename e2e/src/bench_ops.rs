//! The operator benchmark's 200 ConvergeOps, compiled only into `e2e-bench-operator` (through
//! `#[path]`), never into `e2e-project`, so the suite's binary and its catalog stay as they are.
//!
//! Every op is unscheduled, in the env `opbench`, which declares nothing: a tick reads the op's
//! newest record, observes no lexicon, fires no rule (the only rule matches `drifted`, which an
//! env with nothing declared never is) and appends its record. That is the trivial tick the
//! benchmark measures a round of: what remains is the operator's own work per op (lease, due
//! check, tick record, fence).

use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::prelude::*;

/// Declares `opbench`: nothing (an env its ConvergeOps read must be declared, even empty).
fn opbench() -> EnvDeclaration {
    EnvDeclaration::new()
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("opbench", opbench) }

/// Declares one trivial ConvergeOp per name (a string literal: `converge_op!` takes literals).
macro_rules! bench_ops {
    ($($name:tt),* $(,)?) => {
        $(
            converge_op! {
                name: $name,
                env: "opbench",
                rules: [
                    when!(eq(status, "drifted") => report("opbench drifted"), id = "noop",
                          why = "Never fires: the env declares nothing, so it never drifts."),
                ],
            }
        )*
    };
}

bench_ops!(
    "opb-000", "opb-001", "opb-002", "opb-003", "opb-004", "opb-005", "opb-006", "opb-007", "opb-008", "opb-009",
    "opb-010", "opb-011", "opb-012", "opb-013", "opb-014", "opb-015", "opb-016", "opb-017", "opb-018", "opb-019",
    "opb-020", "opb-021", "opb-022", "opb-023", "opb-024", "opb-025", "opb-026", "opb-027", "opb-028", "opb-029",
    "opb-030", "opb-031", "opb-032", "opb-033", "opb-034", "opb-035", "opb-036", "opb-037", "opb-038", "opb-039",
    "opb-040", "opb-041", "opb-042", "opb-043", "opb-044", "opb-045", "opb-046", "opb-047", "opb-048", "opb-049",
    "opb-050", "opb-051", "opb-052", "opb-053", "opb-054", "opb-055", "opb-056", "opb-057", "opb-058", "opb-059",
    "opb-060", "opb-061", "opb-062", "opb-063", "opb-064", "opb-065", "opb-066", "opb-067", "opb-068", "opb-069",
    "opb-070", "opb-071", "opb-072", "opb-073", "opb-074", "opb-075", "opb-076", "opb-077", "opb-078", "opb-079",
    "opb-080", "opb-081", "opb-082", "opb-083", "opb-084", "opb-085", "opb-086", "opb-087", "opb-088", "opb-089",
    "opb-090", "opb-091", "opb-092", "opb-093", "opb-094", "opb-095", "opb-096", "opb-097", "opb-098", "opb-099",
    "opb-100", "opb-101", "opb-102", "opb-103", "opb-104", "opb-105", "opb-106", "opb-107", "opb-108", "opb-109",
    "opb-110", "opb-111", "opb-112", "opb-113", "opb-114", "opb-115", "opb-116", "opb-117", "opb-118", "opb-119",
    "opb-120", "opb-121", "opb-122", "opb-123", "opb-124", "opb-125", "opb-126", "opb-127", "opb-128", "opb-129",
    "opb-130", "opb-131", "opb-132", "opb-133", "opb-134", "opb-135", "opb-136", "opb-137", "opb-138", "opb-139",
    "opb-140", "opb-141", "opb-142", "opb-143", "opb-144", "opb-145", "opb-146", "opb-147", "opb-148", "opb-149",
    "opb-150", "opb-151", "opb-152", "opb-153", "opb-154", "opb-155", "opb-156", "opb-157", "opb-158", "opb-159",
    "opb-160", "opb-161", "opb-162", "opb-163", "opb-164", "opb-165", "opb-166", "opb-167", "opb-168", "opb-169",
    "opb-170", "opb-171", "opb-172", "opb-173", "opb-174", "opb-175", "opb-176", "opb-177", "opb-178", "opb-179",
    "opb-180", "opb-181", "opb-182", "opb-183", "opb-184", "opb-185", "opb-186", "opb-187", "opb-188", "opb-189",
    "opb-190", "opb-191", "opb-192", "opb-193", "opb-194", "opb-195", "opb-196", "opb-197", "opb-198", "opb-199",
);
