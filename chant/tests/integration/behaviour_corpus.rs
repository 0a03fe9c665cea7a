//! The corpus test of the screening name layer: every property key of two large real schemas,
//! each holding the same 12-character value that is not a reference, goes through
//! `screen_request`; the refusals must equal a reviewed list of keys that really name
//! credentials, no more and no fewer.
//!
//! No crate in reach ships a real schema's property names, so the two lists below are fixtures
//! extracted once and committed:
//!
//! - [`POSTGRES_CATALOG_COLUMNS`]: every distinct column name of the tables and views in the
//!   `pg_catalog` schema of PostgreSQL 15.18 (Debian 15.18-0+deb12u1), read from a freshly
//!   `initdb`ed cluster with `SELECT DISTINCT a.attname FROM pg_attribute a JOIN pg_class c ON
//!   a.attrelid = c.oid WHERE c.relnamespace = 'pg_catalog'::regnamespace AND a.attnum > 0 AND NOT
//!   a.attisdropped AND c.relkind IN ('r', 'v')` (900 names).
//! - [`KUBERNETES_PROPERTIES`]: every distinct JSON property name of the Kubernetes OpenAPI
//!   definitions, as carried in the `attribute_map` of each model class of the official Python
//!   client `kubernetes` 37.0.2 on PyPI (generated from the Kubernetes OpenAPI spec; 989 names).
//!
//! The reviewed list, [`REVIEWED_CREDENTIAL_KEYS`], was built by reading every key of both lists
//! that mentions a password, secret, token, key, credential or auth, and keeping those whose name
//! says that the value is itself a credential:
//!
//! - `rolpassword` (`pg_authid`, `pg_roles`) and `passwd` (`pg_shadow`, `pg_user`) hold role
//!   passwords;
//! - `secret`, `token` and `serviceAccountToken` name a secret or a token outright.
//!
//! and leaving out, among others: `prstoken` (a text-search parser's function), `maptokentype`,
//! `rolbypassrls`, `confkey`, `indkey`; `secretName`, `secretNamespace`, `secretRef`,
//! `secretKeyRef`, `secretFile`, `imagePullSecrets`, `secrets` and every `...SecretRef`
//! (references to a Secret), `automountServiceAccountToken` and `serviceAccountTokenInSecrets`
//! (flags), `tokenRequests` (audiences), `gmsaCredentialSpec`/`...Name` and
//! `credentialBundlePath` (specs and paths), `key`, `keyPath`, `topologyKey`, `pkixPublicKey` and
//! the other keys that are not secret keys, `authenticated`, `auth_method` and the `chapAuth...`
//! flags.

use chant::behaviour::{RefusalCause, Request, RequestEntity, TrafficLevel, screen_request};

/// The keys of both lists that really name credentials.
pub(crate) const REVIEWED_CREDENTIAL_KEYS: &[&str] =
    &["passwd", "rolpassword", "secret", "serviceAccountToken", "token"];

/// The one value every key holds: 12 characters, no known token format, not a reference.
const VALUE: &str = "q7Xv2mPa9LkR";

fn refused(keys: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for key in keys {
        let request = Request::new("corpus", TrafficLevel::rps(1.0).unwrap())
            .entity(RequestEntity::new("entity", "kind").prop(*key, VALUE));
        match screen_request(&request) {
            Ok(Some(refusal)) => {
                assert_eq!(refusal.cause(), RefusalCause::CredentialInRequest);
                out.push((*key).to_owned());
            }
            Ok(None) => {}
            Err(e) => panic!("{key} is a hard error: {e}"),
        }
    }
    out
}

#[test]
fn the_name_layer_refuses_exactly_the_reviewed_credential_keys_of_two_real_schemas() {
    assert!(POSTGRES_CATALOG_COLUMNS.len() > 800 && KUBERNETES_PROPERTIES.len() > 900);
    let mut all: Vec<String> = refused(POSTGRES_CATALOG_COLUMNS);
    all.extend(refused(KUBERNETES_PROPERTIES));
    all.sort();
    all.dedup();
    let mut reviewed: Vec<String> = REVIEWED_CREDENTIAL_KEYS.iter().map(|k| (*k).to_owned()).collect();
    reviewed.sort();
    let extra: Vec<&String> = all.iter().filter(|k| !reviewed.contains(k)).collect();
    let missed: Vec<&String> = reviewed.iter().filter(|k| !all.contains(k)).collect();
    assert!(
        extra.is_empty() && missed.is_empty(),
        "refused but not reviewed: {extra:?}; reviewed but not refused: {missed:?}"
    );
}

