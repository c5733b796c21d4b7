//! The tracefs `format` file grammar: `name:`, `ID:`, `format:` with one
//! `field:` line per field, and `print fmt:`.
//!
//! Field declarations are split into type and name the way libtraceevent
//! does it (its `event_read_fields`), because the derived properties (string,
//! long, pointer, dynamic, element size) decide how fields are printed.

use tracemux_core::model::{FieldDef, FieldFlags};

/// One parsed `format` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub name: String,
    pub id: u32,
    pub common_fields: Vec<FieldDef>,
    pub fields: Vec<FieldDef>,
    /// The text after `print fmt: `, verbatim (empty if absent).
    pub print_fmt: String,
}

/// Why a format file could not be parsed (line numbers start at 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

fn err(line: usize, message: impl Into<String>) -> FormatError {
    FormatError {
        line,
        message: message.into(),
    }
}

/// Parse a `format` file. `is_ftrace` enables the quirks libtraceevent
/// accepts only for the `ftrace` system (the `special` keyword, `.` in types).
pub fn parse_format(
    text: &str,
    long_size: u32,
    is_ftrace: bool,
) -> Result<EventFormat, FormatError> {
    let mut name = None;
    let mut id = None;
    let mut common_fields = Vec::new();
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    // 0: before `format:`, 1: common fields, 2: own fields
    let mut group = 0;
    for (i, line) in text.lines().enumerate() {
        let lno = i + 1;
        let t = line.trim();
        if let Some(v) = line.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("ID:") {
            id = Some(
                v.trim()
                    .parse::<u32>()
                    .map_err(|_| err(lno, format!("bad ID '{}'", v.trim())))?,
            );
        } else if t == "format:" {
            group = 1;
        } else if line.starts_with("print fmt:") {
            // The print fmt is the rest of the file: it may span lines (a
            // literal newline inside a string, as in ext4_fc_stats).
            let at = line.as_ptr() as usize - text.as_ptr() as usize + "print fmt:".len();
            let v = &text[at..];
            print_fmt = v
                .strip_prefix(' ')
                .unwrap_or(v)
                .trim_end_matches('\n')
                .to_string();
            break;
        } else if t.is_empty() {
            if group == 1 && !common_fields.is_empty() {
                group = 2;
            }
        } else if t.starts_with("field") {
            if group == 0 {
                return Err(err(lno, "field before 'format:'"));
            }
            let mut f = parse_field_line(t, long_size, is_ftrace).map_err(|m| err(lno, m))?;
            if group == 1 {
                f.flags.0 |= FieldFlags::COMMON;
                common_fields.push(f);
            } else {
                fields.push(f);
            }
        } else {
            return Err(err(lno, format!("unexpected line '{t}'")));
        }
    }
    Ok(EventFormat {
        name: name.ok_or_else(|| err(1, "no 'name:' line"))?,
        id: id.ok_or_else(|| err(1, "no 'ID:' line"))?,
        common_fields,
        fields,
        print_fmt,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Item(&'a str),
    Op(&'a str),
}

fn tokenize(s: &str) -> Vec<Tok<'_>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Item(&s[st..i]));
        } else {
            // one-character operator/delimiter; keep UTF-8 boundaries intact
            let w = s[i..].chars().next().map_or(1, |ch| ch.len_utf8());
            out.push(Tok::Op(&s[i..i + w]));
            i += w;
        }
    }
    out
}

fn type_size(name: &str) -> u32 {
    match name {
        "u8" | "s8" | "char" => 1,
        "u16" | "s16" => 2,
        "u32" | "s32" => 4,
        "u64" | "s64" => 8,
        _ => 0,
    }
}

fn num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Leading-digits value like C's `strtoul` (0 when there are none).
fn strtoul(s: &str) -> u32 {
    let d: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    d.parse().unwrap_or(0)
}

/// Parse `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` (the `signed`
/// part is optional, as in old kernels).
pub fn parse_field_line(line: &str, long_size: u32, is_ftrace: bool) -> Result<FieldDef, String> {
    let rest = line
        .strip_prefix("field")
        .ok_or_else(|| "expected 'field'".to_string())?
        .trim_start();
    let rest = if is_ftrace {
        rest.strip_prefix("special")
            .map(str::trim_start)
            .unwrap_or(rest)
    } else {
        rest
    };
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| "expected ':' after 'field'".to_string())?;
    let mut parts = rest.split(';');
    let decl = parts.next().unwrap_or("");
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for p in parts {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        let (k, v) = p
            .split_once(':')
            .ok_or_else(|| format!("bad attribute '{p}'"))?;
        let v = num(v).ok_or_else(|| format!("bad number in '{p}'"))?;
        match k.trim() {
            "offset" => offset = Some(v),
            "size" => size = Some(v),
            "signed" => signed = v != 0,
            _ => {}
        }
    }
    let offset = offset.ok_or("missing offset")?;
    let size = size.ok_or("missing size")?;
    let offset = u32::try_from(offset).map_err(|_| "offset too large")?;
    let size = u32::try_from(size).map_err(|_| "size too large")?;

    let toks = tokenize(decl);
    let mut it = toks.iter().copied().peekable();
    let mut last = match it.next() {
        Some(Tok::Item(s)) => s.to_string(),
        _ => return Err("expected a type".into()),
    };
    let mut ty: Option<String> = None;
    let mut flags = 0u32;
    let mut next = it.next();
    loop {
        match next {
            Some(Tok::Item(t)) | Some(Tok::Op(t @ "*")) => {
                if t == "*" {
                    flags |= FieldFlags::POINTER;
                }
                push_type(&mut ty, " ", &last);
                last = t.to_string();
                next = it.next();
            }
            Some(Tok::Op(".")) if is_ftrace => {
                push_type(&mut ty, " ", &last);
                last = ".".into();
                next = it.next();
            }
            Some(Tok::Op("(")) if last == "__attribute__" => {
                let t = ty.get_or_insert_with(String::new);
                t.push_str(" __attribute__(");
                let mut depth = 1;
                let mut delim = " ";
                loop {
                    match it.next() {
                        None => break,
                        Some(Tok::Op(d)) if d == "(" || d == ")" => {
                            if d == "(" {
                                depth += 1
                            } else {
                                depth -= 1
                            }
                            if depth == 0 {
                                break;
                            }
                            t.push_str(d);
                            delim = "";
                            last = d.to_string();
                        }
                        Some(Tok::Item(s)) | Some(Tok::Op(s)) => {
                            t.push_str(delim);
                            t.push_str(s);
                            delim = " ";
                            last = s.to_string();
                        }
                    }
                }
                next = it.next();
            }
            _ => break,
        }
    }
    let mut ty = ty.ok_or("no type found")?;
    let mut name = last;
    let mut array_len = 0u32;
    let mut size_dynamic = 0;
    if next == Some(Tok::Op("[")) {
        flags |= FieldFlags::ARRAY;
        let mut brackets = String::from("[");
        let mut last_item = false;
        loop {
            match it.next() {
                None => return Err("unterminated '['".into()),
                Some(Tok::Op("]")) => break,
                Some(Tok::Item(s)) => {
                    if last_item {
                        brackets.push(' ');
                    }
                    brackets.push_str(s);
                    array_len = strtoul(s);
                    last_item = true;
                }
                Some(Tok::Op(s)) => {
                    brackets.push_str(s);
                    array_len = 0;
                    last_item = false;
                }
            }
        }
        brackets.push(']');
        match it.next() {
            Some(Tok::Item(real)) => {
                // `type [] item;` (as in `__data_loc char[] name`)
                ty.push(' ');
                ty.push_str(&name);
                ty.push_str(&brackets);
                size_dynamic = type_size(&name);
                name = real.to_string();
            }
            _ => ty.push_str(&brackets),
        }
    }
    if flags & FieldFlags::ARRAY != 0
        && (ty.contains("char") || ty.contains("u8") || ty.contains("s8"))
    {
        flags |= FieldFlags::STRING;
    }
    if ty.starts_with("__data_loc") {
        flags |= FieldFlags::DYNAMIC;
    }
    if ty.starts_with("__rel_loc") {
        flags |= FieldFlags::DYNAMIC | FieldFlags::RELATIVE;
    }
    if ty.contains("long") {
        flags |= FieldFlags::LONG;
    }
    if flags & FieldFlags::DYNAMIC != 0 && size == 2 {
        flags |= FieldFlags::STRING | FieldFlags::ARRAY;
    }
    if signed {
        flags |= FieldFlags::SIGNED;
    }
    let elem_size = if flags & (FieldFlags::ARRAY | FieldFlags::DYNAMIC) != 0 {
        if let Some(e) = size.checked_div(array_len) {
            e
        } else if flags & FieldFlags::DYNAMIC != 0 {
            size_dynamic
        } else if flags & FieldFlags::STRING != 0 {
            1
        } else if flags & FieldFlags::LONG != 0 {
            long_size
        } else {
            0
        }
    } else {
        size
    };
    Ok(FieldDef {
        name,
        type_name: ty,
        offset,
        size,
        flags: FieldFlags(flags),
        array_len,
        elem_size,
    })
}

