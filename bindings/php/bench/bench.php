<?php

declare(strict_types=1);

// The PHP half of BENCHMARKS.md "Hosts: C ABI and PHP FFI": a decision and the
// unavailable list through FFI, beside the plain PHP gate on the same policy.
// Run by bench/run.sh after the Rust half wrote the table.
//
//   php bench.php [TABLE]          the labelled rows of BENCHMARKS.md (bench/run.sh)
//   php bench.php TABLE --rows N   the ROW lines of bench/scripts/hosts.sh: first
//                                  checks every decision and the list against the
//                                  runtime's answers (TABLE's .tools.tsv twin)

require __DIR__ . '/../tests/bootstrap.php';

use Toolgate\Examples\NrLlm\PlainGate;
use Toolgate\Native;
use Toolgate\Role;
use Toolgate\Table;

$tablePath = $argv[1] ?? '/tmp/toolgate-ffi-bench.tgt';
$rows = ($argv[2] ?? null) === '--rows' ? (int) ($argv[3] ?? 0) : null;
$table = Table::fromFile($tablePath);
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
$columns = ['tools' => array_column($want, 'tool'), 'reasons' => array_column($want, 'reason')];
if ($ctx->unavailableColumns() !== $columns) {
    fwrite(STDERR, "unavailableColumns disagrees\n");
    exit(1);
}
if ($rows !== null) {
    hostRows($tablePath, $rows, $ctx, $plain, $names, $want);
}
printf("meta\ttools\t%d\tunavailable\t%d\n", $n, count($want));

bench('decide by name (FFI, Decision object)', 500_000, fn (int $i) => $ctx->decide($names[($i * 7919) % $n]));
bench('isAllowed by name (FFI, bool)', 500_000, fn (int $i) => $ctx->isAllowed($names[($i * 7919) % $n]));
bench('decide by name (plain PHP gate)', 500_000, fn (int $i) => $plain->decide($names[($i * 7919) % $n], 'config0', 'user', 'k0', null, null));
bench('unavailable list (FFI, columns tools and reasons)', 5_000, fn () => $ctx->unavailableColumns());
bench('unavailable list (FFI, new context + columns)', 5_000, fn () => $table->context('config0', Role::User, 'k0')->unavailableColumns());
// Two text columns, two explodes and an array_combine (a map loses numeric names' types).
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

/**
 * bench/scripts/hosts.sh: agreement with the runtime's answers, then one ROW
 * line per figure, each the median of the timed repetitions after a warm-up
 * one; decisions walk the names in stride order (HOSTS_QUICK=1: short loops).
 *
 * @param list<string> $names registry order
 * @param list<array{tool:string,reason:string}> $want the table's list
 */
function hostRows(string $tablePath, int $n, \Toolgate\Context $ctx, PlainGate $plain, array $names, array $want): never
{
    [$lines, $columns] = hostAgreement($tablePath, $n, $ctx, $plain, $names, $want);
    $quick = !in_array(getenv('HOSTS_QUICK') ?: '0', ['', '0'], true);
    $reps = $quick ? 5 : 7;
    $iters = static fn (int $full): int => max(1, $quick ? intdiv($full, 20) : $full);
    $seq = [];
    for ($k = 0; $k < $n; $k++) {
        $seq[] = $names[(($k + 1) * 7919) % $n]; // the order of bench/src/lib.rs walk()
    }
    $row = static function (string $path, string $op, int $ops, callable $f) use ($n, $reps): void {
        $f();
        $runs = [];
        for ($r = 0; $r < $reps; $r++) {
            $t = hrtime(true);
            $f();
            $runs[] = (hrtime(true) - $t) / $ops;
        }
        sort($runs);
        printf("ROW path=%s op=%s n=%d ns=%.1f iters=%d reps=%d\n", $path, $op, $n, $runs[intdiv($reps, 2)], $ops, $reps);
    };
    $passes = intdiv($iters(200_000) + $n - 1, $n);
    ffiDecideRows($ctx, $seq, $passes, $n, $row);
    $offeredWant = ffiListRows($ctx, $lines, $columns, $n, $iters, $row);
    plainRows($plain, $ctx->table(), $names, $seq, $passes, $n, $offeredWant, $want, $iters, $row);
    exit(0);
}

function hostFail(string $what): never
{
    fwrite(STDERR, "bench.php: $what\n");
    exit(1);
}

/**
 * Every decision of FFI and of the plain gate, and the FFI list, against the
 * runtime's answers in TABLE's .tools.tsv twin; its lines and the FFI columns.
 *
 * @param list<string> $names registry order
 * @return array{list<string>, array{tools: list<string>, reasons: list<string>}}
 */
function hostAgreement(string $tablePath, int $n, \Toolgate\Context $ctx, PlainGate $plain, array $names, array $want): array
{
    $tsv = preg_replace('/\\.tgt$/', '.tools.tsv', $tablePath);
    $lines = file($tsv, FILE_IGNORE_NEW_LINES);
    if ($lines === false || count($lines) !== $n || count($names) !== $n) {
        hostFail("$tsv: not $n tools, or the table does not hold $n");
    }
    $listed = [];
    foreach ($lines as $i => $line) {
        [$name, $allowed, $reason, $onList] = explode("\t", $line) + [null, null, null, null];
        $expect = [$allowed === '1', $reason === '-' ? null : $reason];
        $d = $ctx->decide($name);
        if ($name !== $names[$i] || [$d->allowed, $d->reason?->value] !== $expect) {
            hostFail("$name: FFI decides " . json_encode([$d->allowed, $d->reason?->value]) . ', the runtime ' . json_encode($expect));
        }
        if (array_slice($plain->decide($name, 'config0', 'user', 'k0', null, null), 0, 2) !== $expect) {
            hostFail("$name: the plain PHP gate disagrees with the runtime");
        }
        if ($onList === '1') {
            $listed[$name] = $reason;
        }
    }
    $columns = $ctx->unavailableColumns();
    if (array_combine($columns['tools'], $columns['reasons']) !== $listed || array_column($want, 'reason', 'tool') !== $listed) {
        hostFail('the unavailable list differs from the runtime\'s');
    }
    return [$lines, $columns];
}

