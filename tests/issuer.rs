//! The issuer service, really started (`gradlab issuer serve` as a process on loopback), against
//! a real SQLite file and a real PostgreSQL server: every test body runs on both.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

mod common;
mod issuer_support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gradlab::credential::verify::{verify_credential, Status};
use gradlab::issuer::client::Client;
use gradlab::issuer::request::passing_request_body;
use gradlab::quiz::bank::QuestionKind;
use gradlab::quiz::certificate::{parse_id, CivilDate, ParsedId};
use issuer_support::*;
use serde_json::{json, Value};

const FAR_FUTURE: CivilDate = CivilDate {
    year: 2100,
    month: 1,
    day: 1,
};

fn serial_of(id: &str) -> u32 {
    match parse_id(id, FAR_FUTURE).unwrap() {
        ParsedId::Issued(issued) => issued.serial,
        ParsedId::IntegrityOnly(_) => panic!("{id} is not an issued ID"),
    }
}

/// Verifies a credential as a verifier would: the DID document and the status list from the server.
fn check(server: &Server, credential: &Value) -> Status {
    let list_url = credential["credentialStatus"]["statusListCredential"].as_str().unwrap();
    let list: Value = serde_json::from_str(&Client::new().get(list_url).unwrap().body).unwrap();
    verify_credential(credential, &server.did_document(), Some(&list))
        .unwrap_or_else(|e| panic!("{}: does not verify: {e}", server.database.label()))
        .status
}

fn issue_ok(server: &Server, name: &str) -> (String, Value) {
    let reply = server.post(&passing_request_body(&bank(), name));
    assert_eq!(reply.status, 201, "{}: {}", server.database.label(), reply.body);
    let body = json(&reply);
    (body["id"].as_str().unwrap().to_string(), body["credential"].clone())
}

#[test]
fn a_passing_attempt_gets_a_signed_credential_that_verifies_online_and_offline() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), &database);
        let reply = server.post(&passing_request_body(&bank(), "  Ada   Lovelace "));
        assert_eq!(reply.status, 201, "{}", reply.body);
        assert!(reply.content_type.starts_with("application/json"));
        let body = json(&reply);
        let id = body["id"].as_str().unwrap();
        assert!(regex_like_id(id), "{id} is a short ID of 15 Crockford symbols");
        assert_eq!(body["share_url"], format!("{}/?view=verify&id={id}", server.url));
        let credential = &body["credential"];
        assert_eq!(
            credential["type"],
            json!(["VerifiableCredential", "OpenBadgeCredential"])
        );
        assert_eq!(
            credential["credentialSubject"]["identifier"][0]["identityHash"], "Ada Lovelace",
            "the name is normalized"
        );
        assert_eq!(credential["proof"]["cryptosuite"], "eddsa-jcs-2022");
        assert_eq!(check(&server, credential), Status::Active);

        // The API returns exactly what was issued.
        let fetched = server.get(&format!("/api/credentials/{id}"));
        assert_eq!(fetched.status, 200);
        assert_eq!(&json(&fetched), credential);
        assert_eq!(
            server
                .get(&format!("/api/credentials/{}", id.to_lowercase().replace('-', "")))
                .status,
            200
        );

        // `gradlab verify` online (did:web resolved over HTTP) and offline (DID document file).
        let file = dir.path().join("credential.json");
        std::fs::write(&file, credential.to_string()).unwrap();
        let online = gradlab().arg("verify").arg(&file).output().unwrap();
        let verdict = String::from_utf8_lossy(&online.stdout);
        assert!(
            online.status.success(),
            "{verdict}{}",
            String::from_utf8_lossy(&online.stderr)
        );
        assert!(
            verdict.starts_with("valid:") && verdict.contains("Ada Lovelace") && verdict.contains("not revoked"),
            "{verdict}"
        );
        let did_file = dir.path().join("did.json");
        std::fs::write(&did_file, server.get("/.well-known/did.json").body).unwrap();
        let mut stopped = server;
        stopped.stop();
        let offline = gradlab()
            .arg("verify")
            .arg(&file)
            .arg("--did-document")
            .arg(&did_file)
            .output()
            .unwrap();
        let verdict = String::from_utf8_lossy(&offline.stdout);
        assert!(
            offline.status.success(),
            "{verdict}{}",
            String::from_utf8_lossy(&offline.stderr)
        );
        assert!(verdict.contains("revocation not checked"), "{verdict}");

        // A changed name is caught offline too.
        let mut forged = credential.clone();
        forged["credentialSubject"]["identifier"][0]["identityHash"] = json!("Mallory");
        std::fs::write(&file, forged.to_string()).unwrap();
        let tampered = gradlab()
            .arg("verify")
            .arg(&file)
            .arg("--did-document")
            .arg(&did_file)
            .output()
            .unwrap();
        assert!(!tampered.status.success());
        let reason = String::from_utf8_lossy(&tampered.stderr);
        assert!(reason.contains("signature"), "{reason}");
    }
}

