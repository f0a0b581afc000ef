#!/usr/bin/env bash
# Run every fuzz target for a bounded time and report. Usage: fuzz/run.sh [SECONDS_PER_TARGET]
# cargo-fuzz needs nightly features; on a stable toolchain RUSTC_BOOTSTRAP=1 enables them.
set -uo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
export RUSTC_BOOTSTRAP=1
mkdir -p corpus
# Seed corpora from the shipped policies, registries, fixtures and a compiled table.
mkdir -p corpus/parse_policy corpus/format corpus/registry corpus/classify corpus/run_state corpus/table_load corpus/lsp_frames corpus/tools_list_pages corpus/serve_request corpus/gateway_messages corpus/gateway_offerings corpus/grants
cp ../policies/*/*.tg corpus/parse_policy/ 2>/dev/null
cp ../policies/*/*.tg corpus/format/ 2>/dev/null
for f in ../policies/*/registry.toml; do cp "$f" "corpus/registry/$(basename "$(dirname "$f")").toml"; done
cp ../policies/mcp-profiles/mcp/*.json corpus/registry/ 2>/dev/null
for f in ../tests/fixtures/gateway/*.json; do cp "$f" "corpus/classify/$(basename "$f")"; done
printf '{"allowedToolNames":null,"excludedToolNames":["a"]}' > corpus/run_state/seed1.json
printf '{"allowedToolNames":["a"]}' > corpus/run_state/seed2.json
cp seeds/lsp_frames/* corpus/lsp_frames/
cp seeds/tools_list_pages/* corpus/tools_list_pages/
(cd .. && cargo run -q -p toolgate -- compile policies/exclusions -o fuzz/corpus/table_load/exclusions.tgt 2>/dev/null)
status=0
# The service: a selector byte (endpoint, Content-Type, authenticated), then the body.
printf '\x00{"subject":{"type":"user","id":"a"},"action":{"name":"call"},"resource":{"type":"tool","id":"refund.issue"},"context":{"configuration":"support-chat"}}' > corpus/serve_request/evaluation.bin
printf '\x01{"subject":{"type":"user","id":"a","properties":{"consumer":"support-bot"}},"action":{"name":"call"},"evaluations":[{"resource":{"type":"tool","id":"refund.issue"}},{"resource":{"type":"tool","id":"x"}}],"options":{"evaluations_semantic":"deny_on_first_deny"}}' > corpus/serve_request/batch.bin
printf '\x10Bearer fuzz-key\n{"subject":{"type":"user","id":"a"},"action":{"name":"offer"},"resource":{"type":"tool"}}' > corpus/serve_request/authed.bin
# The gateway: a selector byte (upstream, role, consumer, pins, stealth, or a
# configuration), an upstream's tools/list page, then client tool names.
printf '\x01{"tools":[{"name":"get_current_time","description":"Get the time","inputSchema":{"type":"object"}},{"name":"x\\u0000y","inputSchema":{"type":"object"}}]}\nmcp_time_get_current_time\nmcp_git_git_reset\nmcp_time_x\n' > corpus/gateway_messages/time.bin
printf '\x80listen = "0.0.0.0:1"\ntable = "t"\nconfiguration = "c"\n[identity]\nconsumer = "a"\n[[upstream]]\nname = "a"\nurl = "http://x"\n' > corpus/gateway_messages/config.bin
# What upstreams list besides tools: `SERVER<TAB>{...}` a line, then URIs a client asks.
printf 'a\t{"resources":[{"uri":"file:///x","name":"x"},{"uri":"file:///both","name":"b"}],"resourceTemplates":[{"uriTemplate":"db://{id}","name":"t"}],"prompts":[{"name":"p"}]}\nb\t{"resources":[{"uri":"file:///both","name":"b"}],"prompts":[{"name":"p"}],"serves":true}\nfile:///both\ndb://7\nnone://x\n' > corpus/gateway_offerings/two.bin
# A grant's shape (its signature is no key's: no fuzzed grant is ever accepted).
printf '{"grant":{"request":{"tool":"refund","argumentsDigest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","configuration":"c","consumer":null,"role":"user","tableDigest":"00","requestId":"q"},"approver":"a","grantId":"g","expiresAt":1800000300},"publicKey":"%s","signature":"%s"}' "$(printf '0%.0s' $(seq 64))" "$(printf '1%.0s' $(seq 128))" > corpus/grants/shape.json
for t in parse_policy registry table_load run_state classify format lsp_frames tools_list_pages serve_request gateway_messages gateway_offerings grants; do
  log="/tmp/toolgate-fuzz-$t.log"
  if cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 >"$log" 2>&1; then
    echo "$t: ok, $(grep -Eo '#[0-9]+' "$log" | tail -1 | tr -d '#') runs in ${secs}s"
  else
    echo "$t: FAILED (see $log and fuzz/artifacts/$t/)"
    status=1
  fi
done
exit $status
