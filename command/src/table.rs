//! A plain-text table: a header, columns padded to their widest cell, the
//! last column cut to fit a width.

use super::text::ellipsize;

/// Rows under a header.
pub(crate) struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: Vec<&'static str>) -> Self {
        Table {
            header,
            rows: Vec::new(),
        }
    }

    /// Adds a row; its cells must already be one line each.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }

    /// The table as lines, none wider than `width` chars unless the columns
    /// before the last one already are.
    pub(crate) fn render(&self, width: usize) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let before_last: usize = widths[..columns - 1].iter().map(|w| w + 2).sum();
        let last = width.saturating_sub(before_last).max(12);
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == columns {
                    line.push_str(&ellipsize(cell, last));
                } else {
                    line.push_str(cell);
                    let pad = widths[i] - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_columns_and_cuts_the_last() {
        let mut table = Table::new(vec!["NAME", "KIND", "DESCRIPTION"]);
        table.row(vec!["read".into(), "read".into(), "Read a file.".into()]);
        table.row(vec![
            "web_fetch".into(),
            "fetch".into(),
            "Fetch a URL and return its body as text, cut to a budget.".into(),
        ]);
        table.row(vec!["x".into(), "other".into(), String::new()]);
        assert_eq!(
            table.render(40),
            "NAME       KIND   DESCRIPTION\n\
             read       read   Read a file.\n\
             web_fetch  fetch  Fetch a URL and return…\n\
             x          other\n"
        );
    }
}
