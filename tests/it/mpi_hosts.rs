//! Two hosts on one machine: this network namespace and a second one, joined by a veth
//! pair, with OpenMPI told to start its daemon for the second "host" through a small
//! agent script (`ip netns exec NS unshare --uts …`, instead of ssh), so that the
//! second host has its own network and its own host name. `mpirun -np 3` over a
//! hostfile naming the two addresses (two slots here, one there) runs ranks 0 and 1
//! here and rank 2 there: the multi-host path (host names, `{host}` and `{local_rank}`
//! templates, per-host kernel counters) against three loop devices. The namespace and
//! the veth pair are removed by a guard, also when the test fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{LoopDev, read_json, require, require_tool, tmp};
use crate::mpi::{ready, u, within_1pct};

/// A second "host": a network namespace joined to this one by a veth pair.
struct NetHost {
    ns: String,
    veth: String,
    /// The subnet's first three octets: this side is `.1`, the namespace `.2`.
    net: String,
}

impl NetHost {
    /// Makes the namespace and the pair (root and `ip` needed), or says why not.
    fn new() -> Option<NetHost> {
        if !require_tool("ip", "ip (iproute2), for network namespaces")
            || !require_tool("unshare", "unshare (util-linux)")
        {
            return None;
        }
        let id = std::process::id() % 100_000;
        let h = NetHost {
            ns: format!("iomark-{id}"),
            veth: format!("iomv{id}"),
            net: format!("10.{}.{}", 200 + id % 50, id % 250),
        };
        let peer = format!("{}p", h.veth);
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        let here = format!("{}.1/24", h.net);
        let there = format!("{}.2/24", h.net);
        let ok = ip(&["netns", "add", &h.ns])
            && ip(&[
                "link", "add", &h.veth, "type", "veth", "peer", "name", &peer,
            ])
            && ip(&["link", "set", &peer, "netns", &h.ns])
            && ip(&["addr", "add", &here, "dev", &h.veth])
            && ip(&["link", "set", &h.veth, "up"])
            && ip(&["-n", &h.ns, "addr", "add", &there, "dev", &peer])
            && ip(&["-n", &h.ns, "link", "set", &peer, "up"])
            && ip(&["-n", &h.ns, "link", "set", "lo", "up"]);
        // Dropped even when a step failed: whatever was made is removed.
        require("a network namespace and a veth pair (ip netns add)", ok).then_some(h)
    }

    fn address(&self, n: u8) -> String {
        format!("{}.{n}", self.net)
    }

    /// The host name the ranks in the namespace get.
    fn name(&self) -> String {
        format!("{}-b", self.ns)
    }

