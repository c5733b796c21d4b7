//! The printers of the common model behind one switch: what
//! `report --json`/`--style` print for any format (the CLI's
//! `print_model`, and `Trace.report()` in the Python package).

use tracemux_core::model::{Event, Lost, TimeFormat, TraceMeta};

use crate::babeltrace::BabeltracePrinter;
use crate::tracecmd::TraceCmdPrinter;

/// The text styles of the common model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelStyle {
    /// JSON lines (`schema/jsonl.schema.json`).
    Json,
    /// babeltrace2's text style.
    Babeltrace,
    /// trace-cmd report's line layout, fields as ` name=value`.
    TraceCmd,
}

/// One trace's records in one [`ModelStyle`].
#[derive(Debug)]
pub struct ModelPrinter {
    style: ModelStyle,
    bt: BabeltracePrinter,
    tc: TraceCmdPrinter,
    json: crate::jsonl::JsonWriter,
}

impl ModelPrinter {
    pub fn new(meta: &TraceMeta, style: ModelStyle) -> Self {
        ModelPrinter {
            style,
            bt: BabeltracePrinter::new(),
            tc: TraceCmdPrinter::new(meta, TimeFormat::Usecs),
            json: crate::jsonl::JsonWriter::new(),
        }
    }

    pub fn event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        match self.style {
            ModelStyle::Json => self.json.event(out, meta, ev),
            ModelStyle::Babeltrace => self.bt.write_event(out, meta, ev),
            ModelStyle::TraceCmd => {
                self.tc.write_pretty(out, meta, ev, None);
            }
        }
    }

    pub fn lost(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost) {
        match self.style {
            ModelStyle::Json => crate::jsonl::write_lost(out, meta, l),
            ModelStyle::Babeltrace => self.bt.write_lost(out, l),
            ModelStyle::TraceCmd => self.tc.write_lost(out, meta, l),
        }
    }
}
