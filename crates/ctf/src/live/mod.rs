//! LTTng live: reading a tracing session from lttng-relayd's viewer port
//! while it is recorded, as babeltrace2's `src.ctf.lttng-live` does.
//!
//! [`proto`] is the wire format (bounded decoding of every reply),
//! [`conn`] one command connection with deadlines, [`url`] the
//! `net://HOST[:PORT]/host/HOSTNAME/SESSION` URLs, and [`session`] a
//! session attached and followed: its traces, metadata and streams, as a
//! [`crate::text::PacketSource`] for the text printer; [`spool`] writes a
//! session down as a CTF directory (`convert --to ctf`), and [`model`]
//! reads any [`crate::text::PacketSource`] as a source of the event model
//! (`convert` into the other formats, `report --json`).

pub mod conn;
pub mod model;
pub mod proto;
pub mod session;
pub mod spool;
pub mod url;

pub use conn::{LiveError, Options, Relay};
pub use model::LiveRecords;
pub use session::{list_sessions, LiveSession, NotFound, SessionLine};
pub use url::{is_live_url, LiveUrl};
