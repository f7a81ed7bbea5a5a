//! The LTI tables through the issuer's `Store`, on a real SQLite file and a real PostgreSQL
//! server (every body runs on both): logins taken once, sessions that expire, the score queue
//! that survives a restart and backs off. The protocol itself runs against a real platform in
//! e2e/serial/lti.test.mjs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

mod common;
mod issuer_support;

use gradlab::issuer::lti::deep_linking::PendingDeepLink;
use gradlab::issuer::lti::launch::{PendingLogin, Platform, VerifiedLaunch};
use gradlab::issuer::lti::scores::{backoff_secs, GIVEN_UP};
use gradlab::issuer::lti::token_hash;
use gradlab::issuer::store::Store;
use issuer_support::databases;

const NOW: i64 = 1_800_000_000;

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn platform(issuer: &str, client_id: &str) -> Platform {
    Platform {
        issuer: issuer.into(),
        client_id: client_id.into(),
        auth_login_url: format!("{issuer}/auth"),
        auth_token_url: format!("{issuer}/token"),
        keyset_url: format!("{issuer}/jwks"),
    }
}

fn launch(lineitem: Option<&str>) -> VerifiedLaunch {
    VerifiedLaunch {
        issuer: "https://lms.example".into(),
        client_id: "lab".into(),
        deployment_id: "d1".into(),
        subject: "learner-1".into(),
        name: "Ada Lovelace".into(),
        platform_name: "Moodle".into(),
        context_id: "c1".into(),
        context_title: "Fine-tuning".into(),
        resource_link_id: "r1".into(),
        target_link_uri: "https://lab.example/lti/launch".into(),
        lineitem_url: lineitem.map(str::to_string),
        language: None,
        progress_only: false,
        deep_linking: None,
    }
}

#[test]
fn platforms_are_registered_updated_and_found_by_issuer_and_client() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let moodle = platform("https://lms.example", "lab");
            store.add_lti_platform(&moodle, Some("d1"), NOW).await.unwrap();
            store.add_lti_platform(&moodle, Some("d2"), NOW).await.unwrap();
            let mut moved = moodle.clone();
            moved.keyset_url = "https://lms.example/keys-v2".into();
            store.add_lti_platform(&moved, Some("d1"), NOW).await.unwrap();
            let all = store.lti_platforms().await.unwrap();
            assert_eq!(
                all,
                vec![(moved.clone(), vec!["d1".to_string(), "d2".to_string()])],
                "{}",
                database.label()
            );
            // Without a client id, the issuer alone names it while it has one registration.
            assert_eq!(
                store.lti_platform("https://lms.example", None).await.unwrap(),
                Some(moved.clone())
            );
            assert_eq!(
                store.lti_platform("https://lms.example", Some("lab")).await.unwrap(),
                Some(moved.clone())
            );
            assert_eq!(
                store.lti_platform("https://lms.example", Some("other")).await.unwrap(),
                None
            );
            assert_eq!(
                store.lti_platform("https://elsewhere.example", None).await.unwrap(),
                None
            );
            store
                .add_lti_platform(&platform("https://lms.example", "second"), Some("d9"), NOW)
                .await
                .unwrap();
            assert_eq!(
                store.lti_platform("https://lms.example", None).await.unwrap(),
                None,
                "ambiguous"
            );
            store.close().await;
        });
    }
}

#[test]
fn a_login_is_taken_once_and_only_while_fresh() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let login = PendingLogin {
                nonce: "n1".into(),
                issuer: "https://lms.example".into(),
                client_id: "lab".into(),
                target_link_uri: "https://lab.example/lti/launch".into(),
                storage_target: Some("_parent".into()),
            };
            store.begin_lti_login("s1", &login, NOW).await.unwrap();
            store.begin_lti_login("s2", &login, NOW - 700).await.unwrap();
            assert_eq!(
                store.take_lti_login("s1", NOW + 5, 600).await.unwrap(),
                Ok(login.clone())
            );
            assert_eq!(
                store.take_lti_login("s1", NOW + 6, 600).await.unwrap(),
                Err(true),
                "replayed"
            );
            assert_eq!(
                store.take_lti_login("s2", NOW, 600).await.unwrap(),
                Err(false),
                "too old"
            );
            assert_eq!(
                store.take_lti_login("nope", NOW, 600).await.unwrap(),
                Err(false),
                "unknown"
            );
            // Logins older than a day are forgotten when the next one begins.
            store.begin_lti_login("s3", &login, NOW + 90_000).await.unwrap();
            assert_eq!(store.take_lti_login("s1", NOW + 90_000, 600).await.unwrap(), Err(false));
            store.close().await;
        });
    }
}

