//! Projects and keys an operator manages (issue 26), over real HTTP on SQLite and on PostgreSQL: API keys made by
//! another process used at once, revoked (refused, with the tokens exchanged from them), projects disabled and
//! enabled (their data kept), signing keys rotated (old tokens valid until retired, new ones at once, no restart),
//! keys of an earlier version accepted until revoked, two instances on one database following a change, the
//! `bridge-sandbox` commands themselves, and the audit list of it all.
//!
//! A change is made through a store opened on its own (as the commands open it), and the test polls until the
//! instance answers accordingly, printing how long that took; the bound is generous ([`BOUND`]) because the
//! machine is shared, the design's is a refresh interval (`bridge_sandbox::access::REFRESH`, 250 ms).

use std::process::Command;
use std::time::{Duration, Instant};

use bridge_client::{Client, Credentials, Error};
use bridge_contract::operations::*;
use bridge_contract::{ApiKeyExchangeRequest, ListUserEventsQuery};
use bridge_sandbox::store::AuditAction;
use serde_json::Value;

use crate::support::committed;
use crate::support::{both_stores, Running, TestStore};

/// The longest a test waits for a change to be in force.
const BOUND: Duration = Duration::from_secs(10);

/// Polls the async condition `$cond` every 10 ms until it holds; how long that took (fails after [`BOUND`]).
macro_rules! until {
    ($what:expr, $cond:expr) => {{
        let start = Instant::now();
        loop {
            if $cond {
                break start.elapsed();
            }
            assert!(start.elapsed() < BOUND, "{}: not within {:?}", $what, BOUND);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }};
}

const HOUR: Duration = Duration::from_secs(3600);

/// What an instance answered a credential: accepted, or refused with the contract's 401 `Unauthorized`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Accepted,
    Unauthorized,
}

fn feed_query() -> ListUserEventsQuery {
    ListUserEventsQuery { since_timestamp: 0.into(), page_token: None, page_size: None }
}

/// The event feed read with `credentials` (a bearer token, or the key as `x-api-key`).
async fn feed_with(base: &str, credentials: Credentials) -> Answer {
    let client = Client::new(base, credentials).unwrap();
    match client.list_user_events(&feed_query()).await {
        Ok(_) => Answer::Accepted,
        Err(Error::Api(ListUserEventsError::Unauthorized(_))) => Answer::Unauthorized,
        Err(e) => panic!("the feed answered neither 200 nor 401 Unauthorized: {e:?}"),
    }
}

async fn by_token(base: &str, token: &str) -> Answer {
    feed_with(base, Credentials::bearer(token)).await
}

async fn by_key(base: &str, key: &str) -> Answer {
    feed_with(base, Credentials::api_key(key)).await
}

/// `POST /authentication/auth/apiKey`: the token, or `None` when refused with 401 `Unauthorized`.
async fn exchange(base: &str, key: &str) -> Option<String> {
    let anonymous = Client::new(base, Credentials::default()).unwrap();
    match anonymous.exchange_api_key(&ApiKeyExchangeRequest { api_key: key.into() }).await {
        Ok(answer) => Some(answer.jwt),
        Err(Error::Api(ExchangeApiKeyError::Unauthorized(_))) => None,
        Err(e) => panic!("the exchange answered neither 200 nor 401 Unauthorized: {e:?}"),
    }
}

