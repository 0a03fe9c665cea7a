//! The HTTP transport: a POST of the rendered request to the engine's URL with a bearer token.
//!
//! Redirects are never followed (a 3xx is `engine-unreachable`: the token must not travel to an
//! address nobody configured), no proxy is taken from the environment, and the whole exchange
//! has one timeout. Without a token set the transport is never built, so nothing is sent. The
//! token goes in the `Authorization` header and nowhere else; whatever the engine sends back has
//! it scrubbed out before chant keeps any of it. `https://` goes through rustls with the
//! webpki roots (the `tls` feature; a build without it refuses such an engine, naming the
//! feature); a failed handshake is `engine-unreachable`, never a downgrade to plain HTTP.

use std::io::Read;

use super::{TransportOptions, Wire, WireCondition, wire_refusal};
use crate::behaviour::engine::{EngineAddress, EnvVars, Resolved, token_from};
use crate::behaviour::refusal::Refusal;

/// The most of an error body kept for a refusal's detail.
const ERROR_BODY_BYTES: u64 = 4096;

/// Sends requests to an `http://` or `https://` engine.
#[derive(Debug)]
pub struct HttpTransport {
    wire: Wire,
    options: TransportOptions,
}

impl HttpTransport {
    /// Creates the transport for `engine`, reading the token chain from `env`.
    ///
    /// # Errors
    ///
    /// The `no-engine` refusal naming the token chain when no token is set.
    pub fn new(
        lexicon: &str,
        engine: Resolved<EngineAddress>,
        env: &EnvVars,
        options: TransportOptions,
    ) -> Result<Self, Refusal> {
        let token = token_from(lexicon, env);
        let wire = Wire { lexicon: lexicon.to_owned(), engine, token };
        if wire.token.is_none() {
            return Err(wire_refusal(&wire, WireCondition::NoToken));
        }
        Ok(HttpTransport { wire, options })
    }

    /// Returns who is on the other end.
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    fn exchange(&self, body: &[u8]) -> Result<String, WireCondition> {
        let Some(token) = &self.wire.token else {
            return Err(WireCondition::NoToken);
        };
        if let Some(why) = chant_lexicon::http::tls_refusal(self.wire.engine.value.as_str()) {
            return Err(WireCondition::Connect(why));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.options.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .build()
            .into();
        let sent = agent
            .post(self.wire.engine.value.as_str())
            .header("authorization", format!("Bearer {}", token.value.expose_secret()))
            .header("content-type", "application/json")
            .send(body);
        let mut response = match sent {
            Ok(response) => response,
            Err(ureq::Error::Timeout(_)) => return Err(WireCondition::Timeout(self.options.timeout)),
            Err(e) => return Err(WireCondition::Connect(e.to_string())),
        };
        let code = response.status().as_u16();
        if (300..400).contains(&code) {
            let location =
                response.headers().get("location").map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
            return Err(WireCondition::Redirect { code, location });
        }
        if !(200..300).contains(&code) {
            let mut excerpt = Vec::new();
            let _ = response.body_mut().as_reader().take(ERROR_BODY_BYTES).read_to_end(&mut excerpt);
            return Err(WireCondition::Status { code, body: String::from_utf8_lossy(&excerpt).into_owned() });
        }
        match response.body_mut().with_config().limit(self.options.max_answer_bytes).read_to_string() {
            Ok(text) => Ok(text),
            Err(ureq::Error::Timeout(_)) => Err(WireCondition::Timeout(self.options.timeout)),
            Err(e) => Err(WireCondition::Unparseable(e.to_string())),
        }
    }
}

impl super::Transport for HttpTransport {
    fn send(&self, body: &[u8]) -> Result<String, Refusal> {
        self.exchange(body).map(|text| self.wire.scrub(&text)).map_err(|c| wire_refusal(&self.wire, c))
    }
}
