<?php

declare(strict_types=1);

namespace Toolgate;

use FFI;
use FFI\CData;
use Toolgate\Exception\InvalidArgumentException;
use Toolgate\Exception\LoadException;
use Toolgate\Exception\ToolgateException;
use Toolgate\Exception\UnknownConfigurationException;
use Toolgate\Exception\UnknownSkillException;
use Toolgate\Exception\UnknownConsumerException;

/**
 * The FFI binding of libtoolgate (the C ABI of bindings/c). One instance
 * per process: the preloaded scope `toolgate` when opcache preloaded it
 * (PHP-FPM with ffi.enable=preload, see README.md), else the library named by
 * TOOLGATE_LIB, configure(), the package's own lib/ (a prebuilt library
 * carried by the Composer package), or found next to this package in a checkout.
 *
 * @internal
 */
final class Native
{
    public const ABI_VERSION = 2;

    /** Status codes (TOOLGATE_* of toolgate.h). */
    public const OK = 0;
    public const ERR_NULL = 1;
    public const ERR_UTF8 = 2;
    public const ERR_ARGUMENT = 3;
    public const ERR_UNKNOWN_CONFIGURATION = 4;
    public const ERR_UNKNOWN_SKILL = 5;
    public const ERR_OUT_OF_RANGE = 6;
    public const ERR_NOT_FOUND = 7;
    public const ERR_UNKNOWN_CONSUMER = 8;
    public const ERR_LOAD_NOT_A_TABLE = 10;
    public const ERR_LOAD_VERSION = 11;
    public const ERR_LOAD_TRUNCATED = 12;
    public const ERR_LOAD_TRAILING_BYTES = 13;
    public const ERR_LOAD_CHECKSUM = 14;
    public const ERR_LOAD_CORRUPT = 15;
    public const ERR_LOAD_UNSIGNED = 16;
    public const ERR_LOAD_UNTRUSTED_KEY = 17;
    public const ERR_LOAD_BAD_SIGNATURE = 18;
    public const ERR_KEYS = 19;
    public const ERR_FILE_IO = 20;
    public const ERR_FILE_NOT_REGULAR = 21;
    public const ERR_FILE_TOO_LARGE = 22;
    public const ERR_PANIC = 99;

    /** The largest file the library reads (Table::fromFile). */
    public const MAX_FILE_BYTES = 268435456;

    /** The packed decision byte (toolgate_decide_packed). */
    public const PACKED_ALLOWED = 1;
    public const PACKED_OBSERVED_ONLY = 2;
    public const PACKED_REASON_SHIFT = 2;
    public const PACKED_REASON_MASK = 28;
    public const PACKED_NEEDS_APPROVAL = 32;

    public const ROLE_NONE = 0;
    public const ROLE_USER = 1;
    public const ROLE_ADMIN = 2;

    public const SCOPE = 'toolgate';

    private static ?FFI $ffi = null;
    private static ?string $library = null;
    /** @var array<string,mixed>|null */
    private static ?array $codes = null;

    /** Use this shared library (before the first call). */
    public static function configure(string $library): void
    {
        self::$library = $library;
        self::$ffi = null;
    }

    /**
     * The library, opened once. Every way this can fail (the FFI extension
     * missing or disabled by ffi.enable, the library or its header missing,
     * another ABI version) is a ToolgateException, never a bare FFI error.
     */
    public static function ffi(): FFI
    {
        if (self::$ffi !== null) {
            return self::$ffi;
        }
        if (!extension_loaded('ffi') || !class_exists(FFI::class)) {
            throw new ToolgateException('the PHP FFI extension is not loaded (install php-ffi and enable it: ffi.enable)');
        }
        $ffi = null;
        if (self::$library === null) {
            try {
                $ffi = FFI::scope(self::SCOPE);
            } catch (\Throwable) {
                $ffi = null;
            }
        }
        if ($ffi === null) {
            $library = self::library();
            try {
                $ffi = FFI::cdef(self::declarations(), $library);
            } catch (ToolgateException $e) {
                throw $e;
            } catch (\Throwable $e) {
                throw new ToolgateException(sprintf('cannot open libtoolgate (%s): %s', $library, $e->getMessage()), 0, $e);
            }
        }
        $version = $ffi->toolgate_abi_version();
        if ($version !== self::ABI_VERSION) {
            throw new ToolgateException(sprintf('libtoolgate ABI version %d, this package needs %d', $version, self::ABI_VERSION));
        }
        return self::$ffi = $ffi;
    }