fn regex_like_id(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 3
        && groups
            .iter()
            .all(|g| g.len() == 5 && g.chars().all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)))
}

#[test]
fn the_server_grades_and_refuses_bad_input_with_problem_details() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), &database);
        let bank = bank();
        // Every answer wrong: 422 with the score, nothing issued.
        let mut wrong: Value = serde_json::from_str(&passing_request_body(&bank, "Eve")).unwrap();
        for q in &bank.questions {
            wrong["answers"][&q.id] = match &q.kind {
                QuestionKind::Single { options } => json!(options.iter().position(|o| !o.correct).unwrap()),
                QuestionKind::Multiple { options } => json!([options.iter().position(|o| !o.correct).unwrap()]),
                QuestionKind::Numeric { answer, .. } => json!(answer + 1000.0),
            };
        }
        let reply = server.post(&wrong.to_string());
        assert_eq!(reply.status, 422, "{}", reply.body);
        assert_eq!(reply.content_type, "application/problem+json");
        assert_eq!(json(&reply)["score_percent"], 0);
        // A client's own score or pass flag is refused, not trusted.
        let mut claimed: Value = wrong.clone();
        claimed["score"] = json!(100);
        let reply = server.post(&claimed.to_string());
        assert_eq!(reply.status, 400);
        assert_eq!(json(&reply)["field"], "score");
        // Missing answers do not pass either.
        let mut partial: Value = serde_json::from_str(&passing_request_body(&bank, "Eve")).unwrap();
        partial["answers"]
            .as_object_mut()
            .unwrap()
            .remove(&bank.questions[0].id);
        partial["answers"]
            .as_object_mut()
            .unwrap()
            .remove(&bank.questions[1].id);
        partial["answers"]
            .as_object_mut()
            .unwrap()
            .remove(&bank.questions[2].id);
        assert_eq!(server.post(&partial.to_string()).status, 422);
        // Malformed bodies name the field.
        for (body, field) in [
            ("not json", "body"),
            (
                r#"{"bank_version":1,"language":"en","name":"\u0000","answers":{}}"#,
                "name",
            ),
            (
                r#"{"bank_version":1,"language":"en","name":"Ada","answers":{"q-unknown":1}}"#,
                "answers.q-unknown",
            ),
        ] {
            let reply = server.post(body);
            assert_eq!(reply.status, 400, "{body}: {}", reply.body);
            assert_eq!(reply.content_type, "application/problem+json");
            assert_eq!(json(&reply)["field"], field, "{body}");
        }
        let huge = format!(r#"{{"name":"{}"}}"#, "x".repeat(100_000));
        assert_eq!(server.post(&huge).status, 413);
        let reply = Client::new()
            .get(&format!("{}/api/credentials/not-an-id", server.url))
            .unwrap();
        assert_eq!(reply.status, 400);
        let unknown = gradlab::quiz::certificate::IssuedId { serial: 999, nonce: 1 }
            .encode()
            .unwrap();
        assert_eq!(server.get(&format!("/api/credentials/{unknown}")).status, 404);
        assert_eq!(server.get("/api/nothing-here").status, 404);
        assert_eq!(server.get("/api/status/0").status, 404);
        assert_eq!(server.get("/api/status/abc").status, 404);
        // Nothing was issued by any of it: the first credential gets the first serial.
        let (id, _) = issue_ok(&server, "Ada");
        assert_eq!(serial_of(&id), 1, "{}", database.label());
    }
}