/// A JWT's (header, claims), read without verification.
fn jwt_parts(token: &str) -> (Value, Value) {
    let part = |i: usize| {
        let bytes = data_encoding::BASE64URL_NOPAD.decode(token.split('.').nth(i).unwrap().as_bytes()).unwrap();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    (part(0), part(1))
}

fn actions(entries: &[bridge_sandbox::store::AuditEntry]) -> Vec<(AuditAction, &str, Option<&str>)> {
    entries.iter().map(|e| (e.action, e.actor.as_str(), e.subject.as_deref())).collect()
}

both_stores!(
    a_revoked_key_is_refused_with_the_tokens_exchanged_from_it,
    a_disabled_project_is_refused_and_keeps_its_data,
    a_rotated_signing_key_keeps_old_tokens_until_it_retires,
    keys_and_tokens_of_an_earlier_version_are_accepted_until_revoked,
    the_commands_change_a_running_sandbox,
);

/// A key made by another process a moment ago is exchanged and read with at once; revoked, it is refused by the
/// exchange and as `x-api-key`, and so is the token exchanged from it (it names the key), while the project's other
/// key and its other tokens go on working. The list shows it revoked and the other one used; the audit list says
/// who did what.
async fn a_revoked_key_is_refused_with_the_tokens_exchanged_from_it(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let base = sandbox.base_url.clone();
    let alice = store.admin("alice").await;
    let key = alice.create_api_key("team-a", "ci").await.unwrap();
    let spare = alice.create_api_key("team-a", "laptop").await.unwrap();
    let jwt = exchange(&base, &key.text).await.expect("a key made a moment ago is exchanged at once");
    assert_eq!(by_key(&base, &spare.text).await, Answer::Accepted, "and read with at once");
    assert_eq!(by_token(&base, &jwt).await, Answer::Accepted);
    let (header, claims) = jwt_parts(&jwt);
    assert_eq!((claims["sub"].as_str(), claims["apiKeyId"].as_str()), (Some("team-a"), Some(key.record.id.as_str())));
    assert_eq!(header["kid"], "k1");
    let minted = alice.mint_token("team-a", false, HOUR).await.unwrap();
    assert_eq!(by_key(&base, &key.text).await, Answer::Accepted);

    let revoked = alice.revoke_api_key(&key.record.id).await.unwrap();
    assert!(!revoked.already && revoked.key.revoked_ms.is_some());
    let took = until!(
        "the revoked key and its token refused",
        exchange(&base, &key.text).await.is_none()
            && by_key(&base, &key.text).await == Answer::Unauthorized
            && by_token(&base, &jwt).await == Answer::Unauthorized
    );
    eprintln!("revocation in force after {took:?}");
    assert_eq!(by_key(&base, &spare.text).await, Answer::Accepted, "the project's other key goes on");
    assert!(exchange(&base, &spare.text).await.is_some());
    assert_eq!(by_token(&base, &minted).await, Answer::Accepted, "and its minted tokens");
    assert!(alice.revoke_api_key(&key.text).await.unwrap().already, "revoked by its text: already");
    assert!(alice.revoke_api_key("key_0000000000000000").await.is_err(), "an unknown id is an error");

    sandbox.access.flush().await.unwrap();
    let keys = alice.api_keys(Some("team-a")).await.unwrap();
    let of = |id: &str| keys.iter().find(|k| k.id == id).unwrap().clone();
    assert!(of(&key.record.id).revoked_ms.is_some());
    assert!(of(&spare.record.id).revoked_ms.is_none());
    assert!(of(&spare.record.id).last_used_ms.is_some(), "its last use was written: {keys:?}");
    assert!(keys.iter().all(|k| k.hash != key.text && !k.hash.contains(&key.text[4..])), "only hashes are kept");
    let projects = alice.projects().await.unwrap();
    assert!(projects[0].project.last_activity_ms.is_some(), "{projects:?}");

    let audit = alice.audit(Some("team-a"), 100).await.unwrap();
    assert_eq!(
        actions(&audit),
        vec![
            (AuditAction::ProjectCreated, "alice", None),
            (AuditAction::ApiKeyCreated, "alice", Some(key.record.id.as_str())),
            (AuditAction::ApiKeyCreated, "alice", Some(spare.record.id.as_str())),
            (AuditAction::ApiKeyRevoked, "alice", Some(key.record.id.as_str())),
        ]
    );
    assert!(audit.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "oldest first");
    sandbox.stop().await;
}

/// A disabled project's tokens, minted and exchanged, and its keys are refused (401 `Unauthorized`) while another
/// project goes on; enabled again, the same credentials work and its bridge is still there.
async fn a_disabled_project_is_refused_and_keeps_its_data(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let base = sandbox.base_url.clone();
    let alice = store.admin("alice").await;
    let token = alice.mint_token("team-a", false, HOUR).await.unwrap();
    let key = alice.create_api_key("team-a", "ci").await.unwrap();
    let exchanged = exchange(&base, &key.text).await.unwrap();
    let other = alice.mint_token("team-b", false, HOUR).await.unwrap();
    let team_a = Client::new(&base, Credentials::bearer(&token)).unwrap();
    let bridge = committed(&team_a).await;

    let change = alice.set_disabled("team-a", true).await.unwrap();
    assert!(change.changed && !change.created);
    let took = until!(
        "the disabled project's credentials refused",
        by_token(&base, &token).await == Answer::Unauthorized
            && by_token(&base, &exchanged).await == Answer::Unauthorized
            && by_key(&base, &key.text).await == Answer::Unauthorized
            && exchange(&base, &key.text).await.is_none()
    );
    eprintln!("disabling in force after {took:?}");
    assert!(matches!(team_a.get_bridge(&bridge).await, Err(Error::Api(GetBridgeError::Unauthorized(_)))));
    assert_eq!(by_token(&base, &other).await, Answer::Accepted, "another project goes on");
    assert!(!alice.set_disabled("team-a", true).await.unwrap().changed, "disabled already");
    let listed = alice.projects().await.unwrap();
    assert!(listed.iter().find(|p| p.project.project == "team-a").unwrap().project.disabled_ms.is_some());

    assert!(alice.set_disabled("team-a", false).await.unwrap().changed);
    let took = until!(
        "the enabled project's credentials accepted",
        by_token(&base, &token).await == Answer::Accepted && by_key(&base, &key.text).await == Answer::Accepted
    );
    eprintln!("enabling in force after {took:?}");
    assert_eq!(by_token(&base, &exchanged).await, Answer::Accepted);
    assert_eq!(team_a.get_bridge(&bridge).await.unwrap().common().id, bridge, "its data was kept");
    let audit = alice.audit(Some("team-a"), 100).await.unwrap();
    let kinds: Vec<AuditAction> = audit.iter().map(|e| e.action).collect();
    assert_eq!(
        kinds,
        [
            AuditAction::ProjectCreated,
            AuditAction::ApiKeyCreated,
            AuditAction::ProjectDisabled,
            AuditAction::ProjectEnabled
        ]
    );
    sandbox.stop().await;
}

/// After a rotation new tokens name the new key and are accepted at once (the instance reads a key it has not met
/// before answering), tokens of the old key stay valid, and the old key retires when its last recorded token
/// expires; `--retire-now` refuses the old keys' tokens from the next refresh on.
async fn a_rotated_signing_key_keeps_old_tokens_until_it_retires(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let base = sandbox.base_url.clone();
    let alice = store.admin("alice").await;
    let old = alice.mint_token("team-a", false, Duration::from_secs(2 * 3600)).await.unwrap();
    assert_eq!(jwt_parts(&old).0["kid"], "k1");
    let session = sandbox.access.session_token("team-a", false).unwrap();

    let k2 = alice.rotate_signing_key(false).await.unwrap();
    assert_eq!(k2.kid, "k2");
    let new = alice.mint_token("team-a", false, HOUR).await.unwrap();
    assert_eq!(jwt_parts(&new).0["kid"], "k2");
    assert_eq!(by_token(&base, &new).await, Answer::Accepted, "a token of a key made a moment ago, at once");
    assert_eq!(by_token(&base, &old).await, Answer::Accepted, "the old key's tokens stay valid");
    assert_eq!(by_token(&base, &session).await, Answer::Accepted);
    let keys = alice.signing_keys().await.unwrap();
    let k1 = keys.iter().find(|k| k.kid == "k1").unwrap();
    let old_exp = jwt_parts(&old).1["exp"].as_i64().unwrap() * 1000;
    assert_eq!(k1.retires_ms, Some(old_exp), "k1 retires when its last recorded token expires");
    until!(
        "the instance signs with k2",
        jwt_parts(&sandbox.access.session_token("team-a", false).unwrap()).0["kid"] == "k2"
    );

    let k3 = alice.rotate_signing_key(true).await.unwrap();
    let took = until!(
        "tokens of retired keys refused",
        by_token(&base, &old).await == Answer::Unauthorized && by_token(&base, &new).await == Answer::Unauthorized
    );
    eprintln!("retiring at once in force after {took:?}");
    let newest = alice.mint_token("team-a", false, HOUR).await.unwrap();
    assert_eq!(jwt_parts(&newest).0["kid"], k3.kid.as_str());
    assert_eq!(by_token(&base, &newest).await, Answer::Accepted);
    let audit = alice.audit(None, 100).await.unwrap();
    let rotations: Vec<&str> = audit
        .iter()
        .filter(|e| e.action == AuditAction::SigningKeyRotated)
        .map(|e| e.subject.as_deref().unwrap())
        .collect();
    assert_eq!(rotations, ["k2", "k3"]);
    sandbox.stop().await;
}

/// Plants the JWT secret an earlier version kept (the data directory's file, or the database's value).
async fn plant_legacy_secret(store: &TestStore, secret: &[u8]) {
    match store.database_url() {
        None => {
            let dir = store.dir().join("keys");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("jwt-hs256.secret"), hex::encode(secret)).unwrap();
        }
        Some(url) => {
            let database = bridge_sandbox::store::PgStore::connect(url).await.unwrap();
            database.keep_first("jwt-hs256-secret", &hex::encode(secret)).await.unwrap();
        }
    }
}

