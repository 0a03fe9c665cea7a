//! From a catalog [`Snapshot`] to the observation contract's verdicts. Pure: no I/O.
//!
//! - A declared schema, table or column found in the catalog is **present**; one not found is
//!   **absent** (the only verdict that becomes a `create`), with the address asked in `queried`.
//! - A declared table (and its columns) in a schema the role has no USAGE on is **unobserved**
//!   `read-failed`, for it alone: the role could not use what it would have to converge.
//! - A declared entity of a kind the lexicon has no reader for (a materialized view) is
//!   **unobserved** `unsupported-kind`.
//! - With the owned filter on, a declared table (and its columns) that is not chant's is
//!   **unobserved** `filtered`, and undeclared resources that are not chant's are withheld.
//! - Tables and schemas carry ownership from the COMMENT marker: `owned` when it is this
//!   identity's, `foreign` otherwise, and the marker itself when there is one. Columns carry no
//!   marker: `unknown` (so an undeclared column is `adopt`, never `delete`), except under the
//!   owned filter, where they take their table's verdict.
//! - Indexes, owned sequences and toast tables of declared tables are present with
//!   `runtime_owner` set, so they classify `runtime`. Undeclared tables anywhere outside the
//!   system schemas are present too (owned: a `delete` candidate; foreign: `adopt`).

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use super::catalog::{LiveColumn, LiveRelation, LiveSchema, Snapshot};
use super::declaration::{COLUMN_KIND, PostgresDeclaration, SCHEMA_KIND, TABLE_KIND, property};
use super::marker::{self, Identity};
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::{Marker, Observation, Ownership, PresentResource, Unobserved};

/// What the read needs besides the declaration and the snapshot.
#[derive(Debug, Clone)]
pub struct ReadContext<'a> {
    /// Whose marker counts as owned.
    pub identity: &'a Identity,
    /// The owned filter (`owned: true`).
    pub owned_only: bool,
    /// The address the read was issued against (no password).
    pub address: &'a str,
}

fn ownership_of(comment: &str, identity: &Identity) -> (Ownership, Option<Marker>) {
    let (_, marker) = marker::split(comment);
    let ownership = match &marker {
        Some(m) if identity.owns(m) => Ownership::Owned,
        _ => Ownership::Foreign,
    };
    (ownership, marker)
}

/// The verdicts the relations decide as they are built: lists in insertion order, turned into
/// maps once at the end ([`map_of`]). Inserting one by one compared each name with a dozen
/// others, which was most of the verdict's time over a 2,000-table catalog; a list is pushed in
/// a few long runs already in name order (schemas, declared tables, the other relations, toast
/// tables), so the one sort is nearly a merge, and it sorts positions, not the resources
/// themselves. Of equal names the last pushed stays, as inserting would have kept it.
#[derive(Debug, Default)]
struct Verdicts {
    resources: Vec<(String, PresentResource)>,
    /// Toast tables, pushed after every other resource (no other resource is named `pg_toast.*`).
    toasts: Vec<(String, PresentResource)>,
    unobserved: Vec<(String, Unobserved)>,
}

impl Verdicts {
    fn with_capacity(n: usize) -> Self {
        Verdicts { resources: Vec::with_capacity(n), toasts: Vec::new(), unobserved: Vec::new() }
    }

    fn insert_present(&mut self, name: String, resource: PresentResource) {
        self.resources.push((name, resource));
    }

    fn insert_unobserved(&mut self, name: String, verdict: Unobserved) {
        self.unobserved.push((name, verdict));
    }
}

/// The map of `items`, the last of equal names kept: their positions sorted by name (stable, so
/// equal names stay in push order), then the map built from items in that order.
fn map_of<V>(items: Vec<(String, V)>) -> BTreeMap<String, V> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| items[a].0.cmp(&items[b].0));
    let mut slots: Vec<Option<(String, V)>> = items.into_iter().map(Some).collect();
    // In name order already: building the map checks that in one pass and keeps the last of
    // equal names.
    order.into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)).collect()
}

/// `prefix.name`, allocated once.
fn dotted(prefix: &str, name: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 1 + name.len());
    out.push_str(prefix);
    out.push('.');
    out.push_str(name);
    out
}

