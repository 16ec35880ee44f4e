//! The webhook algorithm against JavaScript itself: `node` canonicalises awkward bodies
//! (`JSON.stringify(JSON.parse(body))`), signs them the way the service does (`crypto.createSign('RSA-SHA256')`
//! over the hex SHA-256 of that text) and verifies the signatures made here. Skipped, with a notice, only when
//! `node` is not installed.

use std::io::Write as _;
use std::process::{Command, Stdio};

use bridge_client::webhook::{canonical_json, WebhookSigner, WebhookVerifier};

const KEY_A: &str = include_str!("../fixtures/signer_a.key.pem");
const PUB_A: &str = include_str!("../fixtures/signer_a.pub.pem");

/// Bodies whose JSON.stringify text differs from a naive re-serialisation: number spelling, integer-like keys
/// (JavaScript lists them first, ascending), duplicate keys, escapes and non-ASCII text.
const BODIES: &[&str] = &[
    r#"{"b":1,"a":1.50,"1":2,"x":1e21}"#,
    r#"{"event":{"_tag":"WEBHOOK_TEST","type":"test","message":"hi"},"eventId":"e1","ts":1767225600123}"#,
    r#"{"n":[-0,0.1,1e-7,1e-6,123456789012345678901234567890,5e-324,1.7976931348623157e308,0.000001,100,1.0,2.50e+2,-1E-7]}"#,
    r#"{"10":"ten","2":"two","a":{"z":1,"01":2,"4294967295":3,"4294967294":4,"-1":5,"0":6}}"#,
    r#"{"a":1,"b":2,"a":3}"#,
    r#"{"s":"\u00e9\u2028\u2029\ud83d\ude00 é 😀","esc":"\"\\\/\b\f\n\r\t\u0001\u001f\u007f"}"#,
    r#"  [ true , false , null , {} , [] , "" , 0 ]  "#,
    r#"{"deep":{"deeper":{"deepest":[{"k":0.30000000000000004},{"k":9007199254740993}]}}}"#,
    r#""just a string""#,
    r#"-12.5e-3"#,
];

const NODE_SCRIPT: &str = r#"
const crypto = require('crypto');
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const { bodies, privateKey, publicKey, rustSignatures } = JSON.parse(input);
  const out = { canonical: [], signatures: [], verified: [] };
  bodies.forEach((body, i) => {
    const canonical = JSON.stringify(JSON.parse(body));
    const digest = crypto.createHash('sha256').update(canonical).digest('hex');
    out.canonical.push(canonical);
    out.signatures.push(crypto.createSign('RSA-SHA256').update(digest).sign(privateKey, 'hex'));
    out.verified.push(crypto.createVerify('RSA-SHA256').update(digest).verify(publicKey, rustSignatures[i], 'hex'));
  });
  process.stdout.write(JSON.stringify(out));
});
"#;

/// Runs `script` with `input` on its standard input (the PEM keys travel there: node mistakes an argument
/// starting with dashes for an option).
fn node(script: &str, input: &str) -> std::process::Output {
    let mut child = Command::new("node")
        .arg("-e")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run node");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn node_available() -> bool {
    Command::new("node").arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

#[test]
fn canonical_text_and_signatures_match_javascript() {
    if !node_available() {
        eprintln!("NOTICE: `node` is not installed; skipping the JavaScript reference test of webhook signatures");
        return;
    }
    let signer = WebhookSigner::from_pem(KEY_A).unwrap();
    let rust_signatures: Vec<String> = BODIES.iter().map(|b| signer.sign(b.as_bytes()).unwrap()).collect();
    let input = serde_json::json!({
        "bodies": BODIES,
        "privateKey": KEY_A,
        "publicKey": PUB_A,
        "rustSignatures": rust_signatures,
    });

    let output = node(NODE_SCRIPT, &input.to_string());
    assert!(output.status.success(), "node failed: {}", String::from_utf8_lossy(&output.stderr));
    let js: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();

    let verifier = WebhookVerifier::from_pem(PUB_A).unwrap();
    for (i, body) in BODIES.iter().enumerate() {
        let ours = canonical_json(body.as_bytes()).unwrap();
        assert_eq!(ours, js["canonical"][i].as_str().unwrap(), "canonical text of {body}");
        // JavaScript's signature verifies here, and is byte for byte ours (PKCS#1 v1.5 is deterministic).
        let theirs = js["signatures"][i].as_str().unwrap();
        verifier
            .verify_signature(body.as_bytes(), theirs)
            .unwrap_or_else(|e| panic!("node's signature of {body}: {e}"));
        assert_eq!(theirs, rust_signatures[i], "signature of {body}");
        // Ours verifies in JavaScript.
        assert_eq!(js["verified"][i], true, "node rejected our signature of {body}");
    }
    // Spot checks of what JavaScript does, so a wrong expectation here would show.
    assert_eq!(js["canonical"][0], r#"{"1":2,"b":1,"a":1.5,"x":1e+21}"#);
    assert_eq!(js["canonical"][4], r#"{"a":3,"b":2}"#);
}

#[test]
fn a_node_signed_delivery_decodes() {
    if !node_available() {
        eprintln!("NOTICE: `node` is not installed; skipping the JavaScript reference test of webhook deliveries");
        return;
    }
    // A delivery as the TypeScript service would send it: JSON.stringify of the envelope, signed in Node.
    let script = r#"
const crypto = require('crypto');
let key = '';
process.stdin.on('data', (d) => (key += d));
process.stdin.on('end', () => {
  const body = JSON.stringify({ event: { _tag: 'TELEPORT_COMPLETED', eta: 1e21 }, eventId: 'n1', ts: Date.UTC(2026, 0, 1) });
  const digest = crypto.createHash('sha256').update(body).digest('hex');
  process.stdout.write(JSON.stringify({ body, signature: crypto.createSign('RSA-SHA256').update(digest).sign(key, 'hex') }));
});
"#;
    let output = node(script, KEY_A);
    assert!(output.status.success(), "node failed: {}", String::from_utf8_lossy(&output.stderr));
    let js: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let body = js["body"].as_str().unwrap();
    let verifier =
        WebhookVerifier::from_served_key(&WebhookSigner::from_pem(KEY_A).unwrap().served_public_key()).unwrap();
    let delivery = verifier.verify(body.as_bytes(), js["signature"].as_str().unwrap()).unwrap();
    assert_eq!(delivery.event.tag(), "TELEPORT_COMPLETED");
    assert_eq!(delivery.event_id, "n1");
    assert_eq!(delivery.ts.as_f64(), 1767225600000.0);
    assert_eq!(delivery.canonical, body);
}
