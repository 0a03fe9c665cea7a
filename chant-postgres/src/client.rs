//! The one PostgreSQL client the lexicon uses: `tokio-postgres` on a current-thread runtime of
//! its own, with every wait bounded.
//!
//! A server that accepts TCP and never answers (a stuck pooler, a firewall that drops after the
//! handshake) would hold a synchronous `postgres::Client` for ever: that client bounds only the
//! TCP connect (`connect_timeout`), not the login exchange after it, and no query. Here both are
//! bounded ([`Bounds`]):
//!
//! - **the login** (TCP connect, startup, authentication) by [`Bounds::login`]: the DSN's
//!   `connect_timeout` when it gives one, else [`crate::CONNECT_TIMEOUT`], applied to the whole
//!   exchange as libpq applies it;
//! - **every query**, transaction start and commit by [`Bounds::query`]: the binding's
//!   `postgres_query_timeout` (`chant.toml`), else [`crate::QUERY_TIMEOUT`].
//!
//! A wait past its bound is [`Error::TimedOut`], naming what was waited for and the bound; the
//! connection ends with the client, its goodbye waited for one second at most (less when the
//! query bound is less), then its socket closed with its runtime, so nothing waits on long after
//! the caller gave up. A client ends its session as a client should: what it queued (a dropped
//! transaction's `ROLLBACK`) is sent, then `Terminate`, so the server logs no unexpected EOF.

use std::future::Future;
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio_postgres::error::{DbError, SqlState};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Config, IsolationLevel, NoTls, Row};

/// How long a login and each query may wait for the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The whole login exchange: TCP connect, startup and authentication.
    pub login: Duration,
    /// One query, transaction start, commit or rollback.
    pub query: Duration,
}

/// The errors of the bounded client.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server, or the client library, reported an error.
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    /// The server did not answer within the bound.
    #[error("the server did not answer {what} within {}", chant_core::duration::format(*.after))]
    TimedOut {
        /// What was waited for (`the login`, `a query`).
        what: &'static str,
        /// The bound.
        after: Duration,
    },
    /// The client's runtime could not be started.
    #[error("cannot start the PostgreSQL client's runtime")]
    Runtime(#[source] std::io::Error),
}

impl Error {
    /// Returns the SQLSTATE of a server error.
    pub fn code(&self) -> Option<&SqlState> {
        match self {
            Error::Postgres(e) => e.code(),
            _ => None,
        }
    }

    /// Returns the server's error, when it sent one.
    pub fn as_db_error(&self) -> Option<&DbError> {
        match self {
            Error::Postgres(e) => e.as_db_error(),
            _ => None,
        }
    }

    /// Returns true when the server did not answer within a bound.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::TimedOut { .. })
    }
}

/// Runs `work` on `runtime` for at most `after`.
fn bounded<T>(
    runtime: &Runtime,
    what: &'static str,
    after: Duration,
    work: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, Error> {
    // The timer is made inside the runtime, which drives it.
    match runtime.block_on(async { tokio::time::timeout(after, work).await }) {
        Ok(answer) => answer.map_err(Error::Postgres),
        Err(_) => Err(Error::TimedOut { what, after }),
    }
}

/// One connection, with its runtime. Dropping it ends the session as a client should: what is
/// still queued (the `ROLLBACK` of a dropped transaction) is sent, then the goodbye
/// (`Terminate`), within a bound.
pub struct Client {
    // Dropped before the session: the last handle on the connection goes, so the connection,
    // driven by the session as it ends, sends what is queued and says goodbye.
    client: tokio_postgres::Client,
    session: Session,
    query: Duration,
}

/// The runtime of one connection and the connection's task. Dropped (after its client), it
/// drives the connection until the server has its goodbye and the socket is closed, for at most
/// [`CLOSE_BOUND`] or the query bound, whichever is less; past it the socket is simply closed.
/// A socket closed unannounced is what a server logs as `unexpected EOF on client connection`,
/// `with an open transaction` when one was.
struct Session {
    runtime: Runtime,
    /// The connection's task: it ends once the goodbye is written and the socket closed.
    connection: tokio::task::JoinHandle<()>,
    /// How long the goodbye is waited for.
    close: Duration,
}

impl Drop for Session {
    fn drop(&mut self) {
        let Session { runtime, connection, close } = self;
        let _ = runtime.block_on(async { tokio::time::timeout(*close, connection).await });
    }
}

/// How long a dropped [`Client`] waits at most for the server to take its last messages.
const CLOSE_BOUND: Duration = Duration::from_secs(1);

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("query", &self.query).finish_non_exhaustive()
    }
}

