//! Opening a `uftrace.data` directory: header, info sections, sessions and
//! tasks, symbol tables, argument specs, data files.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use tracemux_core::{Endian, Error, ErrorKind, Result};

use crate::argspec::{trig, ArgSpec, AutoArgs, FilterMode, FilterSetting, ModuleView};
use crate::events::UserEvents;
use crate::header::{feat, FileHeader, InfoSections, PatternType, HEADER_SIZE};
use crate::record::Damage;
use crate::symbols::{
    alt_symfile_name, basename, symfile_header, Map, Module, SessionMaps, Symbol,
};
use crate::task::Sessions;
use crate::Demangle;

/// Bytes of a data file, owned or mapped.
pub type Bytes = Box<dyn DataBytes>;

/// The contents of a data file, with a way to hand back the parts already
/// read. Readers walk each file forward once; a memory-mapped file can drop
/// the pages behind the reader so the resident set stays flat whatever the
/// trace size.
pub trait DataBytes: AsRef<[u8]> + Send + Sync {
    /// `[start, end)` has been read and will rarely be looked at again
    /// (a later access must still see the same bytes). The default keeps
    /// everything.
    fn release(&self, _start: u64, _end: u64) {}
}

impl DataBytes for Vec<u8> {}

/// How data files (`<tid>.dat`, `perf-cpu*.dat`) are brought into memory.
/// The library reads them with `std::fs::read`; the CLI passes a loader
/// that memory-maps them.
pub trait Loader {
    fn load(&self, path: &Path) -> std::io::Result<Bytes>;
}

/// Reads whole files into memory.
pub struct ReadLoader;

impl Loader for ReadLoader {
    fn load(&self, path: &Path) -> std::io::Result<Bytes> {
        Ok(Box::new(std::fs::read(path)?))
    }
}

/// Options for [`UftraceData::open`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenOptions {
    pub demangle: Demangle,
    /// Damage (bad magic inside a data file, truncation, unknown feature
    /// bits...) becomes an error instead of a warning.
    pub strict: bool,
}

/// The data file of one task.
pub struct TaskFile {
    pub tid: i32,
    /// `None` when `<tid>.dat` could not be read.
    pub data: Option<Bytes>,
}

impl TaskFile {
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Some(b) => (**b).as_ref(),
            None => &[],
        }
    }

    /// Hand `[start, end)` of the data file back to its loader.
    pub fn release(&self, start: u64, end: u64) {
        if let Some(b) = &self.data {
            b.release(start, end);
        }
    }
}

/// One `perf-cpu<N>.dat` file.
pub struct PerfFile {
    pub name: String,
    pub data: Bytes,
}

/// An opened recording.
pub struct UftraceData {
    pub dir: PathBuf,
    pub header: FileHeader,
    pub info: InfoSections,
    pub sessions: Sessions,
    /// Symbol tables shared by sessions (indexed by [`Map::module`]).
    pub modules: Vec<Module>,
    pub auto_args: AutoArgs,
    pub user_events: UserEvents,
    /// In `info` task order (the tie-break order of the merge).
    pub tasks: Vec<TaskFile>,
    /// Sorted by file name, as uftrace globs them.
    pub perf: Vec<PerfFile>,
    /// Kernel data (`-k` recordings whose header has the KERNEL bit).
    pub kernel: Option<crate::kernel::KernelData>,
    pub options: OpenOptions,
    /// Whose output the printers reproduce: by default the uftrace that
    /// made the recording (see [`crate::flavor`]); the caller may change it.
    pub flavor: crate::Flavor,
    /// Damage found while opening (each also printed by the callers).
    pub damage: Vec<Damage>,
}

/// The names of the `perf-cpuN.dat` files of the recording `dir`, sorted.
pub(crate) fn perf_files(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("perf-cpu") && n.ends_with(".dat"))
        .collect();
    names.sort();
    names
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

