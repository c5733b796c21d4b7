//! Itanium C++ ABI name demangler (the subset uftrace's output needs).

/// Demangle an `_Z...` name; `full` keeps parameter lists and template
/// arguments. `None` when the name cannot be parsed.
pub fn demangle(_name: &str, _full: bool) -> Option<String> {
    None
}
