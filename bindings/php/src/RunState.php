<?php

declare(strict_types=1);

namespace Toolgate;

use FFI;
use FFI\CData;

/**
 * A run's skill allow-list and exclusions, stored with the run (toJson)
 * and narrowed, never widened, on resume. A stored form that cannot be read
 * admits no tool at all.
 */
final class RunState
{
    private function __construct(private CData $ptr)
    {
    }

    /** @param list<string> $skills forced or invoked skills besides the attached ones */
    public static function start(Table $table, string $configuration, array $skills = []): self
    {
        $ffi = Native::ffi();
        $out = $ffi->new('toolgate_run*');
        $json = json_encode(array_values($skills), JSON_THROW_ON_ERROR);
        Native::check($ffi->toolgate_run_start($table->cdata(), $configuration, strlen($configuration), $json, strlen($json), FFI::addr($out)));
        return new self($out);
    }

    /** Read the stored form; never fails on content (what cannot be read admits nothing). */
    public static function fromJson(string $stored): self
    {
        $ffi = Native::ffi();
        $out = $ffi->new('toolgate_run*');
        Native::check($ffi->toolgate_run_from_json($stored, strlen($stored), FFI::addr($out)));
        return new self($out);
    }

    /** On resume: this stored state narrowed by the live one. */
    public function resume(RunState $live): self
    {
        $ffi = Native::ffi();
        $out = $ffi->new('toolgate_run*');
        Native::check($ffi->toolgate_run_resume($this->ptr, $live->ptr, FFI::addr($out)));
        return new self($out);
    }

    public function toJson(): string
    {
        return Native::string('toolgate_run_to_json', $this->ptr);
    }

    public function __destruct()
    {
        Native::ffi()->toolgate_run_free($this->ptr);
    }

    /** A clone is a run state of its own (each is freed once). */
    public function __clone()
    {
        $this->ptr = Native::cloned('toolgate_run', 'toolgate_run_clone', $this->ptr);
    }

    /** @internal */
    public function cdata(): CData
    {
        return $this->ptr;
    }
}