#[test]
fn a_session_is_found_by_its_token_hash_until_it_expires() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let hash = token_hash("token-1");
            store
                .start_lti_session(
                    &hash,
                    &launch(Some("https://lms.example/li/1")),
                    "view=quiz",
                    None,
                    NOW,
                    NOW + 100,
                )
                .await
                .unwrap();
            let session = store.lti_session(&hash, NOW + 99).await.unwrap().unwrap();
            assert_eq!(
                (session.name.as_str(), session.subject.as_str()),
                ("Ada Lovelace", "learner-1")
            );
            assert_eq!(session.lineitem_url.as_deref(), Some("https://lms.example/li/1"));
            assert_eq!(session.target, "view=quiz");
            assert!(!session.progress_only);
            // An experiment the teacher left ungraded keeps saying so.
            let ungraded = token_hash("token-ungraded");
            let launch = VerifiedLaunch {
                progress_only: true,
                ..launch(Some("https://lms.example/li/1"))
            };
            store
                .start_lti_session(&ungraded, &launch, "view=lab&scenario=norms", None, NOW, NOW + 100)
                .await
                .unwrap();
            assert!(store.lti_session(&ungraded, NOW).await.unwrap().unwrap().progress_only);
            // A launch through the platform's storage is unusable until the page shows the
            // login's state from that storage: then it is bound, once.
            let unbound = token_hash("token-unbound");
            store
                .start_lti_session(&unbound, &launch, "view=quiz", Some("state-7"), NOW, NOW + 100)
                .await
                .unwrap();
            assert_eq!(store.lti_session(&unbound, NOW).await.unwrap(), None, "not bound yet");
            assert_eq!(store.bind_lti_session(&unbound, "state-8", NOW).await.unwrap(), None);
            assert_eq!(
                store
                    .bind_lti_session(&unbound, "state-7", NOW)
                    .await
                    .unwrap()
                    .as_deref(),
                Some("view=quiz")
            );
            assert!(store.lti_session(&unbound, NOW).await.unwrap().is_some());
            assert_eq!(
                store.bind_lti_session(&unbound, "state-7", NOW).await.unwrap(),
                None,
                "once"
            );
            assert_eq!(
                store.bind_lti_session(&hash, "", NOW).await.unwrap(),
                None,
                "no binding to show"
            );
            assert_eq!(
                store.lti_session(&hash, NOW + 100).await.unwrap(),
                None,
                "{}: expired",
                database.label()
            );
            assert_eq!(store.lti_session(&token_hash("token-2"), NOW).await.unwrap(), None);
            store.close().await;
        });
    }
}

