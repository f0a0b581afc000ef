//! The formatter: what parses formats, idempotently, to the same meaning.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_compiler::syntax::formatter::format;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(once) = format(text) {
            let twice = format(&once).expect("formatted text parses");
            assert_eq!(once, twice, "fmt is idempotent");
        }
    }
});
