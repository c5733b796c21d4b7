//! One table of a trace as a stream of Arrow record batches, straight from
//! its records (no files): what SQL engines and DataFrame libraries read.
//!
//! The tables and their schemas are those of the Parquet files
//! ([`crate::rows`]); [`tables`] lists them from the trace's metadata
//! alone. A [`Scan`] builds one table:
//!
//! ```text
//! let meta = src.meta().clone();
//! let mut scan = Scan::new(&meta, &ScanSpec::table("sched__sched_switch"))?;
//! while let Some(rec) = src.next_record()? {
//!     if let Some(batch) = scan.push(&meta, &rec)? { use(batch) }
//!     if scan.is_done() { break }       // the row limit was reached
//! }
//! if let Some(batch) = scan.finish()? { use(batch) }
//! ```
//!
//! or [`Scan::run`], which does that loop. What a [`ScanSpec`] asks for:
//! - `columns`: the columns built, by name, in the table's own order
//!   whatever the order asked ([`Scan::schema`] is the table's schema with
//!   only those). Payload fields not asked for are not decoded by sources
//!   that decode on demand (trace.dat, LTT): [`Scan::visited`] counts the
//!   field values that reached the table. Sources that decode whole events
//!   to keep their stream state (CTF, uftrace) hand every value over; they
//!   are skipped without a column being built. `comm` needs the
//!   scheduler's events to be read even when they are not the table's.
//! - filters, applied before a row is built: `ts` in `ts_min..=ts_max`,
//!   `cpu` in `cpus`, `pid` in `pids` (lost markers have no pid: a pid
//!   filter drops them all);
//! - `limit`: at most that many rows, then [`Scan::is_done`];
//! - `batch_rows`: the size of the batches [`Scan::push`] returns.
//!
//! Memory is bounded by one batch being built.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use tracemux_core::model::{Event, Record, RecordSource, TraceMeta};

use crate::rows::{table_defs, ClassIndex, Rows, TableKind};
pub use crate::rows::{tables, TableDef};
use crate::{Error, Result};
use tracemux_core::tasks::TaskTracker;

/// What to scan: a table, its columns, filters and a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanSpec {
    /// The table's name, as [`tables`] lists it.
    pub table: String,
    /// The columns to build (`None`: all of them).
    pub columns: Option<Vec<String>>,
    /// Only rows with `ts >= ts_min`.
    pub ts_min: Option<i64>,
    /// Only rows with `ts <= ts_max`.
    pub ts_max: Option<i64>,
    /// Only rows of these CPUs.
    pub cpus: Option<Vec<u32>>,
    /// Only rows of these tasks.
    pub pids: Option<Vec<i32>>,
    /// At most this many rows.
    pub limit: Option<usize>,
    /// Rows per batch.
    pub batch_rows: usize,
}

impl ScanSpec {
    /// All of table `name`, in batches of 8192 rows.
    pub fn table(name: &str) -> ScanSpec {
        ScanSpec {
            table: name.to_string(),
            columns: None,
            ts_min: None,
            ts_max: None,
            cpus: None,
            pids: None,
            limit: None,
            batch_rows: 8192,
        }
    }
}

/// One table being scanned.
pub struct Scan {
    name: String,
    kind: TableKind,
    rows: Rows,
    classes: ClassIndex,
    /// Task names over time (for the `comm` column).
    tasks: TaskTracker,
    /// Whether task names are needed (the `comm` column is built).
    learn: bool,
    spec: ScanSpec,
    /// Rows given so far (built or returned).
    given: usize,
    records: u64,
}