/// A learner who began before the quiz gained questions finishes the version they were asked:
/// the server grades it with that version's questions and certifies "quiz version 1"; a version
/// that never shipped is refused by name.
#[test]
fn an_attempt_at_an_earlier_quiz_version_is_graded_and_certified_by_that_version() {
    use gradlab::i18n::Language;
    use gradlab::quiz::bank::QuestionBank;
    let first = QuestionBank::shipped(1, Language::English).unwrap();
    assert!(first.questions.len() < bank().questions.len());
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), &database);
        let health = json(&server.get("/api/health"));
        assert_eq!(health["bank_version"], bank().version);
        assert_eq!(health["bank_versions"], json!([1, bank().version]));

        let reply = server.post(&passing_request_body(&first, "Grace Hopper"));
        assert_eq!(reply.status, 201, "{}: {}", database.label(), reply.body);
        let body = json(&reply);
        let credential = &body["credential"];
        let achievement = &credential["credentialSubject"]["achievement"];
        assert_eq!(achievement["id"], format!("{}/achievements/quiz-v1", server.url));
        assert!(achievement["criteria"]["narrative"]
            .as_str()
            .unwrap()
            .contains(&first.questions.len().to_string()));
        assert_eq!(check(&server, credential), Status::Active);
        let id = body["id"].as_str().unwrap();
        assert_eq!(&json(&server.get(&format!("/api/credentials/{id}"))), credential);

        // The current version's new questions are no part of version 1.
        let mut mixed: Value = serde_json::from_str(&passing_request_body(&first, "Grace")).unwrap();
        let added = bank()
            .questions
            .into_iter()
            .find(|q| first.question(&q.id).is_none())
            .unwrap();
        mixed["answers"][&added.id] = json!(0);
        let reply = server.post(&mixed.to_string());
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(json(&reply)["field"], format!("answers.{}", added.id));
        let mut unknown: Value = serde_json::from_str(&passing_request_body(&first, "Grace")).unwrap();
        unknown["bank_version"] = json!(9);
        let reply = server.post(&unknown.to_string());
        assert_eq!(reply.status, 400);
        assert_eq!(json(&reply)["field"], "bank_version");
    }
}

#[test]
fn revocation_reaches_the_status_list_and_every_verifier() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), &database);
        let (kept_id, kept) = issue_ok(&server, "Grace Hopper");
        let (id, credential) = issue_ok(&server, "Mallory");
        let revoke = |id: &str| {
            gradlab()
                .args(["issuer", "revoke", id, "--reason", "issued by mistake"])
                .args(server.storage_args())
                .output()
                .unwrap()
        };
        let output = revoke(&id);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stdout).contains("revoked"));
        assert_eq!(check(&server, &credential), Status::Revoked);
        assert_eq!(check(&server, &kept), Status::Active, "{kept_id} is untouched");
        let again = revoke(&id);
        assert!(String::from_utf8_lossy(&again.stdout).contains("already revoked"));
        let unknown = gradlab::quiz::certificate::IssuedId { serial: 4242, nonce: 7 }
            .encode()
            .unwrap();
        assert!(!revoke(&unknown).status.success());

        let file = dir.path().join("revoked.json");
        std::fs::write(&file, credential.to_string()).unwrap();
        let verdict = gradlab().arg("verify").arg(&file).output().unwrap();
        assert!(!verdict.status.success());
        assert!(String::from_utf8_lossy(&verdict.stderr).contains("revoked"));
    }
}

