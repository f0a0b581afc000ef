<?php

declare(strict_types=1);

namespace Toolgate\Tests;

use PHPUnit\Framework\TestCase;
use Toolgate\Classification;
use Toolgate\Context;
use Toolgate\Decision;
use Toolgate\Examples\NrLlm\PlainGate;
use Toolgate\Exception\InvalidArgumentException;
use Toolgate\Exception\LoadException;
use Toolgate\Exception\PolicyViolationException;
use Toolgate\Exception\RefusalKinds;
use Toolgate\Exception\ToolgateException;
use Toolgate\Exception\UnknownConfigurationException;
use Toolgate\Exception\UnknownConsumerException;
use Toolgate\Exception\UnknownSkillException;
use Toolgate\LiveTool;
use Toolgate\Native;
use Toolgate\Role;
use Toolgate\RunState;
use Toolgate\Table;

/**
 * The PHP host: every case of the conformance corpus (conformance/,
 * docs/conformance.md) through the package's API; and the plain PHP gate
 * (examples/nr_llm/PlainGate.php) on every context case it models.
 */
final class ConformanceTest extends TestCase
{
    private const LETTERS = ['notRegistered' => 'n', 'toolDisabled' => 'd', 'requiresAdmin' => 'a', 'notInProfile' => 'p',
        'configurationGroup' => 'g', 'configurationExcluded' => 'x', 'trustZone' => 'z'];

    /** @var array<string,Table> */
    private static array $tables = [];
    /** @var array<string,PlainGate> */
    private static array $plain = [];

    public static function corpus(): string
    {
        return getenv('TOOLGATE_CONFORMANCE') ?: dirname(__DIR__, 3) . '/conformance';
    }

    /** @return array<string,mixed> */
    private static function readJson(string $rel): array
    {
        $text = file_get_contents(self::corpus() . '/' . $rel);
        self::assertIsString($text, "cannot read {$rel}");
        return json_decode($text, true, 512, JSON_THROW_ON_ERROR);
    }

    private static function table(string $rel): Table
    {
        return self::$tables[$rel] ??= Table::fromFile(self::corpus() . '/' . $rel);
    }

    private static function letter(Decision $d): string
    {
        if ($d->allowed && $d->needsApproval) {
            return $d->observedOnly ? 'B' : 'A';
        }
        if ($d->allowed) {
            return $d->observedOnly ? 'O' : 'Y';
        }
        return self::LETTERS[$d->reason->value];
    }

    /** @return iterable<string,array{string}> */
    public static function suites(): iterable
    {
        foreach (self::readJson('manifest.json')['suites'] as $s) {
            yield $s['path'] => [$s['path']];
        }
    }

    /** @dataProvider suites */
    public function testSuite(string $path): void
    {
        $manifest = self::readJson('manifest.json');
        $suite = self::readJson($path);
        $want = array_values(array_filter($manifest['suites'], fn ($s) => $s['path'] === $path))[0]['cases'];
        self::assertSame('toolgate-conformance/1', $suite['format']);
        self::assertCount($want, $suite['cases']);
        foreach ($suite['cases'] as $case) {
            $e = $case['expect'];
            match ($case['kind']) {
                'load' => $this->load($case, $e),
                'context' => $this->context($case, $e, $manifest),
                'classify' => $this->classify($case, $e),
                'callGranted' => $this->callGranted($case, $e),
                'runStart' => $this->runStart($case, $e),
                'runRead' => self::assertSame($e['run'], RunState::fromJson($case['stored'])->toJson(), $case['id']),
                'runResume' => self::assertSame(
                    $e['run'],
                    RunState::fromJson($case['stored'])->resume(RunState::fromJson($case['live']))->toJson(),
                    $case['id'],
                ),
            };
        }
    }

