//! Names as writers of the model must spell them, shared by the writers and
//! the printers that show what a writer writes (the CTF writer and the
//! babeltrace2-style printer must agree to the byte).

/// TSDL's keywords (babeltrace2's CTF 1.8 lexer): a variant option of one of
/// these names is written, and its tag's label shown, with a leading `_`.
pub const TSDL_KEYWORDS: [&str; 32] = [
    "align",
    "callsite",
    "const",
    "char",
    "clock",
    "double",
    "enum",
    "env",
    "event",
    "floating_point",
    "float",
    "integer",
    "int",
    "long",
    "short",
    "signed",
    "stream",
    "string",
    "struct",
    "trace",
    "typealias",
    "typedef",
    "unsigned",
    "variant",
    "void",
    "_Bool",
    "_Complex",
    "_Imaginary",
    "TRUE",
    "FALSE",
    "true",
    "false",
];

/// The bytes of `name` as an identifier: characters other than ASCII
/// letters, digits and `_` become `_`; an empty name or one that starts
/// with a digit gets a leading `_`.
pub fn ident_bytes(name: &str) -> impl Iterator<Item = u8> + '_ {
    let lead = name.is_empty() || name.as_bytes()[0].is_ascii_digit();
    lead.then_some(b'_')
        .into_iter()
        .chain(name.chars().map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c as u8
            } else {
                b'_'
            }
        }))
}

/// Append `name` as an identifier (see [`ident_bytes`]).
pub fn push_ident(out: &mut Vec<u8>, name: &str) {
    out.extend(ident_bytes(name));
}

/// `name` as an identifier (see [`push_ident`]).
pub fn ident(name: &str) -> String {
    let mut b = Vec::with_capacity(name.len() + 1);
    push_ident(&mut b, name);
    // only ASCII was pushed
    String::from_utf8(b).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert_eq!(ident("a b-c"), "a_b_c");
        assert_eq!(ident(""), "_");
        assert_eq!(ident("9x"), "_9x");
        assert_eq!(ident("é"), "_");
    }
}