    /// The agent OpenMPI calls instead of ssh (`AGENT [options] HOST COMMAND`): the
    /// namespace's address enters the namespace, under a host name of its own.
    fn agent(&self, dir: &Path) -> PathBuf {
        let path = dir.join("agent.sh");
        let script = format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\nhost=$1; shift\nif [ \"$host\" = \"{there}\" ]; then\n  exec ip netns exec {ns} unshare --uts sh -c 'hostname {name}; exec sh -c \"$0\"' \"$*\"\nfi\nexec sh -c \"$*\"\n",
            there = self.address(2),
            ns = self.ns,
            name = self.name()
        );
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

impl Drop for NetHost {
    fn drop(&mut self) {
        // Anything still running in the namespace first, then the namespace (which takes
        // the pair's far end, and with it the pair).
        if let Ok(o) = Command::new("ip")
            .args(["netns", "pids", &self.ns])
            .output()
        {
            for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).status();
        let _ = Command::new("ip")
            .args(["link", "del", &self.veth])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[test]
fn two_hosts_in_network_namespaces_get_their_own_names_templates_and_counters() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let devs: Vec<LoopDev> = (0..3)
        .filter_map(|_| LoopDev::new(32 << 20, true))
        .collect();
    if devs.len() < 3 {
        return;
    }
    let Some(net) = NetHost::new() else { return };
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let there = net.name();
    // `{host}.{local_rank}`: two links named after this host, one after the other.
    let dir = tmp();
    let names = [
        format!("{here}.0"),
        format!("{here}.1"),
        format!("{there}.0"),
    ];
    for (n, d) in names.iter().zip(&devs) {
        std::os::unix::fs::symlink(d.path(), dir.path().join(n)).unwrap();
    }
    let template = dir.path().join("{host}.{local_rank}").display().to_string();
    let hostfile = dir.path().join("hosts");
    std::fs::write(
        &hostfile,
        format!("{} slots=2\n{} slots=1\n", net.address(1), net.address(2)),
    )
    .unwrap();
    let subnet = format!("{}.0/24", net.net);
    let doc_path = dir.path().join("h.json");
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("RUST_BACKTRACE")
        .arg("--hostfile")
        .arg(&hostfile)
        .arg("--mca")
        .arg("plm_rsh_agent")
        .arg(net.agent(dir.path()))
        .args(["--mca", "oob_tcp_if_include", &subnet])
        .args(["--mca", "btl_tcp_if_include", &subnet])
        .args(["-np", "3"])
        .arg(&bin)
        .args(["run", "--rw", "randwrite", "--bs", "64k", "--io-size", "8m"])
        .args(["--engine", "psync", "--allow-write-device", "-q", "-o"])
        .arg(&doc_path)
        .arg(&template)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let after: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let kernel: Vec<u64> = (0..3).map(|i| after[i][2] - before[i][2]).collect();
    let doc = read_json(&doc_path);
    let run = &doc["runs"][0];
    assert_eq!(
        run["mpi"]["hosts"],
        serde_json::json!([here, here, there]),
        "ranks 0 and 1 here, rank 2 in the namespace"
    );
    let rep = &run["repetitions"][0];
    for (r, t) in rep["ranks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(t["path"], dir.path().join(&names[r]).display().to_string());
        assert_eq!(t["device"]["name"], devs[r].name(), "rank {r}");
        within_1pct(&format!("rank {r}"), u(&t["write"]["ios"]), kernel[r]);
    }
    // Per host: its ranks, its devices' counters (read on that host), summing to the
    // aggregate.
    let hosts = rep["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert_eq!(hosts[0]["host"], here);
    assert_eq!(hosts[0]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(hosts[1]["host"], there);
    assert_eq!(hosts[1]["ranks"], serde_json::json!([2]));
    within_1pct(
        "host 1",
        u(&hosts[0]["device"]["write_ios"]),
        kernel[0] + kernel[1],
    );
    within_1pct("host 2", u(&hosts[1]["device"]["write_ios"]), kernel[2]);
    let sum: u64 = hosts.iter().map(|h| u(&h["write"]["ios"])).sum();
    assert_eq!(
        sum,
        u(&rep["write"]["ios"]),
        "the hosts add up to the aggregate"
    );
    within_1pct(
        "aggregate",
        u(&rep["device"]["write_ios"]),
        kernel.iter().sum(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    check_tables(&doc, &doc_path, &stdout, [&here, &there]);
}

/// The per-rank and per-host tables of a real two-host document, as people see them: the
/// run's own text and the HTML report, each figure the document's.
fn check_tables(doc: &serde_json::Value, doc_path: &Path, stdout: &str, names: [&str; 2]) {
    let rep = &doc["runs"][0]["repetitions"][0];
    // The text: a row per rank and per host, the slowest and the fastest rank named.
    assert!(
        stdout.contains("slowest") && stdout.contains("fastest"),
        "{stdout}"
    );
    for h in rep["hosts"].as_array().unwrap() {
        let ios = u(&h["write"]["ios"]).to_string();
        assert!(
            stdout
                .lines()
                .any(|l| l.contains(h["host"].as_str().unwrap()) && l.contains(&ios)),
            "no row for host {h}: {stdout}"
        );
    }
    let page = crate::common::report(&[doc_path], &doc_path.with_extension("html"));
    let html = scraper::Html::parse_document(&page);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let cells = |row: scraper::ElementRef| -> Vec<String> {
        row.select(&sel("td"))
            .map(|c| c.text().collect::<String>())
            .collect()
    };
    let rows: Vec<Vec<String>> = html.select(&sel("table.ranks tr")).map(cells).collect();
    assert_eq!(rows.len(), 4, "header and 3 ranks");
    let header: String = html
        .select(&sel("table.ranks tr th"))
        .map(|c| c.text().collect::<String>())
        .collect();
    assert!(header.contains("window"), "{header}");
    for (r, t) in rep["ranks"].as_array().unwrap().iter().enumerate() {
        let row = &rows[r + 1];
        assert_eq!(row[0], r.to_string());
        assert_eq!(row[1], t["host"].as_str().unwrap());
        assert_eq!(row[7], u(&t["write"]["ios"]).to_string(), "rank {r}'s I/Os");
        // Its share of the aggregate's window.
        let share = 100.0 * t["elapsed_s"].as_f64().unwrap() / rep["elapsed_s"].as_f64().unwrap();
        assert_eq!(row[6], format!("{share:.0}%"), "rank {r}");
    }
    let marks: Vec<&str> = rows[1..].iter().map(|r| r[9].as_str()).collect();
    assert_eq!(
        marks.iter().filter(|m| **m == "slowest").count(),
        1,
        "{marks:?}"
    );
    assert_eq!(
        marks.iter().filter(|m| **m == "fastest").count(),
        1,
        "{marks:?}"
    );
    let hosts: Vec<Vec<String>> = html.select(&sel("table.hosts tr")).map(cells).collect();
    assert_eq!(hosts.len(), 3, "header and 2 hosts");
    for (i, h) in rep["hosts"].as_array().unwrap().iter().enumerate() {
        assert_eq!(hosts[i + 1][0], names[i]);
        assert_eq!(hosts[i + 1][5], u(&h["write"]["ios"]).to_string());
        assert_eq!(hosts[i + 1][6], u(&h["device"]["write_ios"]).to_string());
    }
    // Per-rank bars: one stacked bar whose segments are the ranks.
    let bar = html
        .select(&sel("svg[data-kind=stacked] g.stack"))
        .next()
        .expect("a bar");
    assert_eq!(bar.select(&sel("rect.segment")).count(), 3);
}
