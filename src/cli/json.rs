//! A minimal JSON writer for one-object-per-line output.

/// Appends `s` as a JSON string literal (with quotes) to `out`.
pub fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `s` as a JSON string literal (with quotes).
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_str(&mut out, s);
    out
}

/// Appends `s` as a JSON string, or `null` for `None`.
pub fn push_opt(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.push_str("null"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_escapes() {
        let mut s = String::new();
        super::push_str(&mut s, "a\"b\\c\td\u{1}é");
        assert_eq!(s, r#""a\"b\\c\td\u0001é""#);
    }
}
