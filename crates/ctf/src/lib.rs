//! CTF 1.8 (TSDL metadata) and CTF 2 (JSON metadata) reader.
