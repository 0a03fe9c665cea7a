//! The live catalog, read from `pg_catalog` in a fixed number of queries ([`QUERIES`]) whatever
//! the size of the database: schemas (with the role's USAGE and their comments), relations (with
//! their comments, the table an index or sequence belongs to, and each table's toast table), and
//! the columns of every table.
//!
//! An observation reads it over two connections, in one snapshot: the first
//! connection's read-only, repeatable-read transaction exports its snapshot
//! (`pg_export_snapshot()`), the second imports it (`SET TRANSACTION SNAPSHOT`) and reads the
//! schemas and relations while the first reads the columns, as `pg_dump -j` shares one snapshot
//! among its workers. When the snapshot cannot be shared, the first connection reads everything
//! itself, still in one snapshot; a DSN of several hosts reads over one connection.
//!
//! Only `pg_catalog` is read: `information_schema` hides what the role cannot use, which would
//! turn an unreadable table into a false `create`. System schemas (`pg_catalog`,
//! `information_schema`, `pg_toast`, temporary schemas) are skipped.

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{Receiver, Sender, SyncSender};

use tokio_postgres::Config;

use crate::client::{self, Bounds, Client, GenericClient};

/// How many queries [`read`] issues, whatever the size of the database.
pub const QUERIES: usize = 3;

/// The schemas outside the system ones, as a condition on `n` (`pg_namespace`); a macro so the
/// queries below are `const` strings.
macro_rules! not_system {
    () => {
        "n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') \
         AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'"
    };
}

pub(super) const NOT_SYSTEM: &str = not_system!();

/// The schemas query: name, the role's USAGE, comment. Shared with the export's read.
pub const SCHEMAS: &str = concat!(
    "SELECT n.nspname::text, pg_catalog.has_schema_privilege(n.oid, 'USAGE'), coalesce(d.description, '') \
     FROM pg_catalog.pg_namespace n \
     LEFT JOIN pg_catalog.pg_description d ON d.objoid = n.oid \
          AND d.classoid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND d.objsubid = 0 \
     WHERE ",
    not_system!()
);

/// The relations query, one scan of `pg_class`: oid, schema, name, `relkind`, comment, the oid
/// of the table an index or owned sequence belongs to, and a table's toast table's oid; plus the
/// toast tables themselves (`relkind` `t` in `pg_toast`), so that [`read`] names them by oid
/// instead of joining `pg_class` twice more (what made this query three times slower).
pub const RELATIONS: &str = concat!(
    "SELECT c.oid, n.nspname::text, c.relname::text, c.relkind, coalesce(d.description, ''), \
            coalesce(i.indrelid, CASE WHEN c.relkind = 'S' THEN ( \
                SELECT dep.refobjid FROM pg_catalog.pg_depend dep \
                WHERE dep.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.objid = c.oid \
                  AND dep.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.deptype IN ('a', 'i') \
                ORDER BY dep.refobjid LIMIT 1) END), \
            c.reltoastrelid \
     FROM pg_catalog.pg_class c \
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
     LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid \
          AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0 \
     LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid \
     WHERE (c.relkind = 't' AND n.nspname = 'pg_toast') \
        OR (c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'i', 'I') AND ",
    not_system!(),
    ")"
);

/// A column's default as `pg_get_expr` prints it (empty when none), as a condition-free
/// expression on `a` (`pg_attribute`) and `ad` (`pg_attrdef`). A default cannot refer to a
/// column, so it is deparsed without its table as context (`relid` 0): with the table, each call
/// looks the table's name up in the syscache, which a fresh connection has cold (the columns
/// query took four times as long). A generated column's expression refers to columns and keeps
/// its table. The output is the same either way.
macro_rules! default_expr {
    () => {
        "coalesce(CASE WHEN a.attgenerated = '' THEN pg_catalog.pg_get_expr(ad.adbin, 0) \
         ELSE pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) END, '')"
    };
}

#[cfg(feature = "import")]
pub(super) const DEFAULT_EXPR: &str = default_expr!();