    /** @param array<string,mixed> $c @param array<string,mixed> $e */
    private function load(array $c, array $e): void
    {
        $bytes = isset($c['table']) ? file_get_contents(self::corpus() . '/' . $c['table']) : hex2bin($c['bytesHex']);
        $codes = [Native::ERR_LOAD_NOT_A_TABLE => 'notATable', Native::ERR_LOAD_VERSION => 'version',
            Native::ERR_LOAD_TRUNCATED => 'truncated', Native::ERR_LOAD_TRAILING_BYTES => 'trailingBytes',
            Native::ERR_LOAD_CHECKSUM => 'checksum', Native::ERR_LOAD_CORRUPT => 'corrupt'];
        try {
            $t = Table::fromBytes($bytes);
        } catch (LoadException $x) {
            self::assertFalse($e['ok'], $c['id'] . ': ' . $x->getMessage());
            self::assertSame($e['error'], $codes[$x->getCode()] ?? '?', $c['id']);
            self::assertSame($e['message'], $x->getMessage(), $c['id']);
            return;
        }
        self::assertTrue($e['ok'], $c['id'] . ' loaded');
        self::assertSame($e['digest'], $t->digest(), $c['id']);
        self::assertSame(count($e['tools']), $t->toolCount(), $c['id']);
        foreach ($e['tools'] as $i => $name) {
            self::assertSame($name, $t->toolName($i), $c['id']);
            self::assertSame($i, $t->toolId($name), $c['id']);
        }
        self::assertSame($e['configurations'], $t->configurations(), $c['id']);
    }

