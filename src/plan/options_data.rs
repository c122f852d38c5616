//! The run options of the data written (`--data`, `--compress`, `--dedup`, the pool)
//! and of the target's safety and checks (`--keep`, `--overwrite`, the device guard's
//! permissions, `--verify`): the second part of `plan::options::table`.

use crate::plan::option_def::{Group, OptDef, switch, value};

use Group::{Data, Target};

/// The data's and the target's options, in the order `--help` lists them.
pub(crate) const DATA: &[OptDef] = &[
    value(
        "data",
        "KIND",
        None,
        Data,
        "Content of writes: random, zeros, pattern:HEX, compressible (implied by --compress), or files:PATH (the contents of a file or of the files under a directory, up to 256 MiB, cycled).",
    ),
    value(
        "compress",
        "PCT",
        None,
        Data,
        "Target compressibility in percent: each --compress-chunk shrinks to about (100 - PCT)% under a fast LZ compressor.",
    ),
    value(
        "compress-chunk",
        "SIZE",
        Some("4k"),
        Data,
        "The unit a compressibility target applies to (a device's compression unit).",
    ),
    OptDef {
        choices: &["zerofill", "repeat"],
        ..value(
            "compress-method",
            "METHOD",
            Some("zerofill"),
            Data,
            "How compressible data is built: zerofill (random bytes then zeros, as fio) or repeat (random literals and copies of earlier substrings; lz4, zstd and gzip agree within a point from 5%, not below it in chunks of 64k or more: docs/data.md).",
        )
    },
    value(
        "dedup",
        "PCT",
        None,
        Data,
        "Percentage of dedup units that repeat a unit already written.",
    ),
    value(
        "dedup-unit",
        "SIZE",
        Some("4k"),
        Data,
        "Size of one dedup unit.",
    ),
    value(
        "dedup-set",
        "N",
        None,
        Data,
        "Repeats come from at most N distinct units [default: any unit written before].",
    ),
    value(
        "data-pool",
        "SIZE",
        Some("16m"),
        Data,
        "Size of the pool of pre-generated units each writing job stamps its writes from: a unit's bytes other than its stamp come back after this much data. Keep it above the window of any compressor that sees the data (zstd -19's: 8 MiB; xz -9 and zstd --long look back 64 and 128 MiB: `iomark data` names those the stream's repeats fall in); smaller stays hotter in the CPU's caches (fio reuses 1 MiB of buffers).",
    ),
    switch(
        "refill",
        Data,
        "Generate every byte of every write afresh (slower), instead of copying units of a pool built before the run and stamping each one unique (zeros and a pattern: fill every write's buffer rather than send one region). Same promises either way; different bytes. Not with --data files:, whose bytes are copied into every write already.",
    ),
    switch(
        "keep",
        Target,
        "Keep the file iomark created instead of removing it at the end.",
    ),
    switch(
        "overwrite",
        Target,
        "Allow writing an existing file that iomark did not create.",
    ),
    OptDef {
        choices: &["write", "allocate"],
        ..value(
            "new-file",
            "HOW",
            Some("write"),
            Target,
            "How a file iomark creates is prepared: write (laid out with the workload's data and synced, so reads hit real blocks) or allocate (space reserved with fallocate and nothing written, as fio does for a job that only writes; not for a pattern that reads; on btrfs, which would store a preallocated extent uncompressed, the file is left sparse).",
        )
    },
    switch(
        "allow-write-device",
        Target,
        "Allow writing a block device (destroys its contents).",
    ),
    switch(
        "destroy-data",
        Target,
        "Also allow writing a block device that holds a partition table or a filesystem or volume signature. A device in use (mounted, swap, LVM/RAID) is never written.",
    ),
    switch(
        "verify",
        Target,
        "Stamp every written block with a header (offset, seed, generation, CRC32C) and read every block back after the writes: good, corrupt, misplaced and stale blocks are reported, and any bad one makes the exit status 1. Jobs split the span (a block each at least); refused with a --dedup where no block holds more than one dedup unit (the header makes each unique).",
    ),
    OptDef {
        requires: Some("verify"),
        ..value(
            "verify-state",
            "FILE",
            None,
            Target,
            "With --verify: save what every block must hold, for a later `iomark verify`.",
        )
    },
    OptDef {
        conflicts: Some("verify"),
        ..switch(
            "stonewall",
            Target,
            "End every target's jobs (every MPI rank) when the first target finishes its work (IOR's -D): a size-based run then measures all of them over the first one's time. A time-based run ends together anyway.",
        )
    },
];
