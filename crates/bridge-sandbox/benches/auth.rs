//! What deciding on a credential costs per request, in memory (`bridge_sandbox::access`), against what it cost
//! before projects and keys were records: a bearer token verified by `JwtAuthenticator` alone (one HS256 key, no
//! view). Each case is one `Authenticator` call awaited on a current-thread runtime, as the router awaits it:
//!
//! * `jwt-only`: `JwtAuthenticator::verify_bearer`, the whole check of earlier versions (the baseline);
//! * `token`: `Access::verify_token`, a token of the current key (`kid`): the same signature check, then the
//!   view's three lookups (signing key retired? API key revoked? project disabled?) and the note of activity;
//! * `exchanged-token`: the same for a token exchanged from an API key (its `apiKeyId` looked up too);
//! * `api-key`: `Access::verify_key`, an API key met before (SHA-256 of its text, the known-keys map, the view).
//!
//! `scripts/bench-report.py` prints each as a ratio to `jwt-only`. Run: `cargo bench -p bridge-sandbox --bench auth`
//! (add `-- --quick` for a short run).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use bridge_sandbox::access::Access;
use bridge_server::{Authenticator, JwtAuthenticator};
use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (access, token, exchanged, key, baseline, old_token) = rt.block_on(async {
        let store: Arc<dyn bridge_sandbox::store::Store> = bridge_sandbox::open_store(dir.path(), None).await.unwrap();
        let admin = bridge_sandbox::admin::Admin::new(store.clone(), "bench");
        let access = Access::open(store).await.unwrap();
        let token = admin.mint_token("bench", false, Duration::from_secs(3600)).await.unwrap();
        let key = admin.create_api_key("bench", "bench").await.unwrap().text;
        let exchanged = access.exchange(&key).await.unwrap();
        let secret = admin.signing_keys().await.unwrap()[0].secret.clone();
        let baseline = JwtAuthenticator::new().with_hs256(&secret).with_leeway_seconds(5);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let claims = bridge_server::Claims { sub: "bench".into(), exp: now + 3600, iat: Some(now), features: vec![] };
        let old_token = bridge_server::auth::sign_token(
            &claims,
            jsonwebtoken::Algorithm::HS256,
            &jsonwebtoken::EncodingKey::from_secret(&secret),
        )
        .unwrap();
        (access, token, exchanged, key, baseline, old_token)
    });
    let mut group = c.benchmark_group("auth");
    group
        .bench_function("jwt-only", |b| b.iter(|| rt.block_on(baseline.verify_bearer(black_box(&old_token))).unwrap()));
    group.bench_function("token", |b| b.iter(|| rt.block_on(access.verify_bearer(black_box(&token))).unwrap()));
    group.bench_function("exchanged-token", |b| {
        b.iter(|| rt.block_on(access.verify_bearer(black_box(&exchanged))).unwrap())
    });
    group.bench_function("api-key", |b| b.iter(|| rt.block_on(access.verify_api_key(black_box(&key))).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
