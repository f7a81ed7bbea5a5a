//! `gradlab issuer bench`: starts an issuer in this process on a loopback port (SQLite in a
//! fresh temporary data directory, or the given PostgreSQL database), then drives it from
//! client threads over real HTTP: issuances, then credential look-ups; then verifies every
//! issued credential in process (signature and issuer key); then LTI launches and scores
//! (`lti::bench`). Prints throughput and p50 / p99 latency; a figure, not a test.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::client::Client;
use super::config::ServeConfig;
use super::lti::bench::{self as lti_bench, BenchPlatform};
use super::request::passing_request_body;
use super::server::serve_until;
use super::store::Store;
use super::IssuerError;
use gradlab_credential::did_web::DidDocument;
use gradlab_credential::verify::verify_credential;
use gradlab_quiz::bank::QuestionBank;

#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub database_url: Option<String>,
    pub clients: usize,
    pub issuances: usize,
    pub lookups: usize,
    /// LTI launches (each then posts a quiz score); 0 leaves LTI out.
    pub lti_launches: usize,
}

/// The bench issuer's public URL (never fetched: it names the tool in launches).
const BENCH_PUBLIC_URL: &str = "http://127.0.0.1";

/// The bench's data directory (SQLite file, throwaway key), removed however the bench ends.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One measured phase.
#[derive(Debug, Clone)]
pub struct Phase {
    pub name: &'static str,
    pub requests: usize,
    pub errors: usize,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

#[allow(
    clippy::disallowed_methods,
    reason = "the issuer is native only; the wasm build never compiles this module"
)]
fn now() -> Instant {
    Instant::now()
}

fn percentile(sorted: &[Duration], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() as f64 * fraction).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

