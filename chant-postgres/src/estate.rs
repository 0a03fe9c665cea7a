//! The postgres lexicon beyond its declared estate: foreign-key dependencies, ambient relations,
//! the teardown plan and the status of a schema as a deploy unit, all from one catalog read.
//!
//! [`read`] is the catalog read of [`catalog::read`] plus one query for the foreign keys
//! ([`QUERIES`] in all, whatever the size of the database). The rest is pure:
//!
//! - [`dependencies`]: the tables a declared table references through a foreign key and the env
//!   does not declare, the tables their foreign keys reach in turn (the lexicon's reference
//!   catalog marks the foreign key as a meaningful chain, [`references::CHAINS`]), and the
//!   schemas holding them. A referenced table in a schema the role has no USAGE on is a hole
//!   (`read-failed`), never an absence, and the chain stops there.
//! - [`ambient`]: in the schemas chant declares, the tables, views, materialized views and
//!   sequences nothing declares; a sequence owned by a column belongs to its table (runtime of
//!   a declared one, part of an undeclared one) and is never ambient on its own.
//! - [`teardown_plan`]: the tables and schemas carrying this project's and env's marker; one in a
//!   schema the role cannot use is a hole, since its teardown could not be done or checked.
//! - [`stack_status`]: a schema as the unit: absent, present (healthy when every declared table
//!   in it is present), unknown when the role has no USAGE on it.

use std::collections::{BTreeMap, BTreeSet};

use crate::client::GenericClient;

use super::catalog::{self, Snapshot};
use super::declaration::{PostgresDeclaration, SCHEMA_KIND, TABLE_KIND};
use super::marker::{self, Identity};
use super::references;
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::estate::{
    Ambient, AmbientResource, Dependencies, Dependency, DependencyHole, StackStatus, TeardownPlan,
};

/// How many queries [`read`] issues, whatever the size of the database.
pub const QUERIES: usize = catalog::QUERIES + 1;

/// How many queries the lexicon's dependencies, ambient, teardown-plan and stack-status hooks
/// issue together on one binding, asked one after the other as `lifecycle diff` and
/// `lifecycle teardown` ask them: the first reads the snapshot ([`read`]), the others answer from
/// it.
pub const HOOK_QUERIES: usize = QUERIES;

/// The kinds of which ambient relations are reported.
pub const AMBIENT_KINDS: [&str; 4] = ["table", "view", "materialized view", "sequence"];

/// One foreign key: the referencing table and the referenced one (`schema.table` each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKey {
    /// The constraint's name.
    pub name: String,
    /// The table holding the constraint.
    pub from: String,
    /// The table it references.
    pub to: String,
    /// The referenced table's schema.
    pub to_schema: String,
}

/// A catalog snapshot with the foreign keys of every non-system table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EstateSnapshot {
    /// The catalog, as `describe_resources` reads it.
    pub catalog: Snapshot,
    /// Every foreign key whose referencing table is outside the system schemas.
    pub foreign_keys: Vec<ForeignKey>,
}

impl EstateSnapshot {
    /// Returns how many queries the read issued.
    pub fn queries(&self) -> usize {
        self.catalog.queries + 1
    }
}

/// Reads the catalog and the foreign keys through `client` (a connection or a transaction).
///
/// # Errors
///
/// The first query that fails.
pub fn read(client: &mut impl GenericClient) -> Result<EstateSnapshot, crate::client::Error> {
    let catalog = catalog::read(client)?;
    let rows = client.query(
        "SELECT con.conname::text, fn.nspname::text, fc.relname::text, tn.nspname::text, tc.relname::text \
         FROM pg_catalog.pg_constraint con \
         JOIN pg_catalog.pg_class fc ON fc.oid = con.conrelid \
         JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace \
         JOIN pg_catalog.pg_class tc ON tc.oid = con.confrelid \
         JOIN pg_catalog.pg_namespace tn ON tn.oid = tc.relnamespace \
         WHERE con.contype = 'f' AND fn.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') \
         ORDER BY fn.nspname, fc.relname, con.conname",
        &[],
    )?;
    let mut foreign_keys = Vec::with_capacity(rows.len());
    for row in rows {
        let from_schema: String = row.try_get(1)?;
        let from_table: String = row.try_get(2)?;
        let to_schema: String = row.try_get(3)?;
        let to_table: String = row.try_get(4)?;
        foreign_keys.push(ForeignKey {
            name: row.try_get(0)?,
            from: format!("{from_schema}.{from_table}"),
            to: format!("{to_schema}.{to_table}"),
            to_schema,
        });
    }
    Ok(EstateSnapshot { catalog, foreign_keys })
}