/// A store of an earlier version carries its secret over: its tokens (no `kid`) and its API keys (an HMAC of the
/// project, stored nowhere) are accepted; such a key becomes a record when first used and can be revoked like
/// any other.
async fn keys_and_tokens_of_an_earlier_version_are_accepted_until_revoked(store: TestStore) {
    let secret = b"the secret of an earlier version!";
    plant_legacy_secret(&store, secret).await;
    let sandbox = Running::on(&store).await;
    let base = sandbox.base_url.clone();
    let earlier_token = {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let claims = bridge_server::Claims { sub: "team-a".into(), exp: now + 3600, iat: Some(now), features: vec![] };
        let key = jsonwebtoken::EncodingKey::from_secret(secret);
        bridge_server::auth::sign_token(&claims, jsonwebtoken::Algorithm::HS256, &key).unwrap()
    };
    assert_eq!(jwt_parts(&earlier_token).0.get("kid"), None);
    assert_eq!(by_token(&base, &earlier_token).await, Answer::Accepted, "a token without kid of the old secret");
    let earlier_key = bridge_sandbox::api_keys::legacy::key(secret, "team-a");
    let jwt = exchange(&base, &earlier_key).await.expect("a key of an earlier version is exchanged");
    assert_eq!(jwt_parts(&jwt).0["kid"], "k1");
    assert_eq!(by_key(&base, &earlier_key).await, Answer::Accepted);
    let forged = bridge_sandbox::api_keys::legacy::key(b"another secret", "team-a");
    assert!(exchange(&base, &forged).await.is_none(), "only the old secret's keys");

    let alice = store.admin("alice").await;
    let keys = alice.api_keys(Some("team-a")).await.unwrap();
    assert_eq!(keys.len(), 1, "kept as a record: {keys:?}");
    let signing = alice.signing_keys().await.unwrap();
    assert!(signing[0].unlabelled && signing[0].secret == secret, "the old secret is k1");
    alice.revoke_api_key(&earlier_key).await.unwrap();
    until!(
        "the earlier version's key refused",
        exchange(&base, &earlier_key).await.is_none() && by_token(&base, &jwt).await == Answer::Unauthorized
    );
    // Another project's key of the earlier version, never used, revoked by its text: refused from the start.
    let unused = bridge_sandbox::api_keys::legacy::key(secret, "team-b");
    assert!(!alice.revoke_api_key(&unused).await.unwrap().already);
    until!("the never-used key refused", exchange(&base, &unused).await.is_none());
    let audit = alice.audit(None, 100).await.unwrap();
    let imported: Vec<&str> =
        audit.iter().filter(|e| e.action == AuditAction::ApiKeyImported).map(|e| e.actor.as_str()).collect();
    assert_eq!(imported, ["sandbox", "alice"], "first seen by the instance, then named by alice");
    sandbox.stop().await;
}

