//! The change stream's subscribers: every connection that asked to `watch`, each fed by its own
//! writer from a bounded queue, so a watcher that stops reading (a `box operator` under Ctrl-Z)
//! never holds up the daemon.
//!
//! Publishing an event only queues it (never blocking, never writing to a socket), so it is safe
//! under the service table's lock. Each watcher's writer runs on that watcher's connection
//! thread and gives one write at most [`WRITE_TIMEOUT`]. A watcher whose queue is full (it fell
//! [`QUEUE`] events behind) or whose write failed or timed out is dropped: its connection is
//! shut down, it reads the end of its stream, and it reconnects when it wants events again
//! ([`crate::subscribe_changes`] reports a lost stream and the operator keeps
//! its timer).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How many events a watcher may fall behind before it is dropped.
pub(crate) const QUEUE: usize = 256;
/// How long one write to a watcher may block before it is dropped.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// One subscriber: its queue, and its connection (to shut down when it is dropped).
struct Watcher {
    queue: SyncSender<Arc<str>>,
    conn: UnixStream,
}

/// The connections that asked to watch.
#[derive(Default)]
pub(crate) struct Watchers {
    list: Mutex<Vec<Watcher>>,
}

impl Watchers {
    fn lock(&self) -> MutexGuard<'_, Vec<Watcher>> {
        self.list.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `line` (one JSON event, without its newline) for every watcher, without blocking;
    /// drops a watcher that is [`QUEUE`] events behind or whose writer has ended.
    pub(crate) fn publish(&self, line: &str) {
        let line: Arc<str> = Arc::from(format!("{line}\n"));
        self.lock().retain(|w| match w.queue.try_send(Arc::clone(&line)) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                let _ = w.conn.shutdown(std::net::Shutdown::Both);
                false
            }
        });
    }

    /// Serves `conn` as a watcher until it is dropped or its peer goes away: registers it, then
    /// writes its queued events on the calling thread (the connection's own).
    pub(crate) fn serve(&self, conn: UnixStream) {
        let Ok(handle) = conn.try_clone() else { return };
        let (queue, events) = std::sync::mpsc::sync_channel(QUEUE);
        self.lock().push(Watcher { queue, conn: handle });
        write_events(conn, &events);
    }

    /// How many watchers are registered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Writes each queued event to `conn` until the queue is closed (the watcher was dropped) or a
/// write fails or times out; then closes the connection.
fn write_events(mut conn: UnixStream, events: &Receiver<Arc<str>>) {
    let _ = conn.set_write_timeout(Some(WRITE_TIMEOUT));
    for line in events {
        if conn.write_all(line.as_bytes()).is_err() {
            break;
        }
    }
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read};

    use super::*;

    #[test]
    fn a_watcher_that_stops_reading_is_dropped_and_never_blocks_a_publisher() {
        let watchers = Arc::new(Watchers::default());
        let (daemon_end, stalled) = UnixStream::pair().unwrap();
        let serving = {
            let w = Arc::clone(&watchers);
            std::thread::spawn(move || w.serve(daemon_end))
        };
        while watchers.len() == 0 {
            std::thread::yield_now();
        }
        // Far more than the socket buffer and the queue hold, with the reader stalled: every
        // publish returns at once (the old code blocked here, in a write, under the table lock).
        let line = format!("{{\"event\":\"started\",\"service\":\"{}\"}}", "x".repeat(200));
        for _ in 0..20_000 {
            watchers.publish(&line);
        }
        assert_eq!(watchers.len(), 0, "the stalled watcher is still registered");
        serving.join().unwrap();
        // It reads what was written, then the end of its stream: it knows to reconnect.
        let mut rest = Vec::new();
        BufReader::new(stalled).read_to_end(&mut rest).unwrap();
        assert!(rest.len() < 20_000 * line.len());

        // A watcher that keeps up gets every event.
        let (daemon_end, reader) = UnixStream::pair().unwrap();
        let w = Arc::clone(&watchers);
        std::thread::spawn(move || w.serve(daemon_end));
        while watchers.len() == 0 {
            std::thread::yield_now();
        }
        watchers.publish("{\"event\":\"stopped\"}");
        let mut got = String::new();
        BufReader::new(reader).read_line(&mut got).unwrap();
        assert_eq!(got, "{\"event\":\"stopped\"}\n");
    }
}
