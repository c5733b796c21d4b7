//! `tracemux sql`: SQL over a trace or a Parquet dataset (the engine is
//! `tracemux-sql`, behind the cargo feature `sql`).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::out::Outcome;

const SQL_HELP: &str = "\
TABLES:
  SYSTEM__EVENT   one per event class (sched__sched_switch...): ts, cpu, pid, comm,
                  buffer/stream, then the event's fields as columns
  events          every event: ts, cpu, pid, comm, system, event, fields (JSON)
  lost            lost-event markers: ts, cpu, count
  sched_slice, thread_state, thread, process
                  derived from the scheduler's events, as Perfetto's trace processor
STATEMENTS:
  any SQL query (Apache DataFusion's dialect); `tables` lists the tables,
  `describe TABLE` its columns
EXAMPLES:
  tracemux sql trace.dat -e 'SELECT next_comm, count(*) FROM sched__sched_switch GROUP BY 1 ORDER BY 2 DESC LIMIT 5'
  tracemux sql trace.dat -e tables -e 'describe sched__sched_switch'
  tracemux sql --format csv trace.dat -e 'SELECT * FROM sched_slice' > slices.csv
  tracemux sql parquet-dir/ -e 'SELECT count(*) FROM events'
                                  a dataset written by convert --to parquet
  tracemux sql trace.dat          statements from standard input, each ended by ;";

#[derive(Args, Debug)]
#[command(after_help = SQL_HELP)]
pub struct SqlArgs {
    /// The trace (several paths only for CTF traces read as one), or a
    /// directory written by `convert --to parquet`.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// A statement to run (repeatable); without -e, statements are read from
    /// standard input, each ended by `;`.
    #[arg(short = 'e', long = "execute", value_name = "SQL")]
    pub execute: Vec<String>,
    /// How results are written.
    #[arg(long, value_enum, default_value_t = SqlFormat::Table)]
    pub format: SqlFormat,
    /// Write the result to FILE (needed for --format parquet).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Stop at the first damage instead of skipping it.
    #[arg(long)]
    pub strict: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlFormat {
    /// Aligned text with a header.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per row.
    Json,
    /// A Parquet file (with -o).
    Parquet,
}

#[cfg(not(feature = "sql"))]
pub fn run(a: &SqlArgs) -> Result<Outcome> {
    let _ = (&a.inputs, &a.execute, a.format, &a.output, a.strict);
    anyhow::bail!(
        "this tracemux was built without SQL; build it with: cargo build --release --features sql"
    )
}

#[cfg(feature = "sql")]
pub fn run(a: &SqlArgs) -> Result<Outcome> {
    use std::io::{BufRead, IsTerminal, Write};
    use std::sync::Arc;
    use tracemux_sql::{is_parquet_dataset, Engine, Paths};

    if a.format == SqlFormat::Parquet && a.output.is_none() {
        anyhow::bail!("--format parquet needs -o FILE");
    }
    let engine = Engine::new()?;
    if a.inputs.len() == 1 && is_parquet_dataset(&a.inputs[0]) {
        engine.add_parquet(&a.inputs[0])?;
    } else {
        engine.add_trace(Arc::new(Paths {
            paths: a.inputs.clone(),
            strict: a.strict,
        }))?;
    }
    let mut sink = writer::Sink::new(a.format, a.output.as_deref())?;
    if !a.execute.is_empty() {
        for s in &a.execute {
            sink.statement(&engine, s)?;
        }
    } else {
        let stdin = std::io::stdin();
        let prompt = stdin.is_terminal();
        let mut stmt = String::new();
        let mut lines = stdin.lock().lines();
        loop {
            if prompt {
                eprint!(
                    "{}",
                    if stmt.is_empty() {
                        "tracemux> "
                    } else {
                        "      ... "
                    }
                );
                std::io::stderr().flush().ok();
            }
            let Some(line) = lines.next().transpose()? else {
                break;
            };
            stmt.push_str(&line);
            stmt.push('\n');
            if line.trim_end().ends_with(';') {
                let s = std::mem::take(&mut stmt);
                let r = sink.statement(&engine, &s);
                match r {
                    // at the prompt an error ends the statement, not the session
                    Err(e) if prompt => eprintln!("error: {e:#}"),
                    r => r?,
                }
            }
        }
        if !stmt.trim().is_empty() {
            sink.statement(&engine, &stmt)?;
        }
    }
    sink.finish()?;
    Ok(Outcome::Ok)
}

#[cfg(feature = "sql")]
mod writer {
    use std::fs::File;
    use std::io::{BufWriter, Write};
    use std::path::Path;
    use std::sync::Arc;

    use anyhow::{bail, Context, Result};
    use tracemux_sql::datafusion::arrow::array::{Array, ArrayRef};
    use tracemux_sql::datafusion::arrow::compute::cast;
    use tracemux_sql::datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use tracemux_sql::datafusion::arrow::record_batch::RecordBatch;
    use tracemux_sql::datafusion::arrow::util::pretty::pretty_format_batches;
    use tracemux_sql::datafusion::arrow::{csv, json};
    use tracemux_sql::datafusion::parquet::arrow::ArrowWriter;
    use tracemux_sql::Engine;

    use super::SqlFormat;

    /// Where results go.
    pub struct Sink {
        format: SqlFormat,
        out: Box<dyn Write>,
        /// One Parquet file for all statements' rows (same schema).
        parquet: Option<(ArrowWriter<BufWriter<File>>, SchemaRef)>,
        path: Option<std::path::PathBuf>,
    }

    impl Sink {
        pub fn new(format: SqlFormat, output: Option<&Path>) -> Result<Sink> {
            let out: Box<dyn Write> = match (format, output) {
                (SqlFormat::Parquet, _) | (_, None) => {
                    Box::new(BufWriter::new(std::io::stdout().lock()))
                }
                (_, Some(p)) => Box::new(BufWriter::new(
                    File::create(p).with_context(|| p.display().to_string())?,
                )),
            };
            Ok(Sink {
                format,
                out,
                parquet: None,
                path: output.map(Path::to_path_buf),
            })
        }

        /// Run statement `sql` and write its rows.
        pub fn statement(&mut self, engine: &Engine, sql: &str) -> Result<()> {
            let mut a = engine.query(sql)?;
            let schema = plain_schema(&a.schema);
            match self.format {
                SqlFormat::Table => {
                    // aligned columns need every row first
                    let mut all = Vec::new();
                    while let Some(b) = engine.next(&mut a)? {
                        all.push(plain(&schema, &b)?);
                    }
                    if all.is_empty() {
                        all.push(RecordBatch::new_empty(schema.clone()));
                    }
                    writeln!(self.out, "{}", pretty_format_batches(&all)?)?;
                }
                SqlFormat::Csv => {
                    let mut w = csv::WriterBuilder::new()
                        .with_header(true)
                        .build(&mut self.out);
                    let mut any = false;
                    while let Some(b) = engine.next(&mut a)? {
                        w.write(&plain(&schema, &b)?)?;
                        any = true;
                    }
                    if !any {
                        w.write(&RecordBatch::new_empty(schema.clone()))?;
                    }
                }
                SqlFormat::Json => {
                    let mut w = json::LineDelimitedWriter::new(&mut self.out);
                    while let Some(b) = engine.next(&mut a)? {
                        w.write(&plain(&schema, &b)?)?;
                    }
                    w.finish()?;
                }
                SqlFormat::Parquet => {
                    let path = self.path.clone().unwrap_or_default();
                    if self.parquet.is_none() {
                        let f = File::create(&path).with_context(|| path.display().to_string())?;
                        let w = ArrowWriter::try_new(BufWriter::new(f), a.schema.clone(), None)?;
                        self.parquet = Some((w, a.schema.clone()));
                    }
                    let Some((w, first)) = self.parquet.as_mut() else {
                        bail!("{}: not open", path.display());
                    };
                    if first.as_ref() != a.schema.as_ref() {
                        bail!(
                            "{}: the statements' results have different columns",
                            path.display()
                        );
                    }
                    while let Some(b) = engine.next(&mut a)? {
                        w.write(&b)?;
                    }
                }
            }
            self.out.flush()?;
            Ok(())
        }

        pub fn finish(mut self) -> Result<()> {
            if let Some((w, _)) = self.parquet.take() {
                w.close()?;
            }
            self.out.flush()?;
            Ok(())
        }
    }

    /// Dictionary columns as their values (text writers take plain types).
    fn plain_type(t: &DataType) -> DataType {
        match t {
            DataType::Dictionary(_, v) => plain_type(v),
            t => t.clone(),
        }
    }

    fn plain_schema(s: &SchemaRef) -> SchemaRef {
        Arc::new(Schema::new(
            s.fields()
                .iter()
                .map(|f| Field::new(f.name(), plain_type(f.data_type()), f.is_nullable()))
                .collect::<Vec<_>>(),
        ))
    }

    fn plain(schema: &SchemaRef, b: &RecordBatch) -> Result<RecordBatch> {
        let cols = b
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    cast(c, f.data_type())
                }
            })
            .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
        Ok(RecordBatch::try_new(schema.clone(), cols)?)
    }
}
