//! Terminal tables: comfy-table lays out the columns by display width
//! (`größe_prüfen` is twelve columns, a CJK character two), without borders,
//! so the text stays easy to read, grep and diff.

use comfy_table::{presets::NOTHING, CellAlignment, Table};

/// A table with `header`; columns whose index is in `right` are aligned
/// right (counts). Every cell is escaped for the terminal by the caller's
/// `write_out`.
pub fn grid(header: &[&str], right: &[usize], rows: Vec<Vec<String>>) -> String {
    let mut t = Table::new();
    t.load_preset(NOTHING);
    t.set_header(header.to_vec());
    for row in rows {
        t.add_row(row);
    }
    for (i, c) in t.column_iter_mut().enumerate() {
        c.set_padding((0, 2));
        if right.contains(&i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = t.trim_fmt();
    out.push('\n');
    out
}

/// Labelled fields, one per line, the values in one column (`show tool`,
/// `show config`).
pub fn fields(rows: &[(&str, String)]) -> String {
    let mut t = Table::new();
    t.load_preset(NOTHING);
    for (label, value) in rows {
        t.add_row(vec![label.to_string(), value.clone()]);
    }
    for c in t.column_iter_mut() {
        c.set_padding((0, 2));
    }
    let mut out = t.trim_fmt();
    out.push('\n');
    out
}

/// A list for a field: `a, b`, or `-` when empty.
pub fn list_or_dash<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return "-".into();
    }
    items
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn columns_follow_display_width() {
        let out = grid(
            &["tool", "n"],
            &[1],
            vec![
                vec!["größe_prüfen".into(), "7".into()],
                vec!["検索".into(), "12".into()],
                vec!["x".into(), "100".into()],
            ],
        );
        assert_eq!(
            out,
            "tool            n\n\
             größe_prüfen    7\n\
             検索           12\n\
             x             100\n"
        );
    }
}
