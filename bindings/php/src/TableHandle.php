<?php

declare(strict_types=1);

namespace Toolgate;

use FFI;
use FFI\CData;

/**
 * Hot reload: take current() for each request; reload() swaps a new table
 * in atomically (a table that does not load never replaces the current one).
 */
final class TableHandle
{
    private function __construct(private CData $ptr)
    {
    }

    /**
     * With $trustedKeys (PEM public keys), the first table and every
     * reload() must be signed by one of them (as Table::fromBytes).
     */
    public static function fromBytes(string $bytes, ?string $trustedKeys = null): self
    {
        return new self(Native::load('toolgate_handle', 'toolgate_handle_new', $bytes, $trustedKeys));
    }

    public function __destruct()
    {
        Native::ffi()->toolgate_handle_free($this->ptr);
    }

    /** A clone is a second reference to the same handle: a reload through either is seen by both. */
    public function __clone()
    {
        $this->ptr = Native::cloned('toolgate_handle', 'toolgate_handle_clone', $this->ptr);
    }

    /** The table to decide with now; hold it for the whole request. */
    public function current(): Table
    {
        $ffi = Native::ffi();
        $out = $ffi->new('toolgate_table*');
        Native::check($ffi->toolgate_handle_current($this->ptr, FFI::addr($out)));
        return Table::adopt($out);
    }

    /** Load (verified, on a handle with trusted keys) and swap in; on a LoadException the current table stays. */
    public function reload(string $bytes): void
    {
        Native::check(Native::ffi()->toolgate_handle_reload($this->ptr, $bytes, strlen($bytes)));
    }

    /** reload() from a table file, read as Table::fromFile reads it. */
    public function reloadFile(string $path): void
    {
        Native::check(Native::ffi()->toolgate_handle_reload_file($this->ptr, $path, strlen($path)));
    }
}