/**
 * The FFI decision rows: name by name, then 64 names a call.
 *
 * @param list<string> $seq the names in stride order
 */
function ffiDecideRows(\Toolgate\Context $ctx, array $seq, int $passes, int $n, callable $row): void
{
    $row('php', 'decide', $passes * $n, static function () use ($ctx, $seq, $passes): void {
        for ($p = 0; $p < $passes; $p++) {
            foreach ($seq as $x) {
                $ctx->decide($x);
            }
        }
    });
    // The same names 64 a call through decideMany (a gateway filtering an
    // upstream's tools/list), checked against decide() first; ns per name.
    $batches = array_chunk($seq, 64);
    foreach ($batches as $batch) {
        foreach ($ctx->decideMany($batch) as $j => $d) {
            if ($d != $ctx->decide($batch[$j])) {
                hostFail("{$batch[$j]}: decideMany disagrees with decide");
            }
        }
    }
    $row('php-many', 'decide', $passes * $n, static function () use ($ctx, $batches, $passes): void {
        for ($p = 0; $p < $passes; $p++) {
            foreach ($batches as $batch) {
                $ctx->decideMany($batch);
            }
        }
    });
}

/**
 * The FFI list rows: the same context again, then a chat host's request; the
 * offered names the runtime expects.
 *
 * @param list<string> $lines TABLE's .tools.tsv twin
 * @param array{tools: list<string>, reasons: list<string>} $columns the FFI list
 * @return list<string>
 */
function ffiListRows(\Toolgate\Context $ctx, array $lines, array $columns, int $n, callable $iters, callable $row): array
{
    // The context keeps its list (Context::unavailableColumns): this row asks
    // the same context again; the 'request' row below pays for a new one.
    $k = $iters(intdiv(2_000_000, $n));
    $row('php', 'unavailable', $k, static function () use ($ctx, $k): void {
        for ($i = 0; $i < $k; $i++) {
            $ctx->unavailableColumns();
        }
    });
    // A chat host's request: a new context, then every registered tool
    // (the offered set and the unavailable list together), checked first.
    $table = $ctx->table();
    $offeredWant = [];
    foreach ($lines as $line) {
        [$name, $allowed] = explode("\t", $line);
        if ($allowed === '1') {
            $offeredWant[] = $name;
        }
    }
    $request = static function () use ($table): array {
        $c = $table->context('config0', Role::User, 'k0');
        return [$c->offered(), $c->unavailableColumns()];
    };
    if ($request() !== [$offeredWant, $columns]) {
        hostFail('a request\'s offered set or unavailable list differs from the runtime\'s');
    }
    $k = $iters(max(5, intdiv(2_000_000, $n)));
    $row('php', 'request', $k, static function () use ($request, $k): void {
        for ($i = 0; $i < $k; $i++) {
            $request();
        }
    });
    return $offeredWant;
}

/**
 * The plain PHP gate's rows: decide, the list, and a request.
 *
 * @param list<string> $names registry order
 * @param list<string> $seq the names in stride order
 * @param list<string> $offeredWant the runtime's offered set
 * @param list<array{tool:string,reason:string}> $want the table's list
 */
function plainRows(PlainGate $plain, Table $table, array $names, array $seq, int $passes, int $n, array $offeredWant, array $want, callable $iters, callable $row): void
{
    $row('plain-php', 'decide', $passes * $n, static function () use ($plain, $seq, $passes): void {
        for ($p = 0; $p < $passes; $p++) {
            foreach ($seq as $x) {
                $plain->decide($x, 'config0', 'user', 'k0', null, null);
            }
        }
    });
    $k = $iters(max(5, intdiv(50_000, $n)));
    $row('plain-php', 'unavailable', $k, static function () use ($plain, $k): void {
        for ($i = 0; $i < $k; $i++) {
            $plain->unavailable('config0', 'user', 'k0', null, null);
        }
    });
    $plainRequest = plainRequest($plain, $table, $names);
    if ($plainRequest() !== [$offeredWant, $want]) {
        hostFail('the plain gate\'s request differs from the runtime\'s');
    }
    $row('plain-php', 'request', $k, static function () use ($plainRequest, $k): void {
        for ($i = 0; $i < $k; $i++) {
            $plainRequest();
        }
    });
}

/**
 * The plain gate's request: every tool decided once, split into the offered
 * set and the unavailable list (as PlainGate::unavailable lists).
 *
 * @param list<string> $names registry order
 */
function plainRequest(PlainGate $plain, Table $table, array $names): callable
{
    $visible = match ($table->policy()['remoteVisibility']) {
        'everyone' => true,
        'nobody' => false,
        default => false, // the context's role is a user
    };
    $remote = [];
    foreach ($table->policy()['tools'] as $t) {
        $remote[(string) $t['name']] = $t['remote'];
    }
    return static function () use ($plain, $names, $remote, $visible): array {
        $offered = [];
        $out = [];
        foreach ($names as $name) {
            [$allowed, $reason] = $plain->decide($name, 'config0', 'user', 'k0', null, null);
            if ($allowed) {
                $offered[] = $name;
            } elseif ($visible || !$remote[$name]) {
                $out[] = ['tool' => $name, 'reason' => $reason];
            }
        }
        return [$offered, $out];
    };
}
