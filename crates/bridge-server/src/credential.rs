//! Credentials recognised by their form, wherever they sit: so that logs, recordings, reports and error answers
//! can keep every credential out, whatever body, header, path or message carries it, without knowing where
//! credentials are expected. A leaf module: it imports no other module of the crate.
//!
//! The forms (the bridge sandbox issues every one of them; a production JWT has the JWT form too):
//!
//! | credential | form |
//! |---|---|
//! | API key | `sbx_` and 43 base64url characters (32 random bytes) |
//! | API key of an earlier sandbox version | `sbx_`, the project in base64url, `.`, 64 hex digits |
//! | dashboard session id | [`SESSION_PREFIX`] (`sbx_session_`) and 43 base64url characters |
//! | dashboard CSRF token | [`CSRF_PREFIX`] (`sbx_csrf_`) and 43 base64url characters |
//! | JWT (project tokens, tokens from the key exchange) | `eyJ` (base64url of `{"`) and base64url, at least 10 characters; `.`; at least 2 base64url characters; `.`; base64url (the signature, possibly empty) |
//!
//! What [`find`] recognises is a little wider, so that a credential with characters around it is still found
//! whole: [`PREFIX`] followed by at least [`MIN_TAIL`] characters that are base64url or `.` (every sandbox secret,
//! and whatever follows it glued on), and the JWT form above with every further `.segment`. It looks for the
//! literal `sbx_` or `eyJ` anywhere, also inside a longer word. No value of the contract has these forms (token
//! symbols, chain names, addresses, transaction hashes, 24-hex-digit ids, decimal strings, dates: the property
//! tests check it), so redacting them never hides an ordinary value.
//!
//! [`redact`] writes a credential as its first [`SHOWN`] characters and [`MARK`] (`sbx_AbCd…[redacted]`,
//! `eyJhbGci…[redacted]`): enough to tell which key it was (4 of the 43 random characters of a key), never enough
//! to use it. What it writes is never recognised again ([`redact`] is idempotent).

use std::borrow::Cow;
use std::io::Write;
use std::ops::Range;

/// What every sandbox secret begins with: API keys (of every version), dashboard sessions and CSRF tokens.
pub const PREFIX: &str = "sbx_";
/// What a dashboard session id begins with.
pub const SESSION_PREFIX: &str = "sbx_session_";
/// What a dashboard CSRF token begins with.
pub const CSRF_PREFIX: &str = "sbx_csrf_";
/// What every JWT begins with: the base64url of `{"`, the start of its JSON header.
pub const JWT_PREFIX: &str = "eyJ";
/// The fewest characters after [`PREFIX`] that make a sandbox secret (the shortest issued one has 43).
pub const MIN_TAIL: usize = 16;
/// The fewest characters of a JWT's first segment, `eyJ` included (`{"alg":"HS256"}` alone is 20).
const MIN_JWT_HEADER: usize = 10;
/// The fewest characters of a JWT's second segment (`{}` is `e30`).
const MIN_JWT_PAYLOAD: usize = 2;
/// How many characters of a credential [`redact`] keeps.
pub const SHOWN: usize = 8;
/// What [`redact`] writes after the characters it keeps.
pub const MARK: &str = "…[redacted]";

fn base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// The end of the run of `allowed` bytes from `from`.
fn run(bytes: &[u8], from: usize, allowed: impl Fn(u8) -> bool) -> usize {
    from + bytes[from..].iter().take_while(|b| allowed(**b)).count()
}

/// The end of a sandbox secret starting at `at` (which holds `sbx_`), if one does.
fn secret_at(bytes: &[u8], at: usize) -> Option<usize> {
    let tail = at + PREFIX.len();
    let end = run(bytes, tail, |b| base64url(b) || b == b'.');
    (end - tail >= MIN_TAIL).then_some(end)
}

