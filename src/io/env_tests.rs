//! Unit tests of `env.rs`: the host, filesystems, CPU times and SMART.

use super::*;

#[test]
fn host_is_described() {
    let h = Host::capture();
    assert!(h.cores >= 1);
    assert!(h.memory_bytes > 1 << 20);
    assert!(!h.kernel.is_empty() && h.kernel != "unknown");
}

#[test]
fn root_filesystem_is_found() {
    let f = FsInfo::of_path(Path::new("/")).expect("/ is mounted");
    assert_eq!(f.mount_point, "/");
    let p = FsInfo::of_path(Path::new("/proc/self")).expect("/proc is mounted");
    assert_eq!(p.fstype, "proc");
}

#[test]
fn cpu_time_moves_forward() {
    let a = CpuTimes::now();
    let mut x = 0u64;
    for i in 0..20_000_000u64 {
        x = x.wrapping_mul(31).wrapping_add(i);
    }
    std::hint::black_box(x);
    let d = CpuTimes::now().since(a);
    assert!(d.user_s + d.sys_s > 0.0);
}

#[test]
fn smart_counters_from_smartctl_json() {
    let nvme: serde_json::Value = serde_json::from_str(
        r#"{"nvme_smart_health_information_log": {"data_units_written": 1000}}"#,
    )
    .unwrap();
    let w = parse_smart(&nvme).unwrap();
    assert_eq!((w.host_bytes, w.media_bytes), (Some(512_000_000), None));
    let ata: serde_json::Value = serde_json::from_str(
        r#"{"ata_smart_attributes": {"table": [
            {"id": 241, "name": "Total_LBAs_Written", "raw": {"value": 2048}},
            {"id": 249, "name": "NAND_Writes_1GiB", "raw": {"value": 3}}]}}"#,
    )
    .unwrap();
    let w = parse_smart(&ata).unwrap();
    assert_eq!(
        (w.host_bytes, w.media_bytes),
        (Some(1 << 20), Some(3 << 30))
    );
    let intel: serde_json::Value = serde_json::from_str(
        r#"{"ata_smart_attributes": {"table": [
            {"id": 241, "name": "Host_Writes_32MiB", "raw": {"value": 2}}]}}"#,
    )
    .unwrap();
    assert_eq!(parse_smart(&intel).unwrap().host_bytes, Some(64 << 20));
    let none: serde_json::Value = serde_json::from_str(r#"{"device": {}}"#).unwrap();
    assert_eq!(parse_smart(&none), None);
}

#[test]
fn delta_converts_sectors_to_bytes() {
    let a = BlockStat {
        read_ios: 1,
        read_sectors: 8,
        write_ios: 2,
        write_sectors: 16,
        ..Default::default()
    };
    let b = BlockStat {
        read_ios: 3,
        read_sectors: 24,
        write_ios: 2,
        write_sectors: 16,
        ..Default::default()
    };
    let d = DeviceDelta::between("x", a, b);
    assert_eq!(
        (d.read_ios, d.read_bytes, d.write_ios, d.write_bytes),
        (2, 8192, 0, 0)
    );
}

/// `/proc/stat`'s first line read as the machine's user time (user + nice) and steal, the
/// `cpuN` lines counted; a line it cannot read gives nothing; this machine's reads.
#[test]
fn machine_times_read_proc_stat() {
    let stat = "cpu  1000 50 400 9000 30 0 20 7 0 0\ncpu0 500 25 200 4500 15 0 10 3 0 0\ncpu1 500 25 200 4500 15 0 10 4 0 0\nintr 5 1 2\nctxt 99\n";
    let m = MachineTimes::parse(stat, 100.0).unwrap();
    assert_eq!((m.user_s, m.steal_s, m.cpus), (10.5, 0.07, 2));
    let later = MachineTimes::parse(
        "cpu  1200 50 400 9000 30 0 20 9 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n",
        100.0,
    )
    .unwrap();
    let d = later.since(m);
    assert!(
        (d.user_s - 2.0).abs() < 1e-9 && (d.steal_s - 0.02).abs() < 1e-9,
        "{d:?}"
    );
    assert_eq!(MachineTimes::parse("cpu  x 1 2\n", 100.0), None);
    assert_eq!(MachineTimes::parse("intr 5\n", 100.0), None);
    let here = MachineTimes::now().expect("/proc/stat");
    assert!(here.cpus >= 1 && here.user_s > 0.0, "{here:?}");
}
