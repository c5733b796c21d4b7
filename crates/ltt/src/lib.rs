//! Legacy LTT (LTTng 0.x, 2008 format) reader and fixture writer.