impl UftraceData {
    /// Open the directory with the default loader (whole-file reads).
    pub fn open(dir: &Path, options: OpenOptions) -> Result<UftraceData> {
        Self::open_with(dir, options, &ReadLoader)
    }

    /// Open the directory, loading data files through `loader`.
    pub fn open_with(
        dir: &Path,
        mut options: OpenOptions,
        loader: &dyn Loader,
    ) -> Result<UftraceData> {
        let info_path = dir.join("info");
        let raw = std::fs::read(&info_path).map_err(|e| {
            Error::new(
                ErrorKind::Io(format!("{}: {e}", info_path.display())),
                "info",
                0,
            )
        })?;
        let header = FileHeader::parse(&raw)?;
        let mut damage = Vec::new();
        let dmg = |file: &str, offset: u64, message: String| Damage {
            file: Cow::Owned(file.to_string()),
            offset,
            message,
        };
        if header.feat_mask & !feat::KNOWN != 0 {
            let d = dmg(
                "info",
                16,
                format!(
                    "unknown feature bits {:#x}",
                    header.feat_mask & !feat::KNOWN
                ),
            );
            if options.strict {
                return Err(Error::invalid(d.message, "info", 16));
            }
            damage.push(d);
        }
        let text_start =
            (header.header_size as usize).clamp(HEADER_SIZE, raw.len().max(HEADER_SIZE));
        let text = raw.get(text_start..).unwrap_or(&[]);
        let (info, ierr) = InfoSections::parse(text, text_start as u64, header.info_mask);
        if let Some(e) = ierr {
            if options.strict {
                return Err(e);
            }
            damage.push(dmg("info", e.offset, e.kind.to_string()));
        }
        let flavor = crate::Flavor::of_recording(info.uftrace_version.as_deref());
        if flavor.newer() && options.demangle == Demangle::Full {
            options.demangle = Demangle::FullMangled;
        }
        let mut data = UftraceData {
            flavor,
            dir: dir.to_path_buf(),
            header,
            info,
            sessions: Sessions::default(),
            modules: Vec::new(),
            auto_args: AutoArgs::default(),
            user_events: UserEvents::default(),
            tasks: Vec::new(),
            perf: Vec::new(),
            kernel: None,
            options,
            damage,
        };
        data.load_sessions(true);
        data.setup_args();
        if data.header.feat_mask & feat::EVENT != 0 {
            if let Some(t) = read_text(&dir.join("events.txt")) {
                data.user_events = UserEvents::parse(&t);
            }
        }
        data.load_tasks(loader);
        if data.header.feat_mask & feat::KERNEL != 0 {
            let tids: Vec<i32> = data.tasks.iter().map(|t| t.tid).collect();
            data.kernel = crate::kernel::load(dir, &tids, options.demangle, &mut data.damage);
        }
        if data.header.feat_mask & feat::PERF_EVENT != 0 {
            data.load_perf(loader);
        }
        Ok(data)
    }

    fn push_damage(&mut self, file: &str, offset: u64, message: String) {
        self.damage.push(Damage {
            file: Cow::Owned(file.to_string()),
            offset,
            message,
        });
    }

    /// Byte order of the data files.
    pub fn endian(&self) -> Endian {
        self.header.endian
    }

