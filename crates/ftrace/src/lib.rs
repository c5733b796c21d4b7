//! tracemux-ftrace: what the Linux kernel's ftrace writes, independent of
//! the container it is stored in (trace-cmd's trace.dat, uftrace's kernel
//! data): tracefs `format` files, `header_page`, ring-buffer pages, the
//! `print fmt` engine, kallsyms, printk formats and saved cmdlines.
#![forbid(unsafe_code)]

pub mod format;
pub mod page;
pub mod printfmt;
pub mod tables;

use tracemux_core::model::EventClass;

/// Build the common model's event class for a parsed format file of
/// `system`. The class carries the `print fmt` engine as its printer.
pub fn event_class(f: &format::EventFormat, system: &str, long_size: u32) -> EventClass {
    EventClass {
        index: tracemux_core::layout::ClassId::UNLISTED,
        id: f.id,
        system: system.to_string(),
        name: f.name.clone(),
        common_fields: f.common_fields.clone(),
        fields: f.fields.clone(),
        print_fmt: f.print_fmt.clone(),
        printer: Some(std::sync::Arc::new(printfmt::FtracePrinter::new(
            f, system, long_size,
        ))),
        schema: None,
        compiled: Default::default(),
    }
}