/// Column names of PostgreSQL 15.18's `pg_catalog` tables and views.
#[rustfmt::skip]
pub(crate) const POSTGRES_CATALOG_COLUMNS: &[&str] = &[
    "abbrev", "active", "active_pid", "active_time", "adbin", "address", "admin_option", "adnum", "adrelid",
    "aggcombinefn", "aggdeserialfn", "aggfinalextra", "aggfinalfn", "aggfinalmodify", "aggfnoid", "agginitval",
    "aggkind", "aggmfinalextra", "aggmfinalfn", "aggmfinalmodify", "aggminitval", "aggminvtransfn", "aggmtransfn",
    "aggmtransspace", "aggmtranstype", "aggnumdirectargs", "aggserialfn", "aggsortop", "aggtransfn", "aggtransspace",
    "aggtranstype", "allocated_size", "amhandler", "amname", "amopfamily", "amoplefttype", "amopmethod", "amopopr",
    "amoppurpose", "amoprighttype", "amopsortfamily", "amopstrategy", "amproc", "amprocfamily", "amproclefttype",
    "amprocnum", "amprocrighttype", "amtype", "analyze_count", "application_name", "applied", "apply_error_count",
    "archived_count", "attacl", "attalign", "attbyval", "attcacheoff", "attcollation", "attcompression",
    "attfdwoptions", "attgenerated", "atthasdef", "atthasmissing", "attidentity", "attinhcount", "attisdropped",
    "attislocal", "attlen", "attmissingval", "attname", "attnames", "attndims", "attnotnull", "attnum", "attoptions",
    "attrelid", "attstattarget", "attstorage", "atttypid", "atttypmod", "auth_method", "autoanalyze_count",
    "autovacuum_count", "avg_width", "backend_start", "backend_type", "backend_xid", "backend_xmin",
    "backup_streamed", "backup_total", "bits", "blk_read_time", "blk_write_time", "blks_exists", "blks_hit",
    "blks_read", "blks_written", "blks_zeroed", "block_distance", "blocks_done", "blocks_total", "boot_val",
    "buffers_alloc", "buffers_backend", "buffers_backend_fsync", "buffers_checkpoint", "buffers_clean",
    "bytes_processed", "bytes_total", "cache_size", "calls", "castcontext", "castfunc", "castmethod", "castsource",
    "casttarget", "catalog_xmin", "category", "cfgname", "cfgnamespace", "cfgowner", "cfgparser",
    "checkpoint_sync_time", "checkpoint_write_time", "checkpoints_req", "checkpoints_timed", "checksum_failures",
    "checksum_last_failure", "child_tables_done", "child_tables_total", "cipher", "classid", "classoid",
    "client_addr", "client_dn", "client_hostname", "client_port", "client_serial", "cluster_index_relid", "cmd",
    "collcollate", "collctype", "collencoding", "colliculocale", "collisdeterministic", "collname", "collnamespace",
    "collowner", "collprovider", "collversion", "command", "comment", "conbin", "condefault", "condeferrable",
    "condeferred", "conexclop", "confdelsetcols", "confdeltype", "conffeqop", "confirmed_flush_lsn", "confkey",
    "confl_bufferpin", "confl_deadlock", "confl_lock", "confl_snapshot", "confl_tablespace", "conflicts",
    "confmatchtype", "conforencoding", "confrelid", "confupdtype", "conindid", "coninhcount", "conislocal", "conkey",
    "conname", "connamespace", "conninfo", "connoinherit", "conowner", "conparentid", "conpfeqop", "conppeqop",
    "conproc", "conrelid", "context", "contoencoding", "contype", "contypid", "convalidated", "correlation",
    "creation_time", "current_child_table_relid", "current_locker_pid", "custom_plans", "cycle", "data", "data_type",
    "database", "datacl", "datallowconn", "datcollate", "datcollversion", "datconnlimit", "datctype", "datdba",
    "datfrozenxid", "daticulocale", "datid", "datistemplate", "datlocprovider", "datminmxid", "datname", "datoid",
    "dattablespace", "dbid", "deadlocks", "defaclacl", "defaclnamespace", "defaclobjtype", "defaclrole",
    "default_version", "definition", "dependencies", "deptype", "description", "dictinitoption", "dictname",
    "dictnamespace", "dictowner", "dicttemplate", "elem_count_histogram", "encoding", "encrypted", "enumlabel",
    "enumsortorder", "enumtypid", "enumvals", "error", "ev_action", "ev_class", "ev_enabled", "ev_qual", "ev_type",
    "evtenabled", "evtevent", "evtfoid", "evtname", "evtowner", "evttags", "expr", "exprs", "ext_stats_computed",
    "ext_stats_total", "extcondition", "extconfig", "external_id", "extname", "extnamespace", "extowner",
    "extra_desc", "extrelocatable", "extversion", "failed_count", "fastpath", "fdwacl", "fdwhandler", "fdwname",
    "fdwoptions", "fdwowner", "fdwvalidator", "flush_lag", "flush_lsn", "flushed_lsn", "flushes", "free_bytes",
    "free_chunks", "from_sql", "ftoptions", "ftrelid", "ftserver", "funcid", "funcname", "generic_plans", "gid",
    "granted", "grantor", "grolist", "groname", "grosysid", "gss_authenticated", "hasindexes", "hasrules",
    "hastriggers", "heap_blks_hit", "heap_blks_read", "heap_blks_scanned", "heap_blks_total", "heap_blks_vacuumed",
    "heap_tuples_scanned", "heap_tuples_written", "histogram_bounds", "hit", "ident", "idle_in_transaction_time",
    "idx_blks_hit", "idx_blks_read", "idx_scan", "idx_tup_fetch", "idx_tup_read", "increment_by", "indcheckxmin",
    "indclass", "indcollation", "index_rebuild_count", "index_relid", "index_vacuum_count", "indexdef", "indexname",
    "indexprs", "indexrelid", "indexrelname", "indimmediate", "indisclustered", "indisexclusion", "indislive",
    "indisprimary", "indisready", "indisreplident", "indisunique", "indisvalid", "indkey", "indnatts", "indnkeyatts",
    "indnullsnotdistinct", "indoption", "indpred", "indrelid", "inhdetachpending", "inherited", "inhparent",
    "inhrelid", "inhseqno", "initprivs", "installed", "installed_version", "io_depth", "is_binary", "is_dst",
    "is_holdable", "is_instead", "is_scrollable", "ispopulated", "issuer_dn", "kinds", "label", "lanacl", "laninline",
    "lanispl", "lanname", "lanowner", "lanplcallfoid", "lanpltrusted", "lanvalidator", "last_analyze",
    "last_archived_time", "last_archived_wal", "last_autoanalyze", "last_autovacuum", "last_failed_time",
    "last_failed_wal", "last_msg_receipt_time", "last_msg_send_time", "last_vacuum", "last_value", "latest_end_lsn",
    "latest_end_time", "leader_pid", "level", "line_number", "local_id", "local_lsn", "lockers_done", "lockers_total",
    "locktype", "loid", "lomacl", "lomowner", "map_name", "mapcfg", "mapdict", "mapseqno", "maptokentype",
    "matviewname", "matviewowner", "max_dead_tuples", "max_val", "max_value", "maxwritten_clean", "member", "min_val",
    "min_value", "mode", "most_common_base_freqs", "most_common_elem_freqs", "most_common_elems", "most_common_freqs",
    "most_common_val_nulls", "most_common_vals", "n_dead_tup", "n_distinct", "n_ins_since_vacuum", "n_live_tup",
    "n_mod_since_analyze", "n_tup_del", "n_tup_hot_upd", "n_tup_ins", "n_tup_upd", "name", "netmask", "nspacl",
    "nspname", "nspowner", "null_frac", "num_dead_tuples", "numbackends", "objid", "objname", "objnamespace",
    "objoid", "objsubid", "objtype", "off", "oid", "opcdefault", "opcfamily", "opcintype", "opckeytype", "opcmethod",
    "opcname", "opcnamespace", "opcowner", "opfmethod", "opfname", "opfnamespace", "opfowner", "oprcanhash",
    "oprcanmerge", "oprcode", "oprcom", "oprjoin", "oprkind", "oprleft", "oprname", "oprnamespace", "oprnegate",
    "oprowner", "oprrest", "oprresult", "oprright", "options", "owner", "page", "pageno", "paracl", "parameter_types",
    "parent", "parname", "partattrs", "partclass", "partcollation", "partdefid", "partexprs", "partitions_done",
    "partitions_total", "partnatts", "partrelid", "partstrat", "passwd", "pending_restart", "permissive",
    "pg_username", "phase", "pid", "plugin", "pnnspid", "pnpubid", "polcmd", "policyname", "polname", "polpermissive",
    "polqual", "polrelid", "polroles", "polwithcheck", "prattrs", "prefetch", "prepare_time", "prepared", "principal",
    "privtype", "proacl", "proallargtypes", "proargdefaults", "proargmodes", "proargnames", "proargtypes", "probin",
    "proconfig", "procost", "proisstrict", "prokind", "prolang", "proleakproof", "proname", "pronamespace",
    "pronargdefaults", "pronargs", "proowner", "proparallel", "proretset", "prorettype", "prorows", "prosecdef",
    "prosqlbody", "prosrc", "prosupport", "protrftypes", "provariadic", "provider", "provolatile", "prpubid",
    "prqual", "prrelid", "prsend", "prsheadline", "prslextype", "prsname", "prsnamespace", "prsstart", "prstoken",
    "puballtables", "pubdelete", "pubinsert", "pubname", "pubowner", "pubtruncate", "pubupdate", "pubviaroot", "qual",
    "query", "query_id", "query_start", "receive_start_lsn", "receive_start_tli", "received_lsn", "received_tli",
    "refclassid", "refobjid", "refobjsubid", "relacl", "relallvisible", "relam", "relation", "relchecks",
    "relfilenode", "relforcerowsecurity", "relfrozenxid", "relhasindex", "relhasrules", "relhassubclass",
    "relhastriggers", "relid", "relispartition", "relispopulated", "relisshared", "relkind", "relminmxid", "relname",
    "relnamespace", "relnatts", "relocatable", "reloftype", "reloptions", "relowner", "relpages", "relpartbound",
    "relpersistence", "relreplident", "relrewrite", "relrowsecurity", "reltablespace", "reltoastrelid", "reltuples",
    "reltype", "remote_lsn", "replay_lag", "replay_lsn", "reply_time", "requires", "reset_val", "restart_lsn",
    "rngcanonical", "rngcollation", "rngmultitypid", "rngsubdiff", "rngsubopc", "rngsubtype", "rngtypid", "roident",
    "rolbypassrls", "rolcanlogin", "rolconfig", "rolconnlimit", "rolcreatedb", "rolcreaterole", "roleid", "roles",
    "rolinherit", "rolname", "rolpassword", "rolreplication", "rolsuper", "rolvaliduntil", "roname", "rowfilter",
    "rowsecurity", "rulename", "safe_wal_size", "sample_blks_scanned", "sample_blks_total", "schema", "schemaname",
    "self_time", "sender_host", "sender_port", "sent_lsn", "seq_scan", "seq_tup_read", "seqcache", "seqcycle",
    "seqincrement", "seqmax", "seqmin", "seqno", "seqrelid", "seqstart", "seqtypid", "sequencename", "sequenceowner",
    "session_time", "sessions", "sessions_abandoned", "sessions_fatal", "sessions_killed", "setconfig", "setdatabase",
    "setrole", "setting", "short_desc", "size", "skip_fpw", "skip_init", "skip_new", "skip_rep", "slot_name",
    "slot_type", "source", "sourcefile", "sourceline", "spcacl", "spcname", "spcoptions", "spcowner", "spill_bytes",
    "spill_count", "spill_txns", "srrelid", "srsubid", "srsublsn", "srsubstate", "srvacl", "srvfdw", "srvid",
    "srvname", "srvoptions", "srvowner", "srvtype", "srvversion", "ssl", "staattnum", "stacoll1", "stacoll2",
    "stacoll3", "stacoll4", "stacoll5", "stadistinct", "stainherit", "stakind1", "stakind2", "stakind3", "stakind4",
    "stakind5", "stanullfrac", "stanumbers1", "stanumbers2", "stanumbers3", "stanumbers4", "stanumbers5", "staop1",
    "staop2", "staop3", "staop4", "staop5", "starelid", "start_value", "state", "state_change", "statement",
    "statistics_name", "statistics_owner", "statistics_schemaname", "stats_reset", "status", "stavalues1",
    "stavalues2", "stavalues3", "stavalues4", "stavalues5", "stawidth", "stream_bytes", "stream_count", "stream_txns",
    "stxddependencies", "stxdexpr", "stxdinherit", "stxdmcv", "stxdndistinct", "stxexprs", "stxkeys", "stxkind",
    "stxname", "stxnamespace", "stxoid", "stxowner", "stxrelid", "stxstattarget", "subbinary", "subconninfo",
    "subdbid", "subdisableonerr", "subenabled", "subid", "subname", "subowner", "subpublications", "subskiplsn",
    "subslotname", "substream", "subsynccommit", "subtwophasestate", "superuser", "sync_error_count", "sync_priority",
    "sync_state", "sys_name", "tablename", "tableowner", "tablespace", "tablespaces_streamed", "tablespaces_total",
    "temp_bytes", "temp_files", "temporary", "tgargs", "tgattr", "tgconstraint", "tgconstrindid", "tgconstrrelid",
    "tgdeferrable", "tgenabled", "tgfoid", "tginitdeferred", "tgisinternal", "tgname", "tgnargs", "tgnewtable",
    "tgoldtable", "tgparentid", "tgqual", "tgrelid", "tgtype", "tidx_blks_hit", "tidx_blks_read", "tmplinit",
    "tmpllexize", "tmplname", "tmplnamespace", "toast_blks_hit", "toast_blks_read", "total_bytes", "total_nblocks",
    "total_time", "total_txns", "transaction", "transactionid", "trffromsql", "trflang", "trftosql", "trftype",
    "truncates", "trusted", "tup_deleted", "tup_fetched", "tup_inserted", "tup_returned", "tup_updated", "tuple",
    "tuples_done", "tuples_excluded", "tuples_processed", "tuples_total", "two_phase", "typacl", "typalign",
    "typanalyze", "typarray", "typbasetype", "typbyval", "typcategory", "typcollation", "typdefault", "typdefaultbin",
    "typdelim", "type", "typelem", "typinput", "typisdefined", "typispreferred", "typlen", "typmodin", "typmodout",
    "typname", "typnamespace", "typndims", "typnotnull", "typoutput", "typowner", "typreceive", "typrelid", "typsend",
    "typstorage", "typsubscript", "typtype", "typtypmod", "umid", "umoptions", "umserver", "umuser", "unit",
    "usebypassrls", "useconfig", "usecreatedb", "used_bytes", "usename", "user_name", "userepl", "usesuper",
    "usesysid", "utc_offset", "vacuum_count", "valuntil", "vartype", "version", "viewname", "viewowner",
    "virtualtransaction", "virtualxid", "wait_event", "wait_event_type", "waitstart", "wal_buffers_full", "wal_bytes",
    "wal_distance", "wal_fpi", "wal_records", "wal_status", "wal_sync", "wal_sync_time", "wal_write",
    "wal_write_time", "with_check", "write_lag", "write_lsn", "written_lsn", "xact_commit", "xact_rollback",
    "xact_start", "xmin",
];

