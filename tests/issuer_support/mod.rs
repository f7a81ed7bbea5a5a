//! The issuer under test, really started: the `gradlab` binary as a child process on a
//! loopback port, with a real SQLite file in a temporary data directory or a fresh database on
//! the real PostgreSQL server that `scripts/test.sh` starts (`GRADLAB_TEST_POSTGRES_URL`).
//! One test body runs against every database (`databases()`).
#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "native tests: threads read the server's output"
)]

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gradlab::credential::did_web::DidDocument;
use gradlab::issuer::client::{Client, Reply};
use gradlab::quiz::bank::QuestionBank;

pub const POSTGRES_ENV: &str = "GRADLAB_TEST_POSTGRES_URL";

/// Where a test's issuer keeps its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    Sqlite,
    /// A database of its own on the test PostgreSQL server.
    Postgres(String),
}

impl Database {
    pub fn label(&self) -> &'static str {
        match self {
            Database::Sqlite => "sqlite",
            Database::Postgres(_) => "postgres",
        }
    }

    pub fn url(&self) -> Option<&str> {
        match self {
            Database::Sqlite => None,
            Database::Postgres(url) => Some(url),
        }
    }
}

static DATABASES_MADE: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty PostgreSQL database on the test server.
fn fresh_postgres(admin_url: &str) -> String {
    let name = format!(
        "gradlab_test_{}_{}",
        std::process::id(),
        DATABASES_MADE.fetch_add(1, Ordering::SeqCst)
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        let mut connection = sqlx::AnyConnection::connect(admin_url)
            .await
            .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL at {admin_url}: {e}"));
        // The name is ours (pid and a counter), never outside input.
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut connection)
            .await
            .unwrap();
    });
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    format!("{base}/{name}")
}

/// SQLite, and PostgreSQL when the test script started one. Without it the tests fail, unless
/// `GRADLAB_SKIP_POSTGRES_TESTS=1` says knowingly to skip them (and that is printed).
pub fn databases() -> Vec<Database> {
    let mut databases = vec![Database::Sqlite];
    match std::env::var(POSTGRES_ENV) {
        Ok(url) => databases.push(Database::Postgres(fresh_postgres(&url))),
        Err(_) if std::env::var("GRADLAB_SKIP_POSTGRES_TESTS").as_deref() == Ok("1") => {
            crate::common::record_skip("PostgreSQL");
        }
        Err(_) => panic!(
            "{POSTGRES_ENV} is not set: run the tests through scripts/test.sh, which starts a PostgreSQL server, \
             or set GRADLAB_SKIP_POSTGRES_TESTS=1 to skip the PostgreSQL half knowingly"
        ),
    }
    databases
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn gradlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gradlab"))
}

/// A running `gradlab issuer serve`; killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
    pub port: u16,
    pub data_dir: PathBuf,
    pub database: Database,
    /// Everything the process printed (stdout and stderr), for the no-secret-in-logs check.
    pub log: Arc<Mutex<String>>,
}

pub struct ServerOptions<'a> {
    pub data_dir: &'a Path,
    pub database: &'a Database,
    pub port: Option<u16>,
    pub public_url: Option<String>,
    pub extra: Vec<String>,
}

impl Server {
    pub fn start(data_dir: &Path, database: &Database) -> Self {
        Self::start_with(ServerOptions {
            data_dir,
            database,
            port: None,
            public_url: None,
            extra: vec!["--issues-per-minute".into(), "0".into()],
        })
    }

    pub fn start_with(options: ServerOptions<'_>) -> Self {
        let port = options.port.unwrap_or_else(free_port);
        let url = format!("http://127.0.0.1:{port}");
        let mut command = gradlab();
        command
            .args(["issuer", "serve", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(options.data_dir)
            .arg("--public-url")
            .arg(options.public_url.unwrap_or_else(|| url.clone()))
            .args(&options.extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(db) = options.database.url() {
            command.arg("--database-url").arg(db);
        }
        let mut child = command.spawn().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        log.lock().unwrap().push_str(&first);
        if !first.contains("listening on") {
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            panic!("the issuer did not start: {first}{stderr}");
        }
        for stream in [
            Box::new(stdout) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    log.lock().unwrap().push_str(&line);
                    line.clear();
                }
            });
        }
        Self {
            child,
            url,
            port,
            data_dir: options.data_dir.to_path_buf(),
            database: options.database.clone(),
            log,
        }
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait for the graceful stop.
    pub fn stop(&mut self) {
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill9();
    }

    pub fn get(&self, path: &str) -> Reply {
        Client::new().get(&format!("{}{path}", self.url)).unwrap()
    }

    pub fn post(&self, body: &str) -> Reply {
        Client::new()
            .post_json(&format!("{}/api/credentials", self.url), body)
            .unwrap()
    }

    pub fn did_document(&self) -> DidDocument {
        serde_json::from_str(&self.get("/.well-known/did.json").body).unwrap()
    }

    pub fn storage_args(&self) -> Vec<String> {
        let mut args = vec!["--data-dir".to_string(), self.data_dir.display().to_string()];
        if let Some(url) = self.database.url() {
            args.push("--database-url".into());
            args.push(url.into());
        }
        args
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn bank() -> QuestionBank {
    QuestionBank::bundled().unwrap()
}

pub fn json(reply: &Reply) -> serde_json::Value {
    serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", reply.body))
}