#[test]
fn a_queued_score_survives_a_restart_backs_off_and_is_delivered_once() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        let hash = token_hash("token-1");
        let id = block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            store
                .start_lti_session(
                    &hash,
                    &launch(Some("https://lms.example/li/1")),
                    "view=quiz",
                    None,
                    NOW,
                    NOW + 100,
                )
                .await
                .unwrap();
            let session = store.lti_session(&hash, NOW).await.unwrap().unwrap();
            let id = store
                .queue_lti_score(&session, &hash, "https://lms.example/li/1", r#"{"scoreGiven":85}"#, NOW)
                .await
                .unwrap();
            store.close().await;
            id
        });
        // A new process on the same database finds it due.
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let (due, next) = store.due_lti_scores(NOW, 16).await.unwrap();
            assert_eq!(due.len(), 1, "{}", database.label());
            assert_eq!(
                (due[0].id, due[0].body.as_str(), due[0].attempts),
                (id, r#"{"scoreGiven":85}"#, 0)
            );
            assert_eq!(next, None);
            store
                .lti_score_failed(id, "scores endpoint answered 503", NOW + backoff_secs(0))
                .await
                .unwrap();
            let (due, next) = store.due_lti_scores(NOW + 1, 16).await.unwrap();
            assert!(due.is_empty());
            assert_eq!(next, Some(NOW + 5));
            let pending = store.lti_score(id, &hash).await.unwrap().unwrap();
            assert_eq!(
                (pending.attempts, pending.last_error.as_deref()),
                (1, Some("scores endpoint answered 503"))
            );
            assert_eq!(
                store.lti_score(id, &token_hash("another session")).await.unwrap(),
                None,
                "not another session's"
            );
            let (due, _) = store.due_lti_scores(NOW + 5, 16).await.unwrap();
            assert_eq!(due.len(), 1);
            store.lti_score_delivered(id, NOW + 6).await.unwrap();
            let (due, next) = store.due_lti_scores(NOW + 10_000, 16).await.unwrap();
            assert!(due.is_empty() && next.is_none(), "delivered once");
            let delivered = store.lti_score(id, &hash).await.unwrap().unwrap();
            assert_eq!(
                (delivered.delivered_at, delivered.attempts, delivered.last_error),
                (Some(NOW + 6), 2, None)
            );
            // A score given up is never due again, and not in the next wake-up either.
            let session = store.lti_session(&hash, NOW).await.unwrap().unwrap();
            let refused = store
                .queue_lti_score(&session, &hash, "https://lms.example/li/1", r#"{"scoreGiven":70}"#, NOW)
                .await
                .unwrap();
            store
                .lti_score_failed(refused, "scores endpoint answered 404", GIVEN_UP)
                .await
                .unwrap();
            let (due, next) = store.due_lti_scores(NOW + 1_000_000, 16).await.unwrap();
            assert!(due.is_empty(), "{}: given up", database.label());
            assert_eq!(next, Some(GIVEN_UP));
            assert_eq!(
                store.lti_score(refused, &hash).await.unwrap().unwrap().next_attempt_at,
                GIVEN_UP
            );
            store.close().await;
        });
    }
}

#[test]
fn one_loop_takes_a_due_score_and_a_newer_grade_replaces_an_undelivered_one() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let hash = token_hash("token-1");
            store
                .start_lti_session(
                    &hash,
                    &launch(Some("https://lms.example/li/1")),
                    "view=quiz",
                    None,
                    NOW,
                    NOW + 100,
                )
                .await
                .unwrap();
            let session = store.lti_session(&hash, NOW).await.unwrap().unwrap();
            let first = store
                .queue_lti_score(&session, &hash, "https://lms.example/li/1", r#"{"scoreGiven":40}"#, NOW)
                .await
                .unwrap();
            let second = store
                .queue_lti_score(&session, &hash, "https://lms.example/li/1", r#"{"scoreGiven":90}"#, NOW)
                .await
                .unwrap();
            assert_eq!(
                store.lti_score(first, &hash).await.unwrap(),
                None,
                "{}: replaced",
                database.label()
            );
            let (due, _) = store.due_lti_scores(NOW, 16).await.unwrap();
            assert_eq!(due.len(), 1);
            assert_eq!((due[0].id, due[0].body.as_str()), (second, r#"{"scoreGiven":90}"#));
            // Two loops (two instances on one database) read it; only the first takes it.
            assert!(store.lease_lti_score(&due[0], NOW + 120).await.unwrap());
            assert!(!store.lease_lti_score(&due[0], NOW + 120).await.unwrap());
            assert!(
                store.due_lti_scores(NOW + 119, 16).await.unwrap().0.is_empty(),
                "held while posted"
            );
            store.lti_score_delivered(second, NOW + 1).await.unwrap();
            // A failure reported late cannot undo the delivery.
            store.lti_score_failed(second, "late", NOW + 5).await.unwrap();
            let delivered = store.lti_score(second, &hash).await.unwrap().unwrap();
            assert_eq!((delivered.delivered_at, delivered.last_error), (Some(NOW + 1), None));
            // A delivered grade is never replaced: the next one is queued beside it.
            let third = store
                .queue_lti_score(
                    &session,
                    &hash,
                    "https://lms.example/li/1",
                    r#"{"scoreGiven":95}"#,
                    NOW + 2,
                )
                .await
                .unwrap();
            assert!(store.lti_score(second, &hash).await.unwrap().is_some());
            assert_ne!(third, second);
            store.close().await;
        });
    }
}

