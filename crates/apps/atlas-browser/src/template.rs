//! What kind of page an address shows: its route template, and how alike two pages' element
//! structures are.
//!
//! A site is made of few kinds of pages and many addresses: `/orders/7` and `/orders/8` are one
//! page with another item, `?page=3` and `?sort=name` another view of one list, `?q=test` the
//! results page whatever was searched. The route template keeps what says which page it is (the
//! path's words, which query parameters it takes, a parameter that names what the page is for
//! such as `action=edit`) and drops what says which item or view (ids, values, paging, order).
//!
//! Key design decision: **values never make a kind; names do.** A query value is data (a filter,
//! a search term, the explorer's own typing) except under the few names the web uses for a
//! page's purpose ([`MODE_NAMES`]); a path segment is an id when it is a number, a hash, or a
//! word ending in a number (`issue42`). Which values a site takes is endless; which names its
//! pages take is not, so a map keyed by names ends.

use std::collections::BTreeSet;

use url::Url;

/// Query parameters that name a session, a cache-buster or a tracker, whatever their value.
const VOLATILE_PARAMS: &[&str] = &[
    "sid",
    "session",
    "sessionid",
    "session_id",
    "jsessionid",
    "phpsessid",
    "token",
    "csrf",
    "csrftoken",
    "_csrf",
    "_",
    "ts",
    "timestamp",
    "time",
    "nocache",
    "cachebuster",
    "cb",
    "rnd",
    "random",
    "nonce",
    "fbclid",
    "gclid",
    "msclkid",
];

/// A value that carries the moment or a random token rather than a choice: a date or time, an
/// epoch in seconds or milliseconds, a UUID, a long hex or mixed letters-and-digits run.
fn volatile_value(v: &str) -> bool {
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    let date = v.len() >= 10
        && v.as_bytes()[..10].iter().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                matches!(b, b'-' | b'/')
            } else {
                b.is_ascii_digit()
            }
        });
    let epoch = (9..=13).contains(&v.len()) && digits == v.len();
    let hex = v.len() >= 16 && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    let token = v.len() >= 20
        && digits > 0
        && v.bytes().any(|b| b.is_ascii_alphabetic())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'='));
    date || epoch || hex || token
}

/// The address as identity sees it: scheme and host lower-case, default port and fragment
/// dropped (a `#/` or `#!` route kept: single-page apps route there), volatile parameters
/// dropped and the rest sorted. Not an absolute URL: returned as given.
pub fn normalize_url(raw: &str) -> String {
    let Ok(mut url) = Url::parse(raw) else {
        return raw.to_string();
    };
    let mut pairs: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, v)| {
            let k = k.to_ascii_lowercase();
            !(VOLATILE_PARAMS.contains(&k.as_str()) || k.starts_with("utm_") || volatile_value(v))
        })
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    pairs.sort();
    if pairs.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(&pairs);
    }
    if !url
        .fragment()
        .is_some_and(|f| f.starts_with('/') || f.starts_with('!'))
    {
        url.set_fragment(None);
    }
    url.to_string()
}

/// The document an address loads: its normal form without any fragment, since a fragment,
/// even a script's route, is not a load of its own.
pub fn document_of(url: &str) -> String {
    let normal = normalize_url(url);
    match normal.split_once('#') {
        Some((document, _)) => document.to_string(),
        None => normal,
    }
}

/// Query parameters that page, order or size a list (a leading sigil aside: `_sort`,
/// `@pagesize`): they choose which items show, never what the page is.
const LIST_CONTROLS: &[&str] = &[
    "page",
    "p",
    "pg",
    "pagenum",
    "offset",
    "start",
    "limit",
    "per_page",
    "perpage",
    "page_size",
    "pagesize",
    "size",
    "next",
    "prev",
    "cursor",
    "after",
    "before",
    "sort",
    "sort_desc",
    "sort_by",
    "sortby",
    "order",
    "order_by",
    "orderby",
    "dir",
    "direction",
    "asc",
    "desc",
];

/// Query parameters whose value says what the page is for (`?action=edit`, `?do=diff`,
/// `?view=history`, `?template=search`): their values stay in the template, unless the
/// explorer typed them.
pub const MODE_NAMES: &[&str] = &[
    "action", "do", "mode", "view", "op", "cmd", "tab", "template",
];

