//! The integration tests, one binary (one link instead of one per area): `cargo test`
//! runs them with the rest, `cargo test --test it` alone, `cargo test --test it cli::`
//! one area. Fixtures are in `tests/data/`; shared helpers in `common`.

mod common;

mod compare;

mod bad_input;
mod bounds;
mod btrfs;
mod cli;
mod data;
mod dirty;
mod engines;
mod faultfs;
mod faults;
mod files_service;
mod fio_buffers;
mod fio_cache;
mod fio_files;
mod fio_groups;
mod fio_habits;
mod fio_import;
mod fio_jobs;
mod fio_options;
mod fio_sizes;
mod fio_words;
mod fuzz;
mod ground_truth;
mod guard;
mod interrupt;
mod mpi;
mod mpi_hosts;
mod mpi_study;
mod multi;
mod named_right;
mod new_file;
mod output;
mod outputs;
mod readme;
mod regression;
mod report;
mod report_figures;
mod safety;
mod suite;
mod trim;
mod verdicts;
mod verify;
mod zram_blend;