/// What of an observation the declaration and the live columns alone decide, made before the
/// rest ([`prepare`]): an observation's read makes it as soon as its first connection has read
/// the columns, while the second may still be reading the relations.
#[derive(Debug)]
pub(super) struct Prepared {
    /// The address asked for every declared schema, table and column.
    queried: BTreeMap<String, Arc<str>>,
    /// The verdicts of the live columns (those the owned filter keeps) of every declared table,
    /// ownership `unknown` (the owned filter gives them their table's once that is read). Those
    /// of a table not found present as a table are taken out ([`observation_of`]).
    columns: BTreeMap<String, PresentResource>,
    /// Per declared table, in name order: how many of `columns` are its.
    counts: Vec<usize>,
}

impl Prepared {
    /// Prepared from the `queried` map and, per declared table in name order, the verdicts of
    /// its live columns, sorted by name.
    fn new(queried: BTreeMap<String, Arc<str>>, per_table: Vec<Vec<(String, PresentResource)>>) -> Self {
        let counts = per_table.iter().map(Vec::len).collect();
        // In name order already (a declared table's columns follow it and precede the next
        // table's, its identifiers sorting after the `.`): the map is built without a sort.
        let columns = per_table.into_iter().flatten().collect();
        Prepared { queried, columns, counts }
    }
}

/// The live columns of one table, as [`prepare`] is given them: borrowed from a snapshot that
/// keeps them (their values are copied into the verdicts), or handed over by a read that has no
/// further use for them (their values are moved there).
#[derive(Debug)]
pub(super) enum LiveColumns<'a> {
    /// Borrowed: each value is copied.
    Borrowed(&'a [(String, LiveColumn)]),
    /// Handed over: each value is moved.
    Owned(Vec<(String, LiveColumn)>),
}

/// Makes the part of the observation of `declaration` that does not depend on the schemas and
/// relations: the `queried` map, and the verdicts of the live columns of each declared table,
/// `live_columns(entity)` giving them (as [`Snapshot::columns_of`] would; it is asked once per
/// declared table). For a large declaration the two are made at once, the `queried` map on a
/// scoped thread of its own (when the columns are in, the server has nothing left to do for
/// this connection).
pub(super) fn prepare<'a>(
    declaration: &PostgresDeclaration,
    ctx: &ReadContext<'_>,
    live_columns: impl FnMut(&str) -> LiveColumns<'a>,
) -> Prepared {
    if declaration.tables().len() < PARALLEL_FROM {
        return Prepared::new(queried(declaration, ctx.address), column_verdicts(declaration, ctx, live_columns));
    }
    std::thread::scope(|scope| {
        let beside = std::thread::Builder::new().spawn_scoped(scope, || queried(declaration, ctx.address));
        let columns = column_verdicts(declaration, ctx, live_columns);
        let queried = match beside {
            Ok(beside) => match beside.join() {
                Ok(queried) => queried,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            // No thread to be had: made here, after the columns.
            Err(_) => queried(declaration, ctx.address),
        };
        Prepared::new(queried, columns)
    })
}

/// From how many declared tables [`prepare`] makes the `queried` map beside the columns'
/// verdicts.
const PARALLEL_FROM: usize = 256;

/// The `queried` map of `declaration`: every declared schema, table and column, asked at
/// `address` (one address, shared by every name).
fn queried(declaration: &PostgresDeclaration, address: &str) -> BTreeMap<String, Arc<str>> {
    let address: Arc<str> = Arc::from(address);
    let mut queried: Vec<(String, Arc<str>)> = Vec::new();
    for schema in declaration.schemas() {
        queried.push((schema, Arc::clone(&address)));
    }
    for (entity, table) in declaration.tables() {
        queried.push((entity.clone(), Arc::clone(&address)));
        for c in column_names(entity, table) {
            queried.push((c, Arc::clone(&address)));
        }
    }
    map_of(queried)
}

/// Per declared table, in name order: the verdicts of its live columns (see [`Prepared`]).
fn column_verdicts<'a>(
    declaration: &PostgresDeclaration,
    ctx: &ReadContext<'_>,
    mut live_columns: impl FnMut(&str) -> LiveColumns<'a>,
) -> Vec<Vec<(String, PresentResource)>> {
    let mut columns = Vec::with_capacity(declaration.tables().len());
    for (entity, table) in declaration.tables() {
        // Under the owned filter only the declared columns are reported.
        let reported = |name: &str| !ctx.owned_only || table.find_column(name).is_some();
        let verdicts = match live_columns(entity) {
            LiveColumns::Borrowed(list) => {
                let mut live: Vec<&(String, LiveColumn)> = list.iter().collect();
                live.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                live.into_iter()
                    .filter(|(name, _)| reported(name))
                    .map(|(name, column)| {
                        column_verdict(entity, name, column.sql_type.clone(), column.not_null, column.default.clone())
                    })
                    .collect()
            }
            LiveColumns::Owned(mut list) => {
                // A table's column names are distinct: sorting the columns themselves orders them
                // as sorting references to them would.
                list.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                list.into_iter()
                    .filter(|(name, _)| reported(name))
                    .map(|(name, column)| {
                        column_verdict(entity, &name, column.sql_type, column.not_null, column.default)
                    })
                    .collect()
            }
        };
        columns.push(verdicts);
    }
    columns
}

