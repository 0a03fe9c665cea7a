//! A throw-away PostgreSQL cluster for the postgres tests: one per run of the test binary
//! (started on first use, behind a `OnceLock`), a separate database per test, and a non-superuser
//! role the tests connect as.
//!
//! Follows `shared/reference/postgres-cluster.md`: the server binaries come from the newest
//! `/usr/lib/postgresql/*/bin` (install them with `.ci/postgres.sh`); as root, `initdb` and
//! `pg_ctl` run as the `postgres` user through `/usr/sbin/runuser`; the cluster lives under a
//! short `/tmp` directory (the socket path limit), uses scram-sha-256 over TCP on 127.0.0.1 (so a
//! wrong password is refused for real), fsync off, and `max_locks_per_transaction=512`. A
//! watchdog started with `setsid` stops the server and removes the directory once this test
//! process has exited. If the server cannot start, every test that needs it fails with the log.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The role the tests connect as: LOGIN, not a superuser, owner of each test database.
pub const APP_ROLE: &str = "chant_app";

/// A running cluster.
pub struct Cluster {
    /// The server binaries' directory.
    pub bin: PathBuf,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    /// The superuser's password.
    pub super_password: String,
    /// The app role's password.
    pub app_password: String,
    /// The server's log file, each line prefixed with its time, `[<pid>]` and `db=<database> `.
    pub log: PathBuf,
    /// The data directory (its `postmaster.pid` names the server's process).
    pub data: PathBuf,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// Returns the cluster, starting it on first use; panics with the reason when it cannot start.
pub fn cluster() -> &'static Cluster {
    match CLUSTER.get_or_init(start) {
        Ok(c) => c,
        Err(e) => panic!("the PostgreSQL test cluster could not start: {e}"),
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false)
}

fn server_bin() -> Result<PathBuf, String> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("no /usr/lib/postgresql ({e}); install the server with .ci/postgres.sh"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).ok_or_else(|| {
        "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; install them with .ci/postgres.sh".into()
    })
}

