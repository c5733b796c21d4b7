//! A table of a trace as a DataFusion [`TableProvider`], decoded as it is
//! read by [`tracemux_table::Scan`].
//!
//! Pushed down into the scan: the columns the query uses (the others are
//! neither built nor, for trace.dat and LTT, decoded), comparisons of `ts`
//! with constants (`=`, `<`, `<=`, `>`, `>=`, `BETWEEN`), `cpu` and `pid`
//! equal to a constant or `IN` a list (all `Inexact`: DataFusion checks
//! them again), and `LIMIT` when no other filter remains above the scan.
//! One partition: the trace is read in time order on a thread of its own,
//! which sends batches through a bounded channel (two in flight), and stops
//! when the query no longer wants any (a `LIMIT` reached, an error).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    Between, BinaryExpr, Expr, Operator, TableProviderFilterPushDown, TableType,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use tracemux_core::model::RecordSource;
use tracemux_table::{Scan, ScanSpec};

use crate::opener::Opener;

/// Table `name` of a trace.
pub struct TraceTable {
    pub(crate) opener: Arc<dyn Opener>,
    pub(crate) name: String,
    pub(crate) schema: SchemaRef,
    /// Payload field values the scans of this table decoded so far
    /// ([`Scan::visited`]): what shows that a projection reached the
    /// reader.
    pub(crate) visited: Arc<AtomicU64>,
}

impl TraceTable {
    /// Field values decoded for this table's scans so far.
    pub fn visited(&self) -> u64 {
        self.visited.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for TraceTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceTable({})", self.name)
    }
}

/// What a filter says about the scan, if it is one the scan can use.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Push {
    TsMin(i64),
    TsMax(i64),
    Cpus,
    Pids,
}

/// An integer constant, through casts.
fn int_literal(e: &Expr) -> Option<i128> {
    match e {
        Expr::Literal(v, _) => scalar_int(v),
        Expr::Cast(c) => int_literal(&c.expr),
        Expr::TryCast(c) => int_literal(&c.expr),
        _ => None,
    }
}

fn scalar_int(v: &ScalarValue) -> Option<i128> {
    Some(match v {
        ScalarValue::Int8(Some(x)) => i128::from(*x),
        ScalarValue::Int16(Some(x)) => i128::from(*x),
        ScalarValue::Int32(Some(x)) => i128::from(*x),
        ScalarValue::Int64(Some(x)) => i128::from(*x),
        ScalarValue::UInt8(Some(x)) => i128::from(*x),
        ScalarValue::UInt16(Some(x)) => i128::from(*x),
        ScalarValue::UInt32(Some(x)) => i128::from(*x),
        ScalarValue::UInt64(Some(x)) => i128::from(*x),
        _ => return None,
    })
}

/// The common column a filter side names (`ts`, `cpu`, `pid`), through
/// widening casts to 64-bit integers.
fn column(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) if matches!(c.name.as_str(), "ts" | "cpu" | "pid") => Some(&c.name),
        Expr::Cast(c) if wide(c.field.data_type()) => column(&c.expr),
        Expr::TryCast(c) if wide(c.field.data_type()) => column(&c.expr),
        _ => None,
    }
}

/// Types `ts`, `cpu` and `pid` go to without losing a value.
fn wide(t: &datafusion::arrow::datatypes::DataType) -> bool {
    use datafusion::arrow::datatypes::DataType::*;
    matches!(t, Int64 | Decimal128(..))
}

