//! Page tokens: the one scheme both fronts hand a client for "the next
//! page" (an AuthZEN search's `page.next_token`, an MCP list's
//! `nextCursor`). A token is `OFFSET.TABLE.SCOPE`: the offset of the next
//! item, the first 16 hex digits of the digest of the table the list was
//! made under, and the front's scope of the list (the search's request
//! key; the MCP list's kind and catalog generation). A token of another
//! list, table or scope is refused, never guessed at: the client lists
//! again from the start.
//!
//! Tokens are not secret and not signed: one only moves the start of a
//! list the caller may read whole, so a forged offset costs nothing.

/// The digits of the table digest a token carries.
const TABLE_DIGITS: usize = 16;

fn table_part(digest: &str) -> &str {
    &digest[..TABLE_DIGITS.min(digest.len())]
}

/// The token of the page starting at `offset` of the list `scope` made
/// under the table of `digest`.
pub fn encode(offset: usize, digest: &str, scope: &str) -> String {
    format!("{offset}.{}.{scope}", table_part(digest))
}

/// The offset a token names, when it is one of the list `scope` under the
/// table of `digest`; `None` otherwise (another list, another table, or
/// not a token).
pub fn offset(token: &str, digest: &str, scope: &str) -> Option<usize> {
    let mut parts = token.splitn(3, '.');
    let (offset, table, of) = (parts.next()?, parts.next()?, parts.next()?);
    if table != table_part(digest) || of != scope {
        return None;
    }
    // Digits only: `+4` or ` 4` is not a token this scheme wrote.
    if offset.is_empty() || !offset.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    offset.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_token_names_its_offset_only_for_its_own_list_and_table() {
        let t = encode(40, DIGEST, "tools.3");
        assert_eq!(t, "40.0123456789abcdef.tools.3");
        assert_eq!(offset(&t, DIGEST, "tools.3"), Some(40));
        // Another scope, another table, a cut or altered token: refused.
        assert_eq!(offset(&t, DIGEST, "tools.4"), None);
        assert_eq!(offset(&t, DIGEST, "prompts.3"), None);
        let other = DIGEST.replace('0', "f");
        assert_eq!(offset(&t, &other, "tools.3"), None);
        for bad in [
            "",
            "40",
            "40.0123456789abcdef",
            "+40.0123456789abcdef.tools.3",
            "x.0123456789abcdef.tools.3",
            "99999999999999999999999.0123456789abcdef.tools.3",
            "4.0000000000000000",
        ] {
            assert_eq!(offset(bad, DIGEST, "tools.3"), None, "{bad}");
        }
    }
}