/// Runs a server binary, as the `postgres` user when we are root.
fn as_server(base: &Path, program: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = if is_root() {
        let mut c = Command::new("/usr/sbin/runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = cmd
        .args(args)
        .current_dir(base)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() { Ok(text) } else { Err(format!("{} failed: {text}", program.display())) }
}

/// Returns a port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn random_hex() -> String {
    let bytes = std::fs::read("/proc/sys/kernel/random/uuid").unwrap_or_default();
    String::from_utf8_lossy(&bytes).trim().replace('-', "")
}

fn start() -> Result<Cluster, String> {
    let bin = server_bin()?;
    let base = PathBuf::from(format!("/tmp/chant-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    let super_password = random_hex();
    let app_password = random_hex();
    std::fs::write(base.join("pwfile"), format!("{super_password}\n")).map_err(|e| e.to_string())?;
    if is_root() {
        let out = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&base)
            .output()
            .map_err(|e| format!("chown: {e}"))?;
        if !out.status.success() {
            return Err(format!("chown failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    let data = base.join("data");
    let pwfile = format!("--pwfile={}", base.join("pwfile").display());
    as_server(
        &base,
        &bin.join("initdb"),
        &[
            "-D",
            &data.display().to_string(),
            "-U",
            "postgres",
            &pwfile,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ],
    )?;
    let port = free_port();
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
         -c full_page_writes=off -c max_locks_per_transaction=512 -c max_connections=200 \
         -c log_line_prefix='%m [%p] db=%d '",
        base.display()
    );
    let log = base.join("logfile");
    if let Err(e) = as_server(
        &base,
        &bin.join("pg_ctl"),
        &[
            "-D",
            &data.display().to_string(),
            "-w",
            "-t",
            "60",
            "-l",
            &log.display().to_string(),
            "-o",
            &options,
            "start",
        ],
    ) {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        return Err(format!("{e}\nserver log:\n{log}"));
    }
    // Stop and remove the cluster once this process is gone, whatever way it ends.
    let watchdog = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {runuser}'{pg_ctl}' -D '{data}' -m immediate stop >/dev/null 2>&1; rm -rf '{base}'",
        pid = std::process::id(),
        runuser = if is_root() { "/usr/sbin/runuser -u postgres -- " } else { "" },
        pg_ctl = bin.join("pg_ctl").display(),
        data = data.display(),
        base = base.display(),
    );
    Command::new("setsid")
        .args(["sh", "-c", &watchdog])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the cluster's watchdog: {e}"))?;
    let cluster = Cluster { bin, port, super_password, app_password, log, data };
    let mut admin = cluster.superuser("postgres").map_err(|e| format!("cannot connect as the superuser: {e}"))?;
    admin
        .batch_execute(&format!(
            "CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '{}'",
            cluster.app_password
        ))
        .map_err(|e| format!("cannot create the app role: {e}"))?;
    Ok(cluster)
}

impl Cluster {
    /// The CPU time (user + system) the server's processes have used so far: the postmaster's
    /// own and that of its children it has reaped (each backend once it has exited), from
    /// `/proc` (in clock ticks of 10 ms). `None` when the server's process cannot be read.
    pub fn server_cpu(&self) -> Option<std::time::Duration> {
        let pid = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        crate::cpu_time(pid.lines().next()?.trim(), true)
    }

    /// Connects to `db` as the superuser over TCP.
    pub fn superuser(&self, db: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::from_str(&format!(
            "postgres://postgres:{}@127.0.0.1:{}/{db}",
            self.super_password, self.port
        ))?
        .connect(postgres::NoTls)
    }

    /// Creates a fresh database owned by the app role and returns its name.
    pub fn database(&self, prefix: &str) -> String {
        let name = format!("{prefix}_{}_{}", std::process::id(), NEXT_DB.fetch_add(1, Ordering::SeqCst));
        let mut admin = self.superuser("postgres").unwrap();
        admin.batch_execute(&format!("CREATE DATABASE {name} OWNER {APP_ROLE}")).unwrap();
        name
    }

    /// Returns the app role's DSN for `db`.
    pub fn dsn(&self, db: &str) -> String {
        format!("postgres://{APP_ROLE}:{}@127.0.0.1:{}/{db}", self.app_password, self.port)
    }

    /// Returns the address of `db` as chant renders it (no password).
    pub fn address(&self, db: &str) -> String {
        format!("postgres://{APP_ROLE}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL in `db` as the superuser.
    pub fn as_superuser(&self, db: &str, sql: &str) {
        self.superuser(db).unwrap().batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Runs SQL in `db` as the app role.
    pub fn as_app(&self, db: &str, sql: &str) {
        let mut c = postgres::Config::from_str(&self.dsn(db)).unwrap().connect(postgres::NoTls).unwrap();
        c.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Runs one query in `db` as the superuser and returns the first column of every row.
    pub fn strings(&self, db: &str, sql: &str) -> Vec<String> {
        self.superuser(db).unwrap().query(sql, &[]).unwrap().iter().map(|r| r.get::<_, String>(0)).collect()
    }

    /// Runs `pgbench -i` against `db` as the app role.
    pub fn pgbench_init(&self, db: &str) {
        self.pgbench_init_with(db, &[]);
    }

    /// Runs `pgbench -i` with `extra` options (`--foreign-keys`) against `db` as the app role.
    pub fn pgbench_init_with(&self, db: &str, extra: &[&str]) {
        let out = Command::new(self.bin.join("pgbench"))
            .args(["-i", "-q", "-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", APP_ROLE])
            .args(extra)
            .arg(db)
            .env("PGPASSWORD", &self.app_password)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "pgbench -i failed: {}", String::from_utf8_lossy(&out.stderr));
    }
}