fn no_usage(schema: &str) -> String {
    format!("permission denied for schema {schema}: the role has no USAGE on it")
}

/// Whether [`references::CHAINS`] marks the foreign key as a chain to follow past depth one.
fn follows_foreign_keys() -> bool {
    references::CHAINS.iter().any(|c| c.from == TABLE_KIND && c.label == references::FOREIGN_KEY_LABEL)
}

/// The tables declared tables reference and the env does not declare, and their schemas: depth
/// one by foreign key and, since the reference catalog marks the foreign key as a meaningful
/// chain ([`references::CHAINS`]), every undeclared table those tables' foreign keys reach in
/// turn. Each carries `referencedBy`, the declared tables that pulled it in, and, when it was
/// reached past depth one, `via` (the undeclared tables whose keys reach it) and `depth`. A
/// referenced table in a schema without USAGE is a hole, and the chain is not followed past it.
pub fn dependencies(declaration: &PostgresDeclaration, snapshot: &EstateSnapshot) -> Dependencies {
    let declared_schemas = declaration.schemas();
    let declared = declaration.tables();
    let mut keys: BTreeMap<&str, Vec<&ForeignKey>> = BTreeMap::new();
    for fk in &snapshot.foreign_keys {
        keys.entry(fk.from.as_str()).or_default().push(fk);
    }
    let usable = |schema: &str| snapshot.catalog.schemas.get(schema).is_none_or(|s| s.usage);
    // Breadth first from the declared tables: each reached table with its declared roots, the
    // undeclared tables that reached it, its schema and depth.
    struct Reached<'a> {
        roots: BTreeSet<String>,
        via: BTreeSet<&'a str>,
        schema: &'a str,
        depth: usize,
    }
    let mut reached: BTreeMap<&str, Reached> = BTreeMap::new();
    let mut frontier: Vec<(&str, BTreeSet<String>)> =
        declared.keys().map(|t| (t.as_str(), BTreeSet::from([t.clone()]))).collect();
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for (from, roots) in &frontier {
            for fk in keys.get(from).into_iter().flatten() {
                if declared.contains_key(&fk.to) {
                    continue;
                }
                let entry = reached.entry(fk.to.as_str()).or_insert_with(|| Reached {
                    roots: BTreeSet::new(),
                    via: BTreeSet::new(),
                    schema: fk.to_schema.as_str(),
                    depth,
                });
                // `via` names the undeclared referrers at the table's shortest depth.
                if !declared.contains_key(*from) && entry.depth == depth {
                    entry.via.insert(from);
                }
                let before = entry.roots.len();
                entry.roots.extend(roots.iter().cloned());
                // Follow a table again only when it brought new roots, so cycles end.
                let grew = entry.roots.len() > before;
                if grew && follows_foreign_keys() && usable(&fk.to_schema) {
                    next.entry(fk.to.as_str()).or_default().extend(roots.iter().cloned());
                }
            }
        }
        frontier = next.into_iter().collect();
    }
    let mut out = Dependencies::default();
    let mut schema_referrers: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (table, r) in reached {
        let by: Vec<String> = r.roots.iter().cloned().collect();
        if !declared_schemas.contains(r.schema) {
            schema_referrers.entry(r.schema).or_default().extend(r.roots.iter().cloned());
        }
        if !usable(r.schema) {
            out.holes.insert(
                table.to_owned(),
                DependencyHole {
                    kind: Some(TABLE_KIND.to_owned()),
                    referenced_by: by,
                    reason: UnobservedReason::ReadFailed,
                    detail: Some(no_usage(r.schema)),
                },
            );
            continue;
        }
        let mut dependency = Dependency::new(TABLE_KIND, by);
        if !r.via.is_empty() {
            let via: Vec<&str> = r.via.into_iter().collect();
            dependency = dependency.property("via", via.join(", ")).property("depth", r.depth.to_string());
        }
        if let Some(live) = snapshot.catalog.relations.get(table) {
            let (comment, found) = marker::split(&live.comment);
            dependency = dependency.property("kind", live.kind_word());
            if !comment.is_empty() {
                dependency = dependency.property("comment", comment);
            }
            if let Some(m) = found {
                dependency = dependency.property("stack", m.stack);
            }
        }
        out.resources.insert(table.to_owned(), dependency);
    }
    for (schema, by) in schema_referrers {
        let usage = usable(schema);
        out.resources.insert(schema.to_owned(), Dependency::new(SCHEMA_KIND, by).property("usage", usage.to_string()));
    }
    out
}

