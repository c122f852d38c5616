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
fn task_stat_is_read_for_io_uring_workers_only() {
    let line = "4242 (iou-wrk-4240) S 1 4240 4240 0 -1 4194368 0 0 0 0 150 275 0 0 20 0 3 0";
    let (k, of, t) = parse_task_stat(line, 100.0).expect("an io_uring worker");
    assert_eq!(k, super::KernelThread::IoWq);
    // Named after the job thread it serves (whose reading keeps its own workers').
    assert_eq!(of, Some(4240));
    assert!((t.user_s - 1.5).abs() < 1e-9 && (t.sys_s - 2.75).abs() < 1e-9);
    // The SQPOLL thread is told apart (probe 14: its time was filed under io_wq).
    let sqp = "4243 (iou-sqp-4240) S 1 4240 4240 0 -1 4194368 0 0 0 0 0 49 0 0 20 0 3 0";
    let (k, of, t) = parse_task_stat(sqp, 100.0).expect("a SQPOLL thread");
    assert_eq!(of, Some(4240));
    assert_eq!(k, super::KernelThread::SqPoll);
    assert!((t.sys_s - 0.49).abs() < 1e-9);
    let main = "4240 (iomark (x)) S 1 4240 4240 0 -1 4194368 0 0 0 0 150 275 0 0";
    assert!(parse_task_stat(main, 100.0).is_none());
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
