//! tracemux-ftrace: what the Linux kernel's ftrace writes, independent of
//! the container it is stored in (trace-cmd's trace.dat, uftrace's kernel
//! data): tracefs `format` files, `header_page`, ring-buffer pages, the
//! `print fmt` engine, kallsyms, printk formats and saved cmdlines.
#![forbid(unsafe_code)]

pub mod format;
