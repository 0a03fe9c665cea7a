//! The throw-away PostgreSQL cluster the postgres tests share: `chant_testkit::postgres` (one
//! per run of this test binary), which the `postgres_observe` benchmark uses too.

pub(crate) use chant_testkit::postgres::{APP_ROLE, cluster, free_port};
