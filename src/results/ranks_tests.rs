use super::*;

fn part(rank: u32, host: &str, lats: &[u64], elapsed_s: f64, dev: Option<(&str, u64)>) -> RankPart {
    let mut h = LatHist::precise();
    lats.iter().for_each(|&ns| h.record(ns));
    let ios = lats.len() as u64;
    RankPart {
        first_done: false,
        rank,
        host: host.into(),
        path: format!("/dev/loop{rank}"),
        rep: Repetition {
            index: 1,
            status: Status::Complete,
            elapsed_s,
            read: DirStats {
                ios,
                bytes: ios * 4096,
                iops: ios as f64 / elapsed_s,
                bw_bytes: (ios * 4096) as f64 / elapsed_s,
                lat_ns: h.summary(),
            },
            write: DirStats::default(),
            trim: Default::default(),
            fsyncs: 0,
            cpu: Cpu::default(),
            spin_wait_ns: None,
            device: dev.map(|(name, n)| DeviceDelta {
                name: name.into(),
                read_ios: n,
                read_bytes: n * 4096,
                write_ios: 0,
                write_bytes: 0,
                ..Default::default()
            }),
            series: vec![Point {
                t_s: 1.0,
                read_iops: ios as f64,
                lat_mean_ns: 1000.0 * (rank + 1) as f64,
                ..Point::default()
            }],
            data: None,
            verify: None,
            page_cache_hit_pct: None,
            targets: Vec::new(),
            ranks: Vec::new(),
            hosts: Vec::new(),
        },
        read_hist: h.buckets(),
        write_hist: Vec::new(),
    }
}

#[test]
fn the_aggregate_sums_ios_over_the_common_window_and_merges_histograms() {
    let lats: Vec<Vec<u64>> = (0..3u64)
        .map(|r| {
            (1..=1000u64)
                .map(|i| i * (r + 1) * 997 % 500_000 + 1000)
                .collect()
        })
        .collect();
    let parts = vec![
        part(0, "a", &lats[0], 2.0, Some(("loop0", 1000))),
        part(1, "a", &lats[1], 2.5, Some(("loop1", 1000))),
        part(2, "b", &lats[2], 2.2, Some(("loop0", 1000))),
    ];
    let agg = aggregate(&parts, true);
    assert_eq!(agg.read.ios, 3000);
    assert_eq!(agg.elapsed_s, 2.5, "first start to last stop");
    assert_eq!(agg.read.iops, 3000.0 / 2.5);
    let mut all = LatHist::precise();
    lats.iter().flatten().for_each(|&ns| all.record(ns));
    assert_eq!(agg.read.lat_ns, all.summary(), "merged, not averaged");
    // loop0 on host a and loop0 on host b are two devices.
    let d = agg.device.clone().unwrap();
    assert_eq!(d.read_ios, 3000);
    assert_eq!(agg.ranks.len(), 3);
    assert_eq!(agg.ranks[2].host.as_deref(), Some("b"));
    assert_eq!(agg.series[0].read_iops, 3000.0);
    assert_eq!(agg.series[0].lat_mean_ns, 2000.0, "weighted by I/Os");
    let note = unevenness(&agg).unwrap();
    assert!(
        note.contains("slowest rank was rank 1 on a") && note.contains("fastest rank 0 on a"),
        "{note}"
    );
}

#[test]
fn ranks_sharing_a_device_count_it_once() {
    let parts = vec![
        part(0, "a", &[1000; 10], 1.0, Some(("loop5", 30))),
        part(1, "a", &[1000; 10], 1.0, Some(("loop5", 31))),
        part(2, "a", &[1000; 10], 1.0, Some(("loop5", 29))),
    ];
    let agg = aggregate(&parts, true);
    assert_eq!(agg.device.unwrap().read_ios, 31);
    let mut parts = parts;
    parts[1].rep.device = None;
    assert_eq!(aggregate(&parts, true).device, None);
    parts[2].rep.status = Status::Interrupted;
    assert_eq!(aggregate(&parts, true).status, Status::Interrupted);
}

#[test]
fn hosts_group_their_ranks_over_the_common_window_and_count_a_shared_device_once() {
    let parts = vec![
        part(0, "a", &[1000; 10], 1.0, Some(("loop5", 30))),
        part(1, "b", &[3000; 20], 2.0, Some(("loop5", 20))),
        part(2, "a", &[2000; 30], 1.5, Some(("loop5", 40))),
        part(3, "a", &[5000; 5], 1.2, Some(("loop6", 5))),
    ];
    let agg = aggregate(&parts, true);
    let names: Vec<&str> = agg.hosts.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let (a, b) = (&agg.hosts[0], &agg.hosts[1]);
    assert_eq!(a.ranks, [0, 2, 3]);
    assert_eq!(b.ranks, [1]);
    assert_eq!((a.read.ios, b.read.ios), (45, 20));
    assert_eq!(a.read.bytes, 45 * 4096);
    // Over the common window (2 s, rank 1's end), not each host's own.
    assert_eq!(a.read.iops, 45.0 / 2.0);
    assert_eq!(b.read.bw_bytes, 20.0 * 4096.0 / 2.0);
    // Host a's latency is its ranks' histograms merged.
    let mut h = LatHist::precise();
    [(1000, 10), (2000, 30), (5000, 5)]
        .iter()
        .for_each(|&(ns, n)| (0..n).for_each(|_| h.record(ns)));
    assert_eq!(a.read.lat_ns, h.summary());
    // loop5 shared by ranks 0 and 2 on a: once (the larger), plus loop6.
    assert_eq!(a.device.as_ref().unwrap().read_ios, 40 + 5);
    assert_eq!(b.device.as_ref().unwrap().read_ios, 20);
    // The hosts add up to the aggregate.
    let sum = |f: fn(&HostRep) -> u64| agg.hosts.iter().map(f).sum::<u64>();
    assert_eq!(sum(|h| h.read.ios), agg.read.ios);
    assert_eq!(
        sum(|h| h.device.as_ref().unwrap().read_ios),
        agg.device.as_ref().unwrap().read_ios
    );
}