/// A path segment that names an item rather than a kind: a number, a hash or UUID, or a word
/// that ends in a number (`issue42`, `msg7`); an extension is kept (`7.html`).
fn abstract_segment(segment: &str) -> String {
    let (stem, ext) = match segment.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.chars().all(|c| c.is_ascii_alphabetic()) => {
            (stem, Some(ext))
        }
        _ => (segment, None),
    };
    let abstracted = if is_id(stem) {
        Some("{id}".to_string())
    } else {
        let word = stem.trim_end_matches(|c: char| c.is_ascii_digit());
        (word.len() < stem.len()
            && !word.is_empty()
            && word.chars().all(|c| c.is_ascii_alphabetic()))
        .then(|| format!("{word}{{id}}"))
    };
    match (abstracted, ext) {
        (Some(a), Some(ext)) => format!("{a}.{ext}"),
        (Some(a), None) => a,
        (None, _) => segment.to_string(),
    }
}

/// A parameter of a numbered series (`p0`, `p1`; `field2`) is the series: `p{n}`.
fn numbered(name: &str) -> String {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if stem.len() < name.len() && !stem.is_empty() {
        format!("{stem}{{n}}")
    } else {
        name.to_string()
    }
}

/// The part of a route template that says what kind of page it is: the path and the modes,
/// without the names of the other query parameters (filters, options, a search's term). Two
/// pages whose routes differ only in those are one kind when their structures are alike: a
/// list filtered, faceted or with its query shown is the list.
pub fn kind_of(route: &str) -> String {
    let (main, fragment) = match route.split_once('#') {
        Some((m, f)) => (m, Some(f)),
        None => (route, None),
    };
    let (path, query) = main.split_once('?').unwrap_or((main, ""));
    let modes: Vec<&str> = query.split('&').filter(|p| p.contains('=')).collect();
    let mut out = path.to_string();
    if !modes.is_empty() {
        out.push('?');
        out.push_str(&modes.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&kind_of(f));
    }
    out
}

/// Every address of an address's kind, fillable: its path with the segments that name an item
/// written `{id}`, with the query parameters that say what the page is for and without the
/// others (`http://h/orders/{id}`, `http://h/wiki/issue{id}?action=edit`); none when nothing in
/// it names an item. What the graph keeps so that an agent can open the item an intent names.
pub fn item_address(raw: &str) -> Option<String> {
    Some(kind_of(&route_template(raw))).filter(|t| t.contains("{id}"))
}

/// Files a link may lead to that are no page (data, documents, archives and packages,
/// media, fonts, code): not followed.
const NOT_PAGES: &[&str] = &[
    "json", "csv", "tsv", "xml", "txt", "rss", "atom", "yaml", "yml", "pdf", "zip", "gz", "tgz",
    "tar", "bz2", "xz", "zst", "7z", "rar", "png", "jpg", "jpeg", "gif", "svg", "webp", "ico",
    "bmp", "css", "js", "map", "wasm", "mp3", "mp4", "webm", "ogg", "wav", "flac", "m4a", "avi",
    "mov", "mkv", "db", "sqlite", "woff", "woff2", "ttf", "otf", "eot", "doc", "docx", "xls",
    "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf", "epub", "whl", "egg", "jar", "war", "exe",
    "msi", "dmg", "pkg", "deb", "rpm", "apk", "ipa", "iso", "img", "bin", "sig", "asc",
];

/// The address names a file that is no page by its extension (`/data.json`, `/report.pdf`).
pub fn names_a_file(raw: &str) -> bool {
    let Ok(url) = Url::parse(raw) else {
        return false;
    };
    let last = url.path().rsplit('/').next().unwrap_or_default();
    last.rsplit_once('.')
        .is_some_and(|(_, ext)| NOT_PAGES.contains(&ext.to_ascii_lowercase().as_str()))
}

