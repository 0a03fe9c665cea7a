//! Real local behaviour engines for the behaviour tests: an HTTP engine on 127.0.0.1 (std
//! `TcpListener`, one thread, stopped when dropped) and a command engine written as a shell script
//! into a temporary directory. Both answer with [`model_answer`], a tiny deterministic model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// The token the tests give HTTP engines; it must never be printed.
pub(crate) const TOKEN: &str = "behaviour-test-token-7c0ffee5-d00d";

/// What one HTTP request to the engine carried.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) authorization: Option<String>,
    pub(crate) body: String,
}

/// How the HTTP engine answers.
pub(crate) enum Reply {
    /// A status and a body.
    Status(u16, String),
    /// A redirect to `location`.
    Redirect(u16, String),
    /// Keep the connection open without answering, until the client gives up.
    Hang,
}

/// An HTTP engine on a loopback port.
pub(crate) struct HttpEngine {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpEngine {
    /// Starts an engine that answers every request with `reply(request)`.
    pub(crate) fn start(reply: impl Fn(&Recorded) -> Reply + Send + 'static) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopped) = (Arc::clone(&requests), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    serve(stream, &reply, &seen);
                }
            }
        });
        HttpEngine { port, requests, stop, thread: Some(thread) }
    }

    /// Starts an engine that answers with the model.
    pub(crate) fn model() -> Self {
        HttpEngine::start(|r| Reply::Status(200, model_answer(&r.body)))
    }

    /// Returns the engine's URL.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/predict", self.port)
    }

    /// Returns every request received so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for HttpEngine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, reply: &impl Fn(&Recorded) -> Reply, seen: &Mutex<Vec<Recorded>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    let mut authorization = None;
    let mut line = String::new();
    let mut first = true;
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if first {
            first = false;
            continue;
        }
        if let Some((name, value)) = l.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_owned()),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let recorded = Recorded { authorization, body: String::from_utf8_lossy(&body).into_owned() };
    seen.lock().unwrap().push(recorded.clone());
    let mut stream = stream;
    let (code, extra, text) = match reply(&recorded) {
        Reply::Status(code, text) => (code, String::new(), text),
        Reply::Redirect(code, location) => (code, format!("Location: {location}\r\n"), String::new()),
        Reply::Hang => {
            // Blocks until the client closes the connection after its timeout.
            let mut sink = [0u8; 64];
            while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
            return;
        }
    };
    let head = format!(
        "HTTP/1.1 {code} Status\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
        text.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(text.as_bytes());
    let _ = stream.flush();
}

/// The test engine's model: a `file` entity costs 0.001 USD per hour per declared byte, with fixed
/// headroom; a name ending in `.bin` is a kind it has no model for; another kind is unsupported.
pub(crate) fn model_answer(request: &str) -> String {
    let request: Value = serde_json::from_str(request).unwrap();
    let at = request["traffic"].clone();
    let mut entities = serde_json::Map::new();
    let mut unpredicted = serde_json::Map::new();
    for entity in request["entities"].as_array().unwrap() {
        let name = entity["name"].as_str().unwrap().to_owned();
        if entity["kind"] != "file" || name.ends_with(".bin") {
            unpredicted.insert(name, json!({"reason": "unsupported-kind", "detail": "no model for this kind"}));
            continue;
        }
        let bytes = entity["props"]["bytes"].as_f64().unwrap_or(0.0);
        entities.insert(
            name,
            json!({
                "at": at,
                "provenance": {"engine": {"name": "test-engine", "version": "1", "tolerance": 0.1}, "basis": "modeled"},
                "cost": {"rate": "per-hour", "perHour": bytes * 0.001, "currency": "USD"},
                "headroom": {"cpu": 0.5, "latency": 0.25},
                "errorRate": 0.001,
                "resilience": {"failure": "one zone lost", "verdict": "survives"}
            }),
        );
    }
    json!({"version": "chant-behaviour/1", "entities": entities, "unpredicted": unpredicted}).to_string()
}

/// Writes an executable shell script `name` into `dir` and returns its path.
pub(crate) fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A `PATH` that finds programs in `dir` first, then the system's.
pub(crate) fn path_with(dir: &Path) -> String {
    format!("{}:/usr/bin:/bin", dir.display())
}

/// Returns a loopback port nothing listens on.
pub(crate) fn closed_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port()
}

/// Asserts that `text` does not hold the test token.
pub(crate) fn assert_no_token(text: &str) {
    assert!(!text.contains(TOKEN), "the token leaked: {text}");
}

/// Everything a prediction outcome prints: its Debug, its JSON and both renderings.
pub(crate) fn printed(outcome: &Result<chant::behaviour::Prediction, chant::behaviour::BehaviourError>) -> String {
    match outcome {
        Ok(p) => format!(
            "{p:?}\n{}\n{}\n{}",
            serde_json::to_string(p).unwrap(),
            chant::behaviour::render_prediction(p, true),
            chant::behaviour::render_prediction(p, false)
        ),
        Err(e) => format!("{e:?}\n{e}"),
    }
}
