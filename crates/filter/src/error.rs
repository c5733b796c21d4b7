//! Why a filter string was refused: libtraceevent's error codes and the
//! message trace-cmd prints.

/// The error codes of libtraceevent's filter parser (`TEP_ERRNO__*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    MemAllocFailed,
    InvalidArgType,
    InvalidEventName,
    EventNotFound,
    SyntaxError,
    IllegalRvalue,
    IllegalLvalue,
    InvalidRegex,
    IllegalStringCmp,
    IllegalIntegerCmp,
    ReparentNotOp,
    ReparentFailed,
    UnexpectedType,
    IllegalToken,
    InvalidParen,
    UnbalancedParen,
    UnknownToken,
    FilterNotFound,
}

/// Why a filter string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub kind: ErrorKind,
    pub message: String,
}

impl FilterError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        FilterError {
            kind,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FilterError {}