/// The columns query: each column of every table by the table's oid, with the table's schema
/// and name (read from each table's first row only), so that the columns can be turned into
/// verdicts before the relations are in (the two-connection read), and the column's number.
/// Unordered: the read (`read_columns`) groups the rows by table and puts each table's in column order,
/// so the server sends rows as it makes them (an `ORDER BY` held every row back until the last
/// was made, and sorted them) and the client decodes them meanwhile.
pub const COLUMNS: &str = concat!(
    "SELECT a.attrelid, a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, ",
    default_expr!(),
    ", n.nspname::text, c.relname::text, a.attnum FROM pg_catalog.pg_attribute a \
     JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
     LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum \
     WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND ",
    not_system!()
);

/// One live schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSchema {
    /// Whether the connected role has USAGE on it.
    pub usage: bool,
    /// Its comment (empty when none).
    pub comment: String,
}

/// One live relation of the kinds the lexicon reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRelation {
    /// Its schema.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// `pg_class.relkind` (`r`, `p`, `v`, `m`, `f`, `S`, `i`, `I`).
    pub relkind: char,
    /// Its comment (empty when none).
    pub comment: String,
    /// For an index or an owned sequence: the table it belongs to (`schema.table`).
    pub owner: Option<String>,
    /// For a table: its toast table (`pg_toast.<name>`), if any.
    pub toast: Option<String>,
}

impl LiveRelation {
    /// Returns the relation's entity name (`schema.name`).
    pub fn entity(&self) -> String {
        let mut entity = String::with_capacity(self.schema.len() + 1 + self.name.len());
        entity.push_str(&self.schema);
        entity.push('.');
        entity.push_str(&self.name);
        entity
    }

    /// Returns true for a table or a partitioned table.
    pub fn is_table(&self) -> bool {
        matches!(self.relkind, 'r' | 'p')
    }

    /// Returns the relation kind in words, as the `kind` property.
    pub fn kind_word(&self) -> &'static str {
        relkind_word(self.relkind)
    }
}

/// Returns a `relkind` in words.
pub fn relkind_word(relkind: char) -> &'static str {
    match relkind {
        'r' | 'p' => "table",
        'v' => "view",
        'm' => "materialized view",
        'f' => "foreign table",
        'S' => "sequence",
        'i' | 'I' => "index",
        _ => "relation",
    }
}

/// One live column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveColumn {
    /// Its type, as `format_type` prints it.
    pub sql_type: String,
    /// Whether it is `NOT NULL`.
    pub not_null: bool,
    /// Its default, as `pg_get_expr` prints it (empty when none).
    pub default: String,
}

/// Everything one read of the catalog found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Schemas by name.
    pub schemas: BTreeMap<String, LiveSchema>,
    /// Relations by entity name (`schema.name`).
    pub relations: BTreeMap<String, LiveRelation>,
    /// Columns by table entity name, then column name, in column order.
    pub columns: BTreeMap<String, Vec<(String, LiveColumn)>>,
    /// How many queries the read issued.
    pub queries: usize,
}

