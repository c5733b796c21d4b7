//! The encoder thread: tables' rows arrive as jobs on a bounded queue and
//! are encoded into Parquet files, a bounded number of column writers open
//! at once, files rolled at their size limit, and the writer properties
//! (compression, dictionaries, statistics) each file is written with.

use super::*;

/// Rows of a table for the encoder, in the schema its file has (or is to
/// have); without rows, word that the table exists.
pub(super) struct Job {
    pub(super) table: Arc<str>,
    pub(super) schema: SchemaRef,
    pub(super) batch: Option<RecordBatch>,
    /// Set by the encoder when it keeps the table's row group open across
    /// batches: the reader then sends it small batches.
    pub(super) open: Arc<AtomicBool>,
}

/// How the encoder names the files of a table.
#[derive(Debug, Clone)]
pub(super) enum Naming {
    Flat,
    Hive(String),
    Shared,
}

impl Naming {
    pub(super) fn of(layout: &Layout) -> Naming {
        match layout {
            Layout::Flat => Naming::Flat,
            Layout::Hive { trace } => Naming::Hive(trace.clone()),
            Layout::Shared { .. } => Naming::Shared,
        }
    }

    /// The path of part `k` of `table` under `dir`.
    pub(super) fn path(&self, dir: &Path, table: &str, k: usize) -> PathBuf {
        match self {
            Naming::Flat if k == 0 => dir.join(format!("{table}.parquet")),
            Naming::Flat => dir.join(format!("{table}.{k}.parquet")),
            Naming::Hive(trace) => dir
                .join(table)
                .join(format!("trace={trace}"))
                .join(format!("part-{k}.parquet")),
            Naming::Shared => dir.join(table).join(format!("part-{k:05}.parquet")),
        }
    }
}

/// A file the encoder wrote: its path under the dataset's directory, rows
/// and bytes.
#[derive(Debug, Clone)]
pub struct FileWritten {
    pub path: String,
    pub rows: u64,
    pub bytes: u64,
}

/// The files of each table, by its name.
pub(super) type TableFiles = Vec<(Arc<str>, Vec<FileWritten>)>;

/// The Parquet writers of every table, on a thread of their own: encoding
/// and compressing a table's rows runs beside the reading of the next
/// events. With one thread allowed (`TRACEMUX_THREADS=1`: a Spark task
/// given one core, say), they run inline, on the caller's thread.
pub(super) struct Encoder {
    pub(super) tx: Option<SyncSender<Job>>,
    pub(super) thread: Option<JoinHandle<Result<TableFiles>>>,
    /// The inline encoder (no thread); `None` after an error or `finish`.
    pub(super) inline: Option<Box<EncoderState>>,
}

impl Encoder {
    pub(super) fn start(dir: &Path, opts: &WriteOptions) -> Result<Encoder> {
        // (an invalid zstd level is refused here, not at the first table)
        properties(opts, &arrow_schema::Schema::empty())?;
        let props = opts.clone();
        let naming = Naming::of(&opts.layout);
        if !opts.encoder_thread {
            return Ok(Encoder {
                tx: None,
                thread: None,
                inline: Some(Box::new(EncoderState::new(dir, naming, props))),
            });
        }
        let dir = dir.to_path_buf();
        let (tx, rx) = sync_channel::<Job>(1);
        let thread = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || encode(rx, &dir, naming, props))
            .map_err(|e| io(Path::new("parquet encoder thread"), e))?;
        Ok(Encoder {
            tx: Some(tx),
            thread: Some(thread),
            inline: None,
        })
    }

    pub(super) fn send(&mut self, job: Option<Job>) -> Result<()> {
        let Some(job) = job else {
            return Ok(());
        };
        if let Some(e) = self.inline.as_mut() {
            let res = e.take(job);
            if res.is_err() {
                self.inline = None;
            }
            return res;
        }
        if self.tx.as_ref().is_some_and(|tx| tx.send(job).is_ok()) {
            return Ok(());
        }
        // the thread stopped: on an error, which `finish` returns
        self.finish().map(|_| ())
    }

    /// Close every file; the files of each table, or the first error of
    /// the encoder.
    pub(super) fn finish(&mut self) -> Result<TableFiles> {
        if let Some(e) = self.inline.take() {
            return e.end();
        }
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            None => Err(Error::Encoder("the Parquet encoder stopped earlier".into())),
            Some(Ok(res)) => res,
            Some(Err(_)) => Err(Error::Encoder("the Parquet encoder thread panicked".into())),
        }
    }
}

