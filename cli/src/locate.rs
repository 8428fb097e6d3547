//! Where the journal is.
