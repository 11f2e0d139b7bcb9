//! The URLs of a collection's members: hrefs as servers report them resolved against
//! the collection, kept to its origin, and the href of a new resource.

use hearth_core::redact_userinfo;
use url::Url;

use crate::error::{CalDavError, Result};

/// `text` is not a URL (shown with its credentials redacted).
fn not_a_url(text: &str, error: &url::ParseError) -> CalDavError {
    CalDavError::InvalidUrl(format!("`{}` is not a URL: {error}", redact_userinfo(text)))
}

/// The absolute URL of `href` (as a server reports it) against `base`.
pub fn resolve(base: &str, href: &str) -> Result<String> {
    let base = Url::parse(base).map_err(|error| not_a_url(base, &error))?;
    base.join(href).map(String::from).map_err(|error| {
        CalDavError::InvalidUrl(format!(
            "`{}` is not a URL path: {error}",
            redact_userinfo(href)
        ))
    })
}

/// The href of a new resource for `uid` in the collection at `collection`.
pub fn new_resource_href(collection: &str, uid: &str) -> Result<String> {
    let path = Url::parse(collection)
        .map_err(|error| not_a_url(collection, &error))?
        .path()
        .to_owned();
    let name: String = uid
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let folder = if path.ends_with('/') {
        path
    } else {
        format!("{path}/")
    };
    Ok(format!("{folder}{name}.ics"))
}

/// Whether `href` (as a server reported it) stays on the collection's origin: a member
/// elsewhere is never fetched or written.
pub fn same_origin(collection: &str, href: &str) -> bool {
    match (
        Url::parse(collection),
        resolve(collection, href).map(|u| Url::parse(&u)),
    ) {
        (Ok(base), Ok(Ok(url))) => base.origin() == url.origin(),
        _ => false,
    }
}

/// Whether `href` names the collection at `collection` itself.
pub(crate) fn is_collection(collection: &str, href: &str) -> bool {
    let (Ok(base), Ok(resolved)) = (Url::parse(collection), resolve(collection, href)) else {
        return false;
    };
    Url::parse(&resolved)
        .is_ok_and(|url| url.path().trim_end_matches('/') == base.path().trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collection_itself_is_told_from_its_members() {
        let collection = "http://127.0.0.1:5232/alice/work/";
        assert!(is_collection(collection, "/alice/work/"));
        assert!(is_collection(collection, "/alice/work"));
        assert!(is_collection(
            collection,
            "http://127.0.0.1:5232/alice/work/"
        ));
        assert!(!is_collection(collection, "/alice/work/a.ics"));
    }

    #[test]
    fn a_member_on_another_origin_is_not_the_collections() {
        let collection = "http://127.0.0.1:5232/alice/work/";
        assert!(same_origin(collection, "/alice/work/a.ics"));
        assert!(same_origin(
            collection,
            "http://127.0.0.1:5232/alice/work/a.ics"
        ));
        assert!(!same_origin(collection, "http://169.254.169.254/latest/"));
        assert!(!same_origin(
            collection,
            "https://127.0.0.1:5232/alice/work/a.ics"
        ));
        assert!(!same_origin(collection, "//evil.test/a.ics"));
    }

    #[test]
    fn a_new_resource_is_named_after_its_uid_inside_the_collection() {
        assert_eq!(
            new_resource_href("http://127.0.0.1:5232/alice/work", "a b/c@x.test").unwrap(),
            "/alice/work/a-b-c@x.test.ics"
        );
    }
}