    fn load_sessions(&mut self, with_symbols: bool) {
        let Some(text) = read_text(&self.dir.join("task.txt")) else {
            if self.header.feat_mask & feat::TASK_SESSION != 0 {
                self.push_damage("task.txt", 0, "missing task file".into());
            }
            return;
        };
        if let Some(off) = self.sessions.parse(&text, with_symbols) {
            self.push_damage("task.txt", off, "malformed line".into());
        }
        if !with_symbols {
            return;
        }
        for si in 0..self.sessions.sessions.len() {
            let sid = self.sessions.sessions[si].sid.clone();
            let name = format!("sid-{sid}.map");
            let maps = match read_text(&self.dir.join(&name)) {
                Some(t) => SessionMaps::parse(&t),
                None => {
                    self.push_damage(&name, 0, "missing session map file".into());
                    SessionMaps::default()
                }
            };
            self.sessions.sessions[si].maps = maps;
            let nmaps = self.sessions.sessions[si].maps.maps.len();
            for mi in 0..nmaps {
                let (lib, bid) = {
                    let m = &self.sessions.sessions[si].maps.maps[mi];
                    (m.libname.clone(), m.build_id.clone())
                };
                let b = basename(&lib);
                if matches!(
                    b,
                    "libmcount.so"
                        | "libmcount-fast.so"
                        | "libmcount-single.so"
                        | "libmcount-fast-single.so"
                ) {
                    continue;
                }
                let idx = self.module(&lib, &bid);
                self.sessions.sessions[si].maps.maps[mi].module = Some(idx);
            }
            let ndl = self.sessions.sessions[si].dlopens.len();
            for di in 0..ndl {
                let lib = self.sessions.sessions[si].dlopens[di].libname.clone();
                let idx = self.module(&lib, "");
                self.sessions.sessions[si].dlopens[di].module = Some(idx);
            }
        }
        // the main executable's symbols are needed for any output
        for si in 0..self.sessions.sessions.len() {
            let exe = self.sessions.sessions[si].exename.clone();
            let found = self.sessions.sessions[si]
                .maps
                .maps
                .iter()
                .find(|m| m.libname == exe)
                .and_then(|m| m.module)
                .map(|i| self.modules[i].has_symfile);
            if found == Some(false) {
                let f = format!("{}.sym", basename(&exe));
                self.push_damage(&f, 0, "missing symbol file".into());
            }
        }
    }

    /// Find or load the module `path` with `build_id`.
    fn module(&mut self, path: &str, build_id: &str) -> usize {
        if let Some(i) = self
            .modules
            .iter()
            .position(|m| m.path == path && m.build_id == build_id)
        {
            return i;
        }
        let mut m = Module {
            path: path.to_string(),
            build_id: build_id.to_string(),
            ..Module::default()
        };
        let base = basename(path);
        let mut symfile = format!("{base}.sym");
        if let Some(t) = read_text(&self.dir.join(&symfile)) {
            let (p, b) = symfile_header(&t);
            let differs_path = p.is_some_and(|p| p != path);
            let differs_bid =
                b.is_some_and(|b| !b.is_empty() && !build_id.is_empty() && b != build_id);
            if (p.is_some() || b.is_some()) && (differs_path || differs_bid) {
                symfile = alt_symfile_name(&symfile, path, build_id);
            }
        }
        if let Some(t) = read_text(&self.dir.join(&symfile)) {
            m.load_symbols(&t, self.options.demangle);
            m.has_symfile = true;
        }
        // debug info
        let mut dbgfile = format!("{base}.dbg");
        if let Some(t) = read_text(&self.dir.join(&dbgfile)) {
            let (p, b) = symfile_header(&t);
            let mut ok = true;
            if let Some(p) = p {
                ok = p == path;
            }
            if let Some(b) = b {
                ok = b == build_id;
            }
            if !ok {
                let alt = alt_symfile_name(&format!("{base}.sym"), path, build_id);
                dbgfile = format!("{}dbg", &alt[..alt.len() - 3]);
            }
        }
        if let Some(t) = read_text(&self.dir.join(&dbgfile)) {
            if !m.load_debug(&t) {
                self.push_damage(&dbgfile, 0, "invalid debug info file".into());
            }
        }
        self.modules.push(m);
        self.modules.len() - 1
    }