impl Drop for Encoder {
    /// A writer dropped without `finish` (an error, Ctrl-C) waits for the
    /// thread, so that nothing writes into the output after the caller
    /// has removed it.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A table at the encoder: its file being written, if any, and those
/// written.
pub(super) struct Out {
    /// The number of its next file.
    pub(super) part: usize,
    pub(super) file: Option<Open>,
    /// Bytes its row group in progress holds.
    pub(super) held: usize,
    /// The files it closed: their numbers, rows and bytes (paths are made
    /// from the numbers at the end: nothing per file but these 24 bytes is
    /// kept while a long trace writes thousands of files).
    pub(super) files: Vec<Closed>,
    /// Its row group stays open across batches (a table that fills them).
    pub(super) open: bool,
    /// Its leaf columns (column writers of a row group).
    pub(super) columns: usize,
    /// Rows it had.
    pub(super) sent: u64,
}

/// Leaf columns the open row groups may have together.
pub(super) const MAX_OPEN_COLUMNS: usize = 40;
/// About what a column writer of a row group holds besides its pages (its
/// encoders, statistics, compressor and decompressor).
pub(super) const COLUMN_BYTES: usize = 128 << 10;

/// The leaf columns of `fields`.
pub(super) fn leaves(fields: &arrow_schema::Fields) -> usize {
    fn of(t: &DataType) -> usize {
        match t {
            DataType::Struct(f) => f.iter().map(|f| of(f.data_type())).sum(),
            DataType::List(f) => of(f.data_type()),
            _ => 1,
        }
    }
    fields.iter().map(|f| of(f.data_type())).sum()
}

/// A file closed: its number among its table's files, rows and bytes.
pub(super) struct Closed {
    pub(super) part: usize,
    pub(super) rows: u64,
    pub(super) bytes: u64,
}

pub(super) struct Open {
    pub(super) path: PathBuf,
    /// Its number among its table's files.
    pub(super) part: usize,
    pub(super) schema: SchemaRef,
    pub(super) writer: ArrowWriter<BufWriter<File>>,
    pub(super) rows: u64,
}

impl Open {
    /// Write the footer and close the file.
    pub(super) fn close(self) -> Result<Closed> {
        let bytes = self.writer.bytes_written() as u64;
        let f = self.writer.into_inner().map_err(|e| pq(&self.path, e))?;
        let f = f.into_inner().map_err(|e| io(&self.path, e.into_error()))?;
        let bytes = f.metadata().map(|m| m.len()).unwrap_or(bytes);
        f.sync_all().ok();
        release_free_heap();
        Ok(Closed {
            part: self.part,
            rows: self.rows,
            bytes,
        })
    }
}

/// Hand the heap's free pages back to the system after a file closed,
/// where glibc's malloc is the allocator (the Python module; the CLI uses
/// jemalloc, for which this is a no-op call into glibc's idle heap).
/// glibc keeps freed memory inside its heaps; what a closed file's column
/// writers held lies between blocks still in use, so without this the
/// resident size creeps up with the number of files written (+4 MB over
/// a 3.8 GB trace's 4,300 files). `malloc_trim` returns those pages.
pub(super) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's heaps; it
    // takes the arenas' locks itself.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The encoder's state, on its thread or inline: append each batch to
/// its table's row group in progress; write row groups out at
/// `row_group_rows` rows (the writer's own limit) and the largest when all
/// hold more than `encoder_budget`; roll a table's file at `file_size`;
/// at the end, close every file.
pub(super) struct EncoderState {
    pub(super) outs: Vec<(Arc<str>, Out)>,
    pub(super) index: HashMap<Arc<str>, usize>,
    pub(super) held: usize,
    pub(super) open_columns: usize,
    pub(super) dir: PathBuf,
    pub(super) naming: Naming,
    pub(super) opts: WriteOptions,
}

impl EncoderState {
    pub(super) fn new(dir: &Path, naming: Naming, opts: WriteOptions) -> EncoderState {
        EncoderState {
            outs: Vec::new(),
            index: HashMap::new(),
            held: 0,
            open_columns: 0,
            dir: dir.to_path_buf(),
            naming,
            opts,
        }
    }