/// Fold filter `e` into `spec`; `false` when the scan cannot use it.
fn push(e: &Expr, spec: Option<&mut ScanSpec>) -> bool {
    let mut tmp = ScanSpec::table("");
    let spec = match spec {
        Some(s) => s,
        None => &mut tmp,
    };
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (col, op, v) = match (column(left), column(right)) {
                (Some(c), None) => (c, *op, int_literal(right)),
                (None, Some(c)) => match op.swap() {
                    Some(o) => (c, o, int_literal(left)),
                    None => return false,
                },
                _ => return false,
            };
            let Some(v) = v else { return false };
            match (col, op) {
                ("ts", Operator::Eq) => {
                    apply(spec, Push::TsMin, v);
                    apply(spec, Push::TsMax, v)
                }
                ("ts", Operator::Gt) => apply(spec, Push::TsMin, v + 1),
                ("ts", Operator::GtEq) => apply(spec, Push::TsMin, v),
                ("ts", Operator::Lt) => apply(spec, Push::TsMax, v - 1),
                ("ts", Operator::LtEq) => apply(spec, Push::TsMax, v),
                ("cpu", Operator::Eq) => set(spec, Push::Cpus, &[v]),
                ("pid", Operator::Eq) => set(spec, Push::Pids, &[v]),
                _ => false,
            }
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) if column(expr) == Some("ts") => match (int_literal(low), int_literal(high)) {
            (Some(l), Some(h)) => apply(spec, Push::TsMin, l) && apply(spec, Push::TsMax, h),
            _ => false,
        },
        Expr::InList(l) if !l.negated => {
            let Some(c) = column(&l.expr) else {
                return false;
            };
            let vals: Option<Vec<i128>> = l.list.iter().map(int_literal).collect();
            match (c, vals) {
                ("cpu", Some(v)) => set(spec, Push::Cpus, &v),
                ("pid", Some(v)) => set(spec, Push::Pids, &v),
                _ => false,
            }
        }
        _ => false,
    }
}

fn apply(spec: &mut ScanSpec, p: fn(i64) -> Push, v: i128) -> bool {
    let v = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    match p(v) {
        Push::TsMin(v) => spec.ts_min = Some(spec.ts_min.map_or(v, |m| m.max(v))),
        Push::TsMax(v) => spec.ts_max = Some(spec.ts_max.map_or(v, |m| m.min(v))),
        _ => return false,
    }
    true
}

/// Intersect the CPU or task set with `vals` (values out of the column's
/// range match nothing).
fn set(spec: &mut ScanSpec, which: Push, vals: &[i128]) -> bool {
    match which {
        Push::Cpus => {
            let v: Vec<u32> = vals.iter().filter_map(|&x| u32::try_from(x).ok()).collect();
            spec.cpus = Some(match spec.cpus.take() {
                Some(old) => old.into_iter().filter(|c| v.contains(c)).collect(),
                None => v,
            });
        }
        Push::Pids => {
            let v: Vec<i32> = vals.iter().filter_map(|&x| i32::try_from(x).ok()).collect();
            spec.pids = Some(match spec.pids.take() {
                Some(old) => old.into_iter().filter(|c| v.contains(c)).collect(),
                None => v,
            });
        }
        _ => return false,
    }
    true
}

#[async_trait]
impl TableProvider for TraceTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|e| {
                if push(e, None) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let mut spec = ScanSpec::table(&self.name);
        for f in filters {
            push(f, Some(&mut spec));
        }
        spec.limit = limit;
        let (schema, order) = match projection {
            Some(p) => {
                // the scan builds columns in the table's order
                let mut cols = p.clone();
                cols.sort_unstable();
                cols.dedup();
                let names = cols
                    .iter()
                    .map(|&i| self.schema.field(i).name().clone())
                    .collect();
                spec.columns = Some(names);
                let order: Vec<usize> = p
                    .iter()
                    .map(|i| cols.iter().position(|c| c == i).unwrap_or(0))
                    .collect();
                (Arc::new(self.schema.project(&cols)?), Some(order))
            }
            None => (self.schema.clone(), None),
        };
        let part = Arc::new(TracePartition {
            opener: self.opener.clone(),
            spec,
            schema: schema.clone(),
            visited: self.visited.clone(),
        });
        let exec =
            StreamingTableExec::try_new(schema, vec![part], order.as_ref(), [], false, limit)?;
        Ok(Arc::new(exec))
    }
}

