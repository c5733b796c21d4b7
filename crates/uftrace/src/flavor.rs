//! Which uftrace's output the printers reproduce.
//!
//! uftrace's text outputs changed between the version Debian 12 ships
//! (0.13) and the newer ones on the same data: from 0.17 on a task ID takes
//! 7 columns instead of 6 (`TASK_ID_LEN`: replay's `[TID]`, dump's `TID:`,
//! `info --task`, `report --task`), dump names the feature bits of 0.14+
//! (`SYM_SIZE`) and the info bit `UTC_OFFSET`, and `dump --chrome` puts
//! timestamps in the time of the recording's UTC offset. Newer versions
//! also read what 0.13 cannot (watch points on variables, octal
//! arguments), which is read the same way in both flavours.
//!
//! The default is the uftrace that made the recording (the `uftrace_version`
//! line of `info`): a recording of 0.14 or later prints as uftrace 0.19
//! (the newer uftrace these printers were checked against), anything else as
//! 0.13. Versions 0.14 to 0.18 were not checked and may differ from both.

/// The version string of the uftrace 0.19 the fixtures were checked with
/// (built from its sources on Debian 12 with libelf, libdw, python3 and
/// ncurses, see `tests/fixtures/uftrace/newer/README.md`).
pub const UFTRACE_0_19_VERSION: &str = "v0.19 ( x86_64 dwarf python3 tui perf sched )";

/// The uftrace whose output a printer reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Flavor {
    /// uftrace 0.13 (Debian 12's).
    #[default]
    V0_13,
    /// uftrace 0.19 (and, unchecked, 0.14 to 0.18).
    V0_19,
}

impl Flavor {
    /// The flavour of a recording made by the uftrace whose version line
    /// is `version` (`v0.19 ( x86_64 dwarf ... )`); `None` (no version
    /// recorded) and unreadable versions are 0.13.
    pub fn of_recording(version: Option<&str>) -> Flavor {
        let Some(v) = version else {
            return Flavor::V0_13;
        };
        let v = v.trim_start().trim_start_matches('v');
        let num: String = v
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = num.split('.').map(|p| p.parse::<u32>().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(0), Some(minor)) if minor >= 14 => Flavor::V0_19,
            (Some(major), Some(_)) if major >= 1 => Flavor::V0_19,
            _ => Flavor::V0_13,
        }
    }

    /// Parse a `--uftrace-version` value (`0.13`, `v0.19`, ...): versions
    /// before 0.14 are 0.13, later ones 0.19.
    pub fn parse(s: &str) -> Option<Flavor> {
        let t = s.trim().trim_start_matches('v');
        let ok = t.split('.').count() >= 2 && t.split('.').all(|p| p.parse::<u32>().is_ok());
        ok.then(|| Flavor::of_recording(Some(t)))
    }

    /// Columns of a task ID (`TASK_ID_LEN`, 7 from 0.17 on).
    pub fn tid_len(self) -> usize {
        match self {
            Flavor::V0_13 => 6,
            Flavor::V0_19 => 7,
        }
    }

    /// Columns of the task ID in `uftrace dump` (`%5d` in 0.13).
    pub fn dump_tid_len(self) -> usize {
        match self {
            Flavor::V0_13 => 5,
            Flavor::V0_19 => 7,
        }
    }

    /// What follows `uftrace ` in the version lines of `dump --chrome` and
    /// `dump --graphviz` (the running uftrace's, not the recording's): 0.13
    /// as Debian 12 builds it, 0.19 as built for these fixtures (the words
    /// in parentheses are the build's features).
    pub fn version_string(self) -> &'static str {
        match self {
            Flavor::V0_13 => UFTRACE_VERSION,
            Flavor::V0_19 => UFTRACE_0_19_VERSION,
        }
    }

    /// Whether this uftrace knows the 0.14+ header bits by name.
    pub fn newer(self) -> bool {
        self == Flavor::V0_19
    }
}

/// The version string uftrace 0.13 as packaged in Debian 12 prints.
pub const UFTRACE_VERSION: &str = "v0.13 ( x86_64 dwarf python3 luajit tui perf sched dynamic )";

#[cfg(test)]
mod tests {
    use super::Flavor;

    #[test]
    fn versions() {
        let f = |v| Flavor::of_recording(Some(v));
        assert_eq!(
            f("v0.13 ( x86_64 dwarf python3 luajit tui perf sched dynamic )"),
            Flavor::V0_13
        );
        assert_eq!(
            f("v0.19 ( x86_64 dwarf python3 tui perf sched )"),
            Flavor::V0_19
        );
        assert_eq!(f("v0.14"), Flavor::V0_19);
        assert_eq!(f("v0.9.4"), Flavor::V0_13);
        assert_eq!(f("v1.0"), Flavor::V0_19);
        assert_eq!(f("garbage"), Flavor::V0_13);
        assert_eq!(Flavor::of_recording(None), Flavor::V0_13);
        assert_eq!(Flavor::parse("0.19"), Some(Flavor::V0_19));
        assert_eq!(Flavor::parse("v0.13"), Some(Flavor::V0_13));
        assert_eq!(Flavor::parse("new"), None);
        assert_eq!((Flavor::V0_13.tid_len(), Flavor::V0_19.tid_len()), (6, 7));
    }
}
