//! Studies: every loop over several runs.
