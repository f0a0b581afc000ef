<?php

declare(strict_types=1);

namespace Toolgate;

use FFI;
use FFI\CData;
use Toolgate\Exception\InvalidArgumentException;
use Toolgate\Exception\ToolgateException;

/** A compiled table (`toolgate compile PROJECT -o policy.tgt`), loaded. */
final class Table
{
    /** @var list<string>|null */
    private ?array $names = null;

    private function __construct(private CData $ptr)
    {
    }

    /**
     * Load from the bytes of a table file; fails closed with a LoadException.
     * With $trustedKeys (one or more PEM public keys, as `toolgate keygen`
     * writes them), the table must be signed by one of them: unsigned, signed
     * by another key or altered after signing is a LoadException
     * (Native::ERR_LOAD_UNSIGNED, _UNTRUSTED_KEY, _BAD_SIGNATURE); keys that
     * are not Ed25519 public keys are an InvalidArgumentException.
     */
    public static function fromBytes(string $bytes, ?string $trustedKeys = null): self
    {
        return new self(Native::load('toolgate_table', 'toolgate_table_load', $bytes, $trustedKeys));
    }

    /**
     * Load from a table file, read by the library under one rule for every
     * host: only a regular file (a directory, FIFO, device or socket is a
     * LoadException at once, Native::ERR_FILE_NOT_REGULAR, and never
     * blocks), at most Native::MAX_FILE_BYTES (ERR_FILE_TOO_LARGE); an
     * unreadable one is ERR_FILE_IO. With $trustedKeys as fromBytes().
     */
    public static function fromFile(string $path, ?string $trustedKeys = null): self
    {
        return new self(Native::loadFile('toolgate_table', 'toolgate_table_load_file', $path, $trustedKeys));
    }

    /** @internal a reference the library already counted (handle current()). */
    public static function adopt(CData $ptr): self
    {
        return new self($ptr);
    }

    public function __destruct()
    {
        Native::ffi()->toolgate_table_free($this->ptr);
    }

    /** A clone holds its own reference to the table (each is freed once). */
    public function __clone()
    {
        $this->ptr = Native::cloned('toolgate_table', 'toolgate_table_clone', $this->ptr);
    }

    /** @internal */
    public function cdata(): CData
    {
        return $this->ptr;
    }

    /** A context for a configuration (UnknownConfigurationException if the table has none of that name). */
    public function context(
        string $configuration,
        Role $role = Role::None,
        ?string $consumer = null,
        ?RunState $run = null,
        ?string $enforcement = null,
    ): Context {
        return Context::make($this, $configuration, $role, $consumer, $run, $enforcement);
    }

    /** The table digest: sha256 of the payload, hex. */
    public function digest(): string
    {
        return Native::string('toolgate_table_digest_hex', $this->ptr);
    }

    public function toolCount(): int
    {
        $ffi = Native::ffi();
        $n = $ffi->new('uint32_t');
        Native::check($ffi->toolgate_table_tool_count($this->ptr, FFI::addr($n)));
        return $n->cdata;
    }

    /** The id (registry order) of a registered tool; null if not registered. */
    public function toolId(string $name): ?int
    {
        $ffi = Native::ffi();
        $id = $ffi->new('uint32_t');
        $s = $ffi->toolgate_table_tool_id($this->ptr, $name, strlen($name), FFI::addr($id));
        if ($s === Native::ERR_NOT_FOUND) {
            return null;
        }
        Native::check($s);
        return $id->cdata;
    }

    public function toolName(int $id): string
    {
        if ($id < 0 || $id > 0xFFFFFFFF) {
            throw new InvalidArgumentException("tool id {$id}", Native::ERR_OUT_OF_RANGE);
        }
        return Native::string('toolgate_table_tool_name', $this->ptr, $id);
    }

    /**
     * Every registered tool name, by id (registry order); read from the
     * library once per table.
     * @return list<string>
     */
    public function toolNames(): array
    {
        if ($this->names === null) {
            $names = [];
            for ($i = 0, $n = $this->toolCount(); $i < $n; $i++) {
                $names[] = $this->toolName($i);
            }
            $this->names = $names;
        }
        return $this->names;
    }

    /** @return list<string> */
    public function configurations(): array
    {
        return Native::json('toolgate_table_configurations_json', $this->ptr);
    }

    /**
     * The gate-relevant policy as plain data (see toolgate_table_policy_json).
     * @return array<string,mixed>
     */
    public function policy(): array
    {
        return Native::json('toolgate_table_policy_json', $this->ptr);
    }

    /** Classify a gateway answer with this table's declared rules first. */
    public function classify(string $body, ?int $httpStatus = null, ?string $origin = null, ?string $tool = null): Classification
    {
        return Classification::of($body, $httpStatus, $origin, $tool, $this);
    }

    /**
     * classify(), throwing for a refusal: the exception of its kind
     * (ToolNotInProfileException, ..., every one a PolicyViolationException).
     * Success and a tool failure are returned, never thrown.
     * @throws Exception\PolicyViolationException
     */
    public function classifyOrThrow(string $body, ?int $httpStatus = null, ?string $origin = null, ?string $tool = null): Classification
    {
        return $this->classify($body, $httpStatus, $origin, $tool)->orThrow();
    }
}