/// The relations of the declared schemas that nothing declares (sequences owned by a column
/// excluded: they belong to their table).
pub fn ambient(declaration: &PostgresDeclaration, snapshot: &EstateSnapshot) -> Ambient {
    let schemas = declaration.schemas();
    let mut out = Ambient::default();
    for (entity, live) in &snapshot.catalog.relations {
        if !schemas.contains(&live.schema) || declaration.tables().contains_key(entity) {
            continue;
        }
        let kind = match live.relkind {
            'r' | 'p' | 'v' | 'm' => live.kind_word(),
            'S' if live.owner.is_none() => live.kind_word(),
            _ => continue,
        };
        let mut resource = AmbientResource::new(kind);
        let (comment, found) = marker::split(&live.comment);
        if !comment.is_empty() {
            resource = resource.property("comment", comment);
        }
        if let Some(m) = found {
            resource = resource.property("stack", m.stack);
        }
        out.resources.insert(entity.clone(), resource);
    }
    out
}

/// The tables, then the schemas, carrying `identity`'s marker; one in a schema the role cannot
/// use is a hole.
pub fn teardown_plan(snapshot: &Snapshot, identity: &Identity) -> TeardownPlan {
    let mut plan = TeardownPlan::new();
    let ours = |comment: &str| marker::split(comment).1.filter(|m| identity.owns(m));
    for (entity, live) in &snapshot.relations {
        let Some(found) = live.is_table().then(|| ours(&live.comment)).flatten() else { continue };
        if snapshot.schemas.get(&live.schema).is_none_or(|s| s.usage) {
            plan.candidate(entity, Some(TABLE_KIND), Some(found));
        } else {
            plan.hole(TABLE_KIND, Some(entity), UnobservedReason::ReadFailed, Some(no_usage(&live.schema)));
        }
    }
    for (schema, live) in &snapshot.schemas {
        let Some(found) = ours(&live.comment) else { continue };
        if live.usage {
            plan.candidate(schema, Some(SCHEMA_KIND), Some(found));
        } else {
            plan.hole(SCHEMA_KIND, Some(schema), UnobservedReason::ReadFailed, Some(no_usage(schema)));
        }
    }
    plan
}

