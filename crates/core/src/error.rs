//! Errors that carry the section and the byte offset where they happened.

use std::borrow::Cow;
use std::fmt;

/// What went wrong.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A structure needs more bytes than remain.
    UnexpectedEof,
    /// The file does not start with a magic number this reader knows.
    BadMagic,
    /// A value is out of range or inconsistent with the rest of the file.
    Invalid(String),
    /// Valid input that this version of tracemux cannot read yet.
    Unsupported(String),
    /// A compressed block could not be decompressed.
    Decompress(String),
    /// An I/O error (the message of the OS error).
    Io(String),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnexpectedEof => f.write_str("unexpected end of data"),
            ErrorKind::BadMagic => f.write_str("bad magic number"),
            ErrorKind::Invalid(m) => f.write_str(m),
            ErrorKind::Unsupported(m) => write!(f, "not supported: {m}"),
            ErrorKind::Decompress(m) => write!(f, "decompression failed: {m}"),
            ErrorKind::Io(m) => write!(f, "I/O error: {m}"),
        }
    }
}

/// An error with the section of the file and the absolute byte offset it
/// refers to, formatted like
/// `unexpected end of data in section 'options' at offset 0x1a2c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub section: Cow<'static, str>,
    pub offset: u64,
}

impl Error {
    pub fn new(kind: ErrorKind, section: impl Into<Cow<'static, str>>, offset: u64) -> Self {
        Error {
            kind,
            section: section.into(),
            offset,
        }
    }

    pub fn invalid(
        msg: impl Into<String>,
        section: impl Into<Cow<'static, str>>,
        offset: u64,
    ) -> Self {
        Error::new(ErrorKind::Invalid(msg.into()), section, offset)
    }

    pub fn eof(section: impl Into<Cow<'static, str>>, offset: u64) -> Self {
        Error::new(ErrorKind::UnexpectedEof, section, offset)
    }

    /// The same error, attributed to another section name (used when a
    /// generic parser runs inside a named section).
    pub fn in_section(mut self, section: impl Into<Cow<'static, str>>) -> Self {
        self.section = section.into();
        self
    }

    /// Shift the offset by `base` (for parsers that ran on a sub-slice).
    pub fn rebase(mut self, base: u64) -> Self {
        self.offset = self.offset.saturating_add(base);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} in section '{}' at offset {:#x}",
            self.kind, self.section, self.offset
        )
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_section_and_offset() {
        let e = Error::eof("options", 0x1a2c);
        assert_eq!(
            e.to_string(),
            "unexpected end of data in section 'options' at offset 0x1a2c"
        );
    }
}