    /**
     * The C declarations PHP's FFI reads: the C header (header()) without its
     * preprocessor lines and `extern "C"` guards, which PHP's FFI parser does
     * not take. The constants are this class's (ABI_VERSION checks they agree).
     */
    public static function declarations(): string
    {
        $path = self::header();
        $text = is_file($path) ? file_get_contents($path) : false;
        if ($text === false) {
            throw new ToolgateException(sprintf('cannot read the C header %s (TOOLGATE_HEADER names another)', $path));
        }
        $out = '';
        $cplusplus = 0;
        $lines = explode("\n", $text);
        if (end($lines) === '') {
            array_pop($lines);
        }
        foreach ($lines as $line) {
            $t = ltrim($line);
            if (str_starts_with($t, '#if')) {
                $cplusplus += str_contains($t, '__cplusplus') ? 1 : 0;
            } elseif (str_starts_with($t, '#endif')) {
                $cplusplus = max(0, $cplusplus - 1);
            } elseif (!str_starts_with($t, '#') && $cplusplus === 0) {
                $out .= $line . "\n";
            }
        }
        return $out;
    }

    /**
     * The C header of libtoolgate: TOOLGATE_HEADER, include/toolgate.h beside
     * the library's directory (PREFIX/lib and PREFIX/include), a checkout's
     * bindings/c/include/toolgate.h, then /usr/local/include and /usr/include.
     */
    public static function header(): string
    {
        $env = getenv('TOOLGATE_HEADER');
        if (is_string($env) && $env !== '') {
            return $env;
        }
        $candidates = [];
        $library = self::library();
        if (str_contains($library, '/')) {
            $candidates[] = dirname($library, 2) . '/include/toolgate.h';
        }
        $candidates[] = dirname(__DIR__, 2) . '/c/include/toolgate.h';
        $candidates[] = '/usr/local/include/toolgate.h';
        $candidates[] = '/usr/include/toolgate.h';
        foreach ($candidates as $candidate) {
            if (is_file($candidate)) {
                return $candidate;
            }
        }
        throw new ToolgateException(sprintf(
            'cannot find toolgate.h (tried %s): install it with libtoolgate or set TOOLGATE_HEADER',
            implode(', ', $candidates),
        ));
    }

    /** The shared library to load: configure(), TOOLGATE_LIB, the package's lib/, a checkout's target/, or the loader's search path. */
    public static function library(): string
    {
        if (self::$library !== null) {
            return self::$library;
        }
        $env = getenv('TOOLGATE_LIB');
        if (is_string($env) && $env !== '') {
            return $env;
        }
        // A prebuilt library carried by the package itself: the release
        // tarball (libtoolgate-VERSION-TRIPLE.tar.gz) unpacked into it puts
        // lib/libtoolgate.so here and include/toolgate.h beside it.
        $bundled = dirname(__DIR__) . '/lib/libtoolgate.so';
        if (is_file($bundled)) {
            return $bundled;
        }
        foreach (['release', 'debug'] as $profile) {
            $candidate = dirname(__DIR__, 3) . '/target/' . $profile . '/libtoolgate.so';
            if (is_file($candidate)) {
                return $candidate;
            }
        }
        return 'libtoolgate.so';
    }

    /**
     * The declarations with FFI_SCOPE and FFI_LIB, for `ffi.preload` under
     * PHP-FPM (ffi.enable=preload): PHP declares the scope `toolgate` at
     * server start; requests use it through FFI::scope() (Native::ffi() does)
     * without parsing declarations or opening the library per request.
     */
    public static function preloadHeader(string $library): string
    {
        return '#define FFI_SCOPE "' . self::SCOPE . "\"\n#define FFI_LIB \"" . addcslashes($library, "\"\\") . "\"\n" . self::declarations();
    }

