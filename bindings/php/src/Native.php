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

/**
 * The FFI binding of libtoolgate (the C ABI of bindings/c). One instance
 * per process: the preloaded scope `toolgate` when opcache preloaded it
 * (PHP-FPM with ffi.enable=preload, see README.md), else the library named by
 * TOOLGATE_LIB, configure(), or found next to this package in a checkout.
 *
 * @internal
 */
final class Native
{
    public const ABI_VERSION = 1;

    /** Status codes (TOOLGATE_* of toolgate.h). */
    public const OK = 0;
    public const ERR_NULL = 1;
    public const ERR_UTF8 = 2;
    public const ERR_ARGUMENT = 3;
    public const ERR_UNKNOWN_CONFIGURATION = 4;
    public const ERR_UNKNOWN_SKILL = 5;
    public const ERR_OUT_OF_RANGE = 6;
    public const ERR_NOT_FOUND = 7;
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
    public const ERR_PANIC = 99;

    public const ROLE_NONE = 0;
    public const ROLE_USER = 1;
    public const ROLE_ADMIN = 2;

    public const SCOPE = 'toolgate';

    private static ?FFI $ffi = null;
    private static ?string $library = null;

    /** Use this shared library (before the first call). */
    public static function configure(string $library): void
    {
        self::$library = $library;
        self::$ffi = null;
    }

    public static function ffi(): FFI
    {
        if (self::$ffi !== null) {
            return self::$ffi;
        }
        $ffi = null;
        if (self::$library === null) {
            try {
                $ffi = FFI::scope(self::SCOPE);
            } catch (\Throwable) {
                $ffi = null;
            }
        }
        $ffi ??= FFI::cdef(self::declarations(), self::library());
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

    /** The shared library to load: configure(), TOOLGATE_LIB, a checkout's target/, or the loader's search path. */
    public static function library(): string
    {
        if (self::$library !== null) {
            return self::$library;
        }
        $env = getenv('TOOLGATE_LIB');
        if (is_string($env) && $env !== '') {
            return $env;
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
            $status >= self::ERR_LOAD_NOT_A_TABLE && $status <= self::ERR_LOAD_BAD_SIGNATURE => new LoadException($message, $status),
            $status === self::ERR_UNKNOWN_CONFIGURATION => new UnknownConfigurationException($message, $status),
            $status === self::ERR_UNKNOWN_SKILL => new UnknownSkillException($message, $status),
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