/// A number, or a hash-like run: hexadecimal digits (and dashes, as a UUID writes them), at
/// least eight, with a digit among them.
pub fn is_id(segment: &str) -> bool {
    if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let hex = segment.bytes().filter(u8::is_ascii_hexdigit).count();
    hex >= 8
        && segment.bytes().any(|b| b.is_ascii_digit())
        && segment.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

fn abstract_path(path: &str) -> String {
    path.split('/')
        .map(abstract_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// A parameter's name without the sigil some frameworks mark their own parameters with
/// (`_sort`, `@template`, `$top`), lower-case.
fn bare(name: &str) -> String {
    name.trim_start_matches(['_', '@', '$'])
        .to_ascii_lowercase()
}

fn is_list_control(name: &str) -> bool {
    LIST_CONTROLS.contains(&bare(name).as_str())
}

/// The route template of an address: its path with ids abstracted (`/orders/{id}`), then the
/// names of its query parameters, once each, sorted, without those that page or order a list
/// and without volatile ones (times, sessions, trackers: [`normalize_url`]), a mode's value
/// kept (`/wiki/Start?action=edit`); a `#/` route likewise. Not an absolute URL: returned as
/// given.
pub fn route_template(raw: &str) -> String {
    let Ok(url) = Url::parse(&normalize_url(raw)) else {
        return raw.to_string();
    };
    let mut out = format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port().map(|p| format!(":{p}")).unwrap_or_default()
    );
    out.push_str(&abstract_path(url.path()));
    let names: BTreeSet<String> = url
        .query_pairs()
        .filter(|(k, _)| !is_list_control(k))
        .map(|(k, v)| {
            if MODE_NAMES.contains(&bare(&k).as_str()) && !crate::test_values::typed_by_explorer(&v)
            {
                format!("{k}={v}")
            } else {
                numbered(&k)
            }
        })
        .collect();
    if !names.is_empty() {
        out.push('?');
        out.push_str(&names.into_iter().collect::<Vec<_>>().join("&"));
    }
    if let Some(fragment) = url.fragment() {
        let (path, query) = fragment.split_once('?').unwrap_or((fragment, ""));
        out.push('#');
        out.push_str(&abstract_path(path));
        if !query.is_empty() {
            out.push_str(&route_template(&format!("http://x/?{query}"))["http://x/".len()..]);
        }
    }
    out
}

/// The template of an address for the figures: the path alone, numeric and hash-like segments
/// abstracted (the measure, fixed before any run; the explorer's own is
/// [`route_template`]).
pub fn path_template(raw: &str) -> String {
    let Ok(url) = Url::parse(raw) else {
        return raw.to_string();
    };
    url.path()
        .split('/')
        .map(|s| if is_id(s) { "{id}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// The element structure as a set of tag paths (`body/div/table/tr/td`), for telling how alike
/// two pages are: a shorter description than the structure, and one that a row more or an
/// arrow beside a sorted column changes little.
pub fn shape(structure: &str) -> Vec<u32> {
    let mut stack: Vec<&str> = Vec::new();
    let mut paths: BTreeSet<u32> = BTreeSet::new();
    let mut start = 0;
    let mut last: Option<&str> = None;
    let bytes = structure.as_bytes();
    let push_tag = |tag: &str, stack: &Vec<&str>, paths: &mut BTreeSet<u32>| {
        if tag.is_empty() {
            return;
        }
        let mut h = fnv(stack.len() as u32, tag);
        for parent in stack {
            h = fnv(h, parent);
        }
        paths.insert(h);
    };
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'(' | b',' | b')') {
            let tag = structure[start..i].trim_end_matches('*');
            if !tag.is_empty() {
                push_tag(tag, &stack, &mut paths);
                last = Some(tag);
            }
            match b {
                b'(' => {
                    if let Some(t) = last.take() {
                        stack.push(t);
                    }
                }
                b')' => {
                    stack.pop();
                    last = None;
                }
                _ => last = None,
            }
            start = i + 1;
        }
    }
    let tail = structure[start..].trim_end_matches('*');
    push_tag(tail, &stack, &mut paths);
    paths.into_iter().collect()
}

/// A small stable hash (FNV-1a), so that shapes saved by one run compare with the next's.
fn fnv(seed: u32, text: &str) -> u32 {
    let mut h = 0x811c_9dc5u32 ^ seed.wrapping_mul(0x0100_0193);
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// How alike two shapes are: the share of tag paths they have in common (Jaccard).
pub fn alike(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let shared = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// Two pages of one route template are one kind when this share of their tag paths is common:
/// items of a template differ in their content (a row more, a field filled, an arrow on the
/// sorted column), not in the page around it.
pub const SAME_KIND: f64 = 0.8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_typed_values_paging_and_repeats_make_no_new_route() {
        let r = |u: &str| route_template(u);
        assert_eq!(r("http://x/shop/orders/7"), "http://x/shop/orders/{id}");
        assert_eq!(r("http://x/shop/orders/7"), r("http://x/shop/orders/8"));
        assert_eq!(r("http://x/demo/issue42"), "http://x/demo/issue{id}");
        assert_eq!(r("http://x/c/0f8fad5bd9cb469f"), "http://x/c/{id}");
        assert_eq!(r("http://x/docs/3.html"), "http://x/docs/{id}.html");
        // Filters typed once or five times, in any order, with a sort: one route.
        assert_eq!(
            r("http://x/shop/orders?_sort=id&id__exact=test"),
            "http://x/shop/orders?id__exact"
        );
        assert_eq!(
            r("http://x/shop/orders?id__exact=test&_sort=id&id__exact=test&id__exact=1"),
            r("http://x/shop/orders?id__exact=测试")
        );
        assert_eq!(r("http://x/list?page=3&sort=name"), "http://x/list");
        // A time does not make a route; a mode does.
        assert_eq!(
            r("http://x/timeline?from=2026-11-29T10:00:01Z"),
            "http://x/timeline"
        );
        assert_ne!(
            r("http://x/wiki/Start?action=edit"),
            r("http://x/wiki/Start?action=info")
        );
        // Words are kinds: another wiki page, another table.
        assert_ne!(r("http://x/wiki/Start"), r("http://x/wiki/Guide"));
        assert_eq!(r("http://x/app#/items/3"), "http://x/app#/items/{id}");
        assert_eq!(path_template("http://x/t/7?a=b"), "/t/{id}");
        assert_eq!(
            r("http://x/db?sql=x&p0=1&p1=2"),
            r("http://x/db?p0=a&sql=y")
        );
        assert_eq!(
            kind_of("http://x/w/A?action=edit&rev#/t?x&tab=2"),
            "http://x/w/A?action=edit#/t?tab=2"
        );
        assert!(names_a_file("http://x/shop/orders.json?_labels=on"));
        assert!(!names_a_file("http://x/docs/3.html"));
        assert!(names_a_file(
            "http://x/packages/six-1.17.0-py2.py3-none-any.whl#sha256=ab"
        ));
        assert_eq!(path_template("http://x/demo/issue42"), "/demo/issue42");
    }

    #[test]
    fn a_fragment_is_no_document_of_its_own() {
        assert_eq!(document_of("http://x/a?b=1#top"), "http://x/a?b=1");
        assert_eq!(document_of("http://x/app#/orders/7"), "http://x/app");
        assert_eq!(document_of("http://x/a"), "http://x/a");
    }

    #[test]
    fn an_item_address_keeps_what_the_page_is_and_leaves_the_item_open() {
        assert_eq!(
            item_address("http://x:8001/shop/orders/7?_sort=id&q=test").as_deref(),
            Some("http://x:8001/shop/orders/{id}")
        );
        assert_eq!(
            item_address("http://x/wiki/issue42?action=edit&t=1").as_deref(),
            Some("http://x/wiki/issue{id}?action=edit")
        );
        assert_eq!(item_address("http://x/shop/orders?page=2"), None);
    }

    #[test]
    fn shapes_of_one_template_are_alike_and_of_two_are_not() {
        let row = |cells: &str| format!("body(nav(a),main(h1,table(tr({cells})),form(input)))");
        let a = shape(&row("th,td"));
        let b = shape(&row("th*,td"));
        assert!(alike(&a, &b) >= SAME_KIND, "{}", alike(&a, &b));
        let other = shape("body(nav(a),main(h1,ul(li(a)),p,p(em)))");
        assert!(alike(&a, &other) < SAME_KIND);
        assert_eq!(alike(&a, &a), 1.0);
    }
}
