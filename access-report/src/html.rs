//! The page: one HTML file, its script and style inline and admitted by
//! their SHA-256 in a Content-Security-Policy meta, its data a JSON block.

use sha2::{Digest, Sha256};

use crate::Report;

const SCRIPT: &str = include_str!("page/report.js");
const STYLE: &str = include_str!("page/report.css");

/// Which page: a report file (no network at all) or the console (requests
/// to its own origin only: the data and the simulation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Report,
    Console,
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(A[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn sha256_source(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The Content-Security-Policy of a page: nothing but its own inline script
/// and style; the console may also ask its own origin.
pub fn csp(page: Page) -> String {
    let connect = match page {
        Page::Report => "'none'",
        Page::Console => "'self'",
    };
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src {connect}; base-uri 'none'; form-action 'none'",
        sha256_source(SCRIPT),
        sha256_source(STYLE)
    )
}

/// JSON that cannot end its `<script>` element nor start markup in it:
/// `<`, `>` and `&` as `\u` escapes (they only occur in strings), and
/// U+2028/U+2029, which old JavaScript parsers took for line ends.
pub fn script_json(v: &impl serde::Serialize) -> String {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for an HTML element's content or a quoted attribute.
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(page: Page, title: &str, data: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <noscript>This report renders with JavaScript; its data is the JSON block of this file.</noscript>\n\
         <div id=\"app\"></div>\n\
         <script type=\"application/json\" id=\"toolgate-data\">{data}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        csp = csp(page),
        title = escape_html(title),
    )
}

/// The report file.
pub fn report_page(report: &Report) -> String {
    page(
        Page::Report,
        &format!("toolgate access report: {}", report.title),
        &script_json(&serde_json::json!({ "kind": "report", "report": report })),
    )
}

/// The console's page: the same script, which fetches its data from the
/// service (`/console/v1/report`) and asks it for simulations.
pub fn console_page() -> String {
    page(
        Page::Console,
        "toolgate console",
        &script_json(&serde_json::json!({ "kind": "console" })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_as_rfc_4648_says() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn script_json_cannot_close_its_element() {
        let s = script_json(
            &serde_json::json!({"t": "</script><img src=x onerror=alert(1)>&\u{2028}\u{2029}"}),
        );
        assert_eq!(
            s,
            r#"{"t":"\u003c/script\u003e\u003cimg src=x onerror=alert(1)\u003e\u0026\u2028\u2029"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(
            back["t"],
            "</script><img src=x onerror=alert(1)>&\u{2028}\u{2029}"
        );
    }

    #[test]
    fn the_policy_admits_exactly_the_inline_script_and_style() {
        let p = csp(Page::Report);
        assert!(p.starts_with("default-src 'none'; "));
        assert!(p.contains(&sha256_source(SCRIPT)));
        assert!(p.contains(&sha256_source(STYLE)));
        assert!(p.contains("connect-src 'none'"));
        assert!(csp(Page::Console).contains("connect-src 'self'"));
        let html = console_page();
        assert!(html.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(html.contains(&format!("<style>{STYLE}</style>")));
    }
}