fn push_type(ty: &mut Option<String>, delim: &str, tok: &str) {
    match ty {
        Some(t) => {
            t.push_str(delim);
            t.push_str(tok);
        }
        None => *ty = Some(tok.to_string()),
    }
}

/// The parts of `header_page` that decide the page layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeader {
    /// Size of the `commit` field: 4 or 8 (a 12- or 16-byte page header).
    pub commit_size: u32,
    /// Offset of the event data in a page (the `data` field's offset).
    pub data_offset: u32,
}

/// Parse the text of `header_page`. When fields are missing, the layout of
/// the file's long size is assumed (as trace-cmd does).
pub fn parse_header_page(text: &str, long_size: u32) -> PageHeader {
    let mut commit = None;
    let mut data = None;
    for line in text.lines() {
        let t = line.trim();
        if !t.starts_with("field") {
            continue;
        }
        if let Ok(f) = parse_field_line(t, long_size, false) {
            match f.name.as_str() {
                "commit" => commit = Some(f.size),
                "data" => data = Some(f.offset),
                _ => {}
            }
        }
    }
    let commit_size = match commit {
        Some(4) => 4,
        Some(8) => 8,
        _ => long_size.clamp(4, 8),
    };
    PageHeader {
        commit_size,
        data_offset: data.unwrap_or(8 + commit_size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(s: &str) -> FieldDef {
        parse_field_line(s, 8, false).unwrap()
    }

    #[test]
    fn plain_and_array_fields() {
        let f = field("field:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;");
        assert_eq!(f.name, "prev_comm");
        assert_eq!(f.type_name, "char[16]");
        assert_eq!(f.array_len, 16);
        assert_eq!(f.elem_size, 1);
        assert!(f.flags.has(FieldFlags::ARRAY) && f.flags.has(FieldFlags::STRING));

        let f = field("field:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;");
        assert_eq!(
            (f.name.as_str(), f.type_name.as_str()),
            ("caller", "unsigned long[8]")
        );
        assert_eq!(f.elem_size, 8);
        assert!(f.flags.has(FieldFlags::LONG) && !f.flags.has(FieldFlags::STRING));

        let f = field("field:long prev_state;\toffset:32;\tsize:8;\tsigned:1;");
        assert!(f.flags.has(FieldFlags::SIGNED) && f.flags.has(FieldFlags::LONG));

        let f = field("field:const char * filename;\toffset:24;\tsize:8;\tsigned:0;");
        assert_eq!(
            (f.name.as_str(), f.type_name.as_str()),
            ("filename", "const char *")
        );
        assert!(f.flags.has(FieldFlags::POINTER) && !f.flags.has(FieldFlags::STRING));
    }

    #[test]
    fn dynamic_fields() {
        let f = field("field:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;");
        assert_eq!(
            (f.name.as_str(), f.type_name.as_str()),
            ("name", "__data_loc char[]")
        );
        let want = FieldFlags::ARRAY | FieldFlags::STRING | FieldFlags::DYNAMIC;
        assert_eq!(f.flags.0 & want, want);
        assert_eq!(f.elem_size, 1);
        let f = field("field:__rel_loc u32[] vals;\toffset:8;\tsize:4;\tsigned:0;");
        assert!(f.flags.has(FieldFlags::RELATIVE));
        assert_eq!(f.elem_size, 4);
        let f = field("field:char buf[];\toffset:16;\tsize:0;\tsigned:0;");
        assert_eq!(f.array_len, 0);
        assert_eq!(f.elem_size, 1);
    }

    #[test]
    fn format_file() {
        let text = "name: wakeup\nID: 3\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:int prio;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"prio=%d\", REC->prio\n";
        let f = parse_format(text, 8, false).unwrap();
        assert_eq!(f.name, "wakeup");
        assert_eq!(f.id, 3);
        assert_eq!(f.common_fields.len(), 2);
        assert_eq!(f.fields.len(), 1);
        assert_eq!(f.print_fmt, "\"prio=%d\", REC->prio");
        assert!(parse_format("ID: x\n", 8, false).is_err());
    }

    #[test]
    fn header_page_commit_size() {
        let t = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        assert_eq!(
            parse_header_page(t, 8),
            PageHeader {
                commit_size: 8,
                data_offset: 16
            }
        );
        let t4 = t
            .replace("size:8;\tsigned:1", "size:4;\tsigned:1")
            .replace("offset:16", "offset:12");
        assert_eq!(parse_header_page(&t4, 4).commit_size, 4);
        assert_eq!(parse_header_page(&t4, 4).data_offset, 12);
    }
}