/// Connects with `config` (no TLS), the whole login bounded by `bounds.login`.
///
/// # Errors
///
/// [`Error::TimedOut`] past the bound, [`Error::Postgres`] for a refused or failed login,
/// [`Error::Runtime`] when the runtime cannot start.
pub fn connect(config: &Config, bounds: Bounds) -> Result<Client, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(Error::Runtime)?;
    let (client, connection) = bounded(&runtime, "the login", bounds.login, config.connect(NoTls))?;
    // Driven whenever the runtime runs a query of this client, and by the session as it ends;
    // it ends with the socket.
    let connection = runtime.spawn(async move {
        let _ = connection.await;
    });
    let session = Session { runtime, connection, close: bounds.query.min(CLOSE_BOUND) };
    Ok(Client { client, session, query: bounds.query })
}

impl Client {
    /// Drops the client on a thread of its own, for a caller that has what it needs from the
    /// session and should not wait for the server to take its goodbye. When no thread can be
    /// had, it is dropped here, its goodbye waited for here.
    pub fn close_in_background(self) {
        let _ = std::thread::Builder::new().name("chant-pg-close".into()).spawn(move || drop(self));
    }

    fn runtime(&self) -> &Runtime {
        &self.session.runtime
    }

    /// Starts a transaction.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    pub fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        let Client { client, session, query } = self;
        let tx = bounded(&session.runtime, "BEGIN", *query, client.transaction())?;
        Ok(Transaction { tx, runtime: &session.runtime, query: *query })
    }

    /// Starts a read-only, repeatable-read transaction: one consistent snapshot.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    pub fn snapshot_transaction(&mut self) -> Result<Transaction<'_>, Error> {
        let Client { client, session, query } = self;
        let start = client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start();
        let tx = bounded(&session.runtime, "BEGIN", *query, start)?;
        Ok(Transaction { tx, runtime: &session.runtime, query: *query })
    }
}

/// A transaction of a [`Client`]; dropped without [`Transaction::commit`], it rolls back.
pub struct Transaction<'a> {
    tx: tokio_postgres::Transaction<'a>,
    runtime: &'a Runtime,
    query: Duration,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").field("query", &self.query).finish_non_exhaustive()
    }
}

impl Transaction<'_> {
    fn runtime(&self) -> &Runtime {
        self.runtime
    }

    /// Commits the transaction.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    pub fn commit(self) -> Result<(), Error> {
        bounded(self.runtime, "COMMIT", self.query, self.tx.commit())
    }

    /// Rolls the transaction back.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    pub fn rollback(self) -> Result<(), Error> {
        bounded(self.runtime, "ROLLBACK", self.query, self.tx.rollback())
    }

    /// Starts a savepoint named `name` inside this transaction.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    pub fn savepoint(&mut self, name: &str) -> Result<Transaction<'_>, Error> {
        let tx = bounded(self.runtime, "SAVEPOINT", self.query, self.tx.savepoint(name))?;
        Ok(Transaction { tx, runtime: self.runtime, query: self.query })
    }
}

/// The queries the lexicon's readers run, on a [`Client`] or a [`Transaction`] (bounded), or on
/// a caller's own `postgres` client or transaction (as that client waits).
pub trait GenericClient {
    /// Runs `sql` with `params` (prepared first) and returns its rows.
    ///
    /// # Errors
    ///
    /// [`Error::Postgres`] for what the server refused, [`Error::TimedOut`] past the bound.
    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error>;