    fn setup_args(&mut self) {
        if self.header.info_mask & crate::header::info_bit::ARG_SPEC == 0 {
            return;
        }
        let lp64 = self.header.is_lp64();
        if self.header.feat_mask & feat::AUTO_ARGS != 0 {
            self.auto_args = AutoArgs::build(
                self.info.autoarg.as_deref(),
                self.info.autoret.as_deref(),
                self.info.autoenum.as_deref(),
                lp64,
                self.options.demangle,
            );
        }
        let ptype = self.info.pattern;
        let argspec = self.info.argspec.clone();
        let retspec = self.info.retspec.clone();
        self.add_spec_pass(argspec.as_deref(), retspec.as_deref(), ptype, false);
        if self.info.auto_args_enabled {
            let (a, r) = if self.header.feat_mask & feat::DEBUG_INFO != 0 {
                let p = if ptype == PatternType::Regex {
                    "."
                } else {
                    "*"
                };
                (Some(p.to_string()), Some(p.to_string()))
            } else {
                (self.info.autoarg.clone(), self.info.autoret.clone())
            };
            self.add_spec_pass(a.as_deref(), r.as_deref(), ptype, true);
        }
    }

    fn add_spec_pass(
        &mut self,
        args: Option<&str>,
        rets: Option<&str>,
        ptype: PatternType,
        auto: bool,
    ) {
        if args.is_none() && rets.is_none() && !auto {
            return;
        }
        let extra = if auto { trig::AUTO_ARGS } else { 0 };
        if let Some(a) = args {
            self.add_triggers(a, trig::ARGUMENT | extra, ptype, auto);
        }
        if let Some(r) = rets {
            self.add_triggers(r, trig::RETVAL | extra, ptype, auto);
        }
        if let Some(a) = args {
            if a.contains("retval") {
                self.add_triggers(a, trig::RETVAL | extra, ptype, auto);
            }
        }
    }

    /// Add `;`-separated trigger items to every session's filter table
    /// (argument specs with `trig::ARGUMENT`, `-F/-N` filters with
    /// `trig::FILTER`, `-T` triggers with 0). Returns the filter modes of
    /// the items that matched a symbol.
    pub fn add_triggers(
        &mut self,
        spec: &str,
        flags: u32,
        ptype: PatternType,
        auto: bool,
    ) -> Vec<FilterMode> {
        let setting = FilterSetting {
            ptype,
            lp64: self.header.is_lp64(),
            auto_args: auto,
            auto: &self.auto_args,
            demangle: self.options.demangle,
        };
        let mut modes = Vec::new();
        for s in self.sessions.sessions.iter_mut() {
            let views: Vec<ModuleView<'_>> = s
                .maps
                .maps
                .iter()
                .filter_map(|m| {
                    m.module.map(|i| ModuleView {
                        map_start: m.start,
                        basename: basename(&m.libname),
                        module: &self.modules[i],
                        is_exec: m.libname == s.exename,
                    })
                })
                .collect();
            modes.extend(crate::argspec::setup_trigger(
                spec,
                &views,
                &mut s.filters,
                flags,
                &setting,
            ));
        }
        modes
    }

    fn load_tasks(&mut self, loader: &dyn Loader) {
        let tids = self.info.tids.clone();
        for tid in tids {
            let path = self.dir.join(format!("{tid}.dat"));
            let data = loader.load(&path).ok();
            self.tasks.push(TaskFile { tid, data });
        }
    }

    fn load_perf(&mut self, loader: &dyn Loader) {
        for name in perf_files(&self.dir) {
            match loader.load(&self.dir.join(&name)) {
                Ok(data) => self.perf.push(PerfFile { name, data }),
                Err(e) => self.push_damage(&name, 0, format!("cannot read: {e}")),
            }
        }
    }

    /// Index into `sessions.sessions` of task `tid`'s session at `time`.
    #[inline]
    pub fn session_at(&self, tid: i32, time: u64) -> Option<usize> {
        self.sessions.task_session(tid, time)
    }