/// The end of a JWT starting at `at` (which holds `eyJ`), if one does.
fn jwt_at(bytes: &[u8], at: usize) -> Option<usize> {
    let header = run(bytes, at, base64url);
    if header - at < MIN_JWT_HEADER || bytes.get(header) != Some(&b'.') {
        return None;
    }
    let payload = run(bytes, header + 1, base64url);
    if payload - (header + 1) < MIN_JWT_PAYLOAD || bytes.get(payload) != Some(&b'.') {
        return None;
    }
    let mut end = run(bytes, payload + 1, base64url);
    // A JWE has five segments: take every further one.
    while bytes.get(end) == Some(&b'.') && bytes.get(end + 1).copied().is_some_and(base64url) {
        end = run(bytes, end + 1, base64url);
    }
    Some(end)
}

/// Where credentials are in `bytes`, left to right, not overlapping.
pub fn find(bytes: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(offset) = memchr::memchr2(b's', b'e', bytes.get(from..)?) {
            let at = from + offset;
            let rest = &bytes[at..];
            let end = if rest.starts_with(PREFIX.as_bytes()) {
                secret_at(bytes, at)
            } else if rest.starts_with(JWT_PREFIX.as_bytes()) {
                jwt_at(bytes, at)
            } else {
                None
            };
            match end {
                Some(end) => {
                    from = end;
                    return Some(at..end);
                }
                None => from = at + 1,
            }
        }
        from = bytes.len();
        None
    })
}

/// Whether `text` holds a credential anywhere.
pub fn contains(text: &str) -> bool {
    find(text.as_bytes()).next().is_some()
}

/// Whether `text` is one credential, whole (nothing before or after it).
pub fn is_credential(text: &str) -> bool {
    let mut found = find(text.as_bytes());
    found.next() == Some(0..text.len()) && found.next().is_none()
}

/// `bytes` with every credential written as its first [`SHOWN`] characters and [`MARK`]; borrowed when it holds
/// none.
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut found = find(bytes).peekable();
    if found.peek().is_none() {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut written = 0;
    for span in found {
        out.extend_from_slice(&bytes[written..span.start]);
        // Credentials are ASCII: the first `SHOWN` bytes are whole characters.
        out.extend_from_slice(&bytes[span.start..span.start + SHOWN]);
        out.extend_from_slice(MARK.as_bytes());
        written = span.end;
    }
    out.extend_from_slice(&bytes[written..]);
    Cow::Owned(out)
}

/// `text` with every credential written as its first [`SHOWN`] characters and [`MARK`] (see [`redact_bytes`]).
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Only ASCII credentials were replaced by ASCII and `MARK`, at character boundaries.
        Cow::Owned(bytes) => {
            Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        }
    }
}

/// `text` redacted in place (see [`redact`]).
pub fn redact_in_place(text: &mut String) {
    if let Cow::Owned(redacted) = redact(text) {
        *text = redacted;
    }
}

/// A writer that redacts what goes through it (see [`redact_bytes`]), for logs:
/// `tracing_subscriber::fmt().with_writer(|| Redacting(std::io::stdout()))`. Each `write` is redacted on its own,
/// so a credential is found when one call holds it whole, as `tracing_subscriber` writes each event in one call.
#[derive(Debug, Clone, Default)]
pub struct Redacting<W>(pub W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(&redact_bytes(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sbx_q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq83";
    const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.dGhlIHNpZ25hdHVyZQ";

    #[test]
    fn credentials_are_found_anywhere_and_written_shortened() {
        assert!(is_credential(KEY) && is_credential(JWT));
        let text = format!("apiKey={KEY}&x=1 Bearer {JWT}.");
        assert_eq!(
            redact(&text),
            format!("apiKey=sbx_q83v{MARK}&x=1 Bearer eyJhbGci{MARK}."),
            "a JWT ends before a lone dot"
        );
        assert_eq!(redact(&redact(&text)), redact(&text), "idempotent");
        assert_eq!(redact("USDC 0xabc sbx_short eyJ.a.b"), "USDC 0xabc sbx_short eyJ.a.b");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        assert!(!is_credential(&format!(" {KEY}")) && contains(&format!(" {KEY}")));
        let legacy = format!("sbx_cA.{}", "ab".repeat(32));
        assert!(is_credential(&legacy), "{legacy}");

        let mut out = Redacting(Vec::new());
        write!(out, "{{\"path\":\"/x/{KEY}\"}}").unwrap();
        assert_eq!(String::from_utf8(out.0).unwrap(), format!("{{\"path\":\"/x/sbx_q83v{MARK}\"}}"));
    }
}