#[test]
fn every_instances_tool_key_is_published() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let a = (String::from("kid-a"), String::from(r#"{"kid":"kid-a"}"#));
            let b = (String::from("kid-b"), String::from(r#"{"kid":"kid-b"}"#));
            store
                .register_lti_tool_keys(std::slice::from_ref(&a), NOW)
                .await
                .unwrap();
            store
                .register_lti_tool_keys(&[b.clone(), a.clone()], NOW + 1)
                .await
                .unwrap();
            assert_eq!(
                store.lti_tool_keys().await.unwrap(),
                vec![b.1, a.1],
                "{}",
                database.label()
            );
            store.close().await;
        });
    }
}

#[test]
fn a_deep_linking_request_is_answered_once_and_only_while_the_picker_is_fresh() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let request = PendingDeepLink {
                issuer: "https://lms.example".into(),
                client_id: "lab".into(),
                deployment_id: "d1".into(),
                return_url: "https://lms.example/return".into(),
                data: Some(r#"{"opaque":"x"}"#.into()),
                accept_lineitem: false,
            };
            let (fresh, stale) = (token_hash("picker-1"), token_hash("picker-2"));
            store
                .begin_lti_deep_link(&fresh, &request, NOW, NOW + 100)
                .await
                .unwrap();
            store
                .begin_lti_deep_link(&stale, &request, NOW, NOW + 10)
                .await
                .unwrap();
            assert_eq!(
                store.take_lti_deep_link(&fresh, NOW + 5).await.unwrap(),
                Some(request.clone()),
                "{}",
                database.label()
            );
            assert_eq!(
                store.take_lti_deep_link(&fresh, NOW + 6).await.unwrap(),
                None,
                "taken once"
            );
            assert_eq!(
                store.take_lti_deep_link(&stale, NOW + 10).await.unwrap(),
                None,
                "expired"
            );
            assert_eq!(store.take_lti_deep_link(&token_hash("never"), NOW).await.unwrap(), None);
            store.close().await;
        });
    }
}

#[test]
fn an_invitation_to_register_is_taken_once_given_back_on_failure_and_expires() {
    for database in databases() {
        let dir = tempfile::tempdir().unwrap();
        block_on(async {
            let store = Store::open(database.url(), dir.path()).await.unwrap();
            let (any, bound) = (token_hash("invite-any"), token_hash("invite-bound"));
            store.create_lti_invite(&any, None, NOW, NOW + 100).await.unwrap();
            store
                .create_lti_invite(&bound, Some("https://moodle.example"), NOW, NOW + 100)
                .await
                .unwrap();
            assert_eq!(
                store.take_lti_invite(&any, NOW).await.unwrap(),
                Some(None),
                "{}",
                database.label()
            );
            assert_eq!(store.take_lti_invite(&any, NOW).await.unwrap(), None, "used once");
            // A failed registration gives it back.
            store.release_lti_invite(&any).await.unwrap();
            assert_eq!(store.take_lti_invite(&any, NOW + 1).await.unwrap(), Some(None));
            assert_eq!(store.take_lti_invite(&bound, NOW + 100).await.unwrap(), None, "expired");
            assert_eq!(
                store.take_lti_invite(&bound, NOW + 99).await.unwrap(),
                Some(Some("https://moodle.example".into()))
            );
            assert_eq!(store.take_lti_invite(&token_hash("never"), NOW).await.unwrap(), None);
            // A registration without a deployment records the platform alone.
            store
                .add_lti_platform(&platform("https://canvas.example", "c1"), None, NOW)
                .await
                .unwrap();
            let platforms = store.lti_platforms().await.unwrap();
            let canvas = platforms
                .iter()
                .find(|(p, _)| p.issuer == "https://canvas.example")
                .unwrap();
            assert!(canvas.1.is_empty());
            store.close().await;
        });
    }
}