    /**
     * @param array<string,mixed> $c
     * @param array<string,mixed> $e
     * @param array<string,mixed> $manifest
     */
    private function context(array $c, array $e, array $manifest): void
    {
        $id = $c['id'];
        $t = self::table($c['table']);
        $x = $c['context'];
        $run = $x['run'] === null ? null : RunState::fromJson($x['run']);
        try {
            $ctx = $t->context($x['configuration'], Role::from($x['role']), $x['consumer'], $run, $x['enforcement']);
        } catch (UnknownConfigurationException $ex) {
            self::assertSame('unknownConfiguration', $e['error']['code'] ?? null, $id);
            self::assertSame($e['error']['message'] ?? null, $ex->getMessage(), $id);
            return;
        } catch (UnknownConsumerException $ex) {
            self::assertSame('unknownConsumer', $e['error']['code'] ?? null, $id);
            self::assertSame($e['error']['message'] ?? null, $ex->getMessage(), $id);
            return;
        }
        self::assertArrayNotHasKey('error', $e, $id);
        $byId = '';
        $n = $t->toolCount();
        for ($i = 0; $i < $n; $i++) {
            $d = $ctx->decideId($i);
            $byName = $ctx->decide($d->tool);
            self::assertEquals($d, $byName, $id);
            self::assertSame($d->allowed && !$d->needsApproval, $ctx->isAllowed($d->tool), $id);
            $byId .= self::letter($d);
        }
        self::assertSame($e['decisionsById'], $byId, $id);
        // Every tool and every asked name at once: what decide() gives one by one.
        $asked = [...$t->toolNames(), ...$c['decide']];
        $many = $ctx->decideMany($asked);
        self::assertCount(count($asked), $many, $id);
        foreach ($asked as $i => $name) {
            self::assertEquals($ctx->decide($name), $many[$i], "{$id}: many {$name}");
        }
        foreach ($c['decide'] as $i => $name) {
            self::assertEquals($e['decisions'][$i], $ctx->explain($name), "{$id}: {$name}");
            $d = $ctx->decide($name);
            self::assertSame([$e['decisions'][$i]['allowed'], $e['decisions'][$i]['reason'], $e['decisions'][$i]['observedOnly']],
                [$d->allowed, $d->reason?->value, $d->observedOnly], "{$id}: {$name}");
        }
        foreach ($c['refuse'] as $i => $name) {
            self::assertEquals($e['refusals'][$i], $ctx->refusal($name)?->data, "{$id}: refusal of {$name}");
        }
        $live = array_map(fn (array $l) => new LiveTool($l['name'], $l['group'], $l['remote'], $l['enabled'], $l['adminOnly'], $l['class']), $c['live']);
        foreach ($live as $i => $tool) {
            $d = $ctx->decideLive($tool);
            $w = $e['live'][$i];
            self::assertSame([$w['allowed'], $w['reason'], $w['observedOnly']], [$d->allowed, $d->reason?->value, $d->observedOnly], "{$id}: live {$i}");
            if (array_key_exists('refusal', $w)) {
                self::assertEquals($w['refusal'], $ctx->refusalLive($tool)?->data, "{$id}: live refusal {$i}");
            }
        }
        foreach ($c['liveRejected'] ?? [] as $i => $l) {
            $tool = new LiveTool($l['name'], $l['group'], $l['remote'], $l['enabled'], $l['adminOnly'], $l['class']);
            try {
                $ctx->decideLive($tool);
                self::fail("{$id}: rejected live {$i} was decided");
            } catch (InvalidArgumentException $ex) {
                self::assertSame($e['liveRejected'][$i], $ex->getMessage(), "{$id}: rejected live {$i}");
                self::assertSame(Native::ERR_ARGUMENT, $ex->getCode());
            }
        }
        $unavailable = $ctx->unavailableArray();
        $columns = $ctx->unavailableColumns();
        self::assertSame(array_column($unavailable, 'tool'), $columns['tools'], $id);
        self::assertSame(array_column($unavailable, 'reason'), $columns['reasons'], $id);
        if ($live !== []) {
            $with = $ctx->unavailableWithLive($live);
            if (isset($e['unavailableWithLive'])) {
                self::assertSame($e['unavailableWithLive'], $with, $id);
            } else {
                self::assertSame($e['unavailableWithLiveTail'], array_slice($with, count($unavailable)), $id);
            }
            if (isset($e['promptWithLive'])) {
                self::assertSame($e['promptWithLive'], $ctx->unavailablePrompt($live), "{$id}: prompt with live");
            }
        }
        $offered = $ctx->offered();
        $prompt = $ctx->unavailablePrompt();
        if (isset($e['unavailableById'])) {
            $marks = str_repeat('.', $n);
            foreach ($unavailable as $u) {
                $marks[$t->toolId($u['tool'])] = self::LETTERS[$u['reason']];
            }
            self::assertSame($e['unavailableById'], $marks, $id);
            // The columns against the corpus by themselves: every entry at its id, in id order.
            $marks = str_repeat('.', $n);
            $last = -1;
            foreach ($columns['tools'] as $k => $tool) {
                self::assertIsString($tool);
                $i = $t->toolId($tool);
                self::assertGreaterThan($last, $i, "{$id}: columns order");
                $last = $i;
                $marks[$i] = self::LETTERS[$columns['reasons'][$k]];
            }
            self::assertSame($e['unavailableById'], $marks, "{$id}: unavailableColumns");
            $want = [];
            for ($i = 0; $i < $n; $i++) {
                if (in_array($byId[$i], ['Y', 'O', 'A', 'B'], true)) {
                    $want[] = $t->toolName($i);
                }
            }
            self::assertSame($want, $offered, $id);
            $messages = array_column($manifest['gates'], 'message', 'code');
            $render = '';
            foreach ($unavailable as $i => $u) {
                $render .= ($i === 0 ? $manifest['promptHeading'] . "\n" : '') . '- ' . $u['tool'] . ': ' . $messages[$u['reason']] . "\n";
            }
            self::assertSame($render, $prompt, $id);
        } else {
            self::assertSame($e['offered'], $offered, $id);
            self::assertSame($e['unavailable'], $unavailable, $id);
            self::assertSame(['tools' => array_column($e['unavailable'], 'tool'), 'reasons' => array_column($e['unavailable'], 'reason')],
                $columns, "{$id}: unavailableColumns");
            self::assertSame($e['prompt'], $prompt, $id);
        }
        $this->plainGate($c, $e, $t, $run);
    }

