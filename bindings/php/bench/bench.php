<?php

declare(strict_types=1);

// The PHP half of BENCHMARKS.md "Hosts: C ABI and PHP FFI": a decision and the
// unavailable list through FFI, beside the plain PHP gate on the same policy.
// Run by bench/run.sh after the Rust half wrote the table.

require __DIR__ . '/../tests/bootstrap.php';

use Toolgate\Examples\NrLlm\PlainGate;
use Toolgate\Native;
use Toolgate\Role;
use Toolgate\Table;

$table = Table::fromFile($argv[1] ?? '/tmp/toolgate-ffi-bench.tgt');
$ctx = $table->context('config0', Role::User, 'k0');
$n = $table->toolCount();
$names = [];
for ($i = 0; $i < $n; $i++) {
    $names[] = $table->toolName($i);
}
$plain = new PlainGate($table->policy());

function bench(string $label, int $iters, callable $f): void
{
    for ($i = 0; $i < intdiv($iters, 10); $i++) {
        $f($i);
    }
    $t = hrtime(true);
    for ($i = 0; $i < $iters; $i++) {
        $f($i);
    }
    printf("php\t%s\t%.1f\n", $label, (hrtime(true) - $t) / $iters);
}

// The plain gate must agree before it is timed.
$want = $ctx->unavailableArray();
if ($plain->unavailable('config0', 'user', 'k0', null, null) !== $want) {
    fwrite(STDERR, "the plain PHP gate disagrees with the table\n");
    exit(1);
}
if ($ctx->unavailableMap() !== array_column($want, 'reason', 'tool')) {
    fwrite(STDERR, "unavailableMap disagrees\n");
    exit(1);
}
printf("meta\ttools\t%d\tunavailable\t%d\n", $n, count($want));

bench('decide by name (FFI, Decision object)', 500_000, fn (int $i) => $ctx->decide($names[($i * 7919) % $n]));
bench('isAllowed by name (FFI, bool)', 500_000, fn (int $i) => $ctx->isAllowed($names[($i * 7919) % $n]));
bench('decide by name (plain PHP gate)', 500_000, fn (int $i) => $plain->decide($names[($i * 7919) % $n], 'config0', 'user', 'k0', null, null));
bench('unavailable list (FFI, map tool => reason)', 5_000, fn () => $ctx->unavailableMap());
bench('unavailable list (FFI, new context + map)', 5_000, fn () => $table->context('config0', Role::User, 'k0')->unavailableMap());
// The previous unavailableMap(): two text columns, two explodes and an array_combine.
$ptr = (fn () => $this->ptr)->call($ctx);
bench('unavailable list (FFI, two columns => map)', 5_000, function () use ($ptr) {
    $s = Native::string('toolgate_unavailable_columns', $ptr);
    [$tools, $codes] = explode("\t", $s, 2);
    return array_combine(explode("\n", $tools), explode("\n", $codes));
});
bench('unavailable list (FFI, arrays)', 5_000, fn () => $ctx->unavailableArray());
bench('unavailable list (FFI, Unavailable objects)', 5_000, fn () => $ctx->unavailable());
bench('unavailable prompt (FFI)', 5_000, fn () => $ctx->unavailablePrompt());
bench('unavailable list (plain PHP gate)', 500, fn () => $plain->unavailable('config0', 'user', 'k0', null, null));
