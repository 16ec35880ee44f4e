//! Credentials in a `webhookUrl` (`http://user:secret@host/hook`): refused when a URL is given
//! ([`refuse_credentials`]), and never shown or logged ([`redacted`]: the one function every place that shows or
//! logs a webhook URL goes through: delivery logs, `GET /sandbox/webhook-deliveries`, the dashboard, error
//! messages). A URL with credentials kept by an earlier version is still delivered to as it was given (reqwest
//! sends its user name and password as HTTP Basic), only its password is shown as `***`.
//!
//! Deliveries are signed (`X-Webhook-Signature`): that, not a password in the URL, is how a receiver knows a
//! delivery is the sandbox's. A password in a URL ends up wherever the URL is shown, so none is accepted.

use std::borrow::Cow;

use bridge_contract::InvalidRequest;
use url::Url;

/// What a password (or a user name given without one) is shown as.
pub const REDACTED: &str = "***";

/// What is shown for text that is no URL but has an `@`, where credentials might be.
pub const WITHHELD: &str = "(not a URL; withheld: it may hold credentials)";

/// `url` as it may be shown or logged: `http://user:secret@host/` as `http://user:***@host/`, a user name given
/// alone (`http://token@host/`, often a secret itself) as `***@`. A URL without credentials is returned as it
/// is, unchanged; text that is no URL with a host, but has an `@` where credentials might be, as [`WITHHELD`].
pub fn redacted(url: &str) -> Cow<'_, str> {
    hidden(url).unwrap_or(Cow::Borrowed(url))
}

/// Whether `url` has a user name or password, or an `@` that might be one (what [`redacted`] would hide).
pub fn has_credentials(url: &str) -> bool {
    hidden(url).is_some()
}

/// `url` with its credentials hidden, when it has some to hide.
fn hidden(url: &str) -> Option<Cow<'static, str>> {
    let withheld = || url.contains('@').then_some(Cow::Borrowed(WITHHELD));
    let Ok(mut parsed) = Url::parse(url) else {
        return withheld();
    };
    let done = if parsed.password().is_some() {
        parsed.set_password(Some(REDACTED))
    } else if !parsed.username().is_empty() {
        parsed.set_username(REDACTED)
    } else if parsed.host().is_none() {
        return withheld();
    } else {
        return None;
    };
    Some(match done {
        Ok(()) => Cow::Owned(parsed.into()),
        Err(()) => Cow::Borrowed(WITHHELD),
    })
}

/// The rule when a `webhookUrl` is given: 422 `InvalidRequest` naming it for a URL with a user name or password
/// (the message shows the URL [`redacted`]).
pub fn refuse_credentials(url: &str) -> Result<(), InvalidRequest> {
    if !has_credentials(url) {
        return Ok(());
    }
    Err(InvalidRequest::new(format!(
        "webhookUrl {} is refused: a webhook URL must not carry a user name or password (it would be shown \
         wherever the URL is); deliveries are signed, so a receiver checks X-Webhook-Signature instead",
        redacted(url)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn passwords_and_lone_user_names_are_hidden_and_nothing_else_changes() {
        assert_eq!(redacted("http://user:secret@host/hook?a=1"), "http://user:***@host/hook?a=1");
        assert_eq!(redacted("http://token@host:8080/"), "http://***@host:8080/");
        assert_eq!(redacted("http://user:@host/"), "http://***@host/");
        assert_eq!(redacted("http://:pw@host/"), "http://:***@host/");
        assert_eq!(redacted("http://user:p%40ss@[::1]:9/x"), "http://user:***@[::1]:9/x");
        for unchanged in ["http://host/hook", "HTTP://Host:80/a/../b", "not a url", "", "mailto:a", "http://h/a@b"] {
            assert_eq!(redacted(unchanged), unchanged, "returned as given");
            assert!(matches!(redacted(unchanged), Cow::Borrowed(_)));
        }
        assert_eq!(redacted("user:secret@host/hook"), WITHHELD, "no URL with a host, but an @");
        assert_eq!(redacted("//user:secret@host/hook"), WITHHELD, "no URL, but an @");
        assert!(refuse_credentials("http://host/hook").is_ok());
        let refused = refuse_credentials("http://user:secret@host/hook").unwrap_err().message;
        assert!(refused.contains("user name or password") && !refused.contains("secret"), "{refused}");
        assert!(refuse_credentials("http://token@host/").is_err());
    }

    proptest! {
        /// Whatever the user name and password, neither password nor (given alone) user name survives.
        #[test]
        fn no_credential_survives_redaction(user in "[a-zA-Z0-9._~!$&'()+,;=-]{0,12}", password in proptest::option::of("[a-zA-Z0-9._~!$&'()+,;=:-]{1,12}"), path in "[a-z/]{0,8}") {
            let userinfo = match &password { Some(p) => format!("{user}:{p}"), None => user.clone() };
            let url = format!("http://{userinfo}@host.test{}{path}", if path.is_empty() { "" } else { "/" });
            let shown = redacted(&url);
            if let Ok(parsed) = Url::parse(&url) {
                let hidden_part = match password { Some(_) => parsed.password().unwrap_or_default().to_owned(), None => parsed.username().to_owned() };
                if !hidden_part.is_empty() {
                    prop_assert!(!shown.contains(&format!("{hidden_part}@")), "{} shown as {}", url, shown);
                    prop_assert!(shown.contains("***@"), "{}", shown);
                }
            }
        }
    }
}