    /** The plain PHP gate agrees on every decision and on the unavailable list. */
    private function plainGate(array $c, array $e, Table $t, ?RunState $run): void
    {
        $gate = self::$plain[$c['table']] ??= new PlainGate($t->policy());
        $x = $c['context'];
        // The stored run as the runtime normalises it (false = unreadable).
        $stored = $run === null ? null : json_decode($run->toJson(), true, 512, JSON_THROW_ON_ERROR);
        $byId = '';
        foreach ($t->policy()['tools'] as $tool) {
            [$allowed, $reason, $observed] = $gate->decide($tool['name'], $x['configuration'], $x['role'], $x['consumer'], $stored, $x['enforcement']);
            $approval = $allowed && $gate->needsApproval($tool['name'], $x['configuration'], $x['consumer']);
            $byId .= $allowed ? ($approval ? ($observed ? 'B' : 'A') : ($observed ? 'O' : 'Y')) : self::LETTERS[$reason];
        }
        self::assertSame($e['decisionsById'], $byId, 'plain gate: ' . $c['id']);
        $list = $gate->unavailable($x['configuration'], $x['role'], $x['consumer'], $stored, $x['enforcement']);
        if (isset($e['unavailable'])) {
            self::assertSame($e['unavailable'], $list, 'plain gate: ' . $c['id']);
        } else {
            $marks = str_repeat('.', strlen($byId));
            foreach ($list as $u) {
                $marks[$t->toolId($u['tool'])] = self::LETTERS[$u['reason']];
            }
            self::assertSame($e['unavailableById'], $marks, 'plain gate: ' . $c['id']);
        }
    }

    /** @param array<string,mixed> $c @param array<string,mixed> $e */
    private function classify(array $c, array $e): void
    {
        $a = $c['answer'];
        $body = isset($a['bodyHex']) ? hex2bin($a['bodyHex']) : $a['body'];
        $table = $c['table'] === null ? null : self::table($c['table']);
        $got = Classification::of($body, $a['httpStatus'], $a['origin'], $a['tool'], $table);
        self::assertEquals($e, $got->data, $c['id']);
        self::assertSame($e['outcome'], $got->outcome, $c['id']);
        self::assertSame($e['outcome'] === 'refusal', $got->refusal !== null, $c['id']);
    }

    /**
     * Calls checked with grants, in order, in this process's ledger of used
     * grants (each case's grant ids are its own).
     * @param array<string,mixed> $c @param array<string,mixed> $e
     */
    private function callGranted(array $c, array $e): void
    {
        $x = $c['context'];
        $ctx = self::table($c['table'])->context($x['configuration'], Role::from($x['role']), $x['consumer'], null, $x['enforcement']);
        self::assertCount(count($e['calls']), $c['calls'], $c['id']);
        foreach ($c['calls'] as $i => $call) {
            $id = "{$c['id']} call {$i}";
            $want = $e['calls'][$i];
            $arguments = $call['argumentsJson'] === null ? null : json_decode($call['argumentsJson'], true, 512, JSON_THROW_ON_ERROR);
            try {
                $d = $ctx->checkCall($call['tool'], $arguments, $call['grant'], $call['approverKeys'], $call['now']);
                $refusal = null;
            } catch (PolicyViolationException $ex) {
                $d = $ex->decision;
                $refusal = $ex->refusal;
                self::assertInstanceOf(RefusalKinds::CLASSES[$ex->refusal->kind], $ex, $id);
                self::assertSame($want['refusal']['grantError'] ?? null, $ex->grantError, $id);
            }
            self::assertNotNull($d, $id);
            $w = $want['decision'];
            self::assertSame([$w['allowed'], $w['reason'], $w['observedOnly'], $w['needsApproval'] ?? false],
                [$d->allowed, $d->reason?->value, $d->observedOnly, $d->needsApproval], $id);
            self::assertEquals($want['refusal'], $refusal?->data, $id);
            self::assertSame($want['refusal']['grantError'] ?? null, $refusal?->grantError, $id);
            self::assertSame($want['refusal']['detail'] ?? null, $refusal?->detail, $id);
            self::assertSame($want['approvalRequest'], $ctx->approvalRequest($call['tool'], $arguments, 'request-1'), $id);
        }
    }

    /** @param array<string,mixed> $c @param array<string,mixed> $e */
    private function runStart(array $c, array $e): void
    {
        try {
            $run = RunState::start(self::table($c['table']), $c['configuration'], $c['skills']);
        } catch (ToolgateException $x) {
            self::assertFalse($e['ok'], $c['id'] . ': ' . $x->getMessage());
            self::assertInstanceOf($e['error'] === 'unknownSkill' ? UnknownSkillException::class : UnknownConfigurationException::class, $x);
            self::assertSame($e['message'], $x->getMessage(), $c['id']);
            return;
        }
        self::assertTrue($e['ok'], $c['id']);
        self::assertSame($e['run'], $run->toJson(), $c['id']);
    }
}