    /**
     * Every code of the library (toolgate_codes_json): gates, refusal kinds,
     * roles, statuses, the packed layout. The enums and constants of this
     * package are checked against it by the tests.
     * @return array<string,mixed>
     */
    public static function codes(): array
    {
        return self::$codes ??= self::json('toolgate_codes_json');
    }

    /** JSON for the library (a live tool, a list of them); text that cannot be encoded is an InvalidArgumentException. */
    public static function encode(mixed $value): string
    {
        try {
            return json_encode($value, JSON_THROW_ON_ERROR | JSON_UNESCAPED_UNICODE);
        } catch (\JsonException $e) {
            throw new InvalidArgumentException('not encodable as JSON (a string that is not UTF-8?): ' . $e->getMessage(), self::ERR_UTF8, $e);
        }
    }

    /** Call the file loader $function on $path (or its `_verified` twin) and return the $type pointer it wrote. */
    public static function loadFile(string $type, string $function, string $path, ?string $trustedKeys): CData
    {
        return self::load($type, $function, $path, $trustedKeys);
    }

    /** A new reference made by the clone function $function from $ptr. */
    public static function cloned(string $type, string $function, CData $ptr): CData
    {
        $ffi = self::ffi();
        $out = $ffi->new($type . '*');
        self::check($ffi->$function($ptr, FFI::addr($out)));
        return $out;
    }

    /** The thread's last error message. */
    public static function lastError(): string
    {
        $ffi = self::ffi();
        $buf = $ffi->new('toolgate_buf');
        $ffi->toolgate_last_error(FFI::addr($buf));
        return self::take($buf);
    }

    /** Throw the exception of a failed status. */
    /**
     * Call the loader $function on $bytes, or its `_verified` twin with
     * $trustedKeys, and return the $type pointer it wrote; a status other
     * than OK throws (see check()).
     */
    public static function load(string $type, string $function, string $bytes, ?string $trustedKeys): CData
    {
        $ffi = self::ffi();
        $out = $ffi->new($type . '*');
        self::check($trustedKeys === null
            ? $ffi->$function($bytes, strlen($bytes), FFI::addr($out))
            : $ffi->{$function . '_verified'}($bytes, strlen($bytes), $trustedKeys, strlen($trustedKeys), FFI::addr($out)));
        return $out;
    }

    public static function check(int $status): void
    {
        if ($status === self::OK) {
            return;
        }
        $message = self::lastError();
        throw match (true) {
            $status >= self::ERR_LOAD_NOT_A_TABLE && $status <= self::ERR_LOAD_BAD_SIGNATURE,
            $status >= self::ERR_FILE_IO && $status <= self::ERR_FILE_TOO_LARGE => new LoadException($message, $status),
            $status === self::ERR_UNKNOWN_CONFIGURATION => new UnknownConfigurationException($message, $status),
            $status === self::ERR_UNKNOWN_SKILL => new UnknownSkillException($message, $status),
            $status === self::ERR_UNKNOWN_CONSUMER => new UnknownConsumerException($message, $status),
            in_array($status, [self::ERR_NULL, self::ERR_UTF8, self::ERR_ARGUMENT, self::ERR_OUT_OF_RANGE, self::ERR_NOT_FOUND, self::ERR_KEYS], true)
                => new InvalidArgumentException($message, $status),
            default => new ToolgateException($message, $status),
        };
    }

    /** The string of a returned buffer; frees the buffer. */
    public static function take(FFI\CData $buf): string
    {
        $ffi = self::ffi();
        $s = $buf->len > 0 ? FFI::string($buf->ptr, $buf->len) : '';
        $ffi->toolgate_buf_free($buf);
        return $s;
    }

    /**
     * Call a function whose result is a buffer (its last argument).
     * @param mixed ...$args
     */
    public static function string(string $function, mixed ...$args): string
    {
        $ffi = self::ffi();
        $buf = $ffi->new('toolgate_buf');
        $args[] = FFI::addr($buf);
        self::check($ffi->$function(...$args));
        return self::take($buf);
    }

    /**
     * Call a function whose result is JSON; decoded to arrays.
     * @param mixed ...$args
     */
    public static function json(string $function, mixed ...$args): mixed
    {
        return json_decode(self::string($function, ...$args), true, 512, JSON_THROW_ON_ERROR);
    }
}