#[test]
fn issuance_is_rate_limited_per_address_and_cors_admits_only_configured_origins() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(ServerOptions {
        data_dir: dir.path(),
        database: &Database::Sqlite,
        port: None,
        public_url: None,
        extra: vec![
            "--issues-per-minute".into(),
            "2".into(),
            "--allowed-origin".into(),
            "https://moodle.example".into(),
        ],
    });
    let body = passing_request_body(&bank(), "Ada");
    assert_eq!(server.post(&body).status, 201);
    assert_eq!(server.post(&body).status, 201);
    let limited = server.post(&body);
    assert_eq!(limited.status, 429, "{}", limited.body);
    assert_eq!(json(&limited)["code"], "rate-limited");

    let preflight = |origin: &str| {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let response = agent
            .options(&format!("{}/api/credentials", server.url))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header("Access-Control-Request-Headers", "content-type")
            .call()
            .unwrap();
        response
            .headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(
        preflight("https://moodle.example").as_deref(),
        Some("https://moodle.example")
    );
    assert_eq!(preflight("https://evil.example"), None);
    // Anyone may verify: the read-only routes answer every origin.
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let response = agent
        .get(&format!("{}/.well-known/did.json", server.url))
        .header("Origin", "https://employer.example")
        .call()
        .unwrap();
    assert_eq!(response.headers().get("access-control-allow-origin").unwrap(), "*");
}

/// `clients` threads each issue `per_client` credentials, client k talking to `urls[k % len]`;
/// every request must answer 201. Returns (short ID, credential) of each.
fn issue_concurrently(urls: &[&str], clients: usize, per_client: usize) -> Vec<(String, Value)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let url = urls[client % urls.len()];
                scope.spawn(move || {
                    let http = Client::new();
                    (0..per_client)
                        .map(|i| {
                            let body = passing_request_body(&bank(), &format!("Learner {client}-{i}"));
                            let reply = http.post_json(&format!("{url}/api/credentials"), &body).unwrap();
                            assert_eq!(reply.status, 201, "{}", reply.body);
                            let v = json(&reply);
                            (v["id"].as_str().unwrap().to_string(), v["credential"].clone())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn thirty_two_clients_times_fifty_issuances_give_unique_serials_and_status_indexes() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), &database);
        let issued = issue_concurrently(&[server.url.as_str()], 32, 50);
        assert_eq!(issued.len(), 1600);
        let serials: HashSet<u32> = issued.iter().map(|(id, _)| serial_of(id)).collect();
        assert_eq!(serials.len(), 1600, "{}: serials are unique", database.label());
        let indexes: HashSet<(String, String)> = issued
            .iter()
            .map(|(_, c)| {
                let status = &c["credentialStatus"];
                (
                    status["statusListCredential"].as_str().unwrap().to_string(),
                    status["statusListIndex"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(indexes.len(), 1600, "{}: status indexes are unique", database.label());
        let document = server.did_document();
        for (_, credential) in issued.iter().step_by(53) {
            verify_credential(credential, &document, None).unwrap();
        }
    }
}

/// Issues from several threads until stopped; returns every ID answered with 201.
fn burst(url: &str, stop: &AtomicBool) -> Vec<(String, Value)> {
    let issued = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for client in 0..8 {
            let issued = &issued;
            scope.spawn(move || {
                let http = Client::new();
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let body = passing_request_body(&bank(), &format!("Burst {client}-{i}"));
                    i += 1;
                    // Connection errors are expected once the server is killed.
                    if let Ok(reply) = http.post_json(&format!("{url}/api/credentials"), &body) {
                        if reply.status == 201 {
                            let v = json(&reply);
                            issued
                                .lock()
                                .unwrap()
                                .push((v["id"].as_str().unwrap().to_string(), v["credential"].clone()));
                        }
                    }
                }
            });
        }
    });
    issued.into_inner().unwrap()
}

#[test]
fn nothing_issued_is_lost_when_the_server_is_killed_mid_burst() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Server::start(dir.path(), &database);
        let port = server.port;
        let url = server.url.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let issued = std::thread::scope(|scope| {
            let worker = {
                let stop = Arc::clone(&stop);
                let url = url.clone();
                scope.spawn(move || burst(&url, &stop))
            };
            std::thread::sleep(Duration::from_millis(1500));
            server.kill9();
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::SeqCst);
            worker.join().unwrap()
        });
        assert!(
            issued.len() > 10,
            "{}: the burst issued {} before the kill",
            database.label(),
            issued.len()
        );
        drop(server);
        let restarted = Server::start_with(ServerOptions {
            data_dir: dir.path(),
            database: &database,
            port: Some(port),
            public_url: None,
            extra: vec![],
        });
        let document = restarted.did_document();
        for (id, credential) in &issued {
            let fetched = restarted.get(&format!("/api/credentials/{id}"));
            assert_eq!(
                fetched.status,
                200,
                "{}: {id} answered 201 but is gone",
                database.label()
            );
            assert_eq!(&json(&fetched), credential);
            verify_credential(credential, &document, None).unwrap();
        }
        eprintln!(
            "{}: {} credentials issued before kill -9, all present after restart",
            database.label(),
            issued.len()
        );
    }
}