/// Property names of the Kubernetes OpenAPI definitions (Python client 37.0.2).
#[rustfmt::skip]
pub(crate) const KUBERNETES_PROPERTIES: &[&str] = &[
    "$ref", "$schema", "Port", "acceptedNames", "acceptedTypes", "accessMode", "accessModes", "acquireTime", "action",
    "active", "activeDeadlineSeconds", "add", "additionalItems", "additionalPrinterColumns", "additionalProperties",
    "address", "addressType", "addresses", "adminAccess", "admissionReviewVersions", "affinity", "aggregationRule",
    "all", "allNodes", "allOf", "allocatable", "allocateLoadBalancerNodePorts", "allocatedDevices",
    "allocatedResourceStatuses", "allocatedResources", "allocatedResourcesStatus", "allocation", "allocationMode",
    "allocationTimestamp", "allowMultipleAllocations", "allowPrivilegeEscalation", "allowVolumeExpansion", "allowed",
    "allowedTopologies", "annotations", "anyOf", "apiGroup", "apiGroups", "apiServerID", "apiVersion", "apiVersions",
    "appArmorProfile", "appProtocol", "applyConfiguration", "architecture", "args", "assigned", "attachError",
    "attachRequired", "attached", "attacher", "attachmentMetadata", "attestations", "attribute", "attributes",
    "audience", "audiences", "auditAnnotations", "authenticated", "automountServiceAccountToken", "available",
    "availableDevices", "availableReplicas", "averageUtilization", "averageValue", "awsElasticBlockStore",
    "azureDisk", "azureFile", "backend", "backoffLimit", "backoffLimitPerIndex", "basic", "beginRefreshAt",
    "behavior", "binaryData", "binaryVersion", "bindMountOptions", "bindingConditions", "bindingFailureConditions",
    "bindsToNode", "blockOwnerDeletion", "bool", "bools", "bootID", "borrowingLimitPercent", "boundObjectRef",
    "buildDate", "caBundle", "cachingMode", "capabilities", "capacity", "capacityKey", "capacityMultiplier",
    "categories", "causes", "cel", "cephfs", "certificate", "certificateChain", "certificateChainPath",
    "chapAuthDiscovery", "chapAuthSession", "cidr", "cidrs", "cinder", "claimName", "claimRef", "claims",
    "clientCIDR", "clientConfig", "clientIP", "clusterIP", "clusterIPs", "clusterRoleSelectors", "clusterScope",
    "clusterTrustBundle", "code", "collisionCount", "command", "commonEncodingVersion", "compatibilityGroups",
    "compiler", "completedIndexes", "completionMode", "completionTime", "completions", "component",
    "compositePodGroupTemplates", "concurrencyPolicy", "conditionType", "conditions", "config", "configMap",
    "configMapKeyRef", "configMapRef", "configSource", "constraints", "consumed", "consumedCapacity",
    "consumesCounters", "container", "containerID", "containerName", "containerPort", "containerResource",
    "containerRuntimeVersion", "containerStatuses", "containers", "continue", "controller",
    "controllerExpandSecretRef", "controllerPublishSecretRef", "controllerRef", "conversion",
    "conversionReviewVersions", "count", "counterSet", "counters", "creationTimestamp", "credentialBundlePath", "csi",
    "current", "currentCPUUtilizationPercentage", "currentHealthy", "currentMetrics", "currentNumberScheduled",
    "currentReplicas", "currentRevision", "currentVolumeAttributesClassName", "daemonEndpoints", "data", "dataSource",
    "dataSourceRef", "datasetName", "datasetUUID", "declaredFeatures", "decodableVersions", "default",
    "defaultBackend", "defaultMode", "defaultPartitionTypeAttribute", "defaultRequest", "defaultUser", "definitions",
    "deleteOptions", "deletionGracePeriodSeconds", "deletionTimestamp", "denied", "dependencies", "deprecated",
    "deprecatedCount", "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedSource",
    "deprecatedTopology", "deprecationWarning", "derivedAttributes", "describedObject", "description",
    "desiredHealthy", "desiredNumberScheduled", "desiredReplicas", "detachError", "details", "device",
    "deviceClassName", "deviceMultiplier", "devicePath", "deviceSelector", "devices", "directory",
    "disableResizePreemption", "diskName", "diskURI", "disruptedPods", "disruptionMode", "disruptionsAllowed",
    "distinctAttribute", "distinguisherMethod", "divisor", "dnsConfig", "dnsPolicy", "downwardAPI", "driver",
    "driverName", "drivers", "drop", "dryRun", "effect", "egress", "emptyDir", "emulationMajor", "emulationMinor",
    "emulationVersion", "enableServiceLinks", "encodingVersion", "endPort", "endpoints", "endpointsNamespace", "enum",
    "env", "envFrom", "ephemeral", "ephemeralContainerStatuses", "ephemeralContainers", "error", "errorCode",
    "evaluationError", "eventTime", "evictionResponders", "exactly", "example", "except", "excludeResourceRules",
    "exclusiveMaximum", "exclusiveMinimum", "exec", "exempt", "exitCode", "exitCodes", "expectedCompletionTime",
    "expectedPods", "expirationSeconds", "expirationTimestamp", "expression", "expressionWarnings",
    "extendedResourceClaimStatus", "extendedResourceName", "external", "externalDocs", "externalID", "externalIPs",
    "externalName", "externalTrafficPolicy", "extra", "failed", "failedIndexes", "failedJobsHistoryLimit",
    "failurePolicy", "failureThreshold", "fc", "features", "field", "fieldPath", "fieldRef", "fieldSelector",
    "fieldsType", "fieldsV1", "fileKeyRef", "finalizers", "finishedAt", "firstAvailable", "firstTimestamp",
    "flexVolume", "flocker", "forNodes", "forZones", "format", "freshness", "from", "fsGroup", "fsGroupChangePolicy",
    "fsGroupPolicy", "fsType", "fullyAvailableDevices", "fullyLabeledReplicas", "gang", "gateway",
    "gcePersistentDisk", "generateName", "generation", "gid", "gitCommit", "gitRepo", "gitTreeState", "gitVersion",
    "globalDefault", "glusterfs", "gmsaCredentialSpec", "gmsaCredentialSpecName", "goVersion", "gracePeriodSeconds",
    "group", "groupPriorityMinimum", "groupVersion", "groups", "grpc", "handSize", "handler", "hard",
    "hardwareAddress", "health", "healthCheckNodePort", "healthConditions", "healthStatus", "heartbeatTime", "hints",
    "holderIdentity", "host", "hostAliases", "hostIP", "hostIPC", "hostIPs", "hostNetwork", "hostPID", "hostPath",
    "hostPort", "hostProcess", "hostUsers", "hostname", "hostnameOverride", "hostnames", "hosts", "http", "httpGet",
    "httpHeaders", "id", "ignoreStoreReadErrorWithClusterBreakingPotential", "image", "imageID", "imagePullPolicy",
    "imagePullSecrets", "imageRef", "images", "immutable", "incomplete", "ingress", "ingressClassName",
    "initContainerStatuses", "initContainers", "initialDelaySeconds", "initiatorName", "inlineVolumeSpec",
    "insecureSkipTLSVerify", "int", "intent", "interfaceName", "internalTrafficPolicy", "ints", "involvedObject",
    "ip", "ipBlock", "ipFamilies", "ipFamilyPolicy", "ipMode", "ips", "iqn", "iscsi", "iscsiInterface", "items",
    "jobTemplate", "jsonPatch", "jsonPath", "kernelVersion", "key", "keyPath", "keyType", "keyring", "kind",
    "kubeProxyVersion", "kubeletConfigKey", "kubeletEndpoint", "kubeletVersion", "labelSelector", "labelSelectorPath",
    "labels", "lastHeartbeatTime", "lastKnownGood", "lastObservedTime", "lastPhaseTransitionTime", "lastProbeTime",
    "lastScaleTime", "lastScheduleTime", "lastState", "lastSuccessfulTime", "lastTimestamp", "lastTransitionTime",
    "lastUpdateTime", "leaseDurationSeconds", "leaseName", "leaseTransitions", "lendablePercent", "level",
    "lifecycle", "limit", "limitResponse", "limited", "limits", "linux", "listKind", "livenessProbe", "loadBalancer",
    "loadBalancerClass", "loadBalancerIP", "loadBalancerSourceRanges", "local", "localhostProfile", "lun",
    "machineID", "major", "managedBy", "managedFields", "manager", "manualSelector", "mapping", "matchAttribute",
    "matchConditions", "matchConstraints", "matchExpressions", "matchFields", "matchLabelExpressions",
    "matchLabelKeys", "matchLabels", "matchPolicy", "matchResources", "matchingPrecedence", "max",
    "maxExpirationSeconds", "maxFailedIndexes", "maxItems", "maxLength", "maxLimitRequestRatio", "maxProperties",
    "maxReplicas", "maxSkew", "maxSurge", "maxUnavailable", "maximum", "maximumVolumeSize", "medium", "message",
    "messageExpression", "metadata", "metric", "metrics", "min", "minAvailable", "minCompatibilityMajor",
    "minCompatibilityMinor", "minCount", "minDomains", "minGroupCount", "minItems", "minLength", "minProperties",
    "minReadySeconds", "minReplicas", "minimum", "minor", "mismatchLabelKeys", "mode", "modifyVolumeStatus",
    "monitors", "mountOptions", "mountPath", "mountPropagation", "multipleOf", "mutations", "name", "names",
    "nameservers", "namespace", "namespaceSelector", "namespaced", "namespaces", "networkData", "nfs", "nodeAffinity",
    "nodeAffinityPolicy", "nodeAllocatableResourceClaimStatuses", "nodeAllocatableResources",
    "nodeAllocatableUpdatePeriodSeconds", "nodeExpandSecretRef", "nodeID", "nodeInfo", "nodeName", "nodePort",
    "nodePublishSecretRef", "nodeSelector", "nodeSelectorTerms", "nodeStageSecretRef", "nodeTaintsPolicy",
    "nodeTopology", "nodeUID", "nominalConcurrencyShares", "nominatedNodeName", "nonResourceAttributes",
    "nonResourceRules", "nonResourceURLs", "not", "notAfter", "notBefore", "notReadyAddresses", "note", "nullable",
    "number", "numberAvailable", "numberMisscheduled", "numberReady", "numberUnavailable", "object", "objectSelector",
    "observedGeneration", "onExitCodes", "onPodConditions", "oneOf", "opaque", "openAPIV3Schema", "operatingSystem",
    "operation", "operations", "operator", "optional", "optionalOldSelf", "options", "ordinals", "orphanDependents",
    "os", "osImage", "overhead", "ownerReferences", "parallelism", "paramKind", "paramRef", "parameterNotFoundAction",
    "parameters", "parentCompositePodGroupName", "parentRef", "partiallyAvailableDevices", "partition",
    "partitionSummary", "partitionTypeAttribute", "patchType", "path", "pathType", "paths", "pattern",
    "patternProperties", "paused", "pdID", "pdName", "perContainer", "perDeviceNodeSelection", "perPod",
    "periodSeconds", "persistentVolumeClaim", "persistentVolumeClaimRetentionPolicy", "persistentVolumeName",
    "persistentVolumeReclaimPolicy", "phase", "photonPersistentDisk", "pingTime", "pkixPublicKey", "platform",
    "plural", "pod", "podAffinity", "podAffinityTerm", "podAntiAffinity", "podCIDR", "podCIDRs", "podCertificate",
    "podFailurePolicy", "podFixed", "podGroupName", "podGroupTemplates", "podIP", "podIPs", "podInfoOnMount",
    "podManagementPolicy", "podName", "podPreemptionPolicy", "podReplacementPolicy", "podSelector", "podUID", "pods",
    "policies", "policyName", "policyTypes", "pool", "poolCount", "poolName", "pools", "port", "portals", "ports",
    "portworxVolume", "postStart", "preStop", "preconditions", "preemptionPolicy", "preference",
    "preferredDuringSchedulingIgnoredDuringExecution", "preferredHolder", "preferredVersion", "prefix",
    "preserveUnknownFields", "preventPodSchedulingIfMissing", "priority", "priorityClassName",
    "priorityLevelConfiguration", "privileged", "procMount", "progressDeadlineSeconds", "projected",
    "proofOfPossession", "propagationPolicy", "properties", "protectionDomain", "protocol", "providerID",
    "provisioner", "publishNotReadyAddresses", "pullPolicy", "qosClass", "quantity", "queueLengthLimit", "queues",
    "queuing", "quobyte", "rawSelector", "rbd", "readOnly", "readOnlyRootFilesystem", "readinessGates",
    "readinessProbe", "ready", "readyReplicas", "reason", "reclaimPolicy", "recursiveReadOnly",
    "recursiveReadOnlyMounts", "reference", "regarding", "registry", "reinvocationPolicy", "related",
    "remainingItemCount", "renewTime", "replicas", "reportingComponent", "reportingController", "reportingInstance",
    "repository", "request", "requestMappings", "requestName", "requestPolicy", "requester", "requesters", "requests",
    "required", "requiredDuringSchedulingIgnoredDuringExecution", "requirements", "requiresRepublish", "reservedFor",
    "resize", "resizePolicy", "resource", "resourceAttributes", "resourceClaimName", "resourceClaimStatuses",
    "resourceClaimTemplateName", "resourceClaims", "resourceFieldRef", "resourceID", "resourceName", "resourceNames",
    "resourceRules", "resourceSliceCount", "resourceVersion", "resources", "responders", "responseKind",
    "restartCount", "restartPolicy", "restartPolicyRules", "results", "retryAfterSeconds", "revision",
    "revisionHistoryLimit", "role", "roleRef", "rollingUpdate", "rule", "rules", "runAsGroup", "runAsNonRoot",
    "runAsUser", "runAsUserName", "running", "runningInUserNamespace", "runtimeClassName", "runtimeHandlers", "scale",
    "scaleDown", "scaleIO", "scaleTargetRef", "scaleUp", "schedule", "schedulerName", "scheduling",
    "schedulingConstraints", "schedulingGates", "schedulingGroup", "schedulingPolicy", "schema", "scheme", "scope",
    "scopeName", "scopeSelector", "scopes", "seLinuxChangePolicy", "seLinuxMount", "seLinuxOptions", "searches",
    "seccompProfile", "seconds", "secret", "secretFile", "secretKeyRef", "secretName", "secretNamespace", "secretRef",
    "secrets", "securityContext", "selectPolicy", "selectableFields", "selector", "selectors", "selfLink", "series",
    "served", "servedVersions", "server", "serverAddress", "serverAddressByClientCIDRs", "service", "serviceAccount",
    "serviceAccountName", "serviceAccountToken", "serviceAccountTokenInSecrets", "serviceAccountUID", "serviceName",
    "serving", "sessionAffinity", "sessionAffinityConfig", "setHostnameAsFQDN", "shardInfo", "shareID", "shareName",
    "shareProcessNamespace", "shareableSummary", "sharedCounters", "shortNames", "sideEffects", "signal",
    "signerName", "single", "singular", "singularName", "singularResource", "sizeBytes", "sizeLimit",
    "skipNodeOperations", "sleep", "source", "sources", "spec", "specReplicasPath", "sslEnabled",
    "stabilizationWindowSeconds", "start", "startTime", "started", "startedAt", "startingDeadlineSeconds",
    "startupProbe", "state", "status", "statusReplicasPath", "stdin", "stdinOnce", "step", "stopSignal", "storage",
    "storageCapacity", "storageClassName", "storageHealth", "storageMode", "storagePolicyID", "storagePolicyName",
    "storagePool", "storageVersionHash", "storageVersions", "storageos", "storedVersions", "strategy", "string",
    "stringData", "strings", "stubPKCS10Request", "subPath", "subPathExpr", "subdomain", "subjects", "subresource",
    "subresources", "subsets", "succeeded", "succeededCount", "succeededIndexes", "successPolicy", "successThreshold",
    "successfulJobsHistoryLimit", "supplementalGroups", "supplementalGroupsPolicy", "suspend", "swap", "sysctls",
    "system", "systemUUID", "taint", "taints", "target", "targetCPUUtilizationPercentage", "targetContainerName",
    "targetPort", "targetPortal", "targetRef", "targetResponders", "targetVolumeAttributesClassName", "targetWWNs",
    "tcpSocket", "template", "templateName", "tenant", "terminated", "terminating", "terminatingReplicas",
    "terminationGracePeriodSeconds", "terminationMessagePath", "terminationMessagePolicy", "time", "timeAdded",
    "timeZone", "timeoutSeconds", "title", "tls", "to", "token", "tokenRequests", "tolerance", "tolerationSeconds",
    "tolerations", "topology", "topologyKey", "topologyKeys", "topologySpreadConstraints", "total", "totalDevices",
    "trafficDistribution", "trustBundle", "ttlSecondsAfterFinished", "tty", "type", "typeChecking", "uid",
    "unavailableDevices", "unavailableReplicas", "uncountedTerminatedPods", "unhealthyPodEvictionPolicy",
    "uniqueItems", "unschedulable", "unverifiedUserAnnotations", "updateRevision", "updateStrategy",
    "updatedNumberScheduled", "updatedReplicas", "url", "usages", "used", "user", "userAnnotations", "userInfo",
    "userNamespaces", "username", "validRange", "validValues", "validationActions", "validationError", "validations",
    "value", "valueExpression", "valueFrom", "values", "variables", "verb", "verbs", "version", "versionPriority",
    "versions", "volume", "volumeAttributes", "volumeAttributesClassName", "volumeBindingMode", "volumeClaimTemplate",
    "volumeClaimTemplates", "volumeDevices", "volumeHandle", "volumeHealth", "volumeID", "volumeLifecycleModes",
    "volumeMode", "volumeMounts", "volumeName", "volumeNamespace", "volumePath", "volumeStatus", "volumes",
    "volumesAttached", "volumesInUse", "vsphereVolume", "waiting", "warning", "webhook", "webhooks", "weight",
    "whenDeleted", "whenScaled", "whenUnsatisfiable", "windowsOptions", "workingDir", "workloadName", "workloadRef",
    "wwids", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations", "zone",
];