/// The verdict of the live column `name` of the declared table `entity`: present, ownership
/// `unknown`, with its type, `NOT NULL` and default.
fn column_verdict(
    entity: &str,
    name: &str,
    sql_type: String,
    not_null: bool,
    default: String,
) -> (String, PresentResource) {
    let mut resource = PresentResource::new(Ownership::Unknown).kind(COLUMN_KIND);
    // Three inserts into an empty map: cheaper than building it from an array, which sorts the
    // array first.
    resource.properties.insert(property::TYPE, sql_type);
    resource.properties.insert(property::NOT_NULL, if not_null { "true" } else { "false" });
    resource.properties.insert(property::DEFAULT, default);
    (dotted(entity, name), resource)
}

/// The entity names of the declared columns of `table` (entity name `entity`), sorted.
fn column_names(entity: &str, table: &super::declaration::Table) -> Vec<String> {
    let mut names: Vec<String> = table.columns.iter().map(|c| dotted(entity, &c.name)).collect();
    names.sort_unstable();
    names
}

/// Builds the observation of `declaration` from `snapshot`.
pub fn observation(declaration: &PostgresDeclaration, snapshot: &Snapshot, ctx: &ReadContext<'_>) -> Observation {
    let prepared = prepare(declaration, ctx, |entity| LiveColumns::Borrowed(snapshot.columns_of(entity)));
    observation_prepared(declaration, snapshot, ctx, prepared)
}

/// Builds the observation of `declaration` from `snapshot` and what [`prepare`] made of the
/// same declaration, context and snapshot's columns.
pub(super) fn observation_prepared(
    declaration: &PostgresDeclaration,
    snapshot: &Snapshot,
    ctx: &ReadContext<'_>,
    prepared: Prepared,
) -> Observation {
    let relations = relation_verdicts(declaration, &snapshot.schemas, &snapshot.relations, ctx);
    observation_of(declaration, relations, prepared, ctx.owned_only)
}

/// What of an observation the schemas and relations decide: every verdict but those of the live
/// columns, and which tables' live columns are reported. An observation's read makes it on the
/// second connection's thread as soon as that one has read the relations, while the first may
/// still be reading the columns ([`relation_verdicts`]); [`observation_of`] puts the two
/// together.
#[derive(Debug)]
pub(super) struct RelationVerdicts {
    resources: BTreeMap<String, PresentResource>,
    unobserved: BTreeMap<String, Unobserved>,
    /// Per declared table, in name order: the ownership its live columns take under the owned
    /// filter; `None` where they are not reported (the table is absent, withheld, or not a
    /// table).
    slots: Vec<Option<Ownership>>,
}