#[test]
fn rotating_the_key_keeps_old_credentials_verifying_and_never_leaks_the_secret() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Server::start(dir.path(), &database);
        let port = server.port;
        let (_, before) = issue_ok(&server, "Before Rotation");
        let old_secret = std::fs::read_to_string(dir.path().join("issuer-key.secret")).unwrap();
        let bodies = [
            server.get("/.well-known/did.json").body,
            server.get("/api/status/1").body,
            server.get("/api/health").body,
        ];
        server.stop();
        let rotated = gradlab()
            .args(["issuer", "rotate-key", "--data-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(rotated.status.success());
        let server = Server::start_with(ServerOptions {
            data_dir: dir.path(),
            database: &database,
            port: Some(port),
            public_url: None,
            extra: vec![],
        });
        let (_, after) = issue_ok(&server, "After Rotation");
        assert_ne!(
            before["proof"]["verificationMethod"],
            after["proof"]["verificationMethod"]
        );
        let document = server.did_document();
        verify_credential(&before, &document, None).unwrap();
        verify_credential(&after, &document, None).unwrap();
        let new_secret = std::fs::read_to_string(dir.path().join("issuer-key.secret")).unwrap();
        let log = server.log.lock().unwrap().clone();
        for secret in [old_secret.trim(), new_secret.trim()] {
            for text in bodies
                .iter()
                .chain([&log, &String::from_utf8_lossy(&rotated.stdout).to_string()])
            {
                assert!(!text.contains(secret), "the private key appeared in output");
            }
        }
    }
}

