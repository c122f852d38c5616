use super::*;

fn count(s: &str, needle: &str) -> usize {
    s.matches(needle).count()
}

#[test]
fn bar_chart_has_a_bar_per_value_and_error_bars() {
    let svg = bar_chart(&BarChart {
        title: "IOPS by level".into(),
        y_label: "IOPS".into(),
        categories: vec!["write".into(), "read".into()],
        groups: vec![
            BarGroup {
                name: "98%".into(),
                values: vec![(500.0, 20.0), (800.0, 0.0)],
            },
            BarGroup {
                name: "2%".into(),
                values: vec![(300.0, 10.0), (900.0, 5.0)],
            },
        ],
    });
    assert_eq!(count(&svg, r#"class="bar""#), 4);
    assert_eq!(count(&svg, r#"class="error-bar""#), 3);
    assert!(svg.contains(r#"data-value="900""#));
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert!(
        !svg.contains("http://") || count(&svg, "http://") == 1,
        "only the xmlns"
    );
}

#[test]
fn line_chart_points_and_log_axes() {
    let svg = line_chart(&LineChart {
        title: "IOPS vs QD".into(),
        x_label: "queue depth".into(),
        y_label: "IOPS".into(),
        x_log: true,
        markers: true,
        series: vec![Series {
            name: "randread".into(),
            points: vec![(1.0, 10.0), (4.0, 40.0), (16.0, 90.0)],
        }],
        ..LineChart::default()
    });
    assert_eq!(count(&svg, r#"class="point""#), 3);
    assert_eq!(count(&svg, r#"class="series""#), 1);
    assert!(svg.contains("queue depth") && svg.contains("IOPS vs QD"));
}

#[test]
fn legends_list_every_series_on_as_many_rows_as_they_need() {
    let series: Vec<Series> = (0..8)
        .map(|i| Series {
            name: format!("randwrite 4k qd{i} p99 latency"),
            points: vec![(1.0, 1.0 + i as f64), (2.0, 2.0)],
        })
        .collect();
    let svg = line_chart(&LineChart {
        series,
        ..LineChart::default()
    });
    assert_eq!(count(&svg, r#"class="legend""#), 8, "{svg}");
    // The chart grows for the extra rows: taller than one legend row needs.
    assert!(!svg.contains(&format!(r#"height="{H}""#)), "{svg}");
    let last_y: f64 = svg
        .rsplit(r#"<text class="legend" x=""#)
        .next()
        .and_then(|t| t.split(r#"y=""#).nth(1))
        .and_then(|t| t.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(last_y > H - 30.0 + LEGEND_ROW, "{last_y}");
    assert_eq!(short(0.25), "0.25");
    assert_eq!(short(0.05), "0.05");
}

#[test]
fn degenerate_data_renders() {
    let svg = line_chart(&LineChart {
        y_log: true,
        ..LineChart::default()
    });
    assert!(svg.ends_with("</svg>"));
    let svg = bar_chart(&BarChart::default());
    assert!(svg.ends_with("</svg>"));
    assert_eq!(short(1200.0), "1.2k");
    assert_eq!(short(2_500_000.0), "2.5M");
    assert_eq!(
        linear_ticks(0.0, 100.0),
        vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    );
}

/// A point's tooltip named a percentile by its position and its value without a unit
/// ("read: 0 → 3.0k" where p50 and 3.0k µs were meant): it takes the tick's label and
/// the chart's units.
#[test]
fn a_points_tooltip_names_its_tick_and_units() {
    let svg = line_chart(&LineChart {
        x_ticks: Some(vec![(0.0, "p50".into()), (1.0, "p90".into())]),
        y_unit: "µs".into(),
        series: vec![Series {
            name: "read".into(),
            points: vec![(0.0, 3000.0), (1.0, 4500.0)],
        }],
        markers: true,
        ..LineChart::default()
    });
    assert!(svg.contains("<title>read: p50 → 3.00 ms</title>"), "{svg}");
    assert!(svg.contains("<title>read: p90 → 4.50 ms</title>"), "{svg}");
    // Numbers for ticks (a queue depth) and a time axis give the number and unit.
    let svg = line_chart(&LineChart {
        x_ticks: Some(vec![(4.0, "4".into())]),
        x_unit: "s".into(),
        y_unit: "IOPS".into(),
        series: vec![Series {
            name: "read".into(),
            points: vec![(4.0, 1200.0), (5.0, 1300.0)],
        }],
        markers: true,
        ..LineChart::default()
    });
    assert!(
        svg.contains("<title>read: 4 s → 1.2k IOPS</title>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>read: 5 s → 1.3k IOPS</title>"),
        "{svg}"
    );
}