impl Scan {
    /// A scan of `spec.table` of the trace `meta`. Errors: no such table,
    /// or no such column.
    pub fn new(meta: &TraceMeta, spec: &ScanSpec) -> Result<Scan> {
        let def = table_defs(meta)
            .into_iter()
            .find(|d| d.name == spec.table)
            .ok_or_else(|| Error::NoTable(spec.table.clone()))?;
        let mut rows = Rows::new(meta, def.kind);
        if let Some(cols) = &spec.columns {
            let schema = rows.schema().clone();
            if let Some(c) = cols.iter().find(|c| schema.field_with_name(c).is_err()) {
                return Err(Error::NoColumn {
                    table: def.name,
                    column: c.clone(),
                });
            }
            rows.project(&|name| cols.iter().any(|c| c == name));
        }
        let learn = rows.wants_comm();
        Ok(Scan {
            name: def.name,
            kind: def.kind,
            rows,
            classes: ClassIndex::new(meta),
            tasks: TaskTracker::new(),
            learn,
            spec: ScanSpec {
                batch_rows: spec.batch_rows.max(1),
                ..spec.clone()
            },
            given: 0,
            records: 0,
        })
    }

    /// The schema of the batches: the table's, with the columns asked for.
    pub fn schema(&self) -> SchemaRef {
        self.rows.schema().clone()
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the row limit is reached: further records are ignored.
    pub fn is_done(&self) -> bool {
        self.spec.limit.is_some_and(|n| self.given >= n)
    }

    /// Field values handed to the table so far (see the module docs).
    pub fn visited(&self) -> u64 {
        self.rows.columns().visited
    }

    /// Records looked at so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Take record `rec` of the trace `meta` (the one the scan was made
    /// for); returns a batch when `batch_rows` rows are built.
    pub fn push(&mut self, meta: &TraceMeta, rec: &Record<'_>) -> Result<Option<RecordBatch>> {
        if self.is_done() {
            return Ok(None);
        }
        self.records += 1;
        match rec {
            Record::Event(ev) => self.event(meta, ev),
            Record::Lost(l) => {
                if self.kind == TableKind::Lost && self.keep(l.ts, l.cpu, None) {
                    self.rows.lost(meta, l);
                    self.given += 1;
                }
            }
            Record::Damage(_) => {}
        }
        if self.rows.rows() >= self.spec.batch_rows || (self.is_done() && self.rows.rows() > 0) {
            return self.rows.batch(&self.name).map(Some);
        }
        Ok(None)
    }

    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) {
        let class = ev.class.map(|c| self.classes.of(meta, c));
        let mine = match self.kind {
            TableKind::Events => true,
            TableKind::Class(i) => class == Some(i),
            TableKind::Lost => false,
        };
        if self.learn && class.is_some() {
            self.tasks.learn(meta, ev);
        }
        if !mine || !self.keep(ev.ts, ev.cpu, Some(ev.pid)) {
            return;
        }
        self.rows.event(meta, &self.tasks, ev);
        self.given += 1;
    }

    fn keep(&self, ts: u64, cpu: u32, pid: Option<i32>) -> bool {
        let s = &self.spec;
        let ts = ts as i64;
        s.ts_min.is_none_or(|m| ts >= m)
            && s.ts_max.is_none_or(|m| ts <= m)
            && s.cpus.as_ref().is_none_or(|c| c.contains(&cpu))
            && s.pids
                .as_ref()
                .is_none_or(|p| pid.is_some_and(|pid| p.contains(&pid)))
    }

    /// The rows built and not yet returned, if any.
    pub fn finish(&mut self) -> Result<Option<RecordBatch>> {
        if self.rows.rows() == 0 {
            return Ok(None);
        }
        self.rows.batch(&self.name).map(Some)
    }

    /// Scan `src` to its end (or the limit), handing each batch to `f`;
    /// `f` returns `false` to stop early. Read errors of the source come
    /// back as [`Error::Read`].
    pub fn run(
        &mut self,
        src: &mut dyn RecordSource,
        f: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<()> {
        let meta = src.meta().clone();
        while !self.is_done() {
            let rec = src.next_record().map_err(Error::Read)?;
            let Some(rec) = rec else { break };
            if let Some(b) = self.push(&meta, &rec)? {
                if !f(b) {
                    return Ok(());
                }
            }
        }
        if let Some(b) = self.finish()? {
            f(b);
        }
        Ok(())
    }
}
