//! C++ symbol demangling as uftrace does it (`--demangle full|simple|no`).
//!
//! uftrace demangles symbol names when it loads the `.sym` files, so every
//! printed name goes through the selected mode:
//! - `no`: names as stored;
//! - `simple` (the default): the qualified name without parameter lists
//!   and template arguments (`ns::Class::method`);
//! - `full`: the complete demangled signature.

/// Demangling mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Demangle {
    No,
    #[default]
    Simple,
    Full,
}

impl Demangle {
    /// Parse `full`, `simple` or `no` (uftrace's `--demangle` values).
    pub fn parse(s: &str) -> Option<Demangle> {
        match s {
            "full" => Some(Demangle::Full),
            "simple" => Some(Demangle::Simple),
            "no" | "none" => Some(Demangle::No),
            _ => None,
        }
    }
}

/// Demangle `name` in `mode`; names that are not mangled come back as is.
pub fn demangle(name: &str, mode: Demangle) -> String {
    if mode == Demangle::No || !name.starts_with("_Z") {
        return name.to_string();
    }
    match crate::itanium::demangle(name, mode == Demangle::Full) {
        Some(s) => s,
        None => name.to_string(),
    }
}