/// The status of the schema `unit`.
pub fn stack_status(declaration: &PostgresDeclaration, snapshot: &Snapshot, unit: &str) -> StackStatus {
    let Some(schema) = snapshot.schemas.get(unit) else { return StackStatus::Absent };
    if !schema.usage {
        return StackStatus::Unknown { detail: no_usage(unit) };
    }
    let declared: Vec<&String> =
        declaration.tables().iter().filter(|(_, t)| t.schema == unit).map(|(e, _)| e).collect();
    let missing: Vec<&str> = declared
        .iter()
        .filter(|e| !snapshot.relations.get(e.as_str()).is_some_and(|r| r.is_table()))
        .map(|e| e.as_str())
        .collect();
    let detail = if missing.is_empty() {
        format!("{} of {} declared table(s) present", declared.len(), declared.len())
    } else {
        format!("missing: {}", missing.join(", "))
    };
    StackStatus::Present { healthy: missing.is_empty(), detail: Some(detail) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{LiveRelation, LiveSchema};
    use crate::{Column, Table};

    fn relation(schema: &str, name: &str, relkind: char, comment: &str, owner: Option<&str>) -> LiveRelation {
        LiveRelation {
            schema: schema.into(),
            name: name.into(),
            relkind,
            comment: comment.into(),
            owner: owner.map(str::to_owned),
            toast: None,
        }
    }

    fn snapshot() -> EstateSnapshot {
        let mut s = EstateSnapshot::default();
        let c = &mut s.catalog;
        c.schemas.insert("app".into(), LiveSchema { usage: true, comment: String::new() });
        c.schemas.insert("public".into(), LiveSchema { usage: true, comment: String::new() });
        c.schemas.insert("vault".into(), LiveSchema { usage: false, comment: String::new() });
        let mark = "[chant managed-by=chant stack=p env=e]";
        for r in [
            relation("app", "orders", 'r', mark, None),
            relation("app", "orders_id_seq", 'S', "", Some("app.orders")),
            relation("app", "orphan_seq", 'S', "", None),
            relation("app", "report", 'v', "", None),
            relation("app", "legacy", 'r', "", None),
            relation("app", "legacy_id_seq", 'S', "", Some("app.legacy")),
            relation("public", "accounts", 'r', "", None),
            relation("vault", "keys", 'r', mark, None),
        ] {
            c.relations.insert(r.entity(), r);
        }
        for (to, schema) in [("public.accounts", "public"), ("vault.keys", "vault"), ("app.orders", "app")] {
            s.foreign_keys.push(ForeignKey {
                name: "fk".into(),
                from: "app.orders".into(),
                to: to.into(),
                to_schema: schema.into(),
            });
        }
        s
    }

    fn declaration() -> PostgresDeclaration {
        PostgresDeclaration::new().table(Table::new("app", "orders").column(Column::new("id", "bigint")))
    }

    #[test]
    fn foreign_keys_are_dependencies_and_an_unusable_schema_is_a_hole() {
        let deps = dependencies(&declaration(), &snapshot());
        assert_eq!(deps.resources.keys().collect::<Vec<_>>(), ["public", "public.accounts", "vault"]);
        assert_eq!(deps.resources["public.accounts"].referenced_by, ["app.orders"]);
        assert_eq!(deps.resources["vault"].properties.get("usage").unwrap(), "false");
        let hole = &deps.holes["vault.keys"];
        assert_eq!(hole.reason, UnobservedReason::ReadFailed);
        assert_eq!(hole.referenced_by, ["app.orders"]);
    }

    #[test]
    fn the_foreign_key_chain_is_followed_past_depth_one_and_ends_on_a_cycle() {
        let mut s = snapshot();
        for r in [relation("public", "regions", 'r', "", None), relation("public", "planets", 'r', "", None)] {
            s.catalog.relations.insert(r.entity(), r);
        }
        for (from, to) in [
            ("public.accounts", "public.regions"),
            ("public.regions", "public.planets"),
            ("public.planets", "public.accounts"),
            ("public.planets", "app.orders"),
        ] {
            s.foreign_keys.push(ForeignKey {
                name: "fk".into(),
                from: from.into(),
                to: to.into(),
                to_schema: "public".into(),
            });
        }
        let deps = dependencies(&declaration(), &s);
        assert_eq!(
            deps.resources.keys().collect::<Vec<_>>(),
            ["public", "public.accounts", "public.planets", "public.regions", "vault"]
        );
        let regions = &deps.resources["public.regions"];
        assert_eq!(regions.referenced_by, ["app.orders"], "the declared table that pulled it in");
        assert_eq!(
            (regions.properties.get("via").unwrap().as_str(), regions.properties.get("depth").unwrap().as_str()),
            ("public.accounts", "2")
        );
        assert_eq!(deps.resources["public.planets"].properties.get("depth").unwrap(), "3");
        assert!(!deps.resources["public.accounts"].properties.contains_key("via"), "depth one has no via");
        assert!(deps.resources.values().all(|d| d.referenced_by == ["app.orders"]));
    }

    #[test]
    fn ambient_is_undeclared_relations_of_declared_schemas_and_orphan_sequences_only() {
        let ambient = ambient(&declaration(), &snapshot());
        assert_eq!(ambient.resources.keys().collect::<Vec<_>>(), ["app.legacy", "app.orphan_seq", "app.report"]);
        assert_eq!(ambient.resources["app.orphan_seq"].kind, "sequence");
        assert_eq!(ambient.resources["app.report"].kind, "view");
    }

    #[test]
    fn the_teardown_plan_is_the_marked_tables_with_a_hole_for_an_unusable_schema() {
        let plan = teardown_plan(&snapshot().catalog, &Identity { stack: "p".into(), env: "e".into() });
        assert_eq!(plan.candidates.keys().collect::<Vec<_>>(), ["app.orders"]);
        assert_eq!(plan.holes.len(), 1);
        assert_eq!(plan.holes[0].name.as_deref(), Some("vault.keys"));
        let other = teardown_plan(&snapshot().catalog, &Identity { stack: "p".into(), env: "other".into() });
        assert!(other.candidates.is_empty() && other.holes.is_empty());
    }

    #[test]
    fn a_schema_is_absent_present_or_unknown() {
        let s = snapshot();
        assert_eq!(stack_status(&declaration(), &s.catalog, "nope"), StackStatus::Absent);
        assert!(matches!(stack_status(&declaration(), &s.catalog, "app"), StackStatus::Present { healthy: true, .. }));
        assert!(matches!(stack_status(&declaration(), &s.catalog, "vault"), StackStatus::Unknown { .. }));
        let more = declaration().table(Table::new("app", "gone").column(Column::new("id", "int")));
        match stack_status(&more, &s.catalog, "app") {
            StackStatus::Present { healthy: false, detail } => assert_eq!(detail.as_deref(), Some("missing: app.gone")),
            other => panic!("{other:?}"),
        }
    }
}