impl Snapshot {
    /// Returns the columns of the table `entity`.
    pub fn columns_of(&self, entity: &str) -> &[(String, LiveColumn)] {
        self.columns.get(entity).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Reads the catalog through `client` (a connection or a transaction): [`SCHEMAS`],
/// [`RELATIONS`] and [`COLUMNS`], in that order, each in one round trip (an unnamed statement
/// parsed, bound and executed in one message, rather than prepared, executed and closed).
///
/// # Errors
///
/// The first query that fails.
pub fn read(client: &mut impl GenericClient) -> Result<Snapshot, crate::client::Error> {
    let relations = read_relations(client)?;
    let columns = read_columns(client)?;
    Ok(relations.assemble(columns.columns))
}

/// The schemas and relations of one read, decoded and resolved (owners and toast tables by
/// name), waiting for the columns to be filed under their tables' names
/// ([`Relations::assemble`]).
#[derive(Debug)]
pub(super) struct Relations {
    /// Schemas by name.
    pub(super) schemas: BTreeMap<String, LiveSchema>,
    /// Relations by entity name.
    pub(super) relations: BTreeMap<String, LiveRelation>,
    /// Every table (and partitioned table) read, by oid as [`COLUMNS`] names them, with the
    /// position in `relations` (in name order) of the relation its entity name is the key of:
    /// its own, or, when another relation read earlier has the same entity name, that one's.
    /// Resolved to names only when the columns are filed ([`Relations::assemble`]), which an
    /// observation's read never does.
    tables: Vec<(u32, usize)>,
}

/// The columns of one read by table oid, in the order read (each table's in column order).
pub(super) type Columns = Vec<(u32, Vec<(String, LiveColumn)>)>;

/// The columns of one read ([`Columns`]) with each table's entity name as the columns query
/// names it (`schema.name`), in the same order: what an observation turns into verdicts while
/// the relations are still being read.
#[derive(Debug, Default)]
pub(super) struct NamedColumns {
    /// The columns by table oid.
    pub(super) columns: Columns,
    /// The entity name of each table of `columns`, at the same position.
    pub(super) names: Vec<String>,
}

/// One relation as read, before the relations are put in name order: its entity name, the
/// relation, its oid, the oid of its owner and of its toast table.
type ReadRelation = (String, LiveRelation, u32, Option<u32>, u32);

/// Runs [`SCHEMAS`] and [`RELATIONS`] through `client`, decodes their rows and resolves each
/// relation's owner and toast table by name (all a shared read's second connection does while
/// the first reads the columns).
pub(super) fn read_relations(client: &mut impl GenericClient) -> Result<Relations, crate::client::Error> {
    let mut schemas = BTreeMap::new();
    for row in client.query_typed(SCHEMAS, &[])? {
        schemas.insert(row.try_get(0)?, LiveSchema { usage: row.try_get(1)?, comment: row.try_get(2)? });
    }

    // The toast tables by oid, each already named as its table's `toast` (`pg_toast.<name>`).
    let mut toast_names: HashMap<u32, String> = HashMap::new();
    // Each relation in the order read; by oid, its place in that list. Decoded as the rows
    // arrive.
    let mut relations: Vec<ReadRelation> = Vec::new();
    let mut by_oid: HashMap<u32, usize> = HashMap::new();
    client.query_each(RELATIONS, &mut |row| {
        let oid: u32 = row.try_get(0)?;
        let relkind = char::from(row.try_get::<_, i8>(3)?.cast_unsigned());
        if relkind == 't' {
            let name: &str = row.try_get(2)?;
            let mut toast = String::with_capacity(9 + name.len());
            toast.push_str("pg_toast.");
            toast.push_str(name);
            toast_names.insert(oid, toast);
            return Ok(());
        }
        let relation = LiveRelation {
            schema: row.try_get(1)?,
            name: row.try_get(2)?,
            relkind,
            comment: row.try_get(4)?,
            owner: None,
            toast: None,
        };
        by_oid.insert(oid, relations.len());
        relations.push((relation.entity(), relation, oid, row.try_get(5)?, row.try_get(6)?));
        Ok(())
    })?;

    // Owners and toast tables by name, once every relation is read. An owner outside the read (a
    // system table, never a user's) still makes it owned.
    let owners: Vec<Option<String>> = relations
        .iter()
        .map(|(_, _, _, owner, _)| owner.map(|o| by_oid.get(&o).map(|&i| relations[i].0.clone()).unwrap_or_default()))
        .collect();
    for ((_, relation, _, _, toast), owner) in relations.iter_mut().zip(owners) {
        relation.owner = owner;
        // A toast table belongs to one table only: its name is moved there, not copied.
        relation.toast = toast_names.remove(toast);
    }
    // Of equal entity names (`a.b` + `c` and `a` + `b.c`) the first read stays, as it always has:
    // the positions sorted by name (stable, so equal names stay in the order read; sorting the
    // positions rather than the relations moves a word each instead of a whole relation), then
    // the later duplicates dropped. Every table read keeps its oid, under the name that stays.
    let mut order: Vec<usize> = (0..relations.len()).collect();
    order.sort_by(|&a, &b| relations[a].0.cmp(&relations[b].0));
    let mut slots: Vec<Option<ReadRelation>> = relations.into_iter().map(Some).collect();
    let mut kept: Vec<(String, LiveRelation)> = Vec::with_capacity(order.len());
    let mut tables = Vec::new();
    for i in order {
        let Some((entity, relation, oid, _, _)) = slots.get_mut(i).and_then(Option::take) else { continue };
        let duplicate = kept.last().is_some_and(|(last, _)| *last == entity);
        let position = if duplicate { kept.len() - 1 } else { kept.len() };
        if relation.is_table() {
            tables.push((oid, position));
        }
        if !duplicate {
            kept.push((entity, relation));
        }
    }
    // In name order already, without equal names: the map is built in one pass.
    let relations = kept.into_iter().collect();
    Ok(Relations { schemas, relations, tables })
}

/// A column as [`read_columns`] reads it: its number (`attnum`), name and value.
type NumberedColumn = (i16, String, LiveColumn);

/// Runs [`COLUMNS`] through `client` and decodes its rows as they arrive, grouped by table, the
/// tables in oid order and each table's columns in column order (the query leaves the order to
/// the server's plan).
pub(super) fn read_columns(client: &mut impl GenericClient) -> Result<NamedColumns, crate::client::Error> {
    // Per table in the order first read: its oid, entity name and columns with their numbers.
    let mut tables: Vec<(u32, String, Vec<NumberedColumn>)> = Vec::new();
    // By oid, the table's place in `tables`; the last one's is kept aside, as a plan that reads
    // each table's columns together (the usual one) asks for the same table row after row.
    let mut by_oid: HashMap<u32, usize> = HashMap::new();
    client.query_each(COLUMNS, &mut |row| {
        let table: u32 = row.try_get(0)?;
        let column = LiveColumn { sql_type: row.try_get(2)?, not_null: row.try_get(3)?, default: row.try_get(4)? };
        let entry = (row.try_get::<_, i16>(7)?, row.try_get::<_, String>(1)?, column);
        let at = match tables.last() {
            Some((oid, _, _)) if *oid == table => tables.len() - 1,
            _ => match by_oid.get(&table) {
                Some(&at) => at,
                None => {
                    let schema: &str = row.try_get(5)?;
                    let relation: &str = row.try_get(6)?;
                    let mut entity = String::with_capacity(schema.len() + 1 + relation.len());
                    entity.push_str(schema);
                    entity.push('.');
                    entity.push_str(relation);
                    by_oid.insert(table, tables.len());
                    tables.push((table, entity, Vec::new()));
                    tables.len() - 1
                }
            },
        };
        if let Some((_, _, list)) = tables.get_mut(at) {
            list.push(entry);
        }
        Ok(())
    })?;
    // In oid order, as an ordered query read them (of equal entity names, which one stays
    // depends on it).
    if !tables.is_sorted_by_key(|(oid, _, _)| *oid) {
        tables.sort_unstable_by_key(|(oid, _, _)| *oid);
    }
    let mut read = NamedColumns { columns: Vec::with_capacity(tables.len()), names: Vec::with_capacity(tables.len()) };
    for (oid, entity, mut list) in tables {
        if !list.is_sorted_by_key(|(number, _, _)| *number) {
            list.sort_unstable_by_key(|(number, _, _)| *number);
        }
        read.names.push(entity);
        read.columns.push((oid, list.into_iter().map(|(_, name, column)| (name, column)).collect()));
    }
    Ok(read)
}

impl Relations {
    /// Files `columns` under their tables' names: the snapshot of the read ([`QUERIES`]
    /// queries).
    pub(super) fn assemble(self, columns: Columns) -> Snapshot {
        let Relations { schemas, relations, tables } = self;
        let names: Vec<&String> = relations.keys().collect();
        let tables: HashMap<u32, &String> =
            tables.into_iter().filter_map(|(oid, position)| Some((oid, *names.get(position)?))).collect();
        // A table outside the read (never one of the kinds listed) files nothing. Inserting one
        // table at a time, the last of equal names would stay.
        let columns = columns
            .into_iter()
            .filter_map(|(table, list)| tables.get(&table).map(|&name| (name.clone(), list)))
            .collect();
        Snapshot { schemas, relations, columns, queries: QUERIES }
    }
}

/// Runs `read` in one read-only, repeatable-read transaction of `client` (one consistent
/// snapshot of the catalog) and commits it.
///
/// # Errors
///
/// The transaction's start, `read`'s error, or the commit's.
pub(super) fn in_one_snapshot<T>(
    client: &mut Client,
    read: impl FnOnce(&mut client::Transaction<'_>) -> Result<T, crate::client::Error>,
) -> Result<T, crate::client::Error> {
    let mut tx = client.snapshot_transaction()?;
    let answer = read(&mut tx)?;
    tx.commit()?;
    Ok(answer)
}

/// Begins the read-only, repeatable-read transaction of a shared read, as a statement: a
/// session's goodbye ends it on the server (`Terminate`), with no `ROLLBACK` to wait for.
const BEGIN_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// What the first connection of a shared read tells the second ([`second_reader`]).
#[derive(Debug)]
pub(super) enum Share {
    /// Import this exported snapshot and read the schemas and relations in it.
    Snapshot(String),
    /// The first connection was refused: read everything alone, in one snapshot of its own.
    Alone,
}

/// What the second connection of a shared read answers ([`second_reader`]).
#[derive(Debug)]
pub(super) enum SecondRead<B> {
    /// The schemas and relations, read in the first connection's snapshot, with what `beside`
    /// made of them.
    Relations(Relations, B),
    /// The whole read ([`read`] in one snapshot), done alone: the first connection was refused.
    Alone(Result<Snapshot, crate::client::Error>),
}

/// The half of [`read_shared`] a second connection does: connects with `config`, tells
/// `connected` whether it got in, then does what the first connection asks through `share`:
/// imports the snapshot the first one's transaction exports into a read-only, repeatable-read
/// transaction of its own, reads the schemas and relations in it and gives them to `beside`
/// (work done here, while the first connection is still reading the columns), or, when the
/// first was refused, the whole read alone. It answers `None` when anything fails on the shared
/// way (the connection, no snapshot offered, the import, a query): the first connection then
/// reads them itself, in its own transaction. What it read goes to `answer` first; only then
/// does this connection's session end (the client dropped), so the first never waits for that.
pub(super) fn second_reader<B>(
    config: &Config,
    bounds: Bounds,
    connected: SyncSender<bool>,
    share: &Receiver<Share>,
    beside: impl FnOnce(&Relations) -> B,
    answer: impl FnOnce(Option<SecondRead<B>>),
) {
    let client = client::connect(config, bounds);
    let _ = connected.send(client.is_ok());
    let Ok(mut client) = client else { return answer(None) };
    let Ok(request) = share.recv() else { return answer(None) };
    match request {
        Share::Snapshot(id) => {
            let imported = client
                .batch_execute(&format!("{BEGIN_SNAPSHOT}; SET TRANSACTION SNAPSHOT '{}'", id.replace('\'', "''")));
            let read = imported.and_then(|()| read_relations(&mut client)).ok().map(|relations| {
                let made = beside(&relations);
                SecondRead::Relations(relations, made)
            });
            answer(read);
        }
        Share::Alone => answer(Some(SecondRead::Alone(in_one_snapshot(&mut client, |tx| read(tx))))),
    }
    // Dropped once the answer is given: the session's goodbye ends its read-only transaction.
}

/// One reading of the catalog, in one snapshot ([`read_shared`]).
#[derive(Debug)]
pub(super) enum Read<P, B> {
    /// Over two connections: what each read, with what was made of it as soon as it was read
    /// (`meanwhile` of the columns, which it was handed, `beside` of the schemas and relations).
    Shared {
        /// The schemas and relations.
        relations: Relations,
        /// What `beside` made of them.
        made: B,
        /// What `meanwhile` made of the columns.
        early: P,
    },
    /// Over one connection.
    Whole(Snapshot),
}

impl<B> Read<NamedColumns, B> {
    /// The snapshot of the read ([`QUERIES`] queries) of a `meanwhile` that kept the columns as
    /// they were read, what `beside` made set aside.
    pub(super) fn snapshot(self) -> Snapshot {
        match self {
            Read::Shared { relations, early, .. } => relations.assemble(early.columns),
            Read::Whole(snapshot) => snapshot,
        }
    }
}

/// Reads the catalog like [`read`], in one snapshot, over two connections at the same time: `client`
/// opens a read-only, repeatable-read transaction, exports its snapshot
/// (`pg_export_snapshot()`, as `pg_dump -j` shares one) through `share` and runs [`COLUMNS`]
/// while a second connection ([`second_reader`], answered by `shared`) runs
/// [`SCHEMAS`] and [`RELATIONS`] in the same snapshot. The transaction stays open until
/// `shared` has returned, so the snapshot can be imported for as long as it is waited for, and
/// is then left to end with the session: the goodbye sent when the caller drops `client` ends it
/// on the server (it read only). When `shared` returns nothing (the second connection failed, or
/// was not waited for), `client` runs those two queries itself in its transaction; when the
/// server refuses to export, it reads alone in a new transaction.
/// Either way the snapshot is one reading of the catalog, in [`QUERIES`] queries.
///
/// `meanwhile` is handed the columns as soon as they are read, before the relations are waited
/// for: what it makes there is made while the second connection may still be reading. `shared`
/// answers the relations with what the second connection's `beside` made of them; when the
/// first connection reads them itself, `beside` is called here. Both reads are returned with
/// what was made of them ([`Read::Shared`]); when the export failed, the read goes the
/// one-connection way ([`Read::Whole`]).
///
/// # Errors
///
/// The first query (or the transaction's start, the `ROLLBACK` after a refused export, or the
/// commit of a read alone) that fails on `client`.
pub(super) fn read_shared<P, B>(
    client: &mut Client,
    share: Sender<Share>,
    shared: impl FnOnce() -> Option<(Relations, B)>,
    meanwhile: impl FnOnce(NamedColumns) -> P,
    beside: impl FnOnce(&Relations) -> B,
) -> Result<Read<P, B>, crate::client::Error> {
    // Begun as a statement, not as a `Transaction` of the client, which would queue a `ROLLBACK`
    // when dropped and hold the session's goodbye for its answer.
    client.batch_execute(BEGIN_SNAPSHOT)?;
    let exported = client
        .query_typed("SELECT pg_catalog.pg_export_snapshot()", &[])
        .ok()
        .and_then(|rows| rows.first().and_then(|row| row.try_get::<_, String>(0).ok()));
    let Some(id) = exported else {
        // The export failed (and took the transaction with it): no second reader.
        drop(share);
        client.batch_execute("ROLLBACK")?;
        return in_one_snapshot(client, |tx| read(tx)).map(Read::Whole);
    };
    // The second reader waits for this snapshot and nothing else: its channel closes here.
    let _ = share.send(Share::Snapshot(id));
    drop(share);
    let c = read_columns(client)?;
    let early = meanwhile(c);
    let (relations, made) = match shared() {
        Some(answer) => answer,
        None => {
            let relations = read_relations(client)?;
            let made = beside(&relations);
            (relations, made)
        }
    };
    // Everything is read. The read-only transaction is left open: the session's goodbye
    // (`Terminate`, when the caller drops `client`) ends it on the server, with nothing to wait for.
    Ok(Read::Shared { relations, made, early })
}
