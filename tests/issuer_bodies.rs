//! Property test over issuance request bodies: whatever bytes arrive, the issuer answers with a
//! 2xx or a 4xx problem+json, never a panic or a 500. Runs the real router in process (no
//! socket, so thousands of cases stay fast) over a real SQLite file.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::to_bytes;
use gradlab::issuer::api::post_request;
use gradlab::issuer::config::ServeConfig;
use gradlab::issuer::request::passing_request_body;
use gradlab::issuer::server::{application, prepare};
use gradlab::quiz::bank::QuestionBank;
use proptest::prelude::*;
use tower::ServiceExt;

struct App {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
    _dir: tempfile::TempDir,
}

fn app() -> App {
    app_serving(None)
}

fn app_serving(dist: Option<&std::path::Path>) -> App {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = ServeConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        data_dir: dir.path().to_path_buf(),
        public_url: "http://127.0.0.1:9".into(),
        database_url: None,
        allowed_origins: Vec::new(),
        key_file: None,
        dist: None,
        issues_per_minute: 0,
        trust_forwarded_for: false,
        issuer_name: "Test issuer".into(),
    };
    let (state, origins) = runtime.block_on(prepare(&config)).unwrap();
    let router = application(Arc::clone(&state), &origins, dist);
    App {
        runtime,
        router,
        _dir: dir,
    }
}

impl App {
    fn post(&self, body: Vec<u8>) -> (u16, String, String) {
        self.runtime.block_on(async {
            let response = self
                .router
                .clone()
                .oneshot(post_request(body, "application/json"))
                .await
                .unwrap();
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (status, content_type, String::from_utf8_lossy(&body).into_owned())
        })
    }
}

fn check(status: u16, content_type: &str, body: &str) {
    assert!(status != 500 && (200..500).contains(&status), "status {status}: {body}");
    if status >= 400 {
        assert_eq!(content_type, "application/problem+json", "{body}");
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], status);
        assert!(problem["detail"].as_str().is_some_and(|d| !d.is_empty()));
    }
}

/// JSON values shaped like requests: the right keys with any values, plus stray keys.
fn request_like() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)),
        ".{0,100}".prop_map(serde_json::Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map(".{0,12}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    });
    let bank = QuestionBank::bundled().unwrap();
    let ids: Vec<String> = bank.questions.iter().map(|q| q.id.clone()).collect();
    (
        prop::collection::btree_map(
            prop_oneof![
                Just("bank_version".to_string()),
                Just("language".to_string()),
                Just("name".to_string()),
                Just("answers".to_string()),
                Just("seed".to_string()),
                ".{1,8}"
            ],
            value.clone(),
            0..6,
        ),
        prop::collection::btree_map(prop::sample::select(ids), value, 0..20),
    )
        .prop_map(|(mut top, answers)| {
            if !answers.is_empty() {
                top.insert(
                    "answers".into(),
                    serde_json::Value::Object(answers.into_iter().collect()),
                );
            }
            serde_json::Value::Object(top.into_iter().collect())
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_get_a_clear_answer(body in prop::collection::vec(any::<u8>(), 0..2048)) {
        let (status, content_type, text) = APP.with(|app| app.post(body));
        check(status, &content_type, &text);
        prop_assert_ne!(status, 201);
    }

    #[test]
    fn request_shaped_json_gets_a_clear_answer(value in request_like()) {
        let (status, content_type, text) = APP.with(|app| app.post(value.to_string().into_bytes()));
        check(status, &content_type, &text);
    }
}

thread_local! {
    static APP: App = app();
}

#[test]
fn a_passing_body_is_issued_in_process_too() {
    let app = app();
    let bank = QuestionBank::bundled().unwrap();
    let (status, _, body) = app.post(passing_request_body(&bank, "Ada <script>alert(1)</script>").into_bytes());
    assert_eq!(status, 201, "{body}");
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    // The name is data: kept exactly (escaped by JSON), never interpreted.
    assert_eq!(
        reply["credential"]["credentialSubject"]["identifier"][0]["identityHash"],
        "Ada <script>alert(1)</script>"
    );
}

/// The built app is served as a real server should send it: a file that has a gzip twin beside
/// it (the release build writes them) goes out compressed to a browser that accepts gzip, and
/// as it is to one that does not; a page's URL falls back to the Lab's document.
#[test]
fn the_built_app_is_served_precompressed() {
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("index.html"), "<p>lab</p>").unwrap();
    std::fs::write(dist.path().join("index.html.gz"), "gzipped index").unwrap();
    std::fs::write(dist.path().join("app_bg.wasm"), "plain wasm").unwrap();
    std::fs::write(dist.path().join("app_bg.wasm.gz"), "gzipped wasm").unwrap();
    let app = app_serving(Some(dist.path()));
    let get = |path: &str, gzip: bool| {
        app.runtime.block_on(async {
            let mut request = axum::http::Request::get(path);
            if gzip {
                request = request.header("accept-encoding", "gzip, deflate, br");
            }
            let response = app
                .router
                .clone()
                .oneshot(request.body(axum::body::Body::empty()).unwrap())
                .await
                .unwrap();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .map(|v| v.to_str().unwrap().to_string())
                    .unwrap_or_default()
            };
            let (status, encoding, content_type) = (
                response.status().as_u16(),
                header("content-encoding"),
                header("content-type"),
            );
            let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (
                status,
                encoding,
                content_type,
                String::from_utf8_lossy(&body).into_owned(),
            )
        })
    };
    let (status, encoding, content_type, body) = get("/app_bg.wasm", true);
    assert_eq!(
        (status, encoding.as_str(), body.as_str()),
        (200, "gzip", "gzipped wasm")
    );
    assert_eq!(content_type, "application/wasm");
    let (status, encoding, _, body) = get("/app_bg.wasm", false);
    assert_eq!((status, encoding.as_str(), body.as_str()), (200, "", "plain wasm"));
    let (status, encoding, _, body) = get("/pages/unknown?view=quiz", true);
    assert_eq!(
        (status, encoding.as_str(), body.as_str()),
        (200, "gzip", "gzipped index")
    );
}