    /// One job: its batch into its table's row group in progress.
    pub(super) fn take(&mut self, job: Job) -> Result<()> {
        let i = *self.index.entry(job.table.clone()).or_insert_with(|| {
            self.outs.push((
                job.table.clone(),
                Out {
                    part: 0,
                    file: None,
                    held: 0,
                    files: Vec::new(),
                    open: false,
                    sent: 0,
                    columns: leaves(job.schema.fields()),
                },
            ));
            self.outs.len() - 1
        });
        let EncoderState {
            outs,
            held,
            open_columns,
            dir,
            naming,
            opts,
            ..
        } = self;
        let (max_open, budget) = (MAX_OPEN_COLUMNS, opts.encoder_budget);
        let (name, out) = &mut outs[i];
        // a table of another schema (another trace of a shared dataset)
        // starts a file of its own
        if out.file.as_ref().is_some_and(|f| f.schema != job.schema) {
            *held -= out.held;
            out.held = 0;
            if let Some(f) = out.file.take() {
                out.files.push(f.close()?);
            }
            if out.open {
                *open_columns -= out.columns;
                out.open = false;
                job.open.store(false, Ordering::Relaxed);
            }
            out.columns = leaves(job.schema.fields());
        }
        if out.file.is_none() && (job.batch.is_some() || out.part == 0) {
            let path = naming.path(dir, name, out.part);
            out.part += 1;
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
            }
            let f = File::create(&path).map_err(|e| io(&path, e))?;
            let props = properties(opts, &job.schema)?;
            let writer = ArrowWriter::try_new(
                BufWriter::with_capacity(8 << 10, f),
                job.schema.clone(),
                Some(props),
            )
            .map_err(|e| pq(&path, e))?;
            out.file = Some(Open {
                path,
                part: out.part - 1,
                schema: job.schema.clone(),
                writer,
                rows: 0,
            });
        }
        let Some(b) = job.batch else {
            return Ok(());
        };
        let Some(f) = out.file.as_mut() else {
            return Ok(());
        };
        f.writer.write(&b).map_err(|e| pq(&f.path, e))?;
        f.rows += b.num_rows() as u64;
        out.sent += b.num_rows() as u64;
        let busy = out.sent >= opts.batch_rows as u64;
        drop(b);
        // a table that fills its batches keeps its row group open, as
        // long as the open ones have few columns together (each column's
        // encoder and compressor hold memory of their own); the others'
        // batches are row groups
        if !out.open && busy && *open_columns + out.columns <= max_open {
            out.open = true;
            *open_columns += out.columns;
            job.open.store(true, Ordering::Relaxed);
        }
        let now = match out.open {
            true => f.writer.memory_size() + out.columns * COLUMN_BYTES,
            false => {
                f.writer.flush().map_err(|e| pq(&f.path, e))?;
                0
            }
        };
        *held = *held - out.held + now;
        out.held = now;
        roll(out, opts, held)?;
        // over the budget: write out the largest row groups in progress
        while *held > budget {
            let Some((_, big)) = outs
                .iter_mut()
                .filter(|(_, o)| o.held > 0)
                .max_by_key(|(_, o)| o.held)
            else {
                *held = 0;
                break;
            };
            if let Some(f) = big.file.as_mut() {
                f.writer.flush().map_err(|e| pq(&f.path, e))?;
            }
            *held -= big.held;
            big.held = 0;
            roll(big, opts, held)?;
        }
        // the open files' row-group metadata (kept until a file closes):
        // beyond MAX_HELD_CHUNKS column chunks, close the file that keeps
        // the most (of a table whose row group is not kept open)
        let mut chunks: usize = outs.iter().map(|(_, o)| o.held_chunks()).sum();
        while chunks > MAX_HELD_CHUNKS {
            let Some((_, big)) = outs
                .iter_mut()
                .filter(|(_, o)| !o.open && o.held_chunks() > 0)
                .max_by_key(|(_, o)| o.held_chunks())
            else {
                break;
            };
            chunks -= big.held_chunks();
            *held -= big.held;
            big.held = 0;
            if let Some(f) = big.file.take() {
                big.files.push(f.close()?);
            }
        }
        Ok(())
    }

    /// Close every file; the files of each table.
    pub(super) fn end(self) -> Result<TableFiles> {
        let EncoderState { outs, naming, .. } = self;
        let mut files = Vec::new();
        for (name, mut out) in outs {
            if let Some(f) = out.file.take() {
                out.files.push(f.close()?);
            }
            let written = out
                .files
                .iter()
                .map(|c| FileWritten {
                    path: naming
                        .path(Path::new(""), &name, c.part)
                        .display()
                        .to_string(),
                    rows: c.rows,
                    bytes: c.bytes,
                })
                .collect();
            files.push((name, written));
        }
        Ok(files)
    }
}

