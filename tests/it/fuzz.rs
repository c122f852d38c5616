//! Property tests (proptest) standing in for fuzzing: the size, duration and matrix-file
//! parsers and the results loader never panic, whatever they are given, and sizes
//! round-trip through their short form.
//! Run longer with e.g. `PROPTEST_CASES=200000 cargo test --release --test it fuzz::`.

use proptest::prelude::*;

use crate::common::tmp;

use iomark::results::schema::Document;
use iomark::units::{fmt_size_short, parse_duration, parse_size};

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn size_parser_never_panics(s in ".{0,24}") {
        let _ = parse_size(&s);
    }

    #[test]
    fn size_parser_never_panics_on_size_like_text(s in "[0-9]{0,22}(\\.[0-9]{0,4})?(k|K|m|M|g|G|t|T|p|P|KiB|MiB|GiB|kB|MB|GB|b|B|x)?") {
        let _ = parse_size(&s);
    }

    #[test]
    fn duration_parser_never_panics(s in "[0-9.]{0,12}(ms|s|m|h|us|x)?([0-9.]{0,6}(ms|s|m|h)?)?") {
        let _ = parse_duration(&s);
    }

    #[test]
    fn duration_parser_never_panics_on_anything(s in ".{0,24}") {
        let _ = parse_duration(&s);
    }

    #[test]
    fn sizes_round_trip(v in 0u64..(1u64 << 50)) {
        prop_assert_eq!(parse_size(&fmt_size_short(v)).unwrap(), v);
        prop_assert_eq!(parse_size(&v.to_string()).unwrap(), v);
    }

    #[test]
    fn results_loader_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let dir = tmp();
        let p = dir.path().join("r.json");
        std::fs::write(&p, &bytes).unwrap();
        prop_assert!(Document::load(&p).is_err() || !bytes.is_empty());
    }

    #[test]
    fn results_loader_never_panics_on_mutated_documents(cut in 0usize..4000, junk in ".{0,8}") {
        // A real document, cut short or with junk spliced in.
        let dir = tmp();
        let p = dir.path().join("r.json");
        let doc = Document::new(iomark::results::env::Host::capture()).to_json();
        let cut = cut.min(doc.len());
        let text = format!("{}{}{}", &doc[..cut], junk, &doc[cut..]);
        std::fs::write(&p, text).unwrap();
        let _ = Document::load(&p);
    }

    #[test]
    fn matrix_parser_never_panics(text in "(\\[(vary|fixed|x)\\]\n)?((rw|bs|qd|jobs|runtime|size|buffered|direct|target|[a-z_]{1,8}) = (\"[a-z0-9]{0,4}\"|[0-9]{1,3}|true|\\[[0-9, \"a-z]{0,12}\\]|\\[)\n){0,4}(\\[vary\\]\n)?((rw|bs|qd|compress|buffered|[a-z_]{1,8}) = \\[[0-9, ]{0,8}\\]\n){0,2}") {
        let _ = iomark::plan::suite::Matrix::parse("m.toml", &text);
    }

    #[test]
    fn matrix_parser_never_panics_on_anything(text in ".{0,80}") {
        let _ = iomark::plan::suite::Matrix::parse("m.toml", &text);
    }
}