/// The one partition of a trace table: a scan on a thread of its own.
pub(crate) struct TracePartition {
    opener: Arc<dyn Opener>,
    spec: ScanSpec,
    schema: SchemaRef,
    visited: Arc<AtomicU64>,
}

impl fmt::Debug for TracePartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TracePartition({:?})", self.spec)
    }
}

impl PartitionStream for TracePartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let spec = self.spec.clone();
        let visited = self.visited.clone();
        spawn_stream(
            self.opener.clone(),
            self.schema.clone(),
            move |src, send| {
                let mut scan = Scan::new(src.meta(), &spec)?;
                let r = scan.run(src, &mut |b| send(b));
                visited.fetch_add(scan.visited(), Ordering::Relaxed);
                r.map_err(Into::into)
            },
        )
    }
}

/// Run `work` on the trace's records on a thread of its own; the batches it
/// sends come out of the returned stream. `send` returns `false` once the
/// stream is dropped: `work` should stop then.
pub(crate) fn spawn_stream(
    opener: Arc<dyn Opener>,
    schema: SchemaRef,
    work: impl FnOnce(&mut dyn RecordSource, &mut dyn FnMut(RecordBatch) -> bool) -> crate::Result<()>
        + Send
        + 'static,
) -> SendableRecordBatchStream {
    let (tx, rx) = tokio::sync::mpsc::channel::<DfResult<RecordBatch>>(2);
    std::thread::spawn(move || {
        let mut work = Some(work);
        let r = opener.open(&mut |src| {
            let Some(w) = work.take() else {
                return Ok(());
            };
            w(src, &mut |b| tx.blocking_send(Ok(b)).is_ok())
        });
        if let Err(e) = r {
            // (DataFusion prints an external error's own text only: the
            // trace's, with its causes, goes in that text)
            let _ = tx.blocking_send(Err(DataFusionError::External(format!("{e:#}").into())));
        }
    });
    let stream =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
    Box::pin(RecordBatchStreamAdapter::new(schema, stream))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    fn spec_of(filters: &[Expr]) -> (ScanSpec, Vec<bool>) {
        let mut s = ScanSpec::table("t");
        let took = filters.iter().map(|f| push(f, Some(&mut s))).collect();
        (s, took)
    }

    #[test]
    fn filters_the_scan_takes() {
        let (s, took) = spec_of(&[
            col("ts").gt_eq(lit(100i64)),
            lit(200i64).gt(col("ts")),
            col("ts").lt_eq(lit(500i64)),
            col("cpu").in_list(vec![lit(1u32), lit(3u32)], false),
            col("cpu").eq(lit(3i64)),
            col("pid").eq(lit(42i32)),
        ]);
        assert_eq!(took, [true; 6]);
        assert_eq!((s.ts_min, s.ts_max), (Some(100), Some(199)));
        assert_eq!(s.cpus, Some(vec![3]));
        assert_eq!(s.pids, Some(vec![42]));
        let (s, took) = spec_of(&[
            col("ts").between(lit(5i64), lit(9i64)),
            col("ts").gt(lit(6i64)),
            col("pid").eq(lit(1i64 << 40)),
        ]);
        assert_eq!(took, [true; 3]);
        assert_eq!((s.ts_min, s.ts_max), (Some(7), Some(9)));
        // a task number no row can have: nothing matches
        assert_eq!(s.pids, Some(vec![]));
    }

    #[test]
    fn filters_left_to_datafusion() {
        let (s, took) = spec_of(&[
            col("cpu").not_eq(lit(1i64)),
            col("cpu").lt(lit(2i64)),
            col("prev_pid").eq(lit(1i64)),
            col("ts").gt(lit(1.5f64)),
            col("pid").in_list(vec![lit(1i64)], true),
            col("ts").gt(col("cpu")),
            col("comm").eq(lit("x")),
        ]);
        assert_eq!(took, [false; 7]);
        assert_eq!(s, ScanSpec::table("t"));
    }
}
