//! "Did you mean" over a million tool names: building the `SuggestIndex`,
//! and 20 unknown names (10 near misses, 10 with no suggestion) answered by
//! the index and by the linear `toolgate_runtime::names::did_you_mean`, in the same run.
//! Before timing, the bench checks that both give the same 20 answers.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use toolgate_compiler::validate::suggest::SuggestIndex;
use toolgate_runtime::names::did_you_mean;

const TOOLS: usize = 1_000_000;

/// Unknown names one or two edits from generated names (letters edited, so
/// the dense numeric ids cannot turn them into registered names), one case
/// difference, and ten names with no suggestion (three of them sharing a
/// prefix with registered names).
fn queries(names: &[String]) -> (Vec<String>, Vec<String>) {
    let local = |i: usize| {
        names
            .iter()
            .skip(i)
            .find(|n| n.starts_with("tool"))
            .cloned()
            .unwrap_or_default()
    };
    let remote = |i: usize| {
        names
            .iter()
            .skip(i)
            .find(|n| n.starts_with("mcp_"))
            .cloned()
            .unwrap_or_default()
    };
    let near = vec![
        local(123_457).replacen("tool", "tol", 1),    // deletion
        local(234_568).replacen("tool", "otol", 1),   // transposition
        local(345_679).replacen("tool", "tool_", 1),  // insertion
        local(456_780).replacen("tool", "toal", 1),   // substitution
        local(567_891).replacen("tool", "Tool", 1),   // case only (distance 0)
        local(678_902).replacen("tool", "tl", 1),     // two deletions
        remote(111_111).replacen("mcp_", "mpc_", 1),  // transposition
        remote(222_222).replacen("srv", "svr", 1),    // transposition
        remote(333_333).replacen("_tool", "tool", 1), // deletion
        remote(444_444).replacen("mcp_", "MCP-", 1),  // case and substitution
    ];
    let none = [
        "shell_exec",
        "delete_record",
        "read_source",
        "get_env_raw",
        "send_email",
        "web_search",
        "query_database",
        "create_github_issue",
        // Sharing a prefix with registered names: the walk goes deeper.
        "toolbox_search",
        "tools_list",
        "mcp_srv1_search",
    ]
    .map(String::from)
    .to_vec();
    (near, none)
}

fn bench(c: &mut Criterion) {
    let names = toolgate_bench::generate(TOOLS, 10, 42).tool_names;
    let (near, none) = queries(&names);
    let all: Vec<&str> = near.iter().chain(&none).map(String::as_str).collect();
    let index = SuggestIndex::new(names.iter().map(String::as_str));
    for (i, q) in all.iter().enumerate() {
        let fast = index.did_you_mean(q);
        assert_eq!(
            fast,
            did_you_mean(q, names.iter().map(String::as_str)).map(str::to_string),
            "{q}"
        );
        assert_eq!(fast.is_some(), i < near.len(), "{q}: {fast:?}");
    }

    let mut g = c.benchmark_group("suggest");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("build_1M", |b| {
        b.iter(|| black_box(SuggestIndex::new(names.iter().map(String::as_str))))
    });
    g.bench_function("index_20_lookups_1M", |b| {
        b.iter(|| {
            for q in &all {
                black_box(index.did_you_mean(black_box(q)));
            }
        })
    });
    g.bench_function("index_10_near_misses_1M", |b| {
        b.iter(|| {
            for q in &near {
                black_box(index.did_you_mean(black_box(q)));
            }
        })
    });
    g.bench_function("index_10_no_match_1M", |b| {
        b.iter(|| {
            for q in &none {
                black_box(index.did_you_mean(black_box(q)));
            }
        })
    });
    g.bench_function("linear_20_lookups_1M", |b| {
        b.iter(|| {
            for q in &all {
                black_box(did_you_mean(black_box(q), names.iter().map(String::as_str)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