/// Runs `total` requests from `clients` threads, each with its own client from `make_client`;
/// `request(client, i)` returns whether it succeeded.
fn drive<T: Send>(
    name: &'static str,
    clients: usize,
    total: usize,
    make_client: fn() -> Client,
    request: impl Fn(&Client, usize) -> Option<T> + Sync,
) -> (Phase, Vec<T>) {
    let started = now();
    let results: Vec<(Vec<Duration>, Vec<T>, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let request = &request;
                scope.spawn(move || {
                    let client = make_client();
                    let (mut latencies, mut outputs, mut errors) = (Vec::new(), Vec::new(), 0);
                    for i in (c..total).step_by(clients) {
                        let t = now();
                        let output = request(&client, i);
                        latencies.push(t.elapsed());
                        match output {
                            Some(o) => outputs.push(o),
                            None => errors += 1,
                        }
                    }
                    (latencies, outputs, errors)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut latencies: Vec<Duration> = results.iter().flat_map(|r| r.0.iter().copied()).collect();
    latencies.sort_unstable();
    let errors = results.iter().map(|r| r.2).sum();
    let outputs = results.into_iter().flat_map(|r| r.1).collect();
    let phase = Phase {
        name,
        requests: latencies.len(),
        errors,
        per_second: latencies.len() as f64 / seconds,
        p50_ms: percentile(&latencies, 0.50),
        p99_ms: percentile(&latencies, 0.99),
    };
    (phase, outputs)
}

/// LTI: launches against a stand-in platform (`lti::bench`), each session posting a passing
/// quiz; then the time until the platform has every score.
fn lti_phases(
    runtime: &tokio::runtime::Runtime,
    options: &BenchOptions,
    data_dir: &std::path::Path,
    base: &str,
    bank: &QuestionBank,
) -> Result<Vec<Phase>, IssuerError> {
    let platform = runtime.block_on(async {
        let platform = BenchPlatform::start(&data_dir.join("bench-platform")).await?;
        let store = Store::open(options.database_url.as_deref(), data_dir).await?;
        let registered = platform.register(&store).await;
        store.close().await;
        registered.map(|()| platform)
    })?;
    let (launches, tokens) = drive(
        "lti launch",
        options.clients,
        options.lti_launches,
        Client::without_redirects,
        |client, i| lti_bench::launch(client, base, BENCH_PUBLIC_URL, &platform, i),
    );
    let body = passing_request_body(bank, "Learner");
    let scores_url = format!("{base}/lti/scores");
    let (posts, _) = drive("lti score", options.clients, tokens.len(), Client::new, |client, i| {
        let reply = client
            .post_bearer(&scores_url, &tokens[i], "application/json", &body)
            .ok()?;
        (reply.status == 202).then_some(())
    });
    let posting_secs = posts.requests as f64 / posts.per_second;
    let delivered = lti_bench::wait_for_scores(&platform, posts.requests - posts.errors, Duration::from_secs(300));
    let delivery = Phase {
        name: "lti deliver",
        requests: posts.requests - posts.errors,
        errors: usize::from(delivered.is_none()),
        // From the first post to the platform's last score received.
        per_second: delivered.map_or(0.0, |rest| {
            (posts.requests - posts.errors) as f64 / (posting_secs + rest)
        }),
        p50_ms: f64::NAN,
        p99_ms: f64::NAN,
    };
    Ok(vec![launches, posts, delivery])
}

/// Starts the issuer, measures, stops it; returns the phases (also printed to `out`).
pub fn run(options: &BenchOptions, out: &mut dyn Write) -> Result<Vec<Phase>, IssuerError> {
    let io = |context: &str| {
        let context = context.to_string();
        move |e: std::io::Error| IssuerError::Io {
            context: context.clone(),
            detail: e.to_string(),
        }
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let data_dir = TempDir(std::env::temp_dir().join(format!("gradlab-issuer-bench-{}-{stamp}", std::process::id())));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(io("cannot start the async runtime"))?;
    // The bench publishes a throwaway key and writes thousands of credentials: never into a
    // database that an issuer uses.
    if let Some(url) = &options.database_url {
        let empty = runtime.block_on(async {
            let store = Store::open(Some(url), &data_dir.0).await?;
            let empty = store.is_empty().await;
            store.close().await;
            empty
        })?;
        if !empty {
            return Err(IssuerError::Config(
                "the bench needs an empty database (it publishes a throwaway key and writes test credentials); create one for it".into(),
            ));
        }
    }
    let config = ServeConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        data_dir: data_dir.0.clone(),
        public_url: BENCH_PUBLIC_URL.into(),
        database_url: options.database_url.clone(),
        allowed_origins: Vec::new(),
        key_file: None,
        dist: None,
        issues_per_minute: 0,
        trust_forwarded_for: false,
        issuer_name: "Gradient Accumulation Lab (bench)".into(),
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(serve_until(
        config,
        move |started| {
            let _ = ready_tx.send((started.address, started.database.clone()));
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    let Ok((address, database)) = ready_rx.recv_timeout(Duration::from_secs(60)) else {
        let error = runtime
            .block_on(server)
            .ok()
            .and_then(Result::err)
            .unwrap_or_else(|| IssuerError::Config("the issuer did not start".into()));
        return Err(error);
    };
    let base = format!("http://{address}");
    let bank = QuestionBank::bundled().map_err(|e| IssuerError::Config(e.to_string()))?;
    let write = |out: &mut dyn Write, text: String| {
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    };
    write(
        out,
        format!(
            "issuer bench: {database}, {} client threads on loopback",
            options.clients
        ),
    );
    let issue_url = format!("{base}/api/credentials");
    let (issue, issued) = drive("issue", options.clients, options.issuances, Client::new, |client, i| {
        let body = passing_request_body(&bank, &format!("Learner {i}"));
        let reply = client.post_json(&issue_url, &body).ok()?;
        if reply.status != 201 {
            return None;
        }
        let mut value: serde_json::Value = serde_json::from_str(&reply.body).ok()?;
        let id = value["id"].as_str()?.to_string();
        Some((id, value["credential"].take()))
    });
    let ids: Vec<&str> = issued.iter().map(|(id, _)| id.as_str()).collect();
    let (lookup, _) = if ids.is_empty() {
        (None, Vec::<()>::new())
    } else {
        let (phase, out) = drive("look-up", options.clients, options.lookups, Client::new, |client, i| {
            let url = format!("{base}/api/credentials/{}", ids[i % ids.len()]);
            let reply = client.get(&url).ok()?;
            (reply.status == 200).then_some(())
        });
        (Some(phase), out)
    };
    // Verification as a verifier does it, in this process: proof and issuer key checked against
    // the DID document fetched once (the status list is one fetch per list, not per credential).
    let document: Option<DidDocument> = Client::new()
        .get(&format!("{base}/.well-known/did.json"))
        .ok()
        .and_then(|reply| serde_json::from_str(&reply.body).ok());
    let verify = document.map(|document| {
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        drive("verify", threads, issued.len(), Client::new, |_, i| {
            verify_credential(&issued[i].1, &document, None).ok().map(|_| ())
        })
        .0
    });
    let lti = if options.lti_launches > 0 {
        lti_phases(&runtime, options, &data_dir.0, &base, &bank)?
    } else {
        Vec::new()
    };
    let phases: Vec<Phase> = std::iter::once(issue).chain(lookup).chain(verify).chain(lti).collect();
    for phase in &phases {
        // A phase timed only as a whole (the deliveries) has no latency of its own.
        let latency = |ms: f64| {
            if ms.is_finite() {
                format!("{ms:>7.2} ms")
            } else {
                format!("{:>7}   ", "—")
            }
        };
        write(
            out,
            format!(
                "{:<11} {:>6} requests  {:>8.1} /s  p50 {}  p99 {}  errors {}",
                phase.name,
                phase.requests,
                phase.per_second,
                latency(phase.p50_ms),
                latency(phase.p99_ms),
                phase.errors
            ),
        );
    }
    let _ = stop_tx.send(());
    let _ = runtime.block_on(server);
    Ok(phases)
}
