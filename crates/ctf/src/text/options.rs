//! What `report` is asked to print (babeltrace2's `sink.text.pretty` and
//! source options: names, fields, clock, colour, `--begin`/`--end`...) and
//! what it found ([`Summary`]).

/// Which field names are printed (`--names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    pub payload: bool,
    pub context: bool,
    pub scope: bool,
    pub header: bool,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            payload: true,
            context: true,
            scope: false,
            header: false,
        }
    }
}

/// Which optional header fields are printed (`--fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub trace: bool,
    pub hostname: bool,
    pub domain: bool,
    pub procname: bool,
    pub vpid: bool,
    pub loglevel: bool,
    pub emf: bool,
    pub callsite: bool,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            trace: false,
            hostname: true,
            domain: false,
            procname: true,
            vpid: true,
            loglevel: false,
            emf: false,
            callsite: false,
        }
    }
}

impl Fields {
    pub(super) fn all(v: bool) -> Fields {
        Fields {
            trace: v,
            hostname: v,
            domain: v,
            procname: v,
            vpid: v,
            loglevel: v,
            emf: v,
            callsite: v,
        }
    }

    /// The flag a `--fields` name sets.
    pub(super) fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "trace" => &mut self.trace,
            "trace:hostname" => &mut self.hostname,
            "trace:domain" => &mut self.domain,
            "trace:procname" => &mut self.procname,
            "trace:vpid" => &mut self.vpid,
            "loglevel" => &mut self.loglevel,
            "emf" => &mut self.emf,
            "callsite" => &mut self.callsite,
            _ => return None,
        })
    }
}

/// Options of the babeltrace2 text output, with babeltrace2's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// `--clock-cycles`: timestamps in cycles.
    pub clock_cycles: bool,
    /// `--clock-seconds`: `SECONDS.NANOSECONDS`.
    pub clock_seconds: bool,
    /// `--clock-date`: print the date.
    pub clock_date: bool,
    /// `--clock-gmt`: UTC instead of local time.
    pub clock_gmt: bool,
    /// `--no-delta`.
    pub no_delta: bool,
    pub names: Names,
    pub fields: Fields,
    /// `--begin` / `--end`, in babeltrace2's time syntax.
    pub begin: Option<String>,
    pub end: Option<String>,
    /// `--clock-offset` (seconds) and `--clock-offset-ns`.
    pub clock_offset_s: i64,
    pub clock_offset_ns: i64,
    /// Damage (a packet that cannot be read) is an error, as in
    /// babeltrace2; by default it is reported on `warn` and every intact
    /// packet is printed.
    pub strict: bool,
    /// Time zone for local times, as a `TZ` value (`UTC`,
    /// `Europe/Paris`...); `None`: the process's (`TZ`, `/etc/localtime`).
    pub timezone: Option<String>,
    /// Rendering threads: `None` picks by the number of cores; `Some(1)`
    /// renders on the printing thread; `Some(n)` uses `n` workers for each
    /// stream whose packets can be decoded independently. The output is
    /// the same in every case.
    pub threads: Option<usize>,
    /// Bytes of packets per work unit when a stream is rendered by several
    /// workers (default 512 KiB; small values exercise the machinery in
    /// tests).
    pub segment_bytes: Option<u64>,
    /// Print every event record's body by walking its fields, without the
    /// per-class plans (the output is the same; for tests and comparisons).
    pub no_body_plans: bool,
}

impl TextOptions {
    /// Set the babeltrace2 option `flag` (`--clock-cycles`,
    /// `--clock-seconds`, `--clock-date`, `--clock-gmt`, `--no-delta`);
    /// false when `flag` is not one of them.
    pub fn set_flag(&mut self, flag: &str) -> bool {
        let on = match flag {
            "--clock-cycles" => &mut self.clock_cycles,
            "--clock-seconds" => &mut self.clock_seconds,
            "--clock-date" => &mut self.clock_date,
            "--clock-gmt" => &mut self.clock_gmt,
            "--no-delta" => &mut self.no_delta,
            _ => return false,
        };
        *on = true;
        true
    }

    /// Apply a `--names` list (`all`, `none`, `payload`/`args`/`arg`,
    /// `context`/`ctx`, `scope`, `header`), as babeltrace2 does: naming
    /// items starts from none.
    pub fn set_names(&mut self, list: &str) -> Result<(), String> {
        let mut all = false;
        let mut none = false;
        let mut items = Vec::new();
        for it in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match it {
                "payload" | "args" | "arg" => items.push("payload"),
                "context" | "ctx" => items.push("context"),
                "scope" | "header" => items.push(it),
                "all" => all = true,
                "none" => none = true,
                _ => return Err(format!("unknown field name: `{it}`")),
            }
        }
        if all && none {
            return Err("`all` and `none` together".into());
        }
        if all || none {
            let v = all;
            self.names = Names {
                payload: v,
                context: v,
                scope: v,
                header: v,
            };
        } else if !items.is_empty() {
            self.names = Names {
                payload: false,
                context: false,
                scope: false,
                header: false,
            };
        }
        for it in items {
            match it {
                "payload" => self.names.payload = true,
                "context" => self.names.context = true,
                "scope" => self.names.scope = true,
                _ => self.names.header = true,
            }
        }
        Ok(())
    }

    /// Apply a `--fields` list (`all`, `trace`, `trace:hostname`,
    /// `trace:domain`, `trace:procname`, `trace:vpid`, `loglevel`, `emf`,
    /// `callsite`).
    pub fn set_fields(&mut self, list: &str) -> Result<(), String> {
        // the named fields only, or all of them
        let mut chosen = Fields::all(false);
        let mut named = false;
        let mut all = false;
        for it in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if it == "all" {
                all = true;
            } else {
                let flag = chosen.flag(it).ok_or(format!("unknown field: `{it}`"))?;
                *flag = true;
                named = true;
            }
        }
        if all {
            self.fields = Fields::all(true);
        } else if named {
            self.fields = chosen;
        }
        Ok(())
    }
}

/// What a report printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Event lines printed.
    pub events: u64,
    /// Discarded-events / discarded-packets warnings.
    pub discarded_notices: u64,
    /// Damage reported on `warn` (lenient mode).
    pub damaged: u64,
}