    /// The mapping of `addr` in session `s`.
    pub fn find_map(&self, s: usize, addr: u64) -> Option<&Map> {
        self.sessions.sessions.get(s)?.maps.find(addr)
    }

    /// Resolve `addr` in session `s` at `time` (maps, then dlopen'ed
    /// libraries), as uftrace's `task_find_sym`.
    pub fn symbol_in(&self, s: usize, time: u64, addr: u64) -> Option<&Symbol> {
        if let Some(sym) = self.mapped_symbol(s, addr) {
            return Some(sym);
        }
        let sess = self.sessions.sessions.get(s)?;
        for d in sess.dlopens.iter().rev() {
            if d.time > time {
                continue;
            }
            let Some(mi) = d.module else { continue };
            if let Some(sym) = self.modules[mi].find(addr.wrapping_sub(d.base)) {
                return Some(sym);
            }
        }
        None
    }

    /// The module loaded by `dlopen` that holds `addr` at `time` in session
    /// `s` (uftrace's `session_find_dlopen`, the latest load first).
    pub fn dlopen_module(&self, s: usize, time: u64, addr: u64) -> Option<&Module> {
        let sess = self.sessions.sessions.get(s)?;
        for d in sess.dlopens.iter().rev() {
            if d.time > time {
                continue;
            }
            let Some(mi) = d.module else { continue };
            if self.modules[mi].find(addr.wrapping_sub(d.base)).is_some() {
                return Some(&self.modules[mi]);
            }
        }
        None
    }

    /// The first part of [`UftraceData::symbol_in`]: `addr` in the maps
    /// of session `s` (or the kernel's symbols), what does not depend on
    /// the time.
    pub fn mapped_symbol(&self, s: usize, addr: u64) -> Option<&Symbol> {
        let sess = self.sessions.sessions.get(s)?;
        if sess.maps.is_kernel(addr) {
            if let Some(k) = &self.kernel {
                if let Some(sym) = k.symbols.find(addr | sess.maps.kernel_base) {
                    return Some(sym);
                }
            }
        } else {
            if let Some(m) = sess.maps.find(addr) {
                if let Some(mi) = m.module {
                    if let Some(sym) = self.modules[mi].find(addr - m.start) {
                        return Some(sym);
                    }
                }
            }
        }
        None
    }

    /// Resolve the function address of a record of task `tid` at `time`.
    pub fn symbol(&self, tid: i32, time: u64, addr: u64) -> Option<&Symbol> {
        let s = self.session_at(tid, time)?;
        self.symbol_in(s, time, addr)
    }

    /// The argument/return spec list of the function at `addr` for task
    /// `tid` at `time` (`None` when no spec applies).
    pub fn arg_specs(&self, tid: i32, time: u64, addr: u64) -> Option<&[ArgSpec]> {
        let s = self.session_at(tid, time)?;
        let e = self.sessions.sessions[s].filters.find(addr)?;
        if e.trigger.flags & (trig::ARGUMENT | trig::RETVAL) == 0 {
            return None;
        }
        Some(&e.trigger.args)
    }

    /// uftrace's `get_kernel_address` with the first session's kernel
    /// base: the full address of a (48-bit) kernel record address.
    pub fn kernel_address(&self, addr: u64) -> u64 {
        (addr & ((1 << 48) - 1)) | self.kernel_base()
    }

    /// The first session's kernel base (0 without sessions).
    pub fn kernel_base(&self) -> u64 {
        let s = &self.sessions;
        s.first
            .and_then(|i| s.sessions.get(i))
            .map_or(0, |s| s.maps.kernel_base)
    }

    /// uftrace's `is_kernel_address` with the first session.
    pub fn is_kernel_address(&self, addr: u64) -> bool {
        addr >= self.kernel_base()
    }

    /// Task comm name (from `task.txt`).
    pub fn comm(&self, tid: i32) -> &str {
        self.sessions.find_task(tid).map_or("", |t| t.comm.as_str())
    }
}