    /// Runs `sql` with typed `params` in one round trip (no prepare) and returns its rows.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    fn query_typed(&mut self, sql: &str, params: &[(&(dyn ToSql + Sync), Type)]) -> Result<Vec<Row>, Error>;

    /// Runs `sql` (no parameters) in one round trip like [`GenericClient::query_typed`] and
    /// hands each row to `each` as it arrives, so that decoding the rows overlaps with the
    /// server producing the rest (a query without `ORDER BY` streams its rows). The first error
    /// `each` returns ends the query and is returned. A caller's own `postgres` client collects
    /// the rows first.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`], or what `each` returned.
    fn query_each(&mut self, sql: &str, each: &mut dyn FnMut(Row) -> Result<(), Error>) -> Result<(), Error> {
        self.query_typed(sql, &[])?.into_iter().try_for_each(each)
    }

    /// Runs `sql` and returns how many rows it changed.
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error>;

    /// Runs the statements of `sql` (the simple protocol, no parameters).
    ///
    /// # Errors
    ///
    /// As [`GenericClient::query`].
    fn batch_execute(&mut self, sql: &str) -> Result<(), Error>;
}

/// Implements [`GenericClient`] for a type with `runtime`, `query` and an inner client `$inner`.
macro_rules! bounded_client {
    ($ty:ty, $inner:ident) => {
        impl GenericClient for $ty {
            fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
                bounded(self.runtime(), "a query", self.query, self.$inner.query(sql, params))
            }

            fn query_typed(&mut self, sql: &str, params: &[(&(dyn ToSql + Sync), Type)]) -> Result<Vec<Row>, Error> {
                bounded(self.runtime(), "a query", self.query, self.$inner.query_typed(sql, params))
            }

            fn query_each(&mut self, sql: &str, each: &mut dyn FnMut(Row) -> Result<(), Error>) -> Result<(), Error> {
                let inner = &self.$inner;
                let rows = async move {
                    let no_params: [(&(dyn ToSql + Sync), Type); 0] = [];
                    let mut rows =
                        std::pin::pin!(inner.query_typed_raw(sql, no_params).await.map_err(Error::Postgres)?);
                    while let Some(row) =
                        std::future::poll_fn(|cx| futures_core::Stream::poll_next(rows.as_mut(), cx)).await
                    {
                        each(row.map_err(Error::Postgres)?)?;
                    }
                    Ok(())
                };
                match self.runtime().block_on(async { tokio::time::timeout(self.query, rows).await }) {
                    Ok(answer) => answer,
                    Err(_) => Err(Error::TimedOut { what: "a query", after: self.query }),
                }
            }

            fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
                bounded(self.runtime(), "a statement", self.query, self.$inner.execute(sql, params))
            }

            fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
                bounded(self.runtime(), "a statement", self.query, self.$inner.batch_execute(sql))
            }
        }
    };
}

bounded_client!(Client, client);
bounded_client!(Transaction<'_>, tx);

/// Implements [`GenericClient`] for a caller's own synchronous `postgres` client type.
macro_rules! sync_client {
    ($ty:ty) => {
        impl GenericClient for $ty {
            fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
                Ok(postgres::GenericClient::query(self, sql, params)?)
            }

            fn query_typed(&mut self, sql: &str, params: &[(&(dyn ToSql + Sync), Type)]) -> Result<Vec<Row>, Error> {
                Ok(postgres::GenericClient::query_typed(self, sql, params)?)
            }

            fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
                Ok(postgres::GenericClient::execute(self, sql, params)?)
            }

            fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
                Ok(postgres::GenericClient::batch_execute(self, sql)?)
            }
        }
    };
}

sync_client!(postgres::Client);
sync_client!(postgres::Transaction<'_>);