#[test]
fn two_instances_on_one_postgres_database_issue_side_by_side() {
    let Some(database) = databases().into_iter().find(|d| matches!(d, Database::Postgres(_))) else {
        return;
    };
    // Instance A's URL stands for the load balancer's; each instance has its own key.
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Server::start(dir_a.path(), &database);
    let b = Server::start_with(ServerOptions {
        data_dir: dir_b.path(),
        database: &database,
        port: None,
        public_url: Some(a.url.clone()),
        extra: vec!["--issues-per-minute".into(), "0".into()],
    });
    let issued = issue_concurrently(&[a.url.as_str(), b.url.as_str()], 32, 50);
    let serials: HashSet<u32> = issued.iter().map(|(id, _)| serial_of(id)).collect();
    assert_eq!(serials.len(), 1600);
    let methods: HashSet<String> = issued
        .iter()
        .map(|(_, c)| c["proof"]["verificationMethod"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(methods.len(), 2, "both instances signed");
    // Either instance serves every credential, and one DID document lists both keys.
    let document = a.did_document();
    for (i, (id, credential)) in issued.iter().enumerate() {
        let server = if i % 2 == 0 { &b } else { &a };
        assert_eq!(&json(&server.get(&format!("/api/credentials/{id}"))), credential);
        verify_credential(credential, &document, None).unwrap();
    }
}

#[test]
fn a_public_url_that_verifiers_could_not_resolve_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    // did:web:lab.example.org resolves over HTTPS; an http:// public URL would give credentials
    // whose DID document no verifier fetches from where the issuer serves it.
    let output = gradlab()
        .args(["issuer", "serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .args(["--public-url", "http://lab.example.org"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let reason = String::from_utf8_lossy(&output.stderr);
    assert!(reason.contains("https://"), "{reason}");
}

#[test]
fn the_did_document_is_also_served_where_a_public_url_with_a_path_puts_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &Database::Sqlite);
    // Behind a proxy that strips the path of https://host/lab, did:web:host:lab resolves to /did.json.
    let at_root = server.get("/did.json");
    assert_eq!(at_root.status, 200);
    assert_eq!(at_root.body, server.get("/.well-known/did.json").body);
}

/// A passing request of `attempt_id` for `name`.
fn attempt_body(attempt_id: &str, name: &str) -> String {
    let mut body: Value = serde_json::from_str(&passing_request_body(&bank(), name)).unwrap();
    body["attempt_id"] = json!(attempt_id);
    body.to_string()
}

#[test]
fn one_attempt_gets_one_credential_whatever_name_a_second_request_carries() {
    for database in databases() {
        let label = database.label();
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), &database);
        let first = server.post(&attempt_body("attempt-0123456789abcdef", "Ada Lovelace"));
        assert_eq!(first.status, 201, "{label}: {}", first.body);
        let first = json(&first);
        let second = server.post(&attempt_body("attempt-0123456789abcdef", "Somebody Else"));
        assert_eq!(
            second.status, 200,
            "{label}: the attempt's credential again: {}",
            second.body
        );
        let second = json(&second);
        assert_eq!(second["id"], first["id"], "{label}: the same credential");
        assert_eq!(second["credential"], first["credential"]);
        assert_eq!(
            second["credential"]["credentialSubject"]["identifier"][0]["identityHash"], "Ada Lovelace",
            "{label}: under the first name"
        );
        assert_eq!(check(&server, &second["credential"]), Status::Active);
        // Another attempt, and requests without an attempt ID, get credentials of their own.
        let other = server.post(&attempt_body("attempt-fedcba9876543210", "Somebody Else"));
        assert_eq!(other.status, 201, "{label}");
        assert_ne!(json(&other)["id"], first["id"]);
        let (a, _) = issue_ok(&server, "Grace Hopper");
        let (b, _) = issue_ok(&server, "Grace Hopper");
        assert_ne!(a, b, "{label}: without an attempt ID each request is its own");

        // Requests of one attempt at the same moment: exactly one credential, which every
        // request gets (the others with 200).
        let replies: Vec<(u16, String)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .map(|i| {
                    let url = server.url.clone();
                    scope.spawn(move || {
                        let reply = Client::new()
                            .post_json(
                                &format!("{url}/api/credentials"),
                                &attempt_body("attempt-at-the-same-moment", &format!("Name {i}")),
                            )
                            .unwrap();
                        (reply.status, json(&reply)["id"].as_str().unwrap().to_string())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ids: HashSet<&str> = replies.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(ids.len(), 1, "{label}: one credential for the attempt: {replies:?}");
        assert_eq!(
            replies.iter().filter(|(status, _)| *status == 201).count(),
            1,
            "{label}: {replies:?}"
        );
        assert!(replies.iter().all(|(status, _)| *status == 201 || *status == 200));
    }
}