/// Makes the verdicts of `declaration` that the `schemas` and `relations` of a snapshot decide
/// (see [`RelationVerdicts`]).
pub(super) fn relation_verdicts(
    declaration: &PostgresDeclaration,
    schemas: &BTreeMap<String, LiveSchema>,
    relations: &BTreeMap<String, LiveRelation>,
    ctx: &ReadContext<'_>,
) -> RelationVerdicts {
    let columns: usize = declaration.tables().values().map(|t| t.columns.len()).sum();
    let mut out = Verdicts::with_capacity(declaration.tables().len() + columns + relations.len());
    let mut slots = Vec::with_capacity(declaration.tables().len());
    let unobserved = |kind: &'static str, reason: UnobservedReason, detail: String| {
        Unobserved::new(reason).kind(kind).detail(detail).queried(ctx.address)
    };
    let present = |kind: &'static str, ownership: Ownership, marker: Option<Marker>| {
        let mut r = PresentResource::new(ownership).kind(kind);
        r.marker = marker;
        r
    };

    // Schemas.
    let declared_schemas = declaration.schemas();
    for schema in &declared_schemas {
        let Some(live) = schemas.get(schema) else { continue };
        let (ownership, marker) = ownership_of(&live.comment, ctx.identity);
        if !live.usage {
            out.insert_unobserved(
                schema.clone(),
                unobserved(SCHEMA_KIND, UnobservedReason::ReadFailed, no_usage(schema)),
            );
        } else if ctx.owned_only && ownership != Ownership::Owned {
            out.insert_unobserved(schema.clone(), unobserved(SCHEMA_KIND, UnobservedReason::Filtered, filtered()));
        } else {
            out.insert_present(schema.clone(), present(SCHEMA_KIND, ownership, marker));
        }
    }
    for (schema, live) in schemas {
        if declared_schemas.contains(schema) || !live.usage {
            continue;
        }
        // An undeclared schema is reported only when it is chant's (a `delete` candidate):
        // every database has schemas that are not, and none of them is chant's business.
        let (ownership, marker) = ownership_of(&live.comment, ctx.identity);
        if ownership == Ownership::Owned {
            out.insert_present(schema.clone(), present(SCHEMA_KIND, ownership, marker));
        }
    }

    // Declared tables (their columns' verdicts go into the slots). The declared tables present
    // as tables, with their ownership: what their runtime parts (indexes, sequences) take under
    // the owned filter.
    let mut runtime_owners: HashMap<&str, Ownership> = HashMap::with_capacity(declaration.tables().len());
    for (entity, table) in declaration.tables() {
        let hide_all = |out: &mut Verdicts, reason: UnobservedReason, detail: String| {
            out.insert_unobserved(entity.clone(), unobserved(TABLE_KIND, reason, detail.clone()));
            for c in column_names(entity, table) {
                out.insert_unobserved(c, unobserved(COLUMN_KIND, reason, detail.clone()));
            }
        };
        if schemas.get(&table.schema).is_some_and(|s| !s.usage) {
            hide_all(&mut out, UnobservedReason::ReadFailed, no_usage(&table.schema));
            slots.push(None);
            continue;
        }
        let Some(live) = relations.get(entity) else {
            slots.push(None);
            continue;
        };
        let (ownership, marker) = ownership_of(&live.comment, ctx.identity);
        if ctx.owned_only && ownership != Ownership::Owned {
            hide_all(&mut out, UnobservedReason::Filtered, filtered());
            slots.push(None);
            continue;
        }
        let (comment, _) = marker::split(&live.comment);
        out.insert_present(
            entity.clone(),
            present(TABLE_KIND, ownership, marker)
                .property(property::KIND, live.kind_word())
                .property(property::COMMENT, comment),
        );
        if !live.is_table() {
            slots.push(None);
            continue;
        }
        slots.push(Some(ownership));
        runtime_owners.insert(entity, ownership);
        if let Some(toast) = &live.toast {
            out.toasts.push((toast.clone(), runtime(ctx, "toast", ownership, entity)));
        }
    }

    // Kinds without a reader.
    for (name, kind) in declaration.unsupported() {
        out.insert_unobserved(
            name.clone(),
            Unobserved::new(UnobservedReason::UnsupportedKind)
                .kind(kind.clone())
                .detail(format!("the postgres lexicon has no reader for a {kind}"))
                .queried(ctx.address),
        );
    }

    // Everything else the catalog holds: runtime parts of declared tables, undeclared tables.
    // The relations and the declared tables are both in name order: one walk of each.
    let mut declared_tables = declaration.tables().keys().map(|k| (k.as_str(), ())).peekable();
    for (entity, live) in relations {
        while declared_tables.next_if(|(k, _)| *k < entity.as_str()).is_some() {}
        if declared_tables.peek().is_some_and(|(k, _)| *k == entity.as_str())
            || declaration.unsupported().contains_key(entity)
        {
            continue;
        }
        if let Some((owner, owner_ownership)) = live.owner.as_deref().and_then(|o| runtime_owners.get_key_value(o)) {
            out.insert_present(entity.clone(), runtime(ctx, live.kind_word(), *owner_ownership, owner));
            continue;
        }
        if !live.is_table() {
            continue;
        }
        let usage = schemas.get(&live.schema).is_none_or(|s| s.usage);
        let (ownership, marker) = ownership_of(&live.comment, ctx.identity);
        if !usage {
            // chant's own table where the role can no longer look: a hole, not a silence.
            if ownership == Ownership::Owned {
                out.insert_unobserved(
                    entity.clone(),
                    unobserved(TABLE_KIND, UnobservedReason::ReadFailed, no_usage(&live.schema)),
                );
            }
            continue;
        }
        if ctx.owned_only && ownership != Ownership::Owned {
            continue;
        }
        out.insert_present(entity.clone(), undeclared_table(live, ownership, marker));
    }
    out.resources.append(&mut out.toasts);
    RelationVerdicts { resources: map_of(out.resources), unobserved: map_of(out.unobserved), slots }
}