/// Runs `bridge-sandbox` with `args` on `store` (another process, off the async workers); its standard output (it
/// must succeed).
async fn cli(args: &[&str], store: &TestStore) -> String {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).chain(store.cli_args()).collect();
    let shown = args.join(" ");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_bridge-sandbox")).args(&args).env("USER", "operator-olga").output()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(output.status.success(), "bridge-sandbox {shown}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The commands against a running sandbox, as a script uses them: a key printed by `api-key` works at once, so
/// does a token printed right after a `signing-key rotate`; `api-key revoke` and `project disable` are in force
/// within a refresh; the lists and the audit list show it all, with the operator's `$USER`.
async fn the_commands_change_a_running_sandbox(store: TestStore) {
    let sandbox = Running::on(&store).await;
    let base = sandbox.base_url.clone();
    let run = |args: &'static [&'static str]| cli(args, &store);
    let key = run(&["api-key", "--project", "team-a", "--name", "ci"]).await.trim().to_owned();
    assert!(key.starts_with("sbx_"), "{key}");
    assert!(exchange(&base, &key).await.is_some(), "KEY=$(bridge-sandbox api-key ...) works at once");
    let listed = run(&["api-key", "list", "--project", "team-a"]).await;
    let id = listed.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    assert!(id.starts_with("key_") && listed.contains(" ci ") && listed.contains("active"), "{listed}");

    run(&["signing-key", "rotate"]).await;
    let token = run(&["token", "--project", "team-a"]).await.trim().to_owned();
    assert_eq!(jwt_parts(&token).0["kid"], "k2");
    assert_eq!(by_token(&base, &token).await, Answer::Accepted, "a token of the new key works at once");
    let signing = run(&["signing-key", "list"]).await;
    assert!(signing.contains("k2") && signing.contains("current"), "{signing}");

    let revoke = cli(&["api-key", "revoke", &id], &store).await;
    assert!(revoke.contains("revoked"), "{revoke}");
    until!("the revoked key refused", exchange(&base, &key).await.is_none());
    run(&["project", "disable", "team-a"]).await;
    until!("the disabled project refused", by_token(&base, &token).await == Answer::Unauthorized);
    let projects = run(&["project", "list"]).await;
    assert!(projects.contains("team-a") && projects.contains("disabled") && projects.contains(&id), "{projects}");
    run(&["project", "enable", "team-a"]).await;
    until!("the enabled project accepted", by_token(&base, &token).await == Answer::Accepted);

    let audit = run(&["audit", "--project", "team-a"]).await;
    let lines: Vec<&str> = audit.lines().skip(1).collect();
    let expected = ["project.created", "api-key.created", "api-key.revoked", "project.disabled", "project.enabled"];
    assert_eq!(lines.len(), expected.len(), "{audit}");
    for (line, action) in lines.iter().zip(expected) {
        assert!(line.contains(action) && line.contains("operator-olga"), "{action}: {line}");
    }
    sandbox.stop().await;
}