/// The encoder thread: every job of `rx`, then the files.
pub(super) fn encode(
    rx: Receiver<Job>,
    dir: &Path,
    naming: Naming,
    opts: WriteOptions,
) -> Result<TableFiles> {
    let mut e = EncoderState::new(dir, naming, opts);
    for job in rx {
        e.take(job)?;
    }
    e.end()
}

/// Column chunks whose metadata the open files may keep together (a
/// file keeps that of each row group it wrote until it closes, about
/// 0.5 kB each): beyond, the file holding the most is closed and its
/// table goes on in the next, so that this memory does not grow with
/// the trace.
pub(super) const MAX_HELD_CHUNKS: usize = 4096;

impl Out {
    /// The column chunks whose metadata its open file keeps.
    pub(super) fn held_chunks(&self) -> usize {
        self.file
            .as_ref()
            .map_or(0, |f| f.writer.flushed_row_groups().len() * self.columns)
    }
}

/// Close `out`'s file when it holds `file_size` bytes (written out, not
/// counting its row group in progress) or `file_row_groups` row groups.
pub(super) fn roll(out: &mut Out, opts: &WriteOptions, held: &mut usize) -> Result<()> {
    if out.file.as_ref().is_some_and(|f| {
        f.writer.bytes_written() as u64 >= opts.file_size
            || f.writer.flushed_row_groups().len() >= opts.file_row_groups.max(1)
    }) {
        *held -= out.held;
        out.held = 0;
        if let Some(f) = out.file.take() {
            out.files.push(f.close()?);
        }
    }
    Ok(())
}

pub(super) fn io(p: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: p.display().to_string(),
        source: e,
    }
}

pub(super) fn pq(p: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::Parquet {
        path: p.display().to_string(),
        source: e,
    }
}

/// The paths of the text columns of `fields` (nested ones too), under
/// `prefix`.
pub(super) fn text_columns(
    fields: &arrow_schema::Fields,
    prefix: &[String],
    out: &mut Vec<ColumnPath>,
) {
    for f in fields {
        let mut path = prefix.to_vec();
        path.push(f.name().clone());
        match f.data_type() {
            DataType::Utf8 | DataType::Dictionary(..) => out.push(ColumnPath::new(path)),
            DataType::Struct(kids) => text_columns(kids, &path, out),
            DataType::List(item) => {
                path.push("list".into());
                text_columns(&vec![item.clone()].into(), &path, out)
            }
            _ => {}
        }
    }
}

/// How a table of `schema` is written: dictionaries for its text
/// columns only (a dictionary encoder per column of every open table is
/// what a wide trace's memory would go to; zstd compresses repeated
/// numbers well without one), the JSON payloads of `events` excepted.
pub(super) fn properties(
    opts: &WriteOptions,
    schema: &arrow_schema::Schema,
) -> Result<WriterProperties> {
    let level = ZstdLevel::try_new(opts.zstd_level).map_err(|e| pq(Path::new("zstd level"), e))?;
    let ts = ColumnPath::from("ts");
    let mut text = Vec::new();
    text_columns(schema.fields(), &[], &mut text);
    let mut b = WriterProperties::builder().set_dictionary_enabled(false);
    for c in text {
        if c.string() != "fields" {
            b = b.set_column_dictionary_enabled(c, true);
        }
    }
    Ok(
        b.set_created_by(format!("tracemux {}", env!("CARGO_PKG_VERSION")))
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_row_count(Some(opts.row_group_rows.max(1)))
            // the values of a page are held until it is cut, for every column
            .set_data_page_size_limit(128 << 10)
            .set_dictionary_page_size_limit(128 << 10)
            // statistics per column chunk (min/max per row group); per page
            // (the column index) only for `ts`, where time ranges skip pages:
            // a file keeps the page indexes of all its row groups in memory
            // until it closes
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_column_statistics_enabled(ts.clone(), EnabledStatistics::Page)
            .set_column_encoding(ts, Encoding::DELTA_BINARY_PACKED)
            // events come in time order (the model's contract; the traces
            // of a shared dataset in the order of their names); `meta.json`
            // says if a table's did not
            .set_sorting_columns(Some(
                ["trace", "ts"]
                    .iter()
                    .filter_map(|c| schema.index_of(c).ok())
                    .map(|i| SortingColumn {
                        column_idx: i as i32,
                        descending: false,
                        nulls_first: false,
                    })
                    .collect(),
            ))
            .build(),
    )
}