/// The observation of `declaration` from the verdicts the relations decided and what
/// [`prepare`] made of the columns (of the same declaration, context and snapshot): the live
/// columns of each table found present as a table, with their table's ownership under the owned
/// filter. Of a column and another resource of the same name (only an undeclared relation's name
/// can hold the dots that make one), the other stays.
pub(super) fn observation_of(
    declaration: &PostgresDeclaration,
    relations: RelationVerdicts,
    prepared: Prepared,
    owned_only: bool,
) -> Observation {
    let Prepared { queried, mut columns, counts } = prepared;
    let RelationVerdicts { mut resources, unobserved, slots } = relations;
    for ((entity, slot), count) in declaration.tables().keys().zip(slots).zip(counts) {
        if count == 0 || (slot.is_some() && !owned_only) {
            continue;
        }
        // A declared table's name is an identifier of its own: its columns are the names
        // between `entity.` and `entity/`, `/` coming right after `.`.
        let (from, to) = (dotted(entity, ""), format!("{entity}/"));
        match slot {
            Some(ownership) => {
                for (_, column) in
                    columns.range_mut::<str, _>((Bound::Included(from.as_str()), Bound::Excluded(to.as_str())))
                {
                    column.ownership = ownership;
                }
            }
            None => {
                let names: Vec<String> = columns
                    .range::<str, _>((Bound::Included(from.as_str()), Bound::Excluded(to.as_str())))
                    .map(|(name, _)| name.clone())
                    .collect();
                for name in names {
                    columns.remove(&name);
                }
            }
        }
    }
    // One merge of two maps in name order; of equal names the relations' verdict stays.
    columns.append(&mut resources);
    Observation { resources: columns, unobserved, queried }
}

fn runtime(ctx: &ReadContext<'_>, kind: &'static str, owner_ownership: Ownership, owner: &str) -> PresentResource {
    let ownership = if ctx.owned_only { owner_ownership } else { Ownership::Unknown };
    PresentResource::new(ownership).kind(kind).runtime_of(owner)
}

fn undeclared_table(live: &LiveRelation, ownership: Ownership, marker: Option<Marker>) -> PresentResource {
    let mut r = PresentResource::new(ownership).kind(TABLE_KIND).property(property::KIND, live.kind_word());
    r.marker = marker;
    r
}

fn no_usage(schema: &str) -> String {
    format!("permission denied for schema {schema}: the role has no USAGE on it")
}

