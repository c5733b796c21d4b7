//! SQL over traces, with Apache DataFusion as the engine.
//!
//! - [`register_trace`]: every table of a trace ([`tracemux_table::tables`]:
//!   one per event class, `events`, `lost`) as a table provider that decodes
//!   the trace as the query reads it ([`provider`]), and the tables derived
//!   from the scheduler's events ([`sched`]: `thread`, `process`,
//!   `sched_slice`, `thread_state`).
//! - [`register_parquet`]: a directory written by `convert --to parquet`
//!   (flat, or Hive-partitioned with a `trace` column).
//! - [`Engine`]: a session with those tables that runs statements, plus
//!   `tables` and `describe TABLE`.
//!
//! Traces borrow memory maps, so a table holds an [`Opener`] ([`Paths`]:
//! files opened by `tracemux_open`) and opens the trace once for the
//! metadata and once per table a query reads.
//!
//! All of it needs the feature `engine` (the CLI's and the Python package's
//! feature `sql`); without it the crate is empty.
#![cfg(feature = "engine")]

mod error;
mod opener;
pub mod provider;
pub mod sched;

pub use error::{Error, Result};
pub use opener::Opener;

pub use datafusion;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::TableReference;
use datafusion::execution::context::SessionContext;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::prelude::{ParquetReadOptions, SessionConfig};
use tracemux_core::model::{RecordSource, TraceMeta};

/// The trace at `paths` (several only for CTF), opened with
/// `tracemux_open`.
#[derive(Debug, Clone)]
pub struct Paths {
    pub paths: Vec<PathBuf>,
    /// Damage is an error.
    pub strict: bool,
}

impl Opener for Paths {
    fn open(&self, f: &mut dyn FnMut(&mut dyn RecordSource) -> Result<()>) -> Result<()> {
        let opts = tracemux_open::OpenOptions {
            strict: self.strict,
            on_note: None,
            ..Default::default()
        };
        tracemux_open::with_source(&self.paths, &opts, |src| f(src))
    }
}

/// The metadata of the trace `opener` opens.
pub fn read_meta(opener: &dyn Opener) -> Result<TraceMeta> {
    let mut meta = None;
    opener.open(&mut |src| {
        meta = Some(src.meta().clone());
        Ok(())
    })?;
    meta.ok_or_else(|| Error::Refused("the trace gave no metadata".into()))
}

/// Register every table of the trace `opener` opens in `ctx`.
pub fn register_trace(ctx: &SessionContext, opener: Arc<dyn Opener>) -> Result<()> {
    let meta = read_meta(opener.as_ref())?;
    for (name, schema) in tracemux_table::tables(&meta) {
        let t = provider::TraceTable {
            opener: opener.clone(),
            name: name.clone(),
            schema,
            visited: Default::default(),
        };
        // as named (`bare`: a name such as `dummy__HG` is not folded to
        // lower case, so that `"dummy__HG"` finds it)
        ctx.register_table(TableReference::bare(name.as_str()), Arc::new(t))?;
    }
    sched::register(ctx, opener, &meta)?;
    Ok(())
}

/// Whether `dir` is a dataset written by `convert --to parquet`.
pub fn is_parquet_dataset(dir: &Path) -> bool {
    dir.is_dir() && (dir.join("meta.json").is_file() || dir.join("_meta").is_dir())
}

/// Register the tables of a dataset written by `convert --to parquet`:
/// `TABLE.parquet` files (flat), or `TABLE/trace=NAME/part-N.parquet`
/// directories (Hive, with a `trace` column). Returns the table names.
pub async fn register_parquet(ctx: &SessionContext, dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| dataset(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let Some(file) = p.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        let path = p
            .to_str()
            .ok_or_else(|| Error::Refused(format!("{}: not UTF-8", p.display())))?;
        if p.is_file() {
            if let Some(name) = file.strip_suffix(".parquet") {
                ctx.register_parquet(
                    TableReference::bare(name),
                    path,
                    ParquetReadOptions::default(),
                )
                .await
                .map_err(|e| dataset(&p, e))?;
                names.push(name.to_string());
            }
        } else if p.is_dir() && !file.starts_with('_') {
            let opts = ParquetReadOptions::default()
                .table_partition_cols(vec![("trace".to_string(), DataType::Utf8)]);
            ctx.register_parquet(TableReference::bare(file), &format!("{path}/"), opts)
                .await
                .map_err(|e| dataset(&p, e))?;
            names.push(file.to_string());
        }
    }
    if names.is_empty() {
        return Err(Error::Refused(format!(
            "{}: no Parquet tables",
            dir.display()
        )));
    }
    Ok(names)
}

fn dataset(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Dataset {
        path: path.to_path_buf(),
        source: Box::new(e),
    }
}

/// A session over one trace or one Parquet dataset.
pub struct Engine {
    pub ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
}

/// What a statement gave: rows, or the text of `tables`/`describe`.
pub struct Answer {
    pub schema: SchemaRef,
    pub stream: SendableRecordBatchStream,
}

impl Engine {
    /// A session with no table yet.
    pub fn new() -> Result<Engine> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let config = SessionConfig::new().with_information_schema(true);
        Ok(Engine {
            ctx: SessionContext::new_with_config(config),
            runtime,
        })
    }

    /// Add the tables of a trace.
    pub fn add_trace(&self, opener: Arc<dyn Opener>) -> Result<()> {
        let _g = self.runtime.enter();
        register_trace(&self.ctx, opener)
    }

    /// Add the tables of a Parquet dataset directory.
    pub fn add_parquet(&self, dir: &Path) -> Result<Vec<String>> {
        self.runtime.block_on(register_parquet(&self.ctx, dir))
    }

    /// Plan statement `sql`; `tables` and `describe TABLE` are answered
    /// from the catalog.
    pub fn query(&self, sql: &str) -> Result<Answer> {
        let sql = rewrite(sql);
        self.runtime.block_on(async {
            let df = self.ctx.sql(&sql).await?;
            let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
            let stream = df.execute_stream().await?;
            Ok(Answer { schema, stream })
        })
    }

    /// Payload field values decoded so far for the trace table `name`
    /// (`None` for tables that are not a trace's own: derived, Parquet).
    pub fn decoded_values(&self, name: &str) -> Result<Option<u64>> {
        let p = self.runtime.block_on(self.ctx.table_provider(name))?;
        Ok(p.downcast_ref::<provider::TraceTable>()
            .map(|t| t.visited()))
    }

    /// The next batch of a running statement.
    pub fn next(&self, a: &mut Answer) -> Result<Option<RecordBatch>> {
        use futures::StreamExt;
        self.runtime
            .block_on(a.stream.next())
            .transpose()
            .map_err(Into::into)
    }
}

/// `tables` and `describe TABLE` as queries of the information schema.
fn rewrite(sql: &str) -> String {
    let t = sql.trim().trim_end_matches(';').trim();
    let lower = t.to_ascii_lowercase();
    if lower == "tables" || lower == "show tables" {
        return "SELECT table_name FROM information_schema.tables \
                WHERE table_schema = 'public' ORDER BY table_name"
            .into();
    }
    if let Some(rest) = lower.strip_prefix("describe ") {
        let name = t[t.len() - rest.len()..].trim().trim_matches('"');
        return format!(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = '{}' ORDER BY ordinal_position",
            name.replace('\'', "''")
        );
    }
    sql.to_string()
}
