<?php

declare(strict_types=1);

namespace Toolgate\Tests;

use PHPUnit\Framework\TestCase;
use Toolgate\Exception\InvalidArgumentException;
use Toolgate\Exception\LoadException;
use Toolgate\Native;
use Toolgate\Table;
use Toolgate\TableHandle;

/** Requiring a signature: conformance/signed/ replayed, each outcome exact. */
final class SignatureTest extends TestCase
{
    private const CODES = [
        'unsigned' => Native::ERR_LOAD_UNSIGNED,
        'untrustedKey' => Native::ERR_LOAD_UNTRUSTED_KEY,
        'badSignature' => Native::ERR_LOAD_BAD_SIGNATURE,
        'checksum' => Native::ERR_LOAD_CHECKSUM,
    ];

    private static function file(string $name): string
    {
        $b = file_get_contents(ConformanceTest::corpus() . "/signed/{$name}");
        self::assertIsString($b);
        return $b;
    }

    public function testEveryFixtureLoadsOrIsRefusedAsExpected(): void
    {
        $keys = self::file('trusted.pub');
        $expect = json_decode(self::file('expect.json'), true, 512, JSON_THROW_ON_ERROR);
        self::assertCount(6, $expect);
        foreach ($expect as $name => $e) {
            try {
                $t = Table::fromBytes(self::file($name), $keys);
                self::assertTrue($e['ok'], $name);
                self::assertSame($e['digest'], $t->digest(), $name);
            } catch (LoadException $x) {
                self::assertFalse($e['ok'], "{$name}: {$x->getMessage()}");
                self::assertSame($e['message'], $x->getMessage(), $name);
                self::assertSame(self::CODES[$e['error']], $x->getCode(), $name);
            }
        }
        // Without keys, a signed table loads like any other.
        self::assertSame($expect['signed.tgt']['digest'], Table::fromBytes(self::file('signed.tgt'))->digest());
    }

    public function testAHandleWithTrustedKeysKeepsItsTableOnARefusedReload(): void
    {
        $h = TableHandle::fromBytes(self::file('signed.tgt'), self::file('trusted.pub'));
        $digest = $h->current()->digest();
        foreach (['unsigned.tgt' => Native::ERR_LOAD_UNSIGNED, 'untrusted.tgt' => Native::ERR_LOAD_UNTRUSTED_KEY] as $name => $code) {
            try {
                $h->reload(self::file($name));
                self::fail("{$name} was swapped in");
            } catch (LoadException $x) {
                self::assertSame($code, $x->getCode());
            }
            self::assertSame($digest, $h->current()->digest());
        }
        $h->reload(self::file('signed-next.tgt'));
        self::assertNotSame($digest, $h->current()->digest());
    }

    public function testKeysThatAreNotPublicKeysAreAnArgumentError(): void
    {
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionCode(Native::ERR_KEYS);
        $this->expectExceptionMessage('no public key found');
        Table::fromBytes(self::file('signed.tgt'), self::file('trusted.key'));
    }
}