fn filtered() -> String {
    "not chant's (no marker of this project and env); withheld by the owned filter".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{LiveColumn, LiveSchema};
    use crate::declaration::{Column, Table};
    use chant_lexicon::observe::{ChangeAction, LastApply, build_change_set};

    fn identity() -> Identity {
        Identity { stack: "proj".into(), env: "prod".into() }
    }

    fn rel(schema: &str, name: &str, relkind: char, comment: &str, owner: Option<&str>) -> LiveRelation {
        LiveRelation {
            schema: schema.into(),
            name: name.into(),
            relkind,
            comment: comment.into(),
            owner: owner.map(str::to_owned),
            toast: None,
        }
    }

    fn col(t: &str, nn: bool, d: &str) -> LiveColumn {
        LiveColumn { sql_type: t.into(), not_null: nn, default: d.into() }
    }

    fn snapshot() -> Snapshot {
        let mut s = Snapshot::default();
        s.schemas.insert("public".into(), LiveSchema { usage: true, comment: String::new() });
        s.schemas.insert("locked".into(), LiveSchema { usage: false, comment: String::new() });
        let ours = "Users [chant managed-by=chant stack=proj env=prod]";
        for r in [
            rel("public", "users", 'r', ours, None),
            rel("public", "users_pkey", 'i', "", Some("public.users")),
            rel("public", "old", 'r', "[chant managed-by=chant stack=proj env=prod]", None),
            rel("public", "theirs", 'r', "", None),
            rel("public", "theirs_pkey", 'i', "", Some("public.theirs")),
            rel("locked", "secret", 'r', "", None),
        ] {
            s.relations.insert(r.entity(), r);
        }
        s.columns.insert(
            "public.users".into(),
            vec![("id".into(), col("bigint", true, "")), ("extra".into(), col("text", false, ""))],
        );
        s
    }

    fn declaration() -> PostgresDeclaration {
        PostgresDeclaration::new()
            .table(
                Table::new("public", "users")
                    .column(Column::new("id", "bigint").not_null())
                    .column(Column::new("email", "text"))
                    .comment("Users"),
            )
            .table(Table::new("locked", "secret").column(Column::new("id", "bigint")))
            .table(Table::new("public", "missing").column(Column::new("id", "bigint")))
            .materialized_view("public", "stats")
    }

    #[test]
    fn every_verdict_from_one_snapshot() {
        let id = identity();
        let ctx = ReadContext { identity: &id, owned_only: false, address: "postgres://app@127.0.0.1:1/app" };
        let d = declaration();
        let o = observation(&d, &snapshot(), &ctx);
        let cs = build_change_set("postgres", &d.entities(), &o, &LastApply::none());
        let action = |n: &str| cs.entry(n).map(|e| e.action);
        assert_eq!(action("public"), Some(ChangeAction::Noop));
        assert_eq!(action("public.users"), Some(ChangeAction::Noop));
        assert_eq!(action("public.users.id"), Some(ChangeAction::Noop));
        assert_eq!(action("public.users.email"), Some(ChangeAction::Create));
        assert_eq!(action("public.users.extra"), Some(ChangeAction::Adopt), "columns are never deleted");
        assert_eq!(action("public.users_pkey"), Some(ChangeAction::Runtime));
        assert_eq!(action("public.missing"), Some(ChangeAction::Create));
        assert_eq!(action("public.old"), Some(ChangeAction::Delete));
        assert_eq!(action("public.theirs"), Some(ChangeAction::Adopt));
        assert_eq!(action("public.theirs_pkey"), None, "indexes of undeclared tables are not reported");
        assert_eq!(action("locked.secret"), Some(ChangeAction::Unobserved));
        assert_eq!(o.unobserved["locked.secret"].reason, UnobservedReason::ReadFailed);
        assert_eq!(o.unobserved["locked.secret.id"].reason, UnobservedReason::ReadFailed);
        assert_eq!(o.unobserved["locked"].reason, UnobservedReason::ReadFailed);
        assert_eq!(o.unobserved["public.stats"].reason, UnobservedReason::UnsupportedKind);
        assert_eq!(o.resources["public.users"].marker, Some(Marker::new("proj", "prod")));
        assert_eq!(o.resources["public.users"].properties.get(property::COMMENT).unwrap(), "Users");
    }

    #[test]
    fn the_owned_filter_withholds_what_is_not_chants() {
        let id = identity();
        let ctx = ReadContext { identity: &id, owned_only: true, address: "a" };
        let mut s = snapshot();
        s.relations.get_mut("public.users").unwrap().comment = String::new();
        let o = observation(&declaration(), &s, &ctx);
        assert_eq!(o.unobserved["public.users"].reason, UnobservedReason::Filtered);
        assert_eq!(o.unobserved["public.users.id"].reason, UnobservedReason::Filtered);
        assert!(!o.resources.contains_key("public.theirs"));
        assert_eq!(o.resources["public.old"].ownership, Ownership::Owned);
        assert!(o.resources.values().all(|r| r.ownership != Ownership::Unknown));
    }

    #[test]
    fn a_large_declaration_prepared_on_two_threads_observes_as_on_one() {
        let id = identity();
        let d = (0..PARALLEL_FROM + 10).fold(declaration(), |d, i| {
            d.table(
                Table::new("public", format!("t{i}"))
                    .column(Column::new("id", "bigint"))
                    .column(Column::new("b", "text")),
            )
        });
        let mut s = snapshot();
        for i in (0..PARALLEL_FROM).step_by(3) {
            let r = rel("public", &format!("t{i}"), 'r', "", None);
            s.columns.insert(
                r.entity(),
                vec![("id".into(), col("bigint", false, "")), ("z".into(), col("text", true, "''"))],
            );
            s.relations.insert(r.entity(), r);
        }
        for owned_only in [false, true] {
            let ctx = ReadContext { identity: &id, owned_only, address: "a" };
            let on_one = Prepared::new(
                queried(&d, ctx.address),
                column_verdicts(&d, &ctx, |entity| LiveColumns::Borrowed(s.columns_of(entity))),
            );
            assert_eq!(observation(&d, &s, &ctx), observation_prepared(&d, &s, &ctx, on_one));
        }
    }

    #[test]
    fn handed_over_columns_make_the_verdicts_borrowed_ones_make() {
        let id = identity();
        let d = PostgresDeclaration::new()
            .table(Table::new("public", "a").column(Column::new("id", "bigint")).column(Column::new("m", "text")))
            .table(Table::new("public", "b").column(Column::new("x", "int")));
        let mut s = snapshot();
        // Read in column order, not name order; an undeclared column, a default, a table with
        // no live columns.
        s.columns.insert(
            "public.a".into(),
            vec![
                ("m".into(), col("text", true, "'x'::text")),
                ("id".into(), col("bigint", true, "")),
                ("extra".into(), col("integer", false, "")),
            ],
        );
        for owned_only in [false, true] {
            let ctx = ReadContext { identity: &id, owned_only, address: "a" };
            let borrowed = column_verdicts(&d, &ctx, |entity| LiveColumns::Borrowed(s.columns_of(entity)));
            let owned = column_verdicts(&d, &ctx, |entity| LiveColumns::Owned(s.columns_of(entity).to_vec()));
            assert_eq!(borrowed, owned);
            let names: Vec<&str> = owned[0].iter().map(|(name, _)| name.as_str()).collect();
            let expected = if owned_only {
                vec!["public.a.id", "public.a.m"]
            } else {
                vec!["public.a.extra", "public.a.id", "public.a.m"]
            };
            assert_eq!(names, expected);
            assert_eq!(owned[0][owned[0].len() - 1].1.properties.get(property::DEFAULT).unwrap(), "'x'::text");
            assert!(owned[1].is_empty());
        }
    }

    #[test]
    fn a_map_built_from_a_list_keeps_the_last_of_equal_names_as_inserting_did() {
        let items = vec![("b".to_owned(), 1), ("a".to_owned(), 2), ("b".to_owned(), 3), ("c".to_owned(), 4)];
        let mut inserted = BTreeMap::new();
        for (k, v) in items.clone() {
            inserted.insert(k, v);
        }
        assert_eq!(map_of(items), inserted);
        assert_eq!(inserted["b"], 3);
    }
}