/// Two instances on one PostgreSQL database: a key made through the database is used on both, its token taken on
/// one works on the other; revoked through the database (neither instance), both refuse the key and the token;
/// then a project disabled and a signing key rotated are followed by both, without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_follow_revocations_within_a_second() {
    let Some(store) = TestStore::postgres() else { return };
    let (a, b) = (Running::on(&store).await, Running::on(&store).await);
    let alice = store.admin("alice").await;
    let key = alice.create_api_key("team-a", "ci").await.unwrap();
    let jwt = exchange(&a.base_url, &key.text).await.unwrap();
    assert_eq!(by_token(&b.base_url, &jwt).await, Answer::Accepted, "a token of one instance works on the other");
    assert_eq!(by_key(&b.base_url, &key.text).await, Answer::Accepted);

    alice.revoke_api_key(&key.record.id).await.unwrap();
    let start = Instant::now();
    let (on_a, on_b) = tokio::join!(
        async {
            until!(
                "instance A refuses",
                by_key(&a.base_url, &key.text).await == Answer::Unauthorized
                    && by_token(&a.base_url, &jwt).await == Answer::Unauthorized
            )
        },
        async {
            until!(
                "instance B refuses",
                by_key(&b.base_url, &key.text).await == Answer::Unauthorized
                    && by_token(&b.base_url, &jwt).await == Answer::Unauthorized
            )
        },
    );
    eprintln!("revocation through the database in force on A after {on_a:?}, on B after {on_b:?}");
    assert!(start.elapsed() < BOUND);

    let token = alice.mint_token("team-a", false, HOUR).await.unwrap();
    alice.set_disabled("team-a", true).await.unwrap();
    for instance in [&a, &b] {
        let took = until!("disabled on both", by_token(&instance.base_url, &token).await == Answer::Unauthorized);
        eprintln!("disabling in force on {} after {took:?}", instance.base_url);
    }
    alice.set_disabled("team-a", false).await.unwrap();
    alice.rotate_signing_key(false).await.unwrap();
    for instance in [&a, &b] {
        until!(
            "the new signing key used by both",
            jwt_parts(&instance.access.session_token("team-a", false).unwrap()).0["kid"] == "k2"
        );
        assert_eq!(by_token(&instance.base_url, &token).await, Answer::Accepted, "k1's token stays valid");
    }
    a.stop().await;
    b.stop().await;
}
